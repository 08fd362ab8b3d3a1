"""The app on the engine in a child process (IsolatedBackend, what `scriptorium` runs):
the same text as in-process, cancel, scoring and the LoRA scale through the pipe, and
a child that dies (a llama.cpp abort, an out-of-memory kill) taking nothing with it.

The abort is the worker's test-only hook (worker.TEST_ABORT_AFTER_TOKENS): llama.cpp's
own ggml_abort after N tokens, as a GGML_ASSERT does. The known bad inputs are refused
before llama.cpp sees them; this is the next one nobody has found yet.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from pathlib import Path
from typing import Any, Callable

import pytest
from textual.pilot import Pilot

from tui_helpers import (
    generated,
    loader_wrapping,
    make_app,
    model_ready,
    notifications,
    ready,
    typed,
    until,
    window_marked,
)

from scriptorium.inference.local.engine import Engine
from scriptorium.inference.core.errors import EngineCrashed
from scriptorium.inference.core.events import TokenEvent
from scriptorium.inference.process.isolated import IsolatedBackend
from scriptorium.inference.core.settings import preset
from scriptorium.inference.process.worker import TEST_ABORT_AFTER_TOKENS, TEST_HOLD_AFTER_TOKENS

OPENING = "C'era una volta"
TEXT = "La casa era buia, e la notte più lunga. Il gatto dorme sul letto."
LONG_GREEDY = preset("greedy").with_changes(max_tokens=200, preset="greedy")


async def engine_in_child(pilot: Pilot[Any]) -> IsolatedBackend:
    """The loaded model's backend (ready() waited for the load): the engine in its child process."""
    backend = pilot.app.engine_state.backend
    assert isinstance(backend, IsolatedBackend)
    return backend


async def test_a_generation_through_the_child_writes_what_the_engine_writes_in_process(random_model: Path) -> None:
    async def scenario(loader: Callable[..., Any]) -> tuple[str, int, int]:
        async with ready(random_model, loader=loader) as (app, pilot):
            await typed(pilot, OPENING)
            done = await generated(pilot, "ctrl+g")
            assert app.main.draft.editor.ghost is not None and app.main.draft.editor.ghost.text == done.text
            # The panels were fed from the child's events: the KV panel shows the cache after the last token.
            assert app.main.sidebar.kv.usage == done.kv_cache
            return done.text, done.completion_tokens, len(app.main.last_generation[1])

    isolated = await scenario(IsolatedBackend.load)
    assert isolated == await scenario(Engine.load)
    assert isolated[1] == isolated[2] == 12


