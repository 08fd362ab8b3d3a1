"""The KV figure of a llama-server is this app's slot's: another client's, on a server with
several slots (`--parallel`), is not this app's cache."""

from __future__ import annotations

import json
import urllib.request
from contextlib import closing
from pathlib import Path
from typing import Any

from llama_server import CONTEXT, LlamaServer

from scriptorium.inference.core.events import GenerationDone
from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.inference.remote.remote import RemoteBackend
from scriptorium.inference.core.settings import PRESETS, LogitBias

ANOTHER_CLIENTS_PROMPT = "La casa era buia, e la notte più lunga. " * 8


def another_client_writes(server: LlamaServer) -> None:
    """A request of another program, with a prompt of its own, as a shared server gets."""
    body = json.dumps({"prompt": ANOTHER_CLIENTS_PROMPT, "n_predict": 2}).encode()
    request = urllib.request.Request(
        f"{server.url}/completion", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        response.read()


def slot_tokens(server: LlamaServer) -> list[int]:
    with urllib.request.urlopen(f"{server.url}/slots", timeout=10) as response:
        slots: list[dict[str, Any]] = json.loads(response.read())
    return [int(slot.get("n_prompt_tokens") or 0) for slot in slots]


def connect_and_write(server: LlamaServer) -> tuple[int | None, GenerationDone]:
    """(the KV tokens the backend shows at connection, its first generation's end)."""
    backend = RemoteBackend.connect(server.url, LoadOptions(model_path=Path("unused.gguf")))
    try:
        at_connection = backend.kv_usage().tokens
        settings = PRESETS["greedy"].with_changes(max_tokens=3)
        with closing(backend.generate("Era notte", settings, LogitBias())) as events:
            done = list(events)[-1]
        assert isinstance(done, GenerationDone) and backend.kv_usage().tokens == done.kv_cache.tokens
        return at_connection, done
    finally:
        backend.close()


def test_with_several_slots_the_figure_is_unknown_until_the_first_generation(
    random_model: Path, server_logs: Path
) -> None:
    """Connecting showed the fullest slot's tokens: another client's cache, not this app's."""
    with LlamaServer(random_model, server_logs, "--parallel", "2", context=2 * CONTEXT) as server:
        another_client_writes(server)
        at_connection, done = connect_and_write(server)
        slots = slot_tokens(server)
    assert at_connection is None
    assert done.kv_cache.tokens in slots  # once it wrote: the slot that served it


def test_with_one_slot_the_figure_is_that_slots(random_model: Path, server_logs: Path) -> None:
    """One slot is the one every request uses: what it holds is this app's cache to reuse."""
    with LlamaServer(random_model, server_logs) as server:
        another_client_writes(server)
        [held] = slot_tokens(server)
        at_connection, _ = connect_and_write(server)
    assert at_connection == held > 0
