"""A llama-server whose model is a SentencePiece vocabulary with no byte tokens: llama.cpp
throws on a character it has no piece for, and the server answers with HTTP 500
"unordered_map::at". The remote backend connects, and refuses such text as the local
engine does."""

from __future__ import annotations

import http.server
import json
import threading
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest
from llama_server import LlamaServer, server_binary

from scriptorium import prompts
from scriptorium.inference.window.chat_window import ChatFormatError, fit_chat
from scriptorium.inference.local.engine import Engine
from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.inference.remote.remote import RemoteBackend
from scriptorium.inference.remote.remote_http import ServerError
from scriptorium.inference.vocab.tokenizer import UnencodableTextError
from scriptorium.inference.window.window import build_window

FALLBACK = prompts.packaged_text(prompts.CHAT_FALLBACK)


@pytest.fixture(scope="module")
def no_bytes_server(no_bytes_gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    server_binary()  # skips the module, with the reason, when there is no binary
    with LlamaServer(no_bytes_gguf, tmp_path_factory.mktemp("llama-server-logs")) as server:
        yield server


@pytest.fixture()
def remote(no_bytes_server: LlamaServer) -> Iterator[RemoteBackend]:
    backend = RemoteBackend.connect(no_bytes_server.url, LoadOptions(model_path=Path("unused.gguf")))
    try:
        yield backend
    finally:
        backend.close()


@pytest.fixture(scope="module")
def no_bytes_engine(no_bytes_gguf: Path) -> Iterator[Engine]:
    engine = Engine.load(LoadOptions(model_path=no_bytes_gguf, n_ctx=512))
    try:
        yield engine
    finally:
        engine.close()


def test_connecting_to_a_model_with_no_byte_tokens(remote: RemoteBackend) -> None:
    """Connecting asks the server to tokenize a character no vocabulary has (where are the
    byte tokens?) and "<|im_start|>" (is the ChatML in /props the model's own template?):
    this vocabulary cannot write either, and connecting failed with "refused /tokenize
    (HTTP 500): unordered_map::at"."""
    assert remote.byte_token_ids == ()
    assert not remote.facts.has_chat_template  # the server's ChatML stand-in, not the model's
    assert remote.count_tokens("ciao bello") > 1


HOSTILE = "Perché così? Città, caffè ☕ 東京 🍰"


# The first of several, one at either end, one after a character of two bytes, a combining
# accent (its own code point, its own piece or none) and a grapheme of three code points
# joined (the halving cuts it: each is searched as a character, as the local guard checks them).
EDGES = ["~ciao", "ciao~", "a~b☕c~ caffè ~", "caffè~", "cafe\u0301 e bello", "ciao 👩\u200d💻 bello"]


@pytest.mark.parametrize("text", ["ciao\nbello", HOSTILE, "ciao ~ bello\n e ~", "~", *EDGES])
def test_text_it_cannot_encode_is_refused_as_the_local_engine_refuses_it(
    remote: RemoteBackend, no_bytes_engine: Engine, text: str
) -> None:
    """The server answered HTTP 500 "unordered_map::at"; the local engine names the character,
    where it is, and how many others it cannot encode."""
    with pytest.raises(UnencodableTextError) as local:
        no_bytes_engine.count_tokens(text)
    with pytest.raises(UnencodableTextError) as served:
        remote.count_tokens(text)
    assert str(served.value) == str(local.value)
    assert served.value.index == local.value.index


def test_a_draft_and_a_chat_it_cannot_encode_are_refused_as_locally(
    remote: RemoteBackend, no_bytes_engine: Engine
) -> None:
    """In the draft the character is placed in the author's text; a chat whose format has
    line breaks the model cannot write is the model's failure: it cannot chat."""

    def refusals(backend: RemoteBackend | Engine) -> list[str]:
        said = []
        with pytest.raises(UnencodableTextError) as draft:
            build_window("La casa era buia.\nE la notte", budget=200, count=backend.count_tokens)
        said.append(str(draft.value))
        with pytest.raises(ChatFormatError) as chat:
            fit_chat(
                [{"role": "user", "content": "ciao"}],
                budget=200,
                count=backend.count_tokens,
                render=lambda messages: backend.chat_prompt(messages, FALLBACK),
            )
        said.append(str(chat.value))
        return said

    local, served = refusals(no_bytes_engine), refusals(remote)
    assert served == local
    assert "of the draft" in served[0] and served[1].startswith("this model cannot chat")


class CountedPosts:
    """The requests `backend` makes to its server, counted."""

    def __init__(self, backend: RemoteBackend) -> None:
        self.paths: list[str] = []
        post = backend.client.post

        def counted(path: str, body: dict[str, Any]) -> Any:
            self.paths.append(path)
            return post(path, body)

        backend.client.post = counted  # type: ignore[method-assign]


@contextmanager
def gateway(server: LlamaServer, refused: str) -> Iterator[str]:
    """A gateway in front of `server` (as a proxy forwards to one) that refuses, HTTP 403,
    every request whose body holds `refused`; its URL."""

    class Forward(http.server.BaseHTTPRequestHandler):
        def _forward(self, body: bytes | None) -> None:
            if body is not None and refused.encode() in body:
                status, answer = 403, json.dumps({"error": {"code": 403, "message": "forbidden by policy"}}).encode()
            else:
                request = urllib.request.Request(
                    server.url + self.path, data=body, method=self.command, headers={"Content-Type": "application/json"}
                )
                try:
                    with urllib.request.urlopen(request, timeout=30) as response:
                        status, answer = response.status, response.read()
                except urllib.error.HTTPError as error:
                    status, answer = error.code, error.read()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def do_GET(self) -> None:
            self._forward(None)

        def do_POST(self) -> None:
            self._forward(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

        def log_message(self, *args: object) -> None:
            pass

    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Forward)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{proxy.server_address[1]}"
    finally:
        proxy.shutdown()
        proxy.server_close()
        thread.join(timeout=10)


def test_text_refused_for_another_reason_is_not_a_character_the_model_cannot_encode(
    no_bytes_server: LlamaServer, remote: RemoteBackend
) -> None:
    """A gateway refused text with "!" in it: the search for the character the vocabulary
    has no piece for found "!" (the gateway refused it alone too) and told the author the
    model could not write it, asking the server a dozen times, instead of what the gateway said."""
    text = "La casa era buia! E la notte"
    assert remote.count_tokens(text) > 1  # the model can write it
    with gateway(no_bytes_server, "!") as url:
        backend = RemoteBackend.connect(url, LoadOptions(model_path=Path("unused.gguf")))
        try:
            posts = CountedPosts(backend)
            with pytest.raises(ServerError) as refused:
                backend.count_tokens(text)
        finally:
            backend.close()
    assert not isinstance(refused.value, UnencodableTextError)
    assert "(HTTP 403): forbidden by policy" in str(refused.value)
    assert posts.paths == ["/tokenize"]


def test_many_characters_it_cannot_encode_are_counted_in_a_few_requests(
    remote: RemoteBackend, no_bytes_engine: Engine
) -> None:
    """Text in a script the vocabulary has no piece for (300 ideographs pasted into an Italian
    draft): counting the others asked about halves down to each one, 614 requests, and again
    at every pause in typing, when the window marker measures the draft."""
    ideographs = "".join(chr(0x4E00 + i) for i in range(300))
    text = f"La casa era buia. {ideographs} E la notte"
    with pytest.raises(UnencodableTextError) as local:
        no_bytes_engine.count_tokens(text)
    posts = CountedPosts(remote)
    with pytest.raises(UnencodableTextError) as served:
        remote.count_tokens(text)
    assert len(posts.paths) <= 64  # a dozen to find the first, a few dozen at most to count the others
    assert (served.value.character, served.value.where) == (local.value.character, local.value.where)
    assert local.value.others == 299 and 0 < served.value.others < 299
    assert f"; at least {served.value.others} other characters too" in str(served.value)


@pytest.mark.parametrize("at", ["start", "end"])
def test_a_long_text_is_searched_in_a_few_requests(remote: RemoteBackend, no_bytes_engine: Engine, at: str) -> None:
    """Halving: a request per halving of 54,001 characters, and two more (the empty text,
    the character alone), not a request per character."""
    prose = "la casa era buia. " * 3000
    text = "~" + prose if at == "start" else prose + "~"
    with pytest.raises(UnencodableTextError) as local:
        no_bytes_engine.count_tokens(text)
    posts = CountedPosts(remote)
    with pytest.raises(UnencodableTextError) as served:
        remote.count_tokens(text)
    assert str(served.value) == str(local.value)
    assert len(posts.paths) <= len(text).bit_length() + 4
