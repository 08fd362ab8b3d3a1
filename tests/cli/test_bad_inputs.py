"""Inputs that used to abort or hang the process inside llama.cpp, or end in a traceback,
run as a user runs them: the real `scriptorium` executable, its exit code, its stderr
(one line, no traceback) and what it wrote."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from gguf_corrupt import corrupt_copy
from test_cli import DRAFT, assert_one_line_error, scriptorium

from scriptorium import prompts
from scriptorium.app.config import prompt_templates
from scriptorium.inference.local.scoring import chunk_size

# About 2,000 tokens of words the test vocabulary holds whole: far more than a 300-token context.
LONG_DRAFT = " ".join(["La casa era buia, e la notte più lunga del mondo."] * 200)
ABORTED = -6  # SIGABRT, what a GGML_ASSERT ends in


@pytest.fixture
def long_draft(tmp_path: Path) -> Path:
    path = tmp_path / "long.md"
    path.write_text(LONG_DRAFT, encoding="utf-8")
    return path


def test_a_context_llama_cpp_pads_takes_a_draft_longer_than_itself(random_model: Path, long_draft: Path) -> None:
    """--ctx 300: llama.cpp makes a 512-token cache but keeps n_batch at 300; a 512-token
    prefill chunk used to abort the process."""
    result = scriptorium(
        "continue",
        str(long_draft),
        "--model",
        str(random_model),
        "--ctx",
        "300",
        "--preset",
        "greedy",
        "--max-tokens",
        "4",
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "tokens before it do not fit its 512-token context" in result.stderr
    assert result.stdout.strip()


def test_scoring_in_a_context_llama_cpp_pads(random_model: Path) -> None:
    """F9's path, in its own process so that an abort fails the test instead of the suite."""
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from scriptorium.inference.local.engine import Engine, LoadOptions\n"
        "from scriptorium.inference.core.events import ScoreDone\n"
        "engine = Engine.load(LoadOptions(model_path=Path(sys.argv[1]), n_ctx=300))\n"
        "done = [e for e in engine.score(sys.argv[2]) if isinstance(e, ScoreDone)][0]\n"
        "print(engine.context.n_batch, done.tokens, done.trimmed_tokens)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(random_model), LONG_DRAFT], capture_output=True, text=True, timeout=120
    )
    assert result.returncode != ABORTED, result.stderr[-2000:]
    assert result.returncode == 0, result.stderr[-2000:]
    n_batch, scored, trimmed = map(int, result.stdout.split())
    assert n_batch == 300
    assert trimmed > 0 and scored > n_batch  # more than one chunk was decoded


def test_a_scoring_chunk_never_exceeds_the_batch() -> None:
    assert chunk_size(16256, 4) == 4
    assert chunk_size(262144, 512) == 128
    assert chunk_size(16256, 512) == 512


@pytest.mark.parametrize(
    "change, fragment",
    [
        ({"block_count": 1000}, "declares 1000 layers; llama.cpp supports at most 512"),
        ({"rms_epsilon": float("nan")}, "layer_norm_rms_epsilon = nan"),
        ({"rms_epsilon": -1e-5}, "layer_norm_rms_epsilon = -1e-05"),
        ({"same_byte_token_texts": True}, "tokens 16000 and 16001 with the same text '<0x00>'"),
    ],
)
def test_files_llama_cpp_would_abort_on_are_refused_first(
    random_model: Path, tmp_path: Path, change: dict, fragment: str
) -> None:
    broken = corrupt_copy(random_model, tmp_path / "broken.gguf", **change)
    assert_one_line_error(scriptorium("continue", "--model", str(broken), "--max-tokens", "2", stdin=DRAFT), fragment)
    assert_one_line_error(scriptorium("info", "--model", str(broken)), fragment)


