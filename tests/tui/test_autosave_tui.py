"""Autosave in the app: typing saved within seconds of a pause (but not only after
one), on the store's own thread while keys keep coming."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from tui_helpers import autosaved, make_app, saved_draft, typed

from scriptorium.app import atomic
from scriptorium.app.sessions import SessionStore
from scriptorium.app.tui.manuscript import session_keeper
from scriptorium.app.tui.manuscript.session_keeper import AUTOSAVE_LONGEST_SECONDS, AUTOSAVE_SECONDS, SessionKeeper
from scriptorium.app.sessions.opening import DraftFile


async def test_typing_is_saved_within_seconds(tmp_path: Path) -> None:
    draft = tmp_path / "bozza.md"

    app = make_app(None, draft=draft)
    async with app.run_test() as pilot:
        await typed(pilot, "Appunti")
        await pilot.pause()
        assert not draft.exists() and app.main.draft.modified  # not on every keystroke
        await autosaved(pilot)
        assert draft.read_text(encoding="utf-8") == "Appunti"
        assert saved_draft(draft).text == "Appunti"
        assert not app.main.draft.modified


async def test_keys_are_taken_while_an_autosave_writes_the_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long session's file takes tens of milliseconds to write and fsync: an autosave
    writes it on the store's own thread, and the editor takes keys meanwhile."""
    draft = tmp_path / "bozza.md"
    armed, started, release, finished = threading.Event(), threading.Event(), threading.Event(), threading.Event()
    writers: list[str] = []
    real_write = atomic.write_bytes

    def held_write(path: Any, data: bytes, **kwargs: Any) -> Path:
        if armed.is_set() and Path(path).suffix == ".json":  # the session file, not the author's draft file
            writers.append(threading.current_thread().name)
            started.set()
            release.wait(10.0)
            finished.set()
        return real_write(path, data, **kwargs)

    monkeypatch.setattr(atomic, "write_bytes", held_write)

    app = make_app(None, draft=draft)
    async with app.run_test() as pilot:
        armed.set()
        await typed(pilot, "Uno")
        while not started.is_set():  # the autosave after the pause
            await pilot.pause(0.05)
        await typed(pilot, " due")
        assert app.main.draft.editor.text == "Uno due" and not finished.is_set()  # taken while the write waits
        assert writers == ["scriptorium-session-writes"]
        release.set()
        await autosaved(pilot)
        assert saved_draft(draft).text == "Uno due"


def test_autosave_waits_for_a_pause_but_not_for_ever(tmp_path: Path) -> None:
    """Each change moves the pending save to AUTOSAVE_SECONDS after it, until the first
    unsaved one is AUTOSAVE_LONGEST_SECONDS old; a save starts the count afresh. The keeper
    is given the clock, so the schedule, not the machine's speed, is under test."""
    keeper = SessionKeeper(SessionStore(), DraftFile(tmp_path / "bozza.md"), lambda *args, **kwargs: None)
    assert keeper.autosave_delay(1000.0) == AUTOSAVE_SECONDS
    assert keeper.autosave_delay(1000.3) == AUTOSAVE_SECONDS  # a keystroke moves it
    first_plus_longest = 1000.0 + AUTOSAVE_LONGEST_SECONDS
    now = first_plus_longest - AUTOSAVE_SECONDS / 2
    assert keeper.autosave_delay(now) == pytest.approx(first_plus_longest - now)  # not for ever
    assert keeper.autosave_delay(first_plus_longest + 5.0) == 0.0
    assert keeper.save_draft("ABC")
    assert keeper.autosave_delay(2000.0) == AUTOSAVE_SECONDS


async def test_typing_moves_the_pending_autosave(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    draft = tmp_path / "bozza.md"
    # Waits longer than any stall of a loaded machine between the two keys: at 0.5 s the first
    # timer could fire before "B" arrived, and then nothing was pending to be moved.
    monkeypatch.setattr(session_keeper, "AUTOSAVE_SECONDS", 60.0)
    monkeypatch.setattr(session_keeper, "AUTOSAVE_LONGEST_SECONDS", 120.0)

    app = make_app(None, draft=draft)
    async with app.run_test() as pilot:
        await pilot.press("A")
        first = app.manuscript.autosave.timer
        await pilot.press("B")
        second = app.manuscript.autosave.timer
        assert first is not None and second is not first and first._task is None  # moved, the old one stopped
        app.manuscript.autosave.save_now_if_pending()  # the moved save, made without its minute's wait
        await autosaved(pilot)
        assert draft.read_text(encoding="utf-8") == "AB"


async def test_a_save_due_at_once_is_made_and_the_app_closes_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After AUTOSAVE_LONGEST_SECONDS of typing without a pause the save is due at once
    (a delay of 0): it must still be made, and the timer must not fail (a Textual timer
    of 0 s raised ZeroDivisionError, which surfaced as a traceback when the app closed)."""
    draft = tmp_path / "bozza.md"

    app = make_app(None, draft=draft)
    async with app.run_test() as pilot:
        await pilot.press("A")
        monkeypatch.setattr(app.sessions, "autosave_delay", lambda now: 0.0)
        await pilot.press("B")
        await autosaved(pilot)
        assert draft.read_text(encoding="utf-8") == "AB"