async def test_escape_stops_the_childs_generation_and_keeps_what_it_wrote(
    random_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The child holds after 3 tokens until cancelled: Esc lands while the model writes, on any machine.
    monkeypatch.setenv(TEST_HOLD_AFTER_TOKENS, "3")

    async with ready(random_model, loader=IsolatedBackend.load, sampler=LONG_GREEDY) as (app, pilot):
        await typed(pilot, OPENING)
        await pilot.press("ctrl+g")
        await until(
            pilot,
            lambda: app.main.generations.active is not None and app.main.generations.active.tokens != [],
            "the first token on screen",
        )
        await pilot.press("escape")
        await app.main.wait_until_idle()
        await pilot.pause()
        _, tokens, done = app.main.last_generation
        # Where the cancel met the child (at its first, second or third token) is a race;
        # that it stopped there, not at 200, is not.
        assert done.stop_reason == "cancelled" and 1 <= done.completion_tokens <= 3
        assert len(tokens) == done.completion_tokens
        ghost = app.main.draft.editor.ghost
        assert ghost is not None and ghost.text == "".join(t.text for t in tokens) + done.tail_text


async def test_scoring_through_the_child_colours_every_token(random_model: Path) -> None:
    engine = Engine.load(make_app(random_model)._initial_load)
    expected = [(event.start, event.id) for event in engine.score(TEXT, top_n=5) if hasattr(event, "start")]
    engine.close()

    async with ready(random_model, loader=IsolatedBackend.load, top_n=5, size=(120, 40)) as (app, pilot):
        app.main.draft.editor.load_text(TEXT)
        await pilot.press("f9")
        await until(pilot, lambda: not app.main.draft.scoring, "the scoring to end")
        await pilot.pause()
        records = [
            (span.start, span.tokens[0].id)
            for span in app.main.draft.editor.spans.spans
            if span.tokens and span.tokens[0].source.kind == "scored"
        ]
        assert records == expected
        assert app.main.sidebar.kv.usage.tokens == len(expected) + 1  # BOS too


async def test_the_lora_scale_keys_reach_the_adapter_in_the_child(random_model: Path, lora_adapter: Path) -> None:
    async with ready(random_model, lora=lora_adapter, loader=IsolatedBackend.load) as (app, pilot):
        await typed(pilot, "Era notte")
        with_adapter = await generated(pilot, "ctrl+g")
        assert with_adapter.text.split()[0] == "gatto"  # the adapter's favourite word
        await pilot.press("escape", "ctrl+t", *"l" * 10, "escape")
        assert app.engine_state.lora_scale == 0.0
        without = await generated(pilot, "ctrl+g")
        assert app.engine_state.backend.lora_scale == 0.0  # set in the child before it generated
        assert "gatto" not in without.text.split()[:1]


@pytest.mark.parametrize("death", ["abort", "oom-kill"])
async def test_a_dead_engine_takes_nothing_with_it_and_comes_back(
    random_model: Path, tmp_path: Path, scriptorium_home: Path, monkeypatch: pytest.MonkeyPatch, death: str
) -> None:
    """llama.cpp aborting mid-generation, or the kernel killing the engine while it waits:
    the app keeps running, says what llama.cpp said, has saved the text typed just before
    (draft file and session), reloads the model, and the next ctrl+g writes."""
    draft = tmp_path / "romanzo.md"
    if death == "abort":
        monkeypatch.setenv(TEST_ABORT_AFTER_TOKENS, "3")

    async with ready(random_model, draft=draft, loader=IsolatedBackend.load) as (app, pilot):
        first = await engine_in_child(pilot)
        # Only the first engine is rigged: the one started after the crash is healthy.
        monkeypatch.delenv(TEST_ABORT_AFTER_TOKENS, raising=False)
        await typed(pilot, OPENING)
        if death == "oom-kill":
            os.kill(first.pid, signal.SIGKILL)
        await pilot.press("ctrl+g")
        await until(
            pilot,
            lambda: app.engine_state.backend is not None and app.engine_state.backend is not first,
            "the model loaded again",
        )
        await model_ready(pilot)
        assert app.is_running and app.engine_state.model_status.state == "ready"
        said = "\n".join(notifications(app))
        if death == "abort":
            assert "(SIGABRT)" in said and "GGML_ASSERT(scriptorium test hook: abort after 3 tokens) failed" in said
            ghost = app.main.draft.editor.ghost
            assert ghost is not None and ghost.text  # the suggestion so far stays
        else:
            assert "(SIGKILL; the system may have run out of memory)" in said
        assert "Reloading random.gguf with the same settings. Your text is saved." in said
        assert app.engine_state.backend.options == first.options
        assert app.main.draft.editor.text == OPENING
        assert draft.read_text(encoding="utf-8") == OPENING
        [session] = [p for p in (scriptorium_home / "data" / "sessions").iterdir() if p.suffix == ".json"]
        assert json.loads(session.read_text(encoding="utf-8"))["draft"]["text"] == OPENING
        await pilot.press("escape")
        done = await generated(pilot, "ctrl+g")
        assert done.completion_tokens == 12 and done.stop_reason == "length"
        assert all(isinstance(t, TokenEvent) for t in app.main.last_generation[1])


async def test_an_engine_that_dies_after_its_file_was_cut_short_is_not_kept_as_the_model(
    random_model: Path, tmp_path: Path
) -> None:
    """The model file truncated under the running app (an interrupted copy, a full disk),
    then the engine dies: the reload refuses the file, and the dead engine is not kept as
    "still writing with" it, where every request found it dead and reloaded it again, for ever."""
    model = tmp_path / "copy.gguf"
    model.write_bytes(random_model.read_bytes())

    async with ready(model, loader=IsolatedBackend.load) as (app, pilot):
        first = await engine_in_child(pilot)
        with model.open("r+b") as file:
            file.truncate(model.stat().st_size // 2)
        os.kill(first.pid, signal.SIGKILL)
        await typed(pilot, OPENING)
        await pilot.press("ctrl+g")
        await until(pilot, lambda: app.engine_state.model_status.state == "failed", "the reload refused")
        await model_ready(pilot)
        for _ in range(10):  # a loop would find the engine dead again and reload, and again
            await pilot.pause(0.05)
        said = notifications(app)
        assert app.engine_state.backend is None and "truncated" in app.engine_state.model_status.error
        assert not any("Still writing with" in line for line in said), said
        assert sum("SIGKILL" in line for line in said) == 1, said
        assert app.main.draft.editor.text == OPENING


async def test_candidates_after_an_engine_death_wait_for_the_reload_and_are_written(
    phrases_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine dies under the first candidate: the others ran on the dead engine, each
    failing at once with the same notification, and '+' failed for as long as the dialog
    was open ('the model's engine was closed'). They wait for the reloaded model instead."""
    from scriptorium.app.tui.screens.candidates_screen import CandidatesScreen

    monkeypatch.setenv(TEST_ABORT_AFTER_TOKENS, "2")
    sampled = preset("prose").with_changes(seed=1234, max_tokens=6, preset="custom")

    async with ready(phrases_model, sampler=sampled, loader=IsolatedBackend.load, size=(130, 40)) as (app, pilot):
        first = app.engine_state.backend
        monkeypatch.delenv(TEST_ABORT_AFTER_TOKENS)  # only the first engine aborts
        await typed(pilot, OPENING)
        # The window marker counts the opening once typing pauses: done before the
        # candidates start, it does not find the dead engine itself (the app would then
        # say its last words too, if it were first to report them).
        await window_marked(pilot)
        await pilot.press("ctrl+n")
        screen = app.screen
        assert isinstance(screen, CandidatesScreen)
        await until(pilot, lambda: all(c.finished for c in screen.candidates), "every candidate to end")
        assert app.engine_state.backend is not None and app.engine_state.backend is not first
        failed, *others = screen.candidates
        assert failed.error is not None and "(SIGABRT)" in failed.error
        assert all(c.error is None and c.done is not None for c in others), [c.error for c in others]
        assert sum("SIGABRT" in line for line in notifications(app)) == 1, notifications(app)
        await pilot.press("plus")
        await until(pilot, lambda: all(c.finished for c in screen.candidates), "the fourth candidate")
        assert len(screen.candidates) == 4 and screen.candidates[3].error is None


async def test_an_engine_that_dies_at_every_reload_is_not_reloaded_for_ever(random_model: Path) -> None:
    """The window marker counts the draft's tokens as soon as a model is ready: an engine
    that dies on that (llama.cpp's tokenizer aborting on the draft) died at every reload,
    and each death reloaded the model again, without end. The reloads stop, and say so."""
    loads: list[int] = []

    def dies(count: Callable[..., int]) -> Callable[..., int]:
        def dead(text: str) -> int:
            raise EngineCrashed("the model's engine stopped (SIGABRT): tokenizer.cpp:1: GGML_ASSERT(x) failed")

        return dead

    wrapped = loader_wrapping("count_tokens", dies)

    def loader(options, on_progress=None):  # type: ignore[no-untyped-def]
        loads.append(1)
        return wrapped(options, on_progress)

    async with ready(random_model, loader=loader) as (app, pilot):
        await typed(pilot, OPENING)
        await until(pilot, lambda: app.engine_state.model_status.state == "failed", "the reloads to stop")
        stopped_at = len(loads)
        for _ in range(20):  # a timer's worth and more: no reload comes after
            await pilot.pause(0.05)
        assert len(loads) == stopped_at <= 4
        assert "not loaded again" in app.engine_state.model_status.error
        assert app.main.draft.editor.text == OPENING
        # Found dead by the marker, not by a request of the author's: the app says its
        # last words, with the reload, once a death (a request that fails says its own).
        deaths = [m for m in notifications(app) if "GGML_ASSERT(x) failed" in m]
        assert deaths and "Reloading random.gguf" in deaths[0], notifications(app)


async def test_a_chat_reply_the_engine_died_writing_stays_as_far_as_it_got(
    sentence_model: Path, scriptorium_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a suggestion in the draft does: the reply vanished from the screen (and from the
    conversation) when llama.cpp aborted under it, though the author had read it."""
    monkeypatch.setenv(TEST_ABORT_AFTER_TOKENS, "3")

    async with ready(sentence_model, mode="chat", loader=IsolatedBackend.load) as (app, pilot):
        first = app.engine_state.backend
        monkeypatch.delenv(TEST_ABORT_AFTER_TOKENS)  # only the first engine aborts
        await typed(pilot, "Ciao")
        await pilot.press("enter")
        await until(
            pilot,
            lambda: app.engine_state.backend is not None and app.engine_state.backend is not first,
            "the reload",
        )
        await model_ready(pilot)
        chat = app.main.chat
        written = "".join(t.text for t in app.main.chat.versions.current().records)
        assert [m["role"] for m in chat.messages] == ["user", "assistant"]
        assert chat.messages[-1]["content"] == written and written
        app.manuscript.save_everything()
        app.sessions.store.flush()
        [session] = [
            json.loads(p.read_text(encoding="utf-8"))
            for p in (scriptorium_home / "data" / "sessions").iterdir()
            if p.suffix == ".json"
        ]
        [generation] = session["generations"]
        assert generation["stop_reason"] == "error" and generation["text"] == written
        turns = session["chat"]["turns"]
        assert [t["content"] for t in turns] == ["Ciao", written] and turns[1]["generation"] == generation["id"]
        done = await generated(pilot, "ctrl+r")  # the reply again, on the reloaded engine
        assert chat.messages[-1]["content"] == done.text and len(chat.versions) == 2


def test_quitting_while_a_hung_engine_loads_does_not_wait_for_it(random_model: Path) -> None:
    """The load's worker waits on the child's answer, and the app's exit waits for its
    workers: an engine that hung while loading (or a big model still loading) held the
    exit for ever, on a blank screen. The app's end ends the children still loading."""
    import threading

    from scriptorium.inference.process import isolated

    stopped: list[int] = []

    async def scenario() -> None:
        app = make_app(random_model, loader=IsolatedBackend.load)
        async with app.run_test() as pilot:
            await until(pilot, lambda: bool(isolated.LOADING), "the engine's child to start")
            [process] = list(isolated.LOADING)
            os.kill(process.pid, signal.SIGSTOP)  # before its load is done: a child starts in ~0.3 s at best
            stopped.append(process.pid)

    ended: list[bool] = []
    quitting = threading.Thread(target=lambda: ended.append(asyncio.run(scenario()) is None), daemon=True)
    quitting.start()
    quitting.join(60.0)  # far more than a kill takes: only a wait for ever fails it
    try:
        assert stopped and not quitting.is_alive() and ended == [True]
    finally:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


async def test_a_model_the_author_loads_starts_a_new_count_of_engine_deaths(random_model: Path) -> None:
    """Two deaths of one engine, then the author loads a model: its first death is its own
    first, reloaded, not the third in a row that leaves it unloaded."""
    engines: list[str] = []
    dying = iter(["dies", "dies", "lives", "dies", "lives"])

    def loader(options, on_progress=None):  # type: ignore[no-untyped-def]
        fate = next(dying)
        engines.append(fate)
        engine = Engine.load(options, on_progress)
        if fate == "dies":

            def dead(text: str) -> int:
                raise EngineCrashed("the model's engine stopped (SIGABRT) without a message")

            engine.count_tokens = dead  # type: ignore[method-assign]
        return engine

    async with ready(random_model, loader=loader) as (app, pilot):
        await typed(pilot, OPENING)  # the window marker's count finds each dying engine dead
        await until(
            pilot, lambda: len(engines) == 3 and app.engine_state.model_status.state == "ready", "the third engine"
        )
        app.load_model(app.engine_state.backend.options)  # the author loads it again (ctrl+l)
        await until(
            pilot, lambda: len(engines) == 5 and app.engine_state.model_status.state == "ready", "the fifth engine"
        )
        assert app.engine_state.model_status.state == "ready" and app.engine_state.backend is not None
