"""`scriptorium quantize`: llama.cpp's quantization, its dry run, and requests it cannot do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gguf_compare import write_quantizable_model
from test_cli import assert_one_line_error, scriptorium


@pytest.fixture(scope="module")
def f32_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_quantizable_model(tmp_path_factory.mktemp("quantize") / "author-f32.gguf")


def test_quantizing_gives_the_size_the_dry_run_said(f32_model: Path, tmp_path: Path) -> None:
    dry = scriptorium("quantize", str(f32_model), "Q4_K_M", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    said = json.loads(dry.stdout)
    assert said["dry_run"] and said["output"] is None
    assert not list(f32_model.parent.glob("*Q4_K_M*")), "a dry run writes nothing"
    out = tmp_path / "author-q4.gguf"
    done = scriptorium("quantize", str(f32_model), "q4_k_m", str(out))
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size < f32_model.stat().st_size / 4
    # llama.cpp logs the dry run's sizes in MiB to two decimals: within 0.5%.
    assert out.stat().st_size == pytest.approx(said["output_bytes"], rel=0.005)
    assert f"wrote {out}: Q4_K_M" in done.stdout
    assert not list(tmp_path.glob(".*partial")), "no partial file stays behind"


def test_the_default_output_is_named_by_the_type_beside_the_input(f32_model: Path, tmp_path: Path) -> None:
    model = tmp_path / "mine.gguf"
    model.symlink_to(f32_model)
    result = scriptorium("quantize", str(model), "Q8_0")
    assert result.returncode == 0, result.stderr
    written = tmp_path / "mine-Q8_0.gguf"
    assert written.stat().st_size < f32_model.stat().st_size / 3


def test_requantizing_a_quantized_model_is_one_line(f32_model: Path, tmp_path: Path) -> None:
    q8 = tmp_path / "q8.gguf"
    assert scriptorium("quantize", str(f32_model), "Q8_0", str(q8)).returncode == 0
    result = scriptorium("quantize", str(q8), "Q4_K_M", str(tmp_path / "q4.gguf"))
    assert_one_line_error(result, "requantizing from type q8_0 is disabled")
    assert not (tmp_path / "q4.gguf").exists()
    assert not list(tmp_path.glob(".*partial"))


@pytest.mark.parametrize(
    "args, fragment",
    [
        (("{model}", "Q4_K_X"), "invalid choice: 'Q4_K_X'"),
        (("{missing}", "Q8_0"), "not found"),
        (("{model}", "Q8_0", "{model}"), "is the input"),
        (("{model}", "Q8_0", "{nowhere}"), "does not exist"),
    ],
)
def test_impossible_requests_are_one_line(
    f32_model: Path, tmp_path: Path, args: tuple[str, ...], fragment: str
) -> None:
    names = {
        "model": str(f32_model),
        "missing": str(tmp_path / "none.gguf"),
        "nowhere": str(tmp_path / "no-folder" / "out.gguf"),
    }
    assert_one_line_error(scriptorium("quantize", *(a.format(**names) for a in args)), fragment)
