"""The headless commands as a user runs them: the real `scriptorium` executable."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_runs import scriptorium
from gguf_models import FIRST_BYTE_ID

DRAFT = "La casa era buia, e la notte più lunga."


def assert_one_line_error(result: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert fragment in lines[0]
    assert result.stdout == ""


def test_continue_streams_the_continuation(random_model: Path, tmp_path: Path) -> None:
    draft = tmp_path / "draft.md"
    draft.write_text(DRAFT, encoding="utf-8")
    result = scriptorium(
        "continue", str(draft), "--model", str(random_model), "--preset", "greedy", "--max-tokens", "8"
    )
    assert result.returncode == 0, result.stderr
    piped = scriptorium(
        "continue", "-", "--model", str(random_model), "--preset", "greedy", "--max-tokens", "8", stdin=DRAFT
    )
    assert result.stdout == piped.stdout and result.stdout.strip()


def test_continue_json_lines(byte_loop_model: Path) -> None:
    result = scriptorium(
        "continue",
        "--model",
        str(byte_loop_model),
        "--preset",
        "greedy",
        "--max-tokens",
        "5",
        "--top",
        "3",
        "--json",
        stdin=DRAFT,
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    tokens, done = lines[:-1], lines[-1]
    assert [line["type"] for line in tokens] == ["token"] * 5
    for line in tokens:
        assert set(line) == {"type", "id", "text", "bytes", "p", "top"}
        assert len(line["top"]) == 3
        assert [c["p"] for c in line["top"]] == sorted((c["p"] for c in line["top"]), reverse=True)
        assert all(c["banned"] == (c["id"] >= FIRST_BYTE_ID) for c in line["top"])
        assert line["id"] < FIRST_BYTE_ID
    assert done["type"] == "done" and done["stop_reason"] == "length"
    assert done["completion_tokens"] == 5 and done["prompt_tokens"] > 0
    for key in ("prefill_ms", "ttft_ms", "decode_tokens_per_s"):
        assert isinstance(done[key], float) and done[key] > 0
    assert {"tokens", "n_ctx", "bytes"} <= set(done["kv_cache"])
    assert done["kv_cache"]["bytes"] == done["kv_cache"]["tokens"] * done["kv_cache"]["bytes_per_token"]


def test_no_byte_ban_lets_the_model_loop(byte_loop_model: Path) -> None:
    result = scriptorium(
        "continue",
        "--model",
        str(byte_loop_model),
        "--preset",
        "greedy",
        "--max-tokens",
        "4",
        "--json",
        "--no-byte-ban",
        stdin=DRAFT,
    )
    ids = [json.loads(line)["id"] for line in result.stdout.splitlines()[:-1]]
    assert ids == [FIRST_BYTE_ID + 0xFF] * 4


def test_continue_never_prints_half_a_character(utf8_model: Path) -> None:
    """The utf8 model writes <0xC3> <0xA8> ("è") again and again: cut after three tokens,
    with the byte ban lifted, continue printed "è\\xc3" (and --json a done text with it)."""
    args = ("continue", "--model", str(utf8_model), "--preset", "greedy", "--max-tokens", "3", "--no-byte-ban")
    plain = scriptorium(*args, stdin="La casa")
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout == "è"
    lines = [json.loads(line) for line in scriptorium(*args, "--json", stdin="La casa").stdout.splitlines()]
    assert [line["text"] for line in lines[:-1]] == ["", "è", ""]
    assert lines[-1]["text"] == "è" and lines[-1]["completion_tokens"] == 3


def test_continue_json_lines_carry_the_bytes_a_reader_joins_into_a_character(utf8_model: Path) -> None:
    """ "è" is <0xC3> <0xA8> to the vocabulary: --json gave a line of text "" then one of "è"
    with <0xA8>'s probability, and nothing said which bytes made the character."""
    args = (
        "continue",
        "--model",
        str(utf8_model),
        "--preset",
        "greedy",
        "--max-tokens",
        "4",
        "--no-byte-ban",
        "--json",
    )
    tokens = [json.loads(line) for line in scriptorium(*args, stdin="La casa").stdout.splitlines()][:-1]
    assert [(line["id"], line["text"], line["bytes"]) for line in tokens] == [
        (FIRST_BYTE_ID + 0xC3, "", [0xC3]),
        (FIRST_BYTE_ID + 0xA8, "è", [0xA8]),
    ] * 2
    assert bytes(tokens[0]["bytes"] + tokens[1]["bytes"]).decode("utf-8") == "è"


