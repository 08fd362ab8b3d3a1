"""ctrl+c in `scriptorium continue` while it streams: a script reading the JSON lines gets
every token line whole and a done line saying the run was interrupted; plain text keeps
what was written and adds one line on stderr; the exit status is 130, as a shell expects.

The command is stopped mid-stream without any timing: its output (a model writing
"▁aspettava" for ever, over thousands of tokens) is far larger than a pipe holds, so
after the test reads the first lines the command is still writing, blocked on the pipe,
when the signal arrives.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest
from gguf_models import italian_vocab, write_llama_model
from cli_runs import SCRIPTORIUM
from test_cli import DRAFT, scriptorium

_TESTS = str(Path(__file__).resolve().parent.parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from llama_server import LlamaServer, server_binary  # noqa: E402

LOOP_PIECE = "▁aspettava"
CONTEXT = 16384
"""Room for 16,000 tokens of 10 characters: 160 KB of plain text, over twice what a pipe
(64 KB) and the test's read buffer hold together."""
LONG_RUN = ("--preset", "greedy", "--max-tokens", "16000")


@pytest.fixture(scope="module")
def endless_model(gguf_dir: Path) -> Path:
    piece = italian_vocab().id_of(LOOP_PIECE)
    return write_llama_model(
        gguf_dir / "endless.gguf", kind="markov", transitions={piece: piece}, default_next=piece, context_length=CONTEXT
    )


@pytest.fixture(scope="module", params=["local", "server"])
def backend(
    request: pytest.FixtureRequest, endless_model: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, ...]]:
    """The arguments that choose the model: run here, or served by a llama-server."""
    if request.param == "local":
        yield ("--model", str(endless_model), "--ctx", str(CONTEXT))
        return
    server_binary()
    with LlamaServer(endless_model, tmp_path_factory.mktemp("llama-server-logs"), context=CONTEXT) as server:
        yield ("--server", server.url)


def _interrupt_after_first_line(tmp_path: Path, *args: str) -> tuple[str, str, str, int]:
    """(what was read first, the rest of stdout, stderr, exit status) of a continue sent
    SIGINT once its first lines (--json) or its first token's text was read."""
    stderr_path = tmp_path / "stderr.txt"
    with stderr_path.open("w") as stderr:
        process = subprocess.Popen(
            [SCRIPTORIUM, "continue", "-", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            encoding="utf-8",
        )
        try:
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(DRAFT)
            process.stdin.close()
            # Three tokens in, so that the decode speed has steps to be measured over.
            first = (
                "".join(process.stdout.readline() for _ in range(3))
                if "--json" in args
                else process.stdout.read(len(LOOP_PIECE))
            )
            process.send_signal(signal.SIGINT)
            rest = process.stdout.read()
            code = process.wait(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    return first, rest, stderr_path.read_text(encoding="utf-8"), code


def test_json_stream_ends_with_an_interrupted_done_line(backend: tuple[str, ...], tmp_path: Path) -> None:
    """Interrupted, the stream just stopped: no done line, and whatever line was being
    written when the KeyboardInterrupt came could be cut in two."""
    first, rest, stderr, code = _interrupt_after_first_line(tmp_path, *backend, *LONG_RUN, "--json", "--top", "20")
    assert code == 130, stderr
    assert "Traceback" not in stderr
    lines = [json.loads(line) for line in (first + rest).splitlines()]
    tokens, done = lines[:-1], lines[-1]
    assert tokens and all(line["type"] == "token" for line in tokens)
    assert done["type"] == "done" and done["stop_reason"] == "interrupted"
    assert done["completion_tokens"] == len(tokens) < 16000
    assert done["text"] == "".join(line["text"] for line in tokens)
    finished = scriptorium("continue", "-", *backend, "--preset", "greedy", "--max-tokens", "3", "--json", stdin=DRAFT)
    normal = json.loads(finished.stdout.splitlines()[-1])
    assert set(done) == set(normal)
    for key in ("prompt_tokens", "prefill_ms", "decode_tokens_per_s"):
        assert done[key] > 0, key
    # The thread counts are measured while the model writes: a long run may end on others than a short one.
    moving = {"n_threads", "n_threads_batch", "threads_reason"}

    def arithmetic(line: dict) -> dict | None:
        return line["arithmetic"] and {k: v for k, v in line["arithmetic"].items() if k not in moving}

    assert arithmetic(done) == arithmetic(normal) and done["window"] == normal["window"]
    assert done["kv_cache"]["n_ctx"] == normal["kv_cache"]["n_ctx"]


def test_plain_text_keeps_the_text_and_says_so_once(backend: tuple[str, ...], tmp_path: Path) -> None:
    first, rest, stderr, code = _interrupt_after_first_line(tmp_path, *backend, *LONG_RUN)
    assert code == 130, stderr
    text = first + rest
    pieces = text.count(" aspettava")
    assert 0 < pieces < 16000 and text == " aspettava" * pieces  # every token written whole
    # A llama-server cannot heal the cut word: its note is a line of its own, before the run.
    said = [line for line in stderr.splitlines() if not line.startswith("scriptorium: note:")]
    assert len(said) == 1 and "interrupted" in said[0], stderr
