"""Text that exists only on disk is never destroyed: a save told to replace a draft file
another program changed copies the file's own text beside it first, and the author who
takes the file's text instead finds their own in a copy of the session. One ctrl+s used to
replace `porto.md`, and the line another program had appended was gone: no backup, not in
the session."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

from scriptorium.app.sessions import DraftConflictError, DraftFileError, DraftSession, SessionStore
from scriptorium.app.sessions.file_choice import take_file_text
from scriptorium.app.tui.manuscript.session_keeper import SessionKeeper
from scriptorium.app.sessions.opening import DraftFile

MINE = "Lucia scese al porto.\n"
APPENDED = "Una riga scritta con un altro programma.\n"


def porto(tmp_path: Path) -> Path:
    """The draft file, alone in its folder (tmp_path also holds the test's scriptorium home)."""
    folder = tmp_path / "romanzo"
    folder.mkdir()
    draft = folder / "porto.md"
    draft.write_text(MINE, encoding="utf-8")
    return draft


def appended_elsewhere(draft: Path) -> None:
    with draft.open("a", encoding="utf-8") as handle:
        handle.write(APPENDED)


def test_replacing_a_file_changed_elsewhere_sets_its_text_aside_first(tmp_path: Path, store: SessionStore) -> None:
    draft = porto(tmp_path)
    draft.chmod(0o640)
    session = store.open_draft(draft)
    appended_elsewhere(draft)
    session.set_text(MINE + "Il mare era calmo.\n")
    with pytest.raises(DraftConflictError):
        store.save(session)  # an autosave: the file is left alone
    assert draft.read_text(encoding="utf-8") == MINE + APPENDED
    kept: list[Path] = []
    store.save(session, overwrite_draft=True, set_aside=kept.append)
    [copy] = kept
    assert copy.parent == draft.parent and copy.name.startswith("porto.md.disk-")
    assert copy.read_text(encoding="utf-8") == MINE + APPENDED
    assert stat.S_IMODE(copy.stat().st_mode) == 0o640  # no more readable than the file was
    assert draft.read_text(encoding="utf-8") == MINE + "Il mare era calmo.\n"
    # The file is scriptorium's again: later saves, told to replace or not, keep nothing more.
    session.set_text(MINE + "Il mare era calmo. Poi il vento.\n")
    store.save(session, overwrite_draft=True, set_aside=kept.append)
    assert len(kept) == 1 and sorted(p.name for p in draft.parent.iterdir()) == ["porto.md", copy.name]


def test_the_copy_holds_the_files_bytes_whatever_they_are(tmp_path: Path, store: SessionStore) -> None:
    """A file another program wrote in another encoding is copied as it is, never decoded."""
    draft = porto(tmp_path)
    session = store.open_draft(draft)
    draft.write_bytes(b"\xff\xfe not UTF-8\r\n")
    session.set_text("Mio.")
    kept: list[Path] = []
    store.save(session, overwrite_draft=True, set_aside=kept.append)
    assert kept[0].read_bytes() == b"\xff\xfe not UTF-8\r\n"
    assert draft.read_text(encoding="utf-8") == "Mio."


def test_two_copies_in_the_same_second_do_not_overwrite_each_other(
    tmp_path: Path, store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    monkeypatch.setattr(time, "strftime", lambda *_: "20261203-134500")
    draft = porto(tmp_path)
    session = store.open_draft(draft)
    kept: list[Path] = []
    for n in range(2):
        draft.write_text(f"Altrove {n}.", encoding="utf-8")
        session.set_text(f"Mio {n}.")
        store.save(session, overwrite_draft=True, set_aside=kept.append)
    assert [p.name for p in kept] == ["porto.md.disk-20261203-134500", "porto.md.disk-20261203-134500-2"]
    assert [p.read_text(encoding="utf-8") for p in kept] == ["Altrove 0.", "Altrove 1."]


def test_a_read_only_file_is_neither_replaced_nor_copied(tmp_path: Path, store: SessionStore) -> None:
    draft = porto(tmp_path)
    session = store.open_draft(draft)
    appended_elsewhere(draft)
    draft.chmod(0o444)
    session.set_text("Mio.")
    with pytest.raises(DraftFileError, match="read-only"):
        store.save(session, overwrite_draft=True, set_aside=lambda copy: pytest.fail("set aside"))
    assert [p.name for p in draft.parent.iterdir()] == ["porto.md"]


def keeper_for(store: SessionStore, draft: Path, shown: list[str]) -> SessionKeeper:
    def notify(message: str, **_: Any) -> None:
        shown.append(message)

    keeper = SessionKeeper(store, DraftFile(draft), notify)
    keeper.adopt(store.open_draft(draft))
    return keeper


def test_the_keeper_asks_instead_of_replacing_then_says_where_the_files_text_went(
    tmp_path: Path, store: SessionStore
) -> None:
    draft = porto(tmp_path)
    shown: list[str] = []
    keeper = keeper_for(store, draft, shown)
    appended_elsewhere(draft)
    mine = MINE + "Il mare era calmo.\n"
    assert not keeper.save_draft(mine, asked=True)  # ctrl+s: never past the change
    assert keeper.conflict and draft.read_text(encoding="utf-8") == MINE + APPENDED
    assert "choose whose text it keeps" in shown[-1] and "replace it with your text" not in shown[-1]
    assert keeper.save_draft(mine, overwrite_file=True, asked=True)  # "Keep mine"
    copy = keeper.set_asides.last
    assert not keeper.conflict and copy is not None and copy.read_text(encoding="utf-8") == MINE + APPENDED
    assert copy.name in shown[-1] and draft.read_text(encoding="utf-8") == mine


def test_taking_the_files_text_keeps_the_authors_in_a_copy_of_the_session(tmp_path: Path, store: SessionStore) -> None:
    draft = porto(tmp_path)
    keeper = keeper_for(store, draft, [])
    appended_elsewhere(draft)
    mine = MINE + "Il mare era calmo.\n"
    assert not keeper.save_draft(mine)
    text, copy_title = take_file_text(keeper.draft, store, mine)
    assert keeper.save_draft(text)
    assert text == MINE + APPENDED and keeper.draft.text == text and not keeper.conflict
    assert draft.read_text(encoding="utf-8") == MINE + APPENDED
    assert SessionStore().load(keeper.draft.id).text == MINE + APPENDED
    [copy] = [s for s in SessionStore().list() if s.title == copy_title]
    copy_session = SessionStore().load(copy.id)
    assert isinstance(copy_session, DraftSession) and copy_session.text == mine and copy_session.draft_path is None
    assert keeper.save_draft(text)  # the file is the session's again: saves go on
