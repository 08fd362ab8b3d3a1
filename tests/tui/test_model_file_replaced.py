"""The author re-converts their GGUF to the same path while the app runs: the next load of
that path (the load key, or the reload after the engine died) loads another model. The
author is told which, and the session records the new model, as after a switch."""

from __future__ import annotations

import hashlib
import os
import signal
import threading
from pathlib import Path

import gguf_models
import pytest
from test_isolated_tui import engine_in_child, notifications
from tui_helpers import copy_of, generated, model_ready, ready, typed, until

from scriptorium.app.models import loading
from scriptorium.app.models.replaced import REPLACED_TITLE
from scriptorium.inference.process.isolated import IsolatedBackend


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def test_a_model_file_replaced_by_another_model_is_said_at_the_reload_and_recorded(
    random_model: Path, phrases_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The load key loaded the file's new model in silence, and the generations written
    before its hash was computed recorded the old model's hash for it."""
    model = copy_of(random_model, tmp_path)
    hashing_allowed = threading.Event()
    hashing_allowed.set()

    def held_hash(path: Path, *args: object) -> str:
        assert hashing_allowed.wait(30), "the hash was never released"
        return sha256(path)

    monkeypatch.setattr(loading, "file_sha256", held_hash)

    async with ready(model) as (app, pilot):
        first = app.engine_state.backend
        await typed(pilot, "C'era")
        await generated(pilot, "ctrl+g")
        model.write_bytes(phrases_model.read_bytes())  # re-converted to the same path
        hashing_allowed.clear()  # a big file's hash takes seconds: the author writes meanwhile
        await pilot.press("ctrl+l", "enter")
        await until(
            pilot,
            lambda: app.engine_state.backend is not None and app.engine_state.backend is not first,
            "the reload",
        )
        said = [n for n in app.notices if n.title == REPLACED_TITLE]
        assert len(said) == 1, notifications(app)
        assert "mio.gguf changed on disk" in said[0].message
        assert "scriptorium-test-random" in said[0].message.split("→")[0]
        assert "scriptorium-test-phrases" in said[0].message.split("→")[1]
        assert app.engine_state.model_status.facts.name == "scriptorium-test-phrases"
        await pilot.press("escape")
        await generated(pilot, "ctrl+g")
        hashing_allowed.set()
        await model_ready(pilot)
        before, after = app.sessions.draft.generations
        assert (before.model.name, before.model.sha256) == ("scriptorium-test-random", sha256(random_model))
        assert (after.model.name, after.model.sha256) == ("scriptorium-test-phrases", sha256(phrases_model))


async def test_other_weights_under_the_same_header_are_found_by_the_hash_after_the_engine_died(
    random_model: Path, tmp_path: Path
) -> None:
    """A checkpoint trained further and converted again: the same name, shape and size,
    other weights. The reload after the engine died loaded it in silence, and the session
    recorded the old file's hash for the new model."""
    model = copy_of(random_model, tmp_path)
    retrained = gguf_models.write_llama_model(tmp_path / "retrained.gguf", kind="random", seed=7)
    assert retrained.stat().st_size == model.stat().st_size and sha256(retrained) != sha256(model)

    reload_allowed = threading.Event()
    reload_allowed.set()

    def held_load(*args: object, **kwargs: object) -> IsolatedBackend:
        assert reload_allowed.wait(30), "the reload was never released"
        return IsolatedBackend.load(*args, **kwargs)

    async with ready(model, loader=held_load) as (app, pilot):
        first = await engine_in_child(pilot)
        await typed(pilot, "C'era")
        await generated(pilot, "ctrl+g")
        await pilot.press("escape")
        # The engine dies first; the file is written while the reload waits. Written
        # before the next ctrl+g, the check before a generation would see the change and
        # ask for the load key instead (test_a_model_file_written_again_under_the_loaded_model_is_not_generated_with).
        reload_allowed.clear()
        os.kill(first.pid, signal.SIGKILL)
        await pilot.press("ctrl+g")
        await until(
            pilot,
            lambda: app.engine_state.backend is None and app.engine_state.model_status.state == "loading",
            "the reload's start",
        )
        model.write_bytes(retrained.read_bytes())
        reload_allowed.set()
        await until(
            pilot,
            lambda: app.engine_state.backend is not None and app.engine_state.backend is not first,
            "the reload",
        )
        await model_ready(pilot)
        said = [n.message for n in app.notices if n.title == REPLACED_TITLE and "→" in n.message]
        assert len(said) == 1, notifications(app)
        old, new = said[0].split("→")
        assert sha256(random_model)[:12] in old and sha256(retrained)[:12] in new, said
        await generated(pilot, "ctrl+g")
        assert app.sessions.draft.generations[-1].model.sha256 == sha256(retrained)


async def test_an_adapter_trained_further_in_place_is_found_by_its_hash(
    random_model: Path, lora_adapter: Path, tmp_path: Path
) -> None:
    """The adapter written again to its path (trained further: the same header, other
    weights): the load key loaded it in silence."""
    from gguf_adapters import write_lora_adapter

    adapter = copy_of(lora_adapter, tmp_path, "mia-lora.gguf")
    further = write_lora_adapter(tmp_path / "further.gguf", random_model, seed=3)
    assert further.stat().st_size == adapter.stat().st_size and sha256(further) != sha256(adapter)

    async with ready(random_model, lora=adapter) as (app, pilot):
        adapter.write_bytes(further.read_bytes())
        await pilot.press("ctrl+l", "enter")
        await model_ready(pilot)
        said = [n.message for n in app.notices if n.title == REPLACED_TITLE]
        assert len(said) == 1, notifications(app)
        old, new = said[0].removeprefix("mia-lora.gguf changed on disk since it was last loaded: ").split("→")
        assert old.strip() == f"sha256 {sha256(lora_adapter)[:12]}", said
        assert new.startswith(f" sha256 {sha256(further)[:12]};"), said
        await typed(pilot, "C'era")
        await generated(pilot, "ctrl+g")
        assert app.sessions.draft.generations[-1].lora.sha256 == sha256(further)


async def test_a_model_file_written_again_under_the_loaded_model_is_not_generated_with(
    random_model: Path, phrases_model: Path, tmp_path: Path
) -> None:
    """The GGUF converted again over the loaded one: llama.cpp maps the file, so the engine
    read the new bytes under the old model's layout, and generated on, its text recorded
    as the old model's. The author is told, and ctrl+l loads what the file holds now."""
    model = copy_of(random_model, tmp_path)

    async with ready(model) as (app, pilot):
        with model.open("r+b") as file:  # in place, as a converter opening it "wb" writes it
            file.truncate(0)
            file.write(phrases_model.read_bytes())
        await typed(pilot, "C'era")
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert app.main.last_generation is None  # nothing generated: it would be recorded as the old model's
        said = [n.message for n in app.notices if n.title == REPLACED_TITLE]
        assert len(said) == 1 and said[0].startswith("mio.gguf changed on disk since it was loaded"), said
        assert said[0].endswith("to load what it holds now."), said
        await pilot.press("ctrl+l", "enter")
        await model_ready(pilot)
        done = await generated(pilot, "ctrl+g")
        assert done.completion_tokens > 0 and app.engine_state.model_status.facts.name == "scriptorium-test-phrases"


async def test_a_model_file_moved_away_under_the_loaded_model_is_still_generated_with(
    random_model: Path, tmp_path: Path
) -> None:
    """The file moved to another folder while loaded: the engine maps it whole still, so
    nothing stands in the way of writing (it was taken for a file written again)."""
    model = copy_of(random_model, tmp_path)

    async with ready(model) as (app, pilot):
        model.rename(tmp_path / "altrove.gguf")
        await typed(pilot, "C'era")
        done = await generated(pilot, "ctrl+g")
        assert done.completion_tokens > 0
        assert not [n for n in app.notices if n.title == REPLACED_TITLE]
