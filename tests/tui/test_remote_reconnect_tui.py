"""The app on a llama-server that changes under it: connected to again (the load key, or a
restart found by a generation or a candidate) with the author's adapter scale kept, a restart
with another model said as such, and the adapters the server was started with recorded."""

from __future__ import annotations

from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, AsyncIterator, Callable

from llama_server import LlamaServer, server_binary
from tui_helpers import generated, model_ready, ready, typed

from scriptorium.app.cli.common import SERVER_MODEL
from scriptorium.app.sessions.export import front_matter
from scriptorium.app.sessions.format import dumps, loads
from scriptorium.inference.remote.remote import remote_loader


async def test_candidates_go_on_with_the_model_connected_to_again(
    sentence_model: Path, random_model: Path, tmp_path: Path
) -> None:
    """A server restarted with another model is connected to again; a candidate asked for
    after that runs on the new connection, not the closed one the dialog opened with."""
    from scriptorium.app.tui.screens.candidates_screen import CandidatesScreen

    server_binary()

    async def written(pilot: Any) -> CandidatesScreen:
        screen = pilot.app.screen
        assert isinstance(screen, CandidatesScreen)
        while not all(c.finished or c.error for c in screen.candidates):
            await pilot.pause(0.05)  # not workers.wait_for_complete: connecting again cancels a worker
        return screen

    with LlamaServer(sentence_model, tmp_path) as first:
        async with ready(SERVER_MODEL, loader=remote_loader(first.url), size=(160, 48)) as (app, pilot):
            await typed(pilot, "Era notte")
            await pilot.press("ctrl+n")
            await written(pilot)
            first.stop()
            with LlamaServer(random_model, tmp_path, port=first.port):
                await pilot.press("plus")  # finds the restart, and the app connects again
                screen = await written(pilot)
                assert "it restarted" in (screen.candidates[-1].error or "")
                for _ in range(1200):  # a guard against hanging, not a time limit the test asserts
                    if app.engine_state.backend is not None and app.engine_state.backend.facts.path == random_model:
                        break
                    await pilot.pause(0.05)
                assert app.engine_state.backend is not None and app.engine_state.backend.facts.path == random_model
                await pilot.press("plus")
                screen = await written(pilot)
                assert screen.candidates[-1].finished and not screen.candidates[-1].error


async def test_connecting_again_keeps_the_lora_scale_in_use(
    random_model: Path, lora_adapter: Path, tmp_path: Path
) -> None:
    """A llama-server's adapter has no path here: connecting again (the load key, or a
    server restarted with another model) set the server's own scale over the author's."""
    server_binary()

    with LlamaServer(random_model, tmp_path, "--lora", str(lora_adapter)) as server:
        async with ready(SERVER_MODEL, loader=remote_loader(server.url), size=(120, 40)) as (app, pilot):
            assert app.engine_state.lora_scale == 1.0  # the server's own
            app.engine_state = replace(app.engine_state, lora_scale=0.25)  # as the sampler panel's keys set it
            await pilot.press("ctrl+l")
            await app.workers.wait_for_complete()
            await model_ready(pilot)
            assert (
                app.engine_state.backend is not None
                and app.engine_state.backend.lora_scale == 0.25
                and app.engine_state.lora_scale == 0.25
            )


@asynccontextmanager
async def app_on(server: LlamaServer) -> AsyncIterator[Any]:
    """The app connected to `server`: its Pilot."""
    async with ready(SERVER_MODEL, loader=remote_loader(server.url), size=(120, 40)) as (app, pilot):
        yield pilot


async def connected_again_after_a_generation(pilot: Any, restarted: Callable[[Any], bool]) -> None:
    """ctrl+g finds that the server restarted; wait until the app is connected to it again
    (`restarted(backend)` holds)."""
    app = pilot.app
    await pilot.press("ctrl+g")
    for _ in range(1200):  # a guard against hanging, not a time limit the test asserts
        if app.engine_state.backend is not None and restarted(app.engine_state.backend):
            break
        await pilot.pause(0.05)
    await model_ready(pilot)


async def test_a_server_restarted_with_another_adapter_is_connected_to_again_and_recorded(
    random_model: Path, lora_adapter: Path, tmp_path: Path
) -> None:
    """The same model, another --lora: the session went on recording the adapter the server
    was first started with, and the author's scale went to the new one under its id."""
    from gguf_adapters import write_lora_adapter

    server_binary()
    other = write_lora_adapter(tmp_path / "lora-altro.gguf", random_model, seed=3)

    with LlamaServer(random_model, tmp_path, "--lora", str(lora_adapter)) as first:
        async with app_on(first) as pilot:
            app = pilot.app
            await typed(pilot, "Era notte")
            await generated(pilot, "ctrl+g")
            await pilot.press("escape")
            first.stop()
            with LlamaServer(random_model, tmp_path, "--lora", str(other), port=first.port):
                await connected_again_after_a_generation(pilot, lambda backend: backend.adapter.path == other)
                await generated(pilot, "ctrl+g")
            recorded = [g.lora.name for g in app.sessions.draft.generations if g.finished_at]
            assert recorded[0] == lora_adapter.stem and recorded[-1] == other.stem, recorded


async def test_a_server_restarted_with_another_model_is_said_as_a_restart_not_a_reload(
    random_model: Path, sentence_model: Path, tmp_path: Path
) -> None:
    """The app said "Model engine restarting: Reloading random.gguf with the same settings":
    no engine ran here, and the server now served another model."""
    server_binary()

    with LlamaServer(random_model, tmp_path) as first:
        async with app_on(first) as pilot:
            app = pilot.app
            first.stop()
            with LlamaServer(sentence_model, tmp_path, port=first.port):
                await connected_again_after_a_generation(pilot, lambda backend: backend.facts.path == sentence_model)
            said = [(n.title, n.message) for n in app.notices if n.title not in ("Generation failed", "Token healing")]
            assert said == [
                (
                    "llama-server restarted",
                    f"Connecting again to {app.engine_state.backend.origin}, with the model "
                    "it serves now; what you asked was not sent: ask again "
                    "once it is connected. Your text is saved.",
                )
            ], said


async def test_a_server_started_with_several_adapters_records_them_all(
    random_model: Path, lora_adapter: Path, tmp_path: Path
) -> None:
    """Started with two --lora, the session recorded only the first: the text read as written
    with one adapter when the server had applied both."""
    from gguf_adapters import write_lora_adapter

    server_binary()
    other = write_lora_adapter(tmp_path / "lora-altro.gguf", random_model, seed=3)

    with LlamaServer(random_model, tmp_path, "--lora", str(lora_adapter), "--lora", str(other)) as server:
        async with app_on(server) as pilot:
            await typed(pilot, "Era notte")
            await generated(pilot, "ctrl+g")
            session = pilot.app.sessions.draft
            generation = session.generations[-1]
            assert generation.lora.name == lora_adapter.stem
            assert [(o.name, o.scale) for o in generation.other_loras] == [(other.stem, 1.0)]
            assert loads(dumps(session)).generations[-1].other_loras == generation.other_loras
            assert front_matter(session)["other_loras"] == [{"name": other.stem, "scale": 1.0}]
            assert generation.lora_text() == f"{lora_adapter.stem} ×1 + {other.stem} ×1"