def test_continue_prints_a_byte_that_is_no_text_as_the_replacement_character(utf8_model: Path) -> None:
    """After "notte" the utf8 model writes <0xFF>, never UTF-8: continue printed "\\xff",
    four characters an editor piping it in took as text; --json named the token so too."""
    args = ("continue", "--model", str(utf8_model), "--preset", "greedy", "--max-tokens", "4", "--no-byte-ban")
    plain = scriptorium(*args, stdin="La notte")
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout == "\ufffd casaè"
    lines = [json.loads(line) for line in scriptorium(*args, "--json", stdin="La notte").stdout.splitlines()]
    assert [line["text"] for line in lines[:-1]] == ["\ufffd", " casa", "", "è"]
    assert lines[0]["top"][0]["text"] == "<0xFF>"  # the candidates name the token by its byte
    assert lines[-1]["text"] == "\ufffd casaè"


def test_continue_stops_on_the_text_as_printed(crlf_model: Path) -> None:
    """The model's newline token is "\\r\\n": `--stop` "\\n\\n" never fired, and the lines
    came out as "\\r\\n" where the app writes "\\n"."""
    args = ("continue", "--model", str(crlf_model), "--preset", "greedy", "--max-tokens", "8")
    assert scriptorium(*args, stdin="Era notte").stdout == " La casa.\n\n\n\n\n"
    stopped = scriptorium(*args, "--stop", "\n\n", "--json", stdin="Era notte")
    done = json.loads(stopped.stdout.splitlines()[-1])
    assert (done["text"], done["stop_reason"]) == (" La casa.", "stop")


def test_continue_reads_line_breaks_as_the_app_does(random_model: Path, tmp_path: Path) -> None:
    """A draft's U+2028 or form feed is a line break in the app's editor, which gives the
    model "\\n"; continue gave the model the character itself (three byte tokens here)."""

    def prompt_tokens(draft: str, memory: str) -> int:
        (tmp_path / "draft.md").write_text(draft, encoding="utf-8")
        (tmp_path / "memory.md").write_text(memory, encoding="utf-8")
        result = scriptorium(
            "continue",
            str(tmp_path / "draft.md"),
            "--memory",
            str(tmp_path / "memory.md"),
            "--model",
            str(random_model),
            "--preset",
            "greedy",
            "--max-tokens",
            "1",
            "--json",
        )
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout.splitlines()[-1])["prompt_tokens"]

    plain = prompt_tokens("La casa era buia.\nE la notte", "Una storia.\nDi notte.")
    assert prompt_tokens("La casa era buia.\u2028E la notte", "Una storia.\nDi notte.") == plain
    assert prompt_tokens("La casa era buia.\nE la notte", "Una storia.\u2029Di notte.") == plain


