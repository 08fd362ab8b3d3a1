"""Saving a draft as a file names the session after it only where the app named it: a title
the author gave survives."""

from __future__ import annotations

from pathlib import Path

from scriptorium.app.sessions import SessionStore
from scriptorium.app.tui.manuscript.session_keeper import SessionKeeper
from scriptorium.app.sessions.opening import DraftFile

TEXT = "Lucia scese al porto quella mattina."


def _saved_as(store: SessionStore, path: Path, rename_to: str | None) -> str:
    keeper = SessionKeeper(store, DraftFile(None), lambda *_, **__: None)
    assert keeper.save_draft(TEXT, asked=True)
    assert keeper.draft is not None
    if rename_to:
        keeper.rename(keeper.draft.id, rename_to)
    keeper.draft_file.path = path
    assert keeper.save_draft(TEXT, asked=True)
    return store.load(keeper.draft.id).title


def test_save_as_keeps_a_title_the_author_set(tmp_path: Path, store: SessionStore) -> None:
    """ "Il porto di Lucia" became "porto" on saving the untitled draft as porto.md."""
    assert _saved_as(store, tmp_path / "porto.md", "Il porto di Lucia") == "Il porto di Lucia"


def test_save_as_names_a_session_the_app_titled_after_the_file(tmp_path: Path, store: SessionStore) -> None:
    """Titled by its first words, then by its file: each save-as names it after the new file."""
    keeper = SessionKeeper(store, DraftFile(None), lambda *_, **__: None)
    for name in ("porto", "molo"):
        keeper.draft_file.path = tmp_path / f"{name}.md"
        assert keeper.save_draft(TEXT, asked=True) and keeper.draft is not None
        assert store.load(keeper.draft.id).title == name


def test_two_chats_are_told_apart_by_their_first_words(store: SessionStore) -> None:
    """Two chat sessions were both "Chat" in the sessions list."""
    titles = []
    for first in ("Dove va Lucia?", "Scrivi una poesia sul mare"):
        keeper = SessionKeeper(store, DraftFile(None), lambda *_, **__: None)
        assert keeper.save_chat([{"role": "user", "content": first}])
        assert keeper.chat is not None
        titles.append(store.load(keeper.chat.id).title)
    assert titles == ["Chat: Dove va Lucia?", "Chat: Scrivi una poesia sul mare"]


def test_a_renamed_chat_keeps_its_title(store: SessionStore) -> None:
    keeper = SessionKeeper(store, DraftFile(None), lambda *_, **__: None)
    assert keeper.save_chat([{"role": "user", "content": "Ciao"}]) and keeper.chat is not None
    keeper.rename(keeper.chat.id, "Domande")
    assert keeper.save_chat([{"role": "user", "content": "Ciao"}, {"role": "assistant", "content": "Salve"}])
    assert store.load(keeper.chat.id).title == "Domande"
