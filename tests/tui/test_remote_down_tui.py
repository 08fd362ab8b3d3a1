"""A llama-server that stops between generations: the panels say it is not answering (the
KV figures the last known), and the next ctrl+g once it runs again just writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from llama_server import LlamaServer, server_binary
from tui_helpers import generated, ready, typed, until

from scriptorium.app.cli.common import SERVER_MODEL
from scriptorium.inference.remote.remote import remote_loader


def panel(app: Any, name: str) -> str:
    return "\n".join(line.plain for line in getattr(app.main.sidebar, name).lines(60))


async def test_a_server_gone_between_generations_is_said_and_answers_again_once_back(
    random_model: Path, tmp_path: Path
) -> None:
    """ctrl+g said "cannot reach llama-server", yet the Model panel still said the model was
    ready and the KV panel showed its figures as if current."""
    server_binary()

    with LlamaServer(random_model, tmp_path) as first:
        async with ready(SERVER_MODEL, loader=remote_loader(first.url), size=(120, 48)) as (app, pilot):
            await typed(pilot, "Era notte")
            await generated(pilot, "ctrl+g")
            await pilot.press("escape")
            connected = app.engine_state.backend
            first.stop()
            app.notices.clear()
            await pilot.press("ctrl+g")
            await until(pilot, lambda: bool(app.notices), "the failure")
            await pilot.pause()
            said = [n.message for n in app.notices]
            again = f"once it runs again, {app.keys.key_display('draft.continue')} tries again"
            assert len(said) == 1 and again in said[0], said
            assert "not answering" in panel(app, "model"), panel(app, "model")
            assert "last known" in panel(app, "kv"), panel(app, "kv")
            with LlamaServer(random_model, tmp_path, port=first.port):
                done = await generated(pilot, "ctrl+g")
                assert done.completion_tokens > 0 and app.engine_state.backend is connected
                assert "not answering" not in panel(app, "model") and "last known" not in panel(app, "kv")
