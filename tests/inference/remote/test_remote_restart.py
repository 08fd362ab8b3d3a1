"""A llama-server that is not the one model the backend learnt at connection: restarted
with another model (it connects again), a replica, or a router of several models."""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_server import CONTEXT, LlamaServer, server_binary

from scriptorium.app.models.loading import BackendCrashed
from scriptorium.app.tui.generation import GenerationFailed, stream_generation
from scriptorium.app.tui.generation_request import GenerationRequest
from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.inference.remote.remote import RemoteBackend
from scriptorium.inference.core.settings import PRESETS, LogitBias

GREEDY = PRESETS["greedy"]
PROMPT = "La casa era buia, e la notte"


@pytest.fixture
def server_logs(tmp_path: Path) -> Path:
    server_binary()  # skips, with the reason, when there is no binary
    return tmp_path


def _generated_after_restart(backend: RemoteBackend, restarted: LlamaServer) -> list[object]:
    """What a generation asked of `backend` posts once the server is `restarted` (then closed)."""
    posted: list[object] = []
    try:
        with restarted:
            request = GenerationRequest(
                kind="draft", id=1, prompt=PROMPT, settings=GREEDY.with_changes(max_tokens=4), bias=LogitBias(), top_n=3
            )
            stream_generation(backend, request, posted.append, should_stop=lambda: False, frame_interval=0.0)
    finally:
        backend.close()
    return posted


def test_a_server_restarted_with_another_model_is_connected_to_again(
    random_model: Path, sentence_model: Path, server_logs: Path
) -> None:
    with LlamaServer(random_model, server_logs) as first:
        backend = RemoteBackend.connect(first.url, LoadOptions(model_path=Path("unused.gguf")))
    posted = _generated_after_restart(
        backend, LlamaServer(sentence_model, server_logs, port=first.port, context=CONTEXT // 2)
    )
    # Nothing was asked with the old model's facts: the app is told to connect again.
    assert [type(m) for m in posted] == [GenerationFailed, BackendCrashed]
    assert f"now serves {sentence_model.name} with a context of {CONTEXT // 2}" in posted[0].error
    assert posted[1].backend is backend


def test_the_same_model_file_elsewhere_is_no_restart(sentence_model: Path, server_logs: Path, tmp_path: Path) -> None:
    """Replicas behind a load balancer may keep the model in different folders."""
    import shutil

    from scriptorium.inference.core.events import GenerationDone

    replica = tmp_path / "replica" / sentence_model.name
    replica.parent.mkdir()
    shutil.copyfile(sentence_model, replica)
    with LlamaServer(sentence_model, server_logs) as first:
        backend = RemoteBackend.connect(first.url, LoadOptions(model_path=Path("unused.gguf")))
    try:
        with LlamaServer(replica, server_logs, port=first.port):
            events = list(backend.generate(PROMPT, GREEDY.with_changes(max_tokens=4), LogitBias()))
    finally:
        backend.close()
    assert isinstance(events[-1], GenerationDone)


def test_a_router_of_several_models_is_one_line(sentence_model: Path, server_logs: Path) -> None:
    import re

    from scriptorium.inference.remote.remote_http import ServerError

    router = LlamaServer(sentence_model, server_logs)
    at = router.command.index("--model")
    router.command[at : at + 2] = ["--models-dir", str(sentence_model.parent)]  # no model of its own
    with router, pytest.raises(ServerError, match=re.escape("is a router of several models (--models-dir)")):
        RemoteBackend.connect(router.url, LoadOptions(model_path=Path("unused.gguf")))


def test_a_server_restarted_with_other_lora_adapters_is_connected_to_again(
    random_model: Path, lora_adapter: Path, server_logs: Path
) -> None:
    """The same model, another --lora: the request sent the author's scale to the new adapter
    under the old one's id, and the session recorded the old adapter."""
    from gguf_adapters import write_lora_adapter

    other = write_lora_adapter(server_logs / "lora-altro.gguf", random_model, seed=3)
    with LlamaServer(random_model, server_logs, "--lora", str(lora_adapter)) as first:
        backend = RemoteBackend.connect(first.url, LoadOptions(model_path=Path("unused.gguf")))
    posted = _generated_after_restart(
        backend, LlamaServer(random_model, server_logs, "--lora", str(other), port=first.port)
    )
    assert [type(m) for m in posted] == [GenerationFailed, BackendCrashed]
    assert f"now applies the LoRA adapters {other.name}, not {lora_adapter.name}: it restarted" in posted[0].error


def test_a_server_restarted_with_another_model_at_the_same_path_is_connected_to_again(
    random_model: Path, sentence_model: Path, server_logs: Path, tmp_path: Path
) -> None:
    """The model converted again on the server's machine, to the same path, and the server
    restarted: the same file name and context read as the same model, whose byte ids and
    facts were used with the new one."""
    model = tmp_path / "modello.gguf"
    model.write_bytes(random_model.read_bytes())
    with LlamaServer(model, server_logs) as first:
        backend = RemoteBackend.connect(first.url, LoadOptions(model_path=Path("unused.gguf")))
    model.write_bytes(sentence_model.read_bytes())
    posted = _generated_after_restart(backend, LlamaServer(model, server_logs, port=first.port))
    assert [type(m) for m in posted] == [GenerationFailed, BackendCrashed]
    assert "now serves another modello.gguf (its file type, special tokens or chat template differ)" in posted[0].error
