"""Memory and author's note in sessions (format version 2), exports, and version 1 files."""

from __future__ import annotations

import json

from scriptorium.app import paths
from scriptorium.app.sessions import DraftSession, SessionStore
from scriptorium.app.sessions import format as session_format
from scriptorium.app.sessions.export import render_markdown


def test_memory_and_note_round_trip(store: SessionStore, rich_draft: DraftSession, chat) -> None:
    rich_draft.memory, rich_draft.note, rich_draft.note_depth = "Ana is a sailor.\n", "[Tone: calm]", 1
    chat.memory = "The cat is called Nero."
    store.save(rich_draft)
    store.save(chat)
    loaded = SessionStore().load(rich_draft.id)
    assert (loaded.memory, loaded.note, loaded.note_depth) == ("Ana is a sailor.\n", "[Tone: calm]", 1)
    assert loaded == rich_draft and SessionStore().load(chat.id) == chat
    data = json.loads((paths.sessions_dir() / f"{rich_draft.id}.json").read_text(encoding="utf-8"))
    assert data["window"] == {"memory": "Ana is a sailor.\n", "note": "[Tone: calm]", "note_depth": 1}


def test_a_version_1_session_loads_without_memory_or_note(store: SessionStore, rich_draft: DraftSession) -> None:
    data = session_format.to_dict(rich_draft)
    data["version"] = 1
    del data["window"]
    path = paths.sessions_dir() / f"{rich_draft.id}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    loaded = SessionStore().load(rich_draft.id)
    assert (loaded.memory, loaded.note, loaded.note_depth) == ("", "", 3)
    assert loaded.text == rich_draft.text and loaded.generations == rich_draft.generations


def test_a_bad_note_depth_falls_back_and_a_wrong_type_is_named(rich_draft: DraftSession) -> None:
    data = session_format.to_dict(rich_draft)
    data["window"]["note_depth"] = 1000
    assert session_format.from_dict(data).note_depth == 3
    data["window"]["memory"] = 7
    try:
        session_format.from_dict(data)
    except session_format.FormatError as error:
        assert str(error) == "window.memory has the wrong type (int)"
    else:
        raise AssertionError("a number for the memory was accepted")


def test_the_export_front_matter_holds_memory_and_note(rich_draft: DraftSession) -> None:
    assert "memory:" not in render_markdown(rich_draft)
    rich_draft.memory, rich_draft.note, rich_draft.note_depth = "Ana is a sailor.", "[Tone: calm]", 2
    front = render_markdown(rich_draft).split("---\n")[1]
    assert "memory: Ana is a sailor.\n" in front and "authors_note: '[Tone: calm]'\n" in front
    assert "note_depth: 2\n" in front
