"""A llama-server whose model is a SentencePiece vocabulary with no byte tokens: llama.cpp
throws on a character it has no piece for, and the server answers with HTTP 500
"unordered_map::at". The remote backend connects, and refuses such text as the local
engine does."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from llama_server import LlamaServer, server_binary

from scriptorium.inference.load_options import LoadOptions
from scriptorium.inference.remote import RemoteBackend


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


def test_connecting_to_a_model_with_no_byte_tokens(remote: RemoteBackend) -> None:
    """Connecting asks the server to tokenize a character no vocabulary has (where are the
    byte tokens?) and "<|im_start|>" (is the ChatML in /props the model's own template?):
    this vocabulary cannot write either, and connecting failed with "refused /tokenize
    (HTTP 500): unordered_map::at"."""
    assert remote.byte_token_ids == ()
    assert not remote.facts.has_chat_template  # the server's ChatML stand-in, not the model's
    assert remote.count_tokens("ciao bello") > 1
