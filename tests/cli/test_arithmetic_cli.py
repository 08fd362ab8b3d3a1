"""`continue --json` and `info` say which arithmetic produces (or would produce) the
probabilities: the attention path and the KV-cache types."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli import DRAFT, assert_one_line_error, scriptorium


def done_line(model: Path, *flags: str) -> dict:
    result = scriptorium(
        "continue", "--model", str(model), "--preset", "greedy", "--max-tokens", "2", "--json", *flags, stdin=DRAFT
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.parametrize(("flag", "flash"), [("on", True), ("off", False)])
def test_the_done_line_names_the_arithmetic(random_model: Path, flag: str, flash: bool) -> None:
    arithmetic = done_line(random_model, "--flash-attn", flag, "--threads", "1")["arithmetic"]
    assert arithmetic == {
        "flash_attn": flash,
        "type_k": "f16",
        "type_v": "f16",
        "n_threads": 1,
        "n_threads_batch": 1,
        "repacked_weights": False,
        "threads_auto": False,
        "threads_reason": None,
        "cores": arithmetic["cores"],
    }
    assert arithmetic["cores"] >= 1


def test_the_done_line_and_info_say_the_threads_are_measured_by_default(random_model: Path) -> None:
    arithmetic = done_line(random_model)["arithmetic"]
    assert arithmetic["threads_auto"] is True and arithmetic["n_threads"] <= arithmetic["cores"]
    # A two-token run measures nothing yet: every core, as at the start.
    assert arithmetic["threads_reason"] in ("measuring", "one core")
    info = json.loads(scriptorium("info", "--model", str(random_model), "--json").stdout)["arithmetic"]
    assert info["threads_auto"] is True and info["n_threads"] == info["cores"]
    info = json.loads(scriptorium("info", "--model", str(random_model), "--json", "--threads", "1").stdout)[
        "arithmetic"
    ]
    assert info["threads_auto"] is False and info["n_threads"] == 1
    text = scriptorium("info", "--model", str(random_model)).stdout
    assert "threads" in text and "auto: every core" in text
    # The weights as a verifying pass needs them (docs/guide/speculative.md), said by info as by the done line.
    assert info["repacked_weights"] is False and "not repacked" in text


def test_a_bad_thread_count_is_one_line_naming_the_flag(random_model: Path) -> None:
    result = scriptorium("continue", "--model", str(random_model), "--threads", "many", stdin=DRAFT)
    assert result.returncode == 2 and "--threads" in result.stderr and "Traceback" not in result.stderr


def test_auto_is_measured_once_and_info_reports_the_choice(random_model: Path, scriptorium_home: Path) -> None:
    before = json.loads(scriptorium("info", "--model", str(random_model), "--json").stdout)["arithmetic"]
    assert before["flash_attn_setting"] == "auto" and before["flash_attn"] is None and before["measured"] is None

    chosen = done_line(random_model)["arithmetic"]["flash_attn"]
    assert isinstance(chosen, bool)
    cache = scriptorium_home / "cache" / "flash-attention.json"
    assert cache.exists()
    assert done_line(random_model)["arithmetic"]["flash_attn"] is chosen  # remembered, not timed again

    after = json.loads(scriptorium("info", "--model", str(random_model), "--json").stdout)["arithmetic"]
    assert after["flash_attn"] is chosen and after["type_k"] == after["type_v"] == "f16"
    assert set(after["measured"]) == {"on_ms", "off_ms"}
    assert (after["measured"]["on_ms"] < after["measured"]["off_ms"]) is chosen
    text = scriptorium("info", "--model", str(random_model)).stdout
    assert f"flash attention {'on' if chosen else 'off'} (auto: " in text
    assert "K f16, V f16" in text


def test_info_reports_a_set_path_and_refuses_a_bad_one(random_model: Path) -> None:
    result = scriptorium("info", "--model", str(random_model), "--flash-attn", "off")
    assert result.returncode == 0, result.stderr
    assert "flash attention off (set)" in result.stdout
    assert_one_line_error(
        scriptorium("info", "--model", str(random_model), "--flash-attn", "sometimes"), "--flash-attn"
    )
