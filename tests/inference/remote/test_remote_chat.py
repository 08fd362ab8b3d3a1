"""Prompts on a llama-server as locally: the chat in the model's own template, or, for a
model without one, in the fallback's turns (llama-server would put ChatML in its place);
an empty prompt from the model's BOS."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from gguf_models import write_llama_model
from llama_server import CONTEXT, LlamaServer, connect_to

from scriptorium import prompts
from scriptorium.inference.local.engine import Engine
from scriptorium.inference.core.load_options import LoadOptions


@pytest.fixture(scope="module")
def sentence_server(sentence_model: Path, server_logs: Path) -> Iterator[LlamaServer]:
    with LlamaServer(sentence_model, server_logs) as server:
        yield server


def _local(model: Path) -> Engine:
    return Engine.load(LoadOptions(model_path=model, n_ctx=CONTEXT))


def test_chat_uses_the_models_own_template(sentence_model: Path, sentence_server: LlamaServer) -> None:
    messages = [{"role": "user", "content": "ciao"}]
    remote, local = connect_to(sentence_server), _local(sentence_model)
    try:
        assert remote.chat_prompt(messages) == local.chat_prompt(messages) == "user: ciao\nassistant:"
    finally:
        remote.close()
        local.close()


def test_an_empty_prompt_to_a_model_without_bos_starts_from_its_bos(gguf_dir: Path, server_logs: Path) -> None:
    from scriptorium.inference.core.events import GenerationDone
    from scriptorium.inference.core.settings import PRESETS, LogitBias

    model = write_llama_model(gguf_dir / "no-bos.gguf", kind="sentence", add_bos=False)
    settings = PRESETS["greedy"].with_changes(max_tokens=3)
    with LlamaServer(model, server_logs) as server:
        remote, local = connect_to(server), _local(model)
        try:
            done = [list(backend.generate("", settings, LogitBias()))[-1] for backend in (remote, local)]
        finally:
            remote.close()
            local.close()
    assert all(isinstance(d, GenerationDone) for d in done)
    assert done[0].prompt_tokens == done[1].prompt_tokens == 1 and done[0].text == done[1].text


def test_a_model_without_a_template_talks_in_the_fallbacks_turns(random_model: Path, server_logs: Path) -> None:
    messages = [{"role": "system", "content": "Sei un aiuto."}, {"role": "user", "content": "ciao"}]
    fallback = prompts.packaged_text(prompts.CHAT_FALLBACK)
    with LlamaServer(random_model, server_logs) as server:
        remote, local = connect_to(server), _local(random_model)
        try:
            assert remote.facts.has_chat_template is local.facts.has_chat_template is False
            assert remote.chat_prompt(messages, fallback) == local.chat_prompt(messages, fallback)
        finally:
            remote.close()
            local.close()
