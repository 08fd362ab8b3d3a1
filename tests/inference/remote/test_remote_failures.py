"""The link to llama-server failing: a closed port, a server that is not llama-server, one
that never answers (or is asked in TLS and waits), one killed mid-stream (the text so far
is kept) and one gone silent mid-stream (a stop does not wait for it). Each failure is one
line saying what happened."""

from __future__ import annotations

import http.server
import socket
import threading
import time
from contextlib import closing
from pathlib import Path

import pytest
from llama_server import LlamaServer, closed_port, connect_to

from scriptorium.inference.core.events import GenerationDone, TokenEvent
from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.inference.remote.remote import RemoteBackend, remote_loader
from scriptorium.inference.remote.remote_http import ServerError, Timeouts
from scriptorium.inference.core.settings import PRESETS, LogitBias

GREEDY = PRESETS["greedy"]
PROMPT = "La casa era buia, e la notte"


def test_a_closed_port_is_one_line() -> None:
    with pytest.raises(ServerError, match="cannot reach llama-server") as raised:
        remote_loader(f"http://127.0.0.1:{closed_port()}")(LoadOptions(model_path=Path("x")), lambda p: None)
    assert "\n" not in str(raised.value)


def test_a_plain_http_server_is_not_taken_for_llama_server(tmp_path: Path) -> None:
    handler = lambda *args: http.server.SimpleHTTPRequestHandler(*args, directory=str(tmp_path))  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with pytest.raises(ServerError, match="not a llama-server"):
            RemoteBackend.connect(f"http://127.0.0.1:{server.server_address[1]}", LoadOptions(model_path=Path("x")))
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_a_server_that_never_answers_times_out() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)  # accepts connections (the kernel does), never writes a byte
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        # Only a streamed generation may be silent as long as `read` (a long prefill): the
        # other requests, some asked while the author types, give up after `answer`.
        started = time.monotonic()
        with pytest.raises(ServerError, match="went silent for 0.5 s"):
            RemoteBackend.connect(
                url, LoadOptions(model_path=Path("x")), timeouts=Timeouts(connect=2.0, read=30.0, answer=0.5)
            )
        assert time.monotonic() - started < 10


def test_https_to_a_server_that_never_answers_says_to_try_http() -> None:
    # llama-server without SSL reads the TLS greeting as a request line and waits for its end.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        port = silent.getsockname()[1]
        with pytest.raises(ServerError, match=f"or it speaks plain HTTP: try http://127.0.0.1:{port}"):
            RemoteBackend.connect(
                f"https://127.0.0.1:{port}",
                LoadOptions(model_path=Path("x")),
                timeouts=Timeouts(connect=0.5, read=30.0, answer=0.5),
            )


def test_a_server_killed_mid_stream_keeps_the_text_so_far(random_model: Path, server_logs: Path) -> None:
    from scriptorium.app.tui.generation import GenerationFailed, TokensGenerated, stream_generation
    from scriptorium.app.tui.generation_request import GenerationRequest

    with LlamaServer(random_model, server_logs) as server:
        backend = connect_to(server)
        posted: list[object] = []
        killed = threading.Event()

        def post(message: object) -> None:
            posted.append(message)
            if isinstance(message, TokensGenerated) and not killed.is_set():
                killed.set()
                server.kill()

        request = GenerationRequest(
            kind="draft", id=1, prompt=PROMPT, settings=GREEDY.with_changes(max_tokens=400), bias=LogitBias(), top_n=3
        )
        try:
            stream_generation(backend, request, post, should_stop=lambda: False, frame_interval=0.0)
        finally:
            backend.close()
    tokens = [e for m in posted if isinstance(m, TokensGenerated) for e in m.events]
    failures = [m for m in posted if isinstance(m, GenerationFailed)]
    assert tokens, "the tokens streamed before the kill were posted"
    assert len(failures) == 1 and isinstance(posted[-1], GenerationFailed)
    assert "llama-server" in failures[0].error and "\n" not in failures[0].error


def test_a_stream_from_a_server_gone_silent_stops_when_asked(random_model: Path, server_logs: Path) -> None:
    """A hung server (here stopped with SIGSTOP) or a lost link sends nothing more, and
    keeps the connection open: a stop must not wait for the server, nor for the 120 s."""
    import os
    import signal

    with LlamaServer(random_model, server_logs) as server:
        backend = connect_to(server)
        stop = threading.Event()
        events: list[object] = []
        try:
            stream = backend.generate(
                PROMPT, GREEDY.with_changes(max_tokens=2000), LogitBias(), top_n=3, should_stop=stop.is_set
            )
            with closing(stream):
                for event in stream:
                    events.append(event)
                    if isinstance(event, TokenEvent) and not stop.is_set() and server.process is not None:
                        os.kill(server.process.pid, signal.SIGSTOP)
                        stopped_at = time.monotonic()
                        threading.Timer(0.3, stop.set).start()
            assert time.monotonic() - stopped_at < 5
        finally:
            if server.process is not None:
                os.kill(server.process.pid, signal.SIGCONT)
            backend.close()
    done = [e for e in events if isinstance(e, GenerationDone)]
    assert len(done) == 1 and done[0].stop_reason == "cancelled"
    assert any(isinstance(e, TokenEvent) for e in events)