@pytest.mark.parametrize("count", [22, 2**40])
def test_a_wrong_tensor_count_is_a_corrupt_header_not_a_hang(
    random_model: Path, tmp_path: Path, models_dir: Path, count: int
) -> None:
    """21 tensors declared as 22 made the reader take tensor data for a dimension count of
    about 1e9 and multiply for ever."""
    broken = corrupt_copy(random_model, models_dir / "broken.gguf", tensor_count=count)
    for command in (["info"], ["continue", "--max-tokens", "2"]):
        assert_one_line_error(
            scriptorium(*command, "--model", str(broken), stdin=DRAFT), "has a truncated or corrupt GGUF header"
        )
    listed = scriptorium("models", "--json")
    assert listed.returncode == 0, listed.stderr
    entry = next(m for m in json.loads(listed.stdout)["models"] if m["path"] == str(broken))
    assert "corrupt GGUF header" in entry["problem"]


def _no_nan(constant: str) -> None:
    raise AssertionError(f"bare {constant} in the JSON output")


def test_nan_logits_stop_the_generation_with_a_message(random_model: Path, tmp_path: Path) -> None:
    """Token 0's output row is NaN, so its logit is NaN from any context (as a broken LoRA
    makes them): every probability is then meaningless, and --json must stay valid JSON."""
    broken = corrupt_copy(random_model, tmp_path / "nan.gguf", nan_output_row=0)
    for extra in ([], ["--json"], ["--preset", "greedy"]):
        result = scriptorium("continue", "--model", str(broken), "--max-tokens", "4", *extra, stdin=DRAFT)
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr
        assert result.stderr.strip().splitlines() == [
            "scriptorium: the model's output is not a number (NaN or infinite logits): the model or its LoRA "
            "adapter is broken, or the adapter's scale is too high"
        ]
        for line in result.stdout.splitlines():
            json.loads(line, parse_constant=_no_nan)


def test_plain_text_says_when_the_context_is_full(random_model: Path) -> None:
    """A 64-token context is padded to 256; the random model practically never ends (see
    gguf_models.py), so 1,000 tokens asked run into the end of the context."""
    result = scriptorium("continue", "--model", str(random_model), "--ctx", "64", "--max-tokens", "1000", stdin=DRAFT)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines() == [
        "scriptorium: note: the context is 256 tokens: llama.cpp rounds the 64 asked for up to a multiple of 256",
        "scriptorium: stopped because the context is full (256 tokens; a larger --ctx gives it room)",
    ]
    info = scriptorium("info", "--model", str(random_model), "--ctx", "64")
    assert info.returncode == 0 and info.stderr.strip().splitlines() == [
        "scriptorium: note: the context is 256 tokens: llama.cpp rounds the 64 asked for up to a multiple of 256"
    ]
    asked_exactly = scriptorium("info", "--model", str(random_model), "--ctx", "256")
    assert "rounds" not in asked_exactly.stderr


@pytest.mark.parametrize(
    "data",
    [
        b"La casa \xff era buia",  # not UTF-8
        "La casa era buia".encode("utf-16"),  # UTF-16 with its byte-order mark
        b"La casa \xed\xa0\x80 era",  # an encoded surrogate, invalid in UTF-8
    ],
)
def test_stdin_is_decoded_strictly(random_model: Path, data: bytes) -> None:
    result = subprocess.run(
        [
            sys.executable.replace("python", "scriptorium"),
            "continue",
            "-",
            "--model",
            str(random_model),
            "--max-tokens",
            "2",
        ],
        input=data,
        capture_output=True,
        timeout=120,
    )
    stderr = result.stderr.decode()
    assert result.returncode == 2 and "Traceback" not in stderr
    assert stderr.strip().splitlines() == ["scriptorium: draft on standard input is not UTF-8 text"]


