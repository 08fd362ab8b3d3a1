"""Server URLs as the author writes them: credentials a reverse proxy asks for are sent,
never written out in messages or in the origin that sessions and exports record."""

from __future__ import annotations

import base64
import http.server
import threading
from pathlib import Path

import pytest
from llama_server import LlamaServer, server_binary

from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.inference.remote.remote import RemoteBackend
from scriptorium.inference.remote.remote_http import ServerError


def test_credentials_in_the_url_are_sent_and_never_shown(sentence_model: Path, tmp_path: Path) -> None:
    seen: list[str | None] = []

    class Proxy(http.server.BaseHTTPRequestHandler):  # refuses everything, as a proxy without the right login
        def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
            seen.append(self.headers.get("Authorization"))
            self.send_response(403)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    try:
        with pytest.raises(ServerError) as raised:
            RemoteBackend.connect(
                f"http://alice:s3cret@127.0.0.1:{proxy.server_address[1]}", LoadOptions(model_path=Path("x"))
            )
    finally:
        proxy.shutdown()
        proxy.server_close()
        thread.join(timeout=10)
    assert seen == ["Basic " + base64.b64encode(b"alice:s3cret").decode()]
    assert "s3cret" not in str(raised.value) and "alice" not in str(raised.value)

    server_binary()
    with LlamaServer(sentence_model, tmp_path) as server:
        backend = RemoteBackend.connect(
            server.url.replace("http://", "http://alice:s3cret@"), LoadOptions(model_path=Path("x"))
        )
        try:
            assert backend.origin.endswith(f"at {server.url}")
        finally:
            backend.close()


@pytest.mark.parametrize("route", ["/v1", "/completion"])
def test_a_route_pasted_into_the_url_is_named_with_the_address_to_use(
    sentence_model: Path, tmp_path: Path, route: str
) -> None:
    server_binary()
    with LlamaServer(sentence_model, tmp_path) as server:
        with pytest.raises(ServerError) as raised:
            RemoteBackend.connect(server.url + route, LoadOptions(model_path=Path("x")))
    assert f"try {server.url}" in str(raised.value)


def test_a_url_without_a_port_names_llama_servers_own() -> None:
    """'--server localhost' went to port 80 and said only 'Connection refused: is it running?'."""
    import socket

    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 80)) == 0:
            pytest.skip("something listens on port 80 here")
    with pytest.raises(ServerError) as raised:
        RemoteBackend.connect("localhost", LoadOptions(model_path=Path("x")))
    assert "try http://localhost:8080" in str(raised.value)