def test_info_reports_the_facts(random_model: Path) -> None:
    result = scriptorium("info", "--model", str(random_model), "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["architecture"] == "llama" and info["vocab_size"] == 16256
    assert info["attention_heads"] == 4 and info["kv_heads"] == 2 and info["attention"] == "GQA"
    assert info["byte_tokens"] == {"count": 256, "ids": "16000–16255"}
    # The context it would be loaded with: its training context (2048), at most 4096.
    assert info["kv_cache"]["bytes"] == info["kv_cache"]["bytes_per_token"] * 2048
    assert info["context_warning"] is None
    text = scriptorium("info", "--model", str(random_model))
    assert "16000–16255" in text.stdout and "GQA" in text.stdout


@pytest.mark.parametrize(
    "extra, fragment",
    [
        (["--temperature", "-1"], "temperature must be between 0 and 10"),
        (["--top-p", "2"], "top-p must be in (0, 1]"),
        (["--top-k", "-3"], "top-k must be 0"),
        (["--min-p", "1.5"], "min-p must be in [0, 1)"),
        (["--repeat-penalty", "0"], "repeat penalty"),
        (["--max-tokens", "0"], "max tokens"),
        (["--bias", "16001"], "not of the form ID=VALUE"),
        (["--bias", "abc=-100"], "not of the form ID=VALUE"),
        (["--bias", "99999=-100"], "token 99999, which does not exist"),
        (["--temperature", "warm"], "invalid float value: 'warm'"),
        (["--preset", "wild"], "unknown preset 'wild'"),
        (["--ctx", "10"], "--ctx must be a whole number from 64 to 1048576, not 10"),
        (["--lora-scale", "0.5"], "--lora-scale needs --lora"),
    ],
)
def test_bad_arguments_get_one_line(random_model: Path, extra: list[str], fragment: str) -> None:
    assert_one_line_error(scriptorium("continue", "--model", str(random_model), *extra, stdin=DRAFT), fragment)


def test_bad_files_get_one_line(tmp_path: Path, random_model: Path, bad_gguf_files, foreign_lora_adapter) -> None:
    missing = tmp_path / "missing.gguf"
    cases = [
        (["--model", str(missing)], "model not found"),
        (["--model", str(bad_gguf_files["not_gguf"])], "is not a GGUF file"),
        (["--model", str(bad_gguf_files["truncated"])], "truncated"),
        (["--model", str(bad_gguf_files["empty"])], "not a GGUF file"),
        (["--model", str(random_model), "--lora", str(foreign_lora_adapter)], "is for a 'gemma3' model"),
        (["--model", str(random_model), "--lora", str(missing)], "LoRA adapter not found"),
    ]
    for args, fragment in cases:
        assert_one_line_error(scriptorium("continue", *args, stdin=DRAFT), fragment)
    assert_one_line_error(
        scriptorium("continue", str(tmp_path / "nope.md"), "--model", str(random_model)), "draft not found"
    )
    assert_one_line_error(scriptorium("info", "--model", str(bad_gguf_files["truncated"])), "truncated")


def test_info_says_what_a_token_costs_past_the_sliding_window(gguf_dir: Path) -> None:
    from gguf_gemma3 import write_gemma3_model

    model = write_gemma3_model(gguf_dir / "gemma3-info.gguf")
    info = json.loads(scriptorium("info", "--model", str(model), "--ctx", "2048", "--json").stdout)
    kv = info["kv_cache"]
    # 7 of 8 layers keep only pad(128 + 512) = 768 cells: past 768 tokens only the
    # eighth grows, so "per token" alone would not add up to the total for 2048.
    assert kv["window_tokens"] == 768
    assert kv["bytes"] == 768 * kv["bytes_per_token"] + (2048 - 768) * kv["bytes_per_token_past_window"]
    assert kv["bytes_per_token_past_window"] * 8 == kv["bytes_per_token"]
    text = scriptorium("info", "--model", str(model), "--ctx", "2048").stdout
    assert "past 768" in text


def test_info_finds_a_model_as_continue_does(random_model: Path, models_dir: Path, tmp_path: Path) -> None:
    """By the name `scriptorium models` lists, or the config's path, with the config's
    context: info took only a path ("model not found: mine") and always the training context."""
    (models_dir / "mine.gguf").write_bytes(random_model.read_bytes())
    by_name = scriptorium("info", "--model", "mine", "--json")
    assert by_name.returncode == 0, by_name.stderr
    assert json.loads(by_name.stdout)["path"] == str(models_dir / "mine.gguf")
    config = tmp_path / "c.toml"
    config.write_text(f'[model]\npath = "{random_model}"\ncontext_size = 1024\n', encoding="utf-8")
    configured = scriptorium("info", "--config", str(config), "--json")
    assert configured.returncode == 0, configured.stderr
    info = json.loads(configured.stdout)
    assert info["path"] == str(random_model)
    assert info["kv_cache"]["bytes"] == info["kv_cache"]["bytes_per_token"] * 1024


def test_info_checks_an_adapter_against_the_models_tensors(
    random_model: Path, lora_adapter: Path, wider_model_lora_adapter: Path
) -> None:
    """Same architecture, another model's shapes: info said it "fits this model", and
    llama.cpp then refused it at load."""
    assert_one_line_error(
        scriptorium("info", "--model", str(random_model), "--lora", str(wider_model_lora_adapter)),
        "was made for another base model: its blk.0.attn_q.weight is 128 x 128",
    )
    fitting = scriptorium("info", "--model", str(random_model), "--lora", str(lora_adapter))
    assert fitting.returncode == 0 and "fits this model" in fitting.stdout


def test_options_work_before_or_after_the_subcommand(random_model: Path, tmp_path: Path) -> None:
    folder = tmp_path / "my-models"
    folder.mkdir()
    (folder / "mine.gguf").write_bytes(random_model.read_bytes())
    config = tmp_path / "elsewhere.toml"
    config.write_text(f'[model]\nfolders = ["{folder}"]\n', encoding="utf-8")
    before = scriptorium("--config", str(config), "models", "--json")
    after = scriptorium("models", "--json", "--config", str(config))
    assert before.returncode == after.returncode == 0, before.stderr + after.stderr
    assert before.stdout == after.stdout
    assert str(folder / "mine.gguf") in [m["path"] for m in json.loads(before.stdout)["models"]]
    # An option the subcommand does not take is one line, wherever it stands.
    assert_one_line_error(scriptorium("--model", str(random_model), "models"), "unrecognized arguments: --model")


def test_a_draft_named_like_a_subcommand_needs_a_path() -> None:
    from scriptorium.app.cli.main import split_subcommand

    assert split_subcommand(["models"]) == ("models", [])
    assert split_subcommand(["./models"]) == (None, ["./models"])
    assert split_subcommand(["--model", "models"]) == (None, ["--model", "models"])  # a model named models
    assert split_subcommand(["--", "models"]) == (None, ["--", "models"])
    shown = " ".join(scriptorium("--help").stdout.split())
    assert "A draft named like a subcommand needs a path: `scriptorium ./models` edits the draft" in shown


def test_every_subcommand_takes_config_before_or_after_it(tmp_path: Path) -> None:
    """The help says --config goes before or after the subcommand; sessions, export and
    vocab refused it (`unrecognized arguments`), so an alias `scriptorium --config F`
    broke them."""
    config = tmp_path / "elsewhere.toml"
    config.write_text("", encoding="utf-8")
    for command in (["sessions"], ["export", "nothing-here"], ["vocab", "--model", "m.gguf", "--spm", "t.model"]):
        for args in (["--config", str(config), *command], [*command, "--config", str(config)]):
            result = scriptorium(*args)
            assert "unrecognized arguments" not in result.stderr, args
            assert "Traceback" not in result.stderr
    assert scriptorium("--config", str(config), "sessions").returncode == 0


def test_plain_continue_ranks_no_candidates(
    random_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--top reports candidates in --json lines; plain text still ranked them for every
    token, which --top 200000 made 20 times slower for nothing."""
    from scriptorium.app.cli import continue_cmd
    from scriptorium.app.cli.main import main

    asked: list[int] = []
    real_choose = continue_cmd.choose_loader

    def spying_loader(server: str | None):
        load, remote = real_choose(server)

        def loading(options, progress):
            engine = load(options, progress)
            generate = engine.generate
            engine.generate = lambda *args, top_n, **kwargs: (
                asked.append(top_n) or generate(*args, top_n=top_n, **kwargs)
            )
            return engine

        return loading, remote

    monkeypatch.setattr(continue_cmd, "choose_loader", spying_loader)
    draft = tmp_path / "draft.md"
    draft.write_text(DRAFT, encoding="utf-8")
    args = ["continue", str(draft), "--model", str(random_model), "--max-tokens", "2", "--top", "7"]
    assert main(args) == 0
    assert main([*args, "--json"]) == 0
    assert asked == [0, 7]
    assert "with --json" in scriptorium("continue", "--help").stdout


def test_version() -> None:
    """`scriptorium --version`, what a new user types first, was "unrecognized arguments"."""
    from importlib import metadata

    result = scriptorium("--version")
    assert (result.returncode, result.stdout, result.stderr) == (
        0,
        f"scriptorium {metadata.version('scriptorium')}\n",
        "",
    )


def test_continue_speculates_and_writes_the_same_tokens(random_model: Path) -> None:
    """`--speculative lookup` through the engine's child process: the same token lines (the
    guessed ones marked), and the summary says what was drafted and accepted."""
    draft = "Il cane aspettava sulla porta. Il cane aspettava sulla porta della casa, e poi il cane aspettava"
    common = ("continue", "--model", str(random_model), "--preset", "greedy", "--max-tokens", "40", "--json")
    plain = [json.loads(line) for line in scriptorium(*common, stdin=draft).stdout.splitlines()]
    result = scriptorium(*common, "--speculative", "lookup", "--draft-max", "4", stdin=draft)
    assert result.returncode == 0, result.stderr
    guessed = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line.get("id") for line in guessed] == [line.get("id") for line in plain]
    assert [line["p"] for line in guessed[:-1]] == pytest.approx([line["p"] for line in plain[:-1]], rel=1e-3)
    done = guessed[-1]
    assert plain[-1]["speculation"] is None and done["speculation"]["guesser"] == "lookup"
    assert done["speculation"]["drafted"] > 0
    assert sum(line.get("drafted", False) for line in guessed[:-1]) == done["speculation"]["accepted"]
    refused = scriptorium(*common, "--speculative", "lookup", "--draft-max", "0", stdin=draft)
    assert_one_line_error(refused, "--draft-max must be a whole number from 1 to 32, not 0")