def test_stdin_newlines_read_as_a_files_do(random_model: Path, tmp_path: Path) -> None:
    draft = tmp_path / "crlf.md"
    draft.write_bytes(DRAFT.replace(" e ", "\r\ne ").encode())
    args = ["continue", "--model", str(random_model), "--preset", "greedy", "--max-tokens", "4", "--json"]
    from_file = scriptorium(*args[:1], str(draft), *args[1:])
    piped = subprocess.run(
        [sys.executable.replace("python", "scriptorium"), *args],
        input=draft.read_bytes(),
        capture_output=True,
        timeout=120,
    )
    assert from_file.returncode == 0 and piped.returncode == 0
    done_file, done_piped = (json.loads(out.splitlines()[-1]) for out in (from_file.stdout, piped.stdout.decode()))
    assert done_file["prompt_tokens"] == done_piped["prompt_tokens"]
    assert done_file["text"] == done_piped["text"]


@pytest.mark.parametrize("piped", [False, True])
def test_a_byte_order_mark_is_not_part_of_the_draft(random_model: Path, tmp_path: Path, piped: bool) -> None:
    """A BOM (written by Windows editors) reached the model as a character at the start of
    the prompt, which the app's editor leaves out: the same file continued differently."""
    plain, marked = tmp_path / "plain.md", tmp_path / "bom.md"
    plain.write_text(DRAFT, encoding="utf-8")
    marked.write_bytes("\ufeff".encode() + DRAFT.encode())
    args = ["continue", "--model", str(random_model), "--preset", "greedy", "--max-tokens", "4", "--json"]
    without = scriptorium(args[0], str(plain), *args[1:])
    if piped:
        with_bom = subprocess.run(
            [sys.executable.replace("python", "scriptorium"), *args],
            input=marked.read_bytes(),
            capture_output=True,
            timeout=120,
        ).stdout.decode()
    else:
        with_bom = scriptorium(args[0], str(marked), *args[1:]).stdout
    done_plain, done_bom = (json.loads(out.splitlines()[-1]) for out in (without.stdout, with_bom))
    assert done_bom["prompt_tokens"] == done_plain["prompt_tokens"] and done_bom["text"] == done_plain["text"]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize(
    "command", [["continue", "--max-tokens", "20"], ["continue", "--max-tokens", "20", "--json"], ["models"]]
)
def test_a_full_disk_on_stdout_is_one_line(random_model: Path, command: list[str]) -> None:
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [sys.executable.replace("python", "scriptorium"), *command, "--model", str(random_model)]
            if command[0] == "continue"
            else [sys.executable.replace("python", "scriptorium"), *command],
            input=DRAFT,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["scriptorium: cannot write the output: No space left on device"]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("option", [["--version"], ["--help"], ["models", "--help"]])
def test_version_and_help_on_a_full_disk_are_one_line(option: list[str]) -> None:
    """--version failed with an OSError traceback; --help exited 0 with its text lost."""
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [sys.executable.replace("python", "scriptorium"), *option],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["scriptorium: cannot write the output: No space left on device"]


