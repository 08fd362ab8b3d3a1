"""A llama-server that is not the one model the backend learnt at connection: restarted
with another model (it connects again), a replica, or a router of several models."""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_server import CONTEXT, LlamaServer, server_binary

from scriptorium.app.models.loading import BackendCrashed
from scriptorium.app.tui.generation import GenerationFailed, GenerationRequest, stream_generation
from scriptorium.inference.load_options import LoadOptions
from scriptorium.inference.remote import RemoteBackend
from scriptorium.inference.settings import PRESETS, LogitBias

GREEDY = PRESETS["greedy"]
PROMPT = "La casa era buia, e la notte"


@pytest.fixture
def server_logs(tmp_path: Path) -> Path:
    server_binary()  # skips, with the reason, when there is no binary
    return tmp_path


def test_a_server_restarted_with_another_model_is_connected_to_again(random_model: Path, sentence_model: Path,
                                                                      server_logs: Path) -> None:
    with LlamaServer(random_model, server_logs) as first:
        backend = RemoteBackend.connect(first.url, LoadOptions(model_path=Path("unused.gguf")))
    posted: list[object] = []
    try:
        with LlamaServer(sentence_model, server_logs, port=first.port, context=CONTEXT // 2):
            request = GenerationRequest(kind="draft", id=1, prompt=PROMPT, settings=GREEDY.with_changes(max_tokens=4),
                                        bias=LogitBias(), top_n=3)
            stream_generation(backend, request, posted.append, should_stop=lambda: False, frame_interval=0.0)
    finally:
        backend.close()
    # Nothing was asked with the old model's facts: the app is told to connect again.
    assert [type(m) for m in posted] == [GenerationFailed, BackendCrashed]
    assert f"now serves {sentence_model.name} with a context of {CONTEXT // 2}" in posted[0].error
    assert posted[1].backend is backend


def test_the_same_model_file_elsewhere_is_no_restart(sentence_model: Path, server_logs: Path,
                                                     tmp_path: Path) -> None:
    """Replicas behind a load balancer may keep the model in different folders."""
    import shutil

    from scriptorium.inference.events import GenerationDone

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

    from scriptorium.inference.remote_http import ServerError

    router = LlamaServer(sentence_model, server_logs)
    at = router.command.index("--model")
    router.command[at:at + 2] = ["--models-dir", str(sentence_model.parent)]  # no model of its own
    with router, pytest.raises(ServerError, match=re.escape("is a router of several models (--models-dir)")):
        RemoteBackend.connect(router.url, LoadOptions(model_path=Path("unused.gguf")))
