"""Session files written on the store's writing thread: the caller only encodes, a write
waiting its turn gives way to a newer one of the same file, whatever reads waits for the
writes in flight, and a failure is told once and forgotten when the next save works."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from scriptorium.app import atomic
from scriptorium.app.sessions import DraftSession, SessionStore
from scriptorium.app.tui.manuscript.session_keeper import SessionKeeper
from scriptorium.app.sessions.opening import DraftFile
from scriptorium.app.sessions.writes import BackgroundWrites

WAIT = 10.0
"""Seconds to wait for something a thread does at once: only a hang takes this long."""


class HeldWrites:
    """atomic.write_bytes, held at the door until released; records which thread wrote what."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.release = threading.Event()
        self.started = threading.Event()
        self.written: list[tuple[str, str]] = []  # (thread name, file name)
        self.failures = 0
        real = atomic.write_bytes

        def held(path: Any, data: bytes, **kwargs: Any) -> Path:
            self.started.set()
            assert self.release.wait(WAIT), "the write was never released"
            if self.failures:
                self.failures -= 1
                raise atomic.WriteError(f"cannot write {Path(path).name}: No space left on device")
            self.written.append((threading.current_thread().name, Path(path).name))
            return real(path, data, **kwargs)

        monkeypatch.setattr(atomic, "write_bytes", held)


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> HeldWrites:
    return HeldWrites(monkeypatch)


def _on_disk(store: SessionStore, session: DraftSession) -> str:
    return store.path_for(session.id).read_text(encoding="utf-8")


def test_writes_run_in_order_and_a_waiting_one_gives_way_to_a_newer_one() -> None:
    writes, gate, ran = BackgroundWrites(), threading.Event(), []
    writes.submit("first", lambda: gate.wait(WAIT))  # holds the thread: the rest wait their turn
    writes.submit("a", lambda: ran.append("a, old"))
    writes.submit("b", lambda: ran.append("b"))
    writes.submit("a", lambda: ran.append("a, new"))  # replaces the waiting one, in its place
    gate.set()
    assert writes.run("c", lambda: ran.append("c") or "result") == "result"  # after everything asked before
    assert ran == ["a, new", "b", "c"]


def test_a_waited_write_raises_where_it_is_waited_for_and_the_thread_goes_on() -> None:
    writes, told = BackgroundWrites(), []

    def fails() -> None:
        raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone"):
        writes.run("a", fails)
    writes.submit("b", fails, after=told.append)
    writes.submit("c", lambda: None, after=lambda error: 1 / 0)  # a failing listener stops nothing
    assert writes.run("d", lambda: "still writing") == "still writing"
    assert [str(error) for error in told] == ["disk gone"]


def test_the_writing_thread_is_not_a_daemon_and_ends_when_nothing_is_left() -> None:
    """Not a daemon: a process on its way out finishes its writes. Ended when idle: nothing
    keeps such a process alive once they are done."""
    writes = BackgroundWrites()
    thread = writes.run("a", threading.current_thread)
    assert thread is not threading.current_thread() and not thread.daemon
    thread.join(WAIT)
    assert not thread.is_alive()
    assert writes.run("b", threading.current_thread) is not thread  # a new one, when there is work again


def test_a_background_save_returns_before_its_file_is_written(
    store: SessionStore, rich_draft: DraftSession, held: HeldWrites
) -> None:
    rich_draft.set_text("Nuovo testo.")
    told: list[BaseException | None] = []
    assert store.save(rich_draft, in_background=True, after=told.append)  # returns while the write is held
    assert held.started.wait(WAIT)
    assert told == []
    held.release.set()
    store.flush()
    assert told == [None]
    assert [name for name, _ in held.written] == ["scriptorium-session-writes"]
    assert SessionStore().load(rich_draft.id).text == "Nuovo testo."


def test_reading_or_deleting_a_session_waits_for_its_write(
    store: SessionStore, rich_draft: DraftSession, held: HeldWrites
) -> None:
    rich_draft.set_text("Scritto dopo.")
    store.save(rich_draft, in_background=True)
    threading.Timer(0.05, held.release.set).start()
    assert SessionStore().load(rich_draft.id).text == "Scritto dopo."  # any store: one writing thread
    rich_draft.set_text("Ancora.")
    held.release.clear()
    store.save(rich_draft, in_background=True)
    threading.Timer(0.05, held.release.set).start()
    store.delete(rich_draft.id)
    store.flush()
    assert not store.path_for(rich_draft.id).exists()  # the waiting write did not bring it back