def test_a_pipe_closed_early_is_quiet(random_model: Path) -> None:
    """`scriptorium continue ... | head -c 1`: the reader goes away; that is not an error."""
    exe = sys.executable.replace("python", "scriptorium")
    producer = subprocess.Popen(
        [exe, "continue", "--model", str(random_model), "--max-tokens", "300", "--json"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    producer.stdin.write(DRAFT.encode())
    producer.stdin.close()
    producer.stdout.read(1)
    producer.stdout.close()
    stderr = producer.stderr.read().decode()
    assert producer.wait(timeout=120) == 0
    assert stderr == ""


@pytest.mark.parametrize(
    "damage, fragment",
    [
        ("not-utf8", "continue.txt is not UTF-8 text"),
        ("dangling-link", "prompt template not found"),
        ("folder", "continue.txt is a folder, not a file"),
        # A 16-character draft "seen from character 17 on"; a 2M-token template called the memory and note.
        ("placeholders", "continue.txt holds {draft} 3 times; it takes it once, where the draft goes"),
        (
            "huge",
            f"continue.txt is {prompt_templates.MAX_TEMPLATE_CHARS + 1:,} characters long; a template holds at most",
        ),
    ],
)
def test_a_prompt_template_that_cannot_be_read_is_one_line(
    random_model: Path, scriptorium_home: Path, damage: str, fragment: str
) -> None:
    folder = scriptorium_home / "config" / "prompts"
    folder.mkdir(parents=True)
    copy = folder / prompts.CONTINUE
    if damage == "not-utf8":
        copy.write_bytes(b"Racconto \xe8 breve.\n\n{draft}")
    elif damage == "dangling-link":
        copy.symlink_to(folder / "gone.txt")
    elif damage == "placeholders":
        copy.write_text("{draft}\n\n{draft}\n\n{draft}", encoding="utf-8")
    elif damage == "huge":
        copy.write_text("x" * (prompt_templates.MAX_TEMPLATE_CHARS + 1), encoding="utf-8")
    else:
        copy.mkdir()
    assert_one_line_error(
        scriptorium("continue", "--model", str(random_model), "--max-tokens", "2", stdin=DRAFT), fragment
    )


@pytest.mark.parametrize("json_lines", [False, True])
def test_continue_says_in_one_line_that_its_engine_died_and_exits_2(
    random_model: Path, monkeypatch: pytest.MonkeyPatch, json_lines: bool
) -> None:
    """The next abort nobody has found yet, made by the worker's test-only hook: llama.cpp's
    own ggml_abort after 3 tokens. The engine runs in a child, so `continue` survives it."""
    from scriptorium.inference.process.worker import TEST_ABORT_AFTER_TOKENS

    monkeypatch.setenv(TEST_ABORT_AFTER_TOKENS, "3")
    result = scriptorium(
        "continue",
        "--model",
        str(random_model),
        "--preset",
        "greedy",
        "--max-tokens",
        "20",
        *(["--json"] if json_lines else []),
        stdin=DRAFT,
    )
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr, result.stderr
    line = result.stderr.strip()
    assert line.startswith("scriptorium: the model's engine stopped (SIGABRT): ")
    assert line.endswith("GGML_ASSERT(scriptorium test hook: abort after 3 tokens) failed")
    # What was written before the abort is on stdout, whole lines for --json.
    if json_lines:
        assert [json.loads(row)["type"] for row in result.stdout.splitlines()] == ["token"] * 3
    else:
        assert result.stdout


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["continue", "--model", "", "-"], "--model is empty"),
        (["continue", "--model=", "-"], "--model is empty"),
        (["info", "--lora", ""], "--lora is empty"),
        (["--config", "", "models"], "--config is empty"),
        (["export", ""], "an argument is empty"),
        (["continue", ""], "an argument is empty"),
    ],
)
def test_an_empty_argument_is_named(args: list[str], named: str) -> None:
    """An unset shell variable (`--model "$MODEL"`) read as the current folder: "model . is
    a folder, not a GGUF file"; `export "$SESSION"` exported the latest session."""
    assert_one_line_error(scriptorium(*args, stdin=DRAFT), f"{named} (an unset shell variable?)")


def test_an_empty_stop_keeps_its_own_message() -> None:
    assert_one_line_error(scriptorium("continue", "--stop", "", stdin=DRAFT), "a stop string cannot be empty")


def test_continue_warns_about_a_bad_theme_and_goes_on(random_model: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[ui]\ntheme = "nope"\n', encoding="utf-8")
    result = scriptorium(
        "continue",
        "--config",
        str(config),
        "--model",
        str(random_model),
        "--preset",
        "greedy",
        "--max-tokens",
        "2",
        stdin=DRAFT,
    )
    assert result.returncode == 0, result.stderr
    assert "scriptorium: warning: " in result.stderr and "unknown theme" in result.stderr
    assert result.stdout.strip()
