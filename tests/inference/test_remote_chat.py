"""The chat on a llama-server: in the model's own template, or, for a model without one,
in the fallback's turns as locally (llama-server would put ChatML in its place)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from llama_server import CONTEXT, LlamaServer, server_binary

from scriptorium import prompts
from scriptorium.inference.engine import Engine
from scriptorium.inference.load_options import LoadOptions
from scriptorium.inference.remote import RemoteBackend


@pytest.fixture(scope="module")
def server_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    server_binary()  # skips the module, with the reason, when there is no binary
    return tmp_path_factory.mktemp("llama-server-logs")


@pytest.fixture(scope="module")
def sentence_server(sentence_model: Path, server_logs: Path) -> Iterator[LlamaServer]:
    with LlamaServer(sentence_model, server_logs) as server:
        yield server


def _connect(server: LlamaServer) -> RemoteBackend:
    return RemoteBackend.connect(server.url, LoadOptions(model_path=Path("unused.gguf")))


def _local(model: Path) -> Engine:
    return Engine.load(LoadOptions(model_path=model, n_ctx=CONTEXT))


def test_chat_uses_the_models_own_template(sentence_model: Path, sentence_server: LlamaServer) -> None:
    messages = [{"role": "user", "content": "ciao"}]
    remote, local = _connect(sentence_server), _local(sentence_model)
    try:
        assert remote.chat_prompt(messages) == local.chat_prompt(messages) == "user: ciao\nassistant:"
    finally:
        remote.close()
        local.close()


def test_a_model_without_a_template_talks_in_the_fallbacks_turns(random_model: Path, server_logs: Path) -> None:
    messages = [{"role": "system", "content": "Sei un aiuto."}, {"role": "user", "content": "ciao"}]
    fallback = prompts.load(prompts.CHAT_FALLBACK)
    with LlamaServer(random_model, server_logs) as server:
        remote, local = _connect(server), _local(random_model)
        try:
            assert remote.facts.has_chat_template is local.facts.has_chat_template is False
            assert remote.chat_prompt(messages, fallback) == local.chat_prompt(messages, fallback)
        finally:
            remote.close()
            local.close()