def _keeper(store: SessionStore, shown: list[str]) -> SessionKeeper:
    def notify(message: str, **_: Any) -> None:
        shown.append(message)

    return SessionKeeper(store, DraftFile(None), notify)


def test_a_failed_background_write_is_shown_once_until_a_save_works(store: SessionStore, held: HeldWrites) -> None:
    shown: list[str] = []
    keeper = _keeper(store, shown)
    held.release.set()
    assert keeper.save_draft("Zero.")
    held.failures = 2
    for text in ("Uno.", "Uno. Due."):
        assert keeper.save_draft(text, in_background=True)
        store.flush()
    assert shown == [
        "session not saved: cannot write " + store.path_for(keeper.draft.id).name + ": No space left on device"
    ]
    assert keeper.save_draft("Uno. Due. Tre.", in_background=True)  # this one is written
    store.flush()
    held.failures = 1
    keeper.save_draft("Uno. Due. Tre. Quattro.", in_background=True)
    store.flush()
    assert len(shown) == 2  # failing again after a save that worked is news
    assert SessionStore().load(keeper.draft.id).text == "Uno. Due. Tre."


def test_a_draft_file_conflict_is_not_shown_again_because_the_session_was_written(
    tmp_path: Path, store: SessionStore
) -> None:
    shown: list[str] = []
    keeper = _keeper(store, shown)
    keeper.draft_file.path = draft = tmp_path / "bozza.md"
    assert keeper.save_draft("La mia bozza.", in_background=True)
    draft.write_text("Cambiata altrove.", encoding="utf-8")
    for text in ("La mia bozza, poi.", "La mia bozza, poi ancora."):
        assert not keeper.save_draft(text, in_background=True)
        store.flush()
    assert len(shown) == 1 and "changed on disk" in shown[0]
    assert draft.read_text(encoding="utf-8") == "Cambiata altrove."
    assert SessionStore().load(keeper.draft.id).text == "La mia bozza, poi ancora."  # the session has the text


def test_an_explicit_save_is_on_disk_when_it_returns(store: SessionStore, held: HeldWrites) -> None:
    shown: list[str] = []
    keeper = _keeper(store, shown)
    held.release.set()
    assert keeper.save_draft("Prima.", in_background=True)
    assert keeper.save_draft("Prima. Dopo.")  # waits for its write, and for the one asked before
    assert _on_disk(store, keeper.draft) and SessionStore().load(keeper.draft.id).text == "Prima. Dopo."
    assert shown == []


def _keeper_with_a_saved_draft(
    tmp_path: Path, store: SessionStore, held: HeldWrites, shown: list[str]
) -> SessionKeeper:
    keeper = _keeper(store, shown)
    keeper.draft_file.path = tmp_path / "bozza.md"
    held.release.set()
    assert keeper.save_draft("Zero.")
    return keeper


def test_a_full_disk_is_not_said_to_have_saved_the_session(
    tmp_path: Path, store: SessionStore, held: HeldWrites
) -> None:
    """Draft and session on one full disk: the draft file's failure said 'session saved, but
    the draft file was not' before the session's own write had been tried, and then the
    session's failure said it was not saved. Only what is known is said."""
    shown: list[str] = []
    keeper = _keeper_with_a_saved_draft(tmp_path, store, held, shown)
    held.failures = 2  # the draft file, then the session
    assert not keeper.save_draft("Uno.", in_background=True)
    store.flush()
    assert len(shown) == 2 and "session not saved" in shown[1], shown
    assert "session saved" not in shown[0] and "session was saved" not in shown[0], shown
    held.failures = 1  # the draft file only, in a save that waits for the session's write
    assert not keeper.save_draft("Uno. Due.")
    assert shown[2].endswith("(the session was saved)"), shown


