"""`scriptorium continue --server URL`: the continuation from a llama-server, and every
way the server can fail as one line with exit status 2."""

from __future__ import annotations

import http.server
import json
import sys
import threading
from pathlib import Path
from typing import Iterator

import pytest
from test_cli import DRAFT, assert_one_line_error, scriptorium

_TESTS = str(Path(__file__).resolve().parent.parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from llama_server import LlamaServer, closed_port, server_binary  # noqa: E402


@pytest.fixture(scope="module")
def sentence_server(sentence_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    server_binary()
    with LlamaServer(sentence_model, tmp_path_factory.mktemp("llama-server-logs")) as server:
        yield server


def test_continue_on_a_server(sentence_server: LlamaServer, tmp_path: Path) -> None:
    # Ending on a word outside the sentence model's chain, the model writes the whole sentence.
    draft = "La casa era buia, e la notte"
    result = scriptorium("continue", "-", "--server", sentence_server.url, "--preset", "greedy", stdin=draft)
    assert result.returncode == 0, result.stderr
    assert result.stdout == " La casa era buia."
    # Healing is on by default and a llama-server cannot do it: said, as the app says it.
    assert "this llama-server cannot heal the token" in result.stderr
    unhealed = scriptorium(
        "continue", "-", "--server", sentence_server.url, "--preset", "greedy", "--no-heal", stdin=draft
    )
    assert "cannot heal" not in unhealed.stderr and unhealed.stdout == result.stdout
    # The same server named in the config's [server] table.
    config = tmp_path / "config.toml"
    config.write_text(f'[server]\nurl = "{sentence_server.url}"\n', encoding="utf-8")
    again = scriptorium("continue", "-", "--config", str(config), "--preset", "greedy", stdin=draft)
    assert again.returncode == 0 and again.stdout == result.stdout, again.stderr


def test_lora_scale_sets_the_servers_adapter(
    random_model: Path, lora_adapter: Path, sentence_server: LlamaServer, tmp_path: Path
) -> None:
    """--lora-scale needed --lora, which a server refuses: its adapter could not be scaled
    from the command line. At scale 1 the adapter's piece wins by a wide margin; at 0 the
    logits are the base model's."""
    from gguf_models import LORA_PUSH_PIECE

    with LlamaServer(random_model, tmp_path, "--lora", str(lora_adapter)) as server:

        def first_token(scale: str) -> dict:
            result = scriptorium(
                "continue",
                "-",
                "--server",
                server.url,
                "--preset",
                "greedy",
                "--max-tokens",
                "1",
                "--json",
                "--lora-scale",
                scale,
                stdin=DRAFT,
            )
            assert result.returncode == 0, result.stderr
            return json.loads(result.stdout.splitlines()[0])

        pushed, full, off = LORA_PUSH_PIECE.replace("▁", " "), first_token("1"), first_token("0")
        assert full["text"] == pushed and full["p"] > 0.9
        assert next(c["p"] for c in off["top"] + [{"text": pushed, "p": 0.0}] if c["text"] == pushed) < 0.5
    # A server without an adapter: said, not ignored.
    result = scriptorium("continue", "-", "--server", sentence_server.url, "--lora-scale", "0.5", stdin=DRAFT)
    assert_one_line_error(result, "was started without a LoRA adapter (--lora)")


def test_continue_on_a_closed_port_is_one_line() -> None:
    result = scriptorium("continue", "-", "--server", f"http://127.0.0.1:{closed_port()}", stdin=DRAFT)
    assert_one_line_error(result, "cannot reach llama-server")


def test_a_server_url_that_is_not_http_is_one_line() -> None:
    result = scriptorium("continue", "-", "--server", "ftp://box", stdin=DRAFT)
    assert_one_line_error(result, "server URL 'ftp://box' is not an http:// or https:// address")


@pytest.mark.parametrize(
    "flags", [["--model", "/nonexistent.gguf"], ["--lora", "a.gguf"], ["--threads", "7"], ["--ctx", "100000"]]
)
def test_flags_for_a_local_model_are_refused_with_a_server(flags: list[str]) -> None:
    """Refused, not ignored: the server runs its own model with its own settings."""
    result = scriptorium("continue", "-", "--server", f"http://127.0.0.1:{closed_port()}", *flags, stdin=DRAFT)
    assert_one_line_error(result, f"{flags[0]} is for a model run here: with --server the server's own model")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://", "server URL 'http://' is not an http:// or https:// address"),
        ("not a url", "server URL 'not a url' is not an http:// or https:// address"),
        ("http://127.0.0.1:99999", "server URL 'http://127.0.0.1:99999' has no valid port (1-65535)"),
    ],
)
def test_a_malformed_server_url_is_named_as_given(url: str, message: str) -> None:
    result = scriptorium("continue", "-", "--server", url, stdin=DRAFT)
    assert_one_line_error(result, message)


def test_https_to_a_plain_http_server_says_to_try_http(tmp_path: Path) -> None:
    # It answers the TLS greeting in plain HTTP (a 400), as llama-server built without SSL would.
    handler = lambda *args: http.server.SimpleHTTPRequestHandler(*args, directory=str(tmp_path))  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_address[1]
    try:
        result = scriptorium("continue", "-", "--server", f"https://127.0.0.1:{port}", stdin=DRAFT)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    assert_one_line_error(result, "does not answer in TLS")
    assert f"try http://127.0.0.1:{port}" in result.stderr


def test_a_server_started_with_an_api_key_is_given_it(
    sentence_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LLAMA_API_KEY", raising=False)
    with LlamaServer(sentence_model, tmp_path, "--api-key", "sekrit") as server:
        missing = scriptorium("continue", "-", "--server", server.url, stdin="La casa era buia, e la notte")
        monkeypatch.setenv("LLAMA_API_KEY", "wrong")  # after the start: llama-server reads it too
        wrong = scriptorium("continue", "-", "--server", server.url, stdin="La casa era buia, e la notte")
        monkeypatch.setenv("LLAMA_API_KEY", "sekrit")
        given = scriptorium("continue", "-", "--server", server.url, stdin="La casa era buia, e la notte")
    assert_one_line_error(missing, "wants an API key (it was started with --api-key): set LLAMA_API_KEY to it")
    assert_one_line_error(wrong, "the one in LLAMA_API_KEY is not it")
    assert given.returncode == 0, given.stderr
    assert given.stdout.strip()


def test_info_describes_the_servers_model(sentence_model: Path, sentence_server: LlamaServer) -> None:
    result = scriptorium("--server", sentence_server.url, "info", "--json")  # before the subcommand, as the help says
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["path"] == str(sentence_model) and report["server"].endswith(f"at {sentence_server.url}")
    assert report["n_ctx"] == 512 and report["chat_template"] is True and report["kv_cache"] is None
    assert report["byte_tokens"] == {"count": 256, "ids": "16000–16255"}
    plain = scriptorium("info", "--server", sentence_server.url)
    assert plain.returncode == 0 and "unknown (the server reports" in plain.stdout
    assert_one_line_error(
        scriptorium("info", "--server", sentence_server.url, "--ctx", "256"),
        "--ctx is for a model file here: with --server, info describes the server's model",
    )