def test_a_save_where_both_writes_fail_says_both_in_one_line(
    tmp_path: Path, store: SessionStore, held: HeldWrites
) -> None:
    """ctrl+s on a full disk, the draft file and the session both failing: only the session's
    failure was said, so the author believed the draft file saved."""
    shown: list[str] = []
    keeper = _keeper_with_a_saved_draft(tmp_path, store, held, shown)
    held.failures = 2  # the draft file, then the session
    assert not keeper.save_draft("Uno.")
    assert len(shown) == 1, shown
    assert "bozza.md" in shown[0] and f"{keeper.draft.id}.json" in shown[0], shown
    assert shown[0].count("No space left on device") == 2, shown


def test_a_session_that_fails_under_a_saved_draft_file_says_the_file_was_saved(
    tmp_path: Path, store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the session's write failing (its folder on a full disk), the author was told
    "Not saved: session not saved: ..." and took the draft, saved in its file, for lost."""
    from scriptorium.app.sessions import SessionError

    shown: list[str] = []
    keeper = _keeper(store, shown)
    keeper.draft_file.path = tmp_path / "bozza.md"
    assert keeper.save_draft("Zero.")

    def disk_full(*args: object, **kwargs: object) -> None:
        raise SessionError("session not saved: cannot write it: No space left on device")

    monkeypatch.setattr(SessionStore, "_write_session", disk_full)
    assert keeper.save_draft("Uno.", in_background=True)
    store.flush()
    assert not keeper.save_draft("Uno. Due.")
    assert (tmp_path / "bozza.md").read_text(encoding="utf-8") == "Uno. Due."
    assert len(shown) == 1 and shown[0].endswith("No space left on device (bozza.md was saved)"), shown


def test_a_draft_file_deleted_or_moved_away_is_written_again_and_said(tmp_path: Path, store: SessionStore) -> None:
    """Another program moved the draft file away (renamed in a file manager): the next
    autosave wrote it again at its old path without a word, and the author had two files."""
    shown: list[str] = []
    keeper = _keeper(store, shown)
    keeper.draft_file.path = draft = tmp_path / "bozza.md"
    assert keeper.save_draft("Uno.")
    draft.rename(tmp_path / "capitolo-1.md")
    assert keeper.save_draft("Uno. Due.", in_background=True)
    store.flush()
    assert draft.read_text(encoding="utf-8") == "Uno. Due."
    assert len(shown) == 1 and shown[0].startswith(f"{draft} was deleted or moved by another program"), shown
    assert keeper.save_draft("Uno. Due. Tre.")
    assert len(shown) == 1, shown


def test_a_draft_file_failure_is_said_once_by_an_autosave_and_the_save_after_it(
    tmp_path: Path, store: SessionStore
) -> None:
    """The draft file read-only: the autosave said it "(the session is being saved)", then
    the save on quitting said it again "(the session was saved)", two toasts of one failure."""
    shown: list[str] = []
    keeper = _keeper(store, shown)
    keeper.draft_file.path = draft = tmp_path / "bozza.md"
    assert keeper.save_draft("Uno.")
    draft.chmod(0o444)
    assert not keeper.save_draft("Uno. Due.", in_background=True)
    assert not keeper.save_draft("Uno. Due.")
    assert len(shown) == 1 and "read-only" in shown[0], shown


def test_a_draft_file_moved_away_with_nothing_typed_since_is_not_written_again(
    tmp_path: Path, store: SessionStore
) -> None:
    """Quitting without a key typed wrote the file moved away (`git mv`, a file manager)
    again at its old path: a stray copy beside the moved one, said by a notification that
    went with the screen. What happened is kept for the terminal after the app closes."""
    shown: list[str] = []
    keeper = _keeper(store, shown)
    keeper.draft_file.path = draft = tmp_path / "bozza.md"
    assert keeper.save_draft("Uno.")
    draft.rename(tmp_path / "capitolo-1.md")
    assert keeper.save_draft("Uno.")
    assert keeper.save_draft("Uno.")
    assert not draft.exists()
    assert len(shown) == 1 and "it was not written there again" in shown[0], shown
    assert keeper.gone_files.after_exit() == [shown[0].removesuffix(" Typing or ctrl+s writes it there.")]
    assert store.load(keeper.draft.id).text == "Uno."
    assert keeper.save_draft("Uno.", asked=True)  # ctrl+s
    assert draft.read_text(encoding="utf-8") == "Uno."
    assert len(shown) == 2 and keeper.gone_files.after_exit()[0].endswith("it was written there again."), shown
