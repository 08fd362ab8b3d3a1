"""Sessions: round trips, ids, listing, rename/delete, model passages and the draft file."""

from __future__ import annotations

import gc
import json
import os
import stat
from pathlib import Path

import pytest

from scriptorium.app import paths
from scriptorium.app.sessions import format as session_format
from scriptorium.app.sessions import (
    ChatSession,
    DraftConflictError,
    DraftFileError,
    DraftSession,
    ModelSpan,
    SessionError,
    SessionStore,
    make_session_id,
    slugify,
)


def test_draft_round_trip_is_equal(store: SessionStore, rich_draft: DraftSession) -> None:
    store.save(rich_draft)
    loaded = SessionStore().load(rich_draft.id)
    assert loaded == rich_draft
    assert isinstance(loaded, DraftSession)
    g1, g2, g3 = loaded.generations
    assert (g1.outcome, g2.outcome, g3.outcome) == ("accepted", "partly_accepted", "rejected")
    assert g2.accepted_text == " Gulls cried overhead."
    assert g2.lora is not None and g2.lora.scale == 0.5
    assert g2.sampler["temperature"] == 1.1 and g2.seed == 99
    assert g2.bias.entries == ((42, 2.0), (7, -100.0))
    assert g2.bias.summary == "byte tokens 16000–16255 banned (256); 42: +2; 7: -100"
    assert g1.tokens is not None and g1.tokens[0].top[1][2:] == (0.0123457, True)  # p to six significant digits, banned
    assert g3.model.name == "Other" and g3.tokens is None
    assert g2.sampler_settings() is not None and g2.sampler_settings().temperature == 1.1


def test_recorded_alternatives_are_left_alone_by_the_garbage_collector(
    store: SessionStore, rich_draft: DraftSession
) -> None:
    """Twelve a token, hundreds of thousands in a long session: plain tuples of plain values,
    which the collector stops tracking, so its full passes during a stream do not walk them."""
    store.save(rich_draft)
    loaded = SessionStore().load(rich_draft.id)
    assert isinstance(loaded, DraftSession)
    gc.collect()
    for session in (rich_draft, loaded):  # as recorded from the engine's events, as read back
        alternatives = [alt for g in session.generations for token in g.tokens or () for alt in token.top]
        assert alternatives and not any(gc.is_tracked(alt) for alt in alternatives)


def test_chat_round_trip_is_equal(store: SessionStore, chat: ChatSession) -> None:
    store.save(chat)
    loaded = SessionStore().load(chat.id)
    assert loaded == chat
    assert [turn.role for turn in loaded.turns] == ["user", "assistant", "user", "assistant"]
    assert loaded.turns[-1].content == "Knee." and loaded.generation("g2").outcome == "rejected"
    assert loaded.messages()[0] == {"role": "system", "content": "You are terse."}


def test_file_is_documented_versioned_json(store: SessionStore, rich_draft: DraftSession) -> None:
    store.save(rich_draft)
    path = paths.sessions_dir() / f"{rich_draft.id}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == "scriptorium-session" and data["version"] == 2
    assert data["kind"] == "draft" and data["draft"]["text"] == rich_draft.text
    assert set(data["generations"][0]) >= {
        "model",
        "lora",
        "sampler",
        "seed",
        "logit_bias",
        "outcome",
        "tokens",
        "started_at",
        "finished_at",
        "accepted_text",
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_ids_are_dated_slugs_and_unique(store: SessionStore) -> None:
    first = store.create_draft(title="Chapter One: The Sea!")
    second = store.create_draft(title="Chapter One: The Sea!")
    assert first.id.endswith("-chapter-one-the-sea") and second.id == first.id + "-2"
    assert slugify("Глава 1 — Море") == "глава-1-море" and slugify("  ") == "untitled"
    assert make_session_id("x")[:4].isdigit()


def test_save_writes_only_when_something_changed(store: SessionStore, rich_draft: DraftSession) -> None:
    assert store.save(rich_draft) is True
    assert store.save(rich_draft) is False
    rich_draft.set_text(rich_draft.text + " More.")
    assert store.save(rich_draft) is True


def test_list_latest_rename_delete(store: SessionStore, rich_draft: DraftSession, chat: ChatSession) -> None:
    store.save(rich_draft)
    store.save(chat)
    os.utime(store.path_for(rich_draft.id), (1, 1))  # the chat is now clearly the newest file
    listed = {s.id: s for s in store.list()}
    assert set(listed) == {rich_draft.id, chat.id}
    summary = listed[rich_draft.id]
    assert (summary.title, summary.kind, summary.model) == ("Chapter: One", "draft", "Other")
    assert summary.words == rich_draft.word_count() and summary.generations == 3 and summary.file_size > 0
    assert store.latest() == chat
    renamed = store.rename(rich_draft.id[:-3], "Chapter One, revised")
    assert SessionStore().load(rich_draft.id).title == "Chapter One, revised" == renamed.title
    with pytest.raises(SessionError, match="cannot be empty"):
        store.rename(chat.id, "   ")
    store.delete(chat.id)
    assert [s.id for s in store.list()] == [rich_draft.id]
    with pytest.raises(SessionError, match="no session"):
        store.load(chat.id)


def test_words_of_chinese_and_japanese_are_counted_a_character_each(store: SessionStore) -> None:
    """They write no spaces: split() counted a Japanese paragraph as one word."""
    session = store.create_draft(text="東京の夜は静かだった。彼女は「まだ？」と言った。\n\nEra notte, and 我们 too.")
    assert session.word_count() == 10 + 9 + 4 + 2  # "Era notte, and … too." and 我们
    store.save(session)
    assert [s.words for s in store.list() if s.id == session.id] == [25]


def test_words_below_chinese_and_japanese_are_the_runs_between_spaces() -> None:
    """Below the first Chinese or Japanese code point a word is a run of non-spaces, counted
    by str.split; it must count what the pattern counts, for every kind of space there is."""
    import random
    import re

    from scriptorium.app.sessions.model import CJK_CHARACTERS, CJK_PUNCTUATION, FIRST_CJK, count_words

    word = re.compile(f"[{CJK_CHARACTERS}]|[^\\s{CJK_PUNCTUATION}{CJK_CHARACTERS}]+")
    below = [chr(c) for c in range(ord(FIRST_CJK)) if not 0xD800 <= c <= 0xDFFF]
    spaces = [c for c in below if c.isspace()]
    assert len(spaces) > 20  # not only " \t\n": U+00A0, U+2028, U+3000's neighbours below it...
    draw = random.Random(7)
    for _ in range(200):
        text = "".join(draw.choice(spaces) if draw.random() < 0.3 else draw.choice(below) for _ in range(60))
        assert count_words(text) == len(word.findall(text)), repr(text)
    assert count_words("") == 0


def test_ambiguous_prefix_and_missing_store(store: SessionStore) -> None:
    assert store.list() == [] and store.latest() is None
    store.create_draft(title="a")
    store.create_draft(title="a")
    with pytest.raises(SessionError, match="matches several sessions"):
        store.load(make_session_id("a")[:10])


def test_model_passages_follow_edits(store: SessionStore, generate) -> None:
    session = store.create_draft(text="Hello.")
    g = generate(session, " The model wrote this.")
    session.accept(g, g.text, 6)
    assert session.spans == [ModelSpan(start=6, end=28, generation="g1")]
    session.set_text("Oh. Hello. The model wrote this.")  # typed before: passage shifts
    assert session.text[session.spans[0].start : session.spans[0].end] == " The model wrote this."
    session.set_text("Oh. Hello. The model really wrote this.")  # typed inside: split, author's word unmarked
    assert [session.text[s.start : s.end] for s in session.spans] == [" The model ", "wrote this."]
    session.set_text("Oh. Hello. The model wrote this.")  # deleted again: parts merge
    assert [session.text[s.start : s.end] for s in session.spans] == [" The model wrote this."]
    session.set_text("Oh. Hello.")
    assert session.spans == []


def test_a_text_brought_back_whole_gets_its_passages_back(store: SessionStore, generate) -> None:
    """Undo then redo in the editor: read as a diff, the text coming back was the author's."""
    session = store.create_draft(text="Hello.")
    g = generate(session, " The model wrote this.")
    session.accept(g, g.text, 6)
    session.set_text("Hello. Mine.")
    session.set_text("Hello.")  # undone
    assert session.spans == []
    session.set_text("Hello. The model wrote this.")  # redone
    assert session.spans == [ModelSpan(start=6, end=28, generation="g1")]
    session.set_text("Hello. The model wrote that.")  # an edit still splits it as before
    assert [session.text[s.start : s.end] for s in session.spans] == [" The model wrote th", "."]


def test_word_by_word_acceptance_accumulates(store: SessionStore, generate) -> None:
    session = store.create_draft(text="A")
    g = generate(session, " b c")
    session.accept(g, " b", 1)
    assert g.outcome == "partly_accepted"
    session.accept(g, " c", 3)
    assert g.outcome == "accepted" and g.accepted_text == " b c"
    assert session.spans == [ModelSpan(start=1, end=5, generation="g1")]


def test_draft_file_saved_with_the_session(tmp_path: Path, store: SessionStore, generate) -> None:
    draft = tmp_path / "novel.md"
    draft.write_text("It began.", encoding="utf-8")
    draft.chmod(0o640)
    session = store.open_draft(draft)
    assert session.text == "It began." and session.title == "novel"
    g = generate(session, " It ended.")
    session.accept(g, g.text, len(session.text))
    store.save(session)
    assert draft.read_text(encoding="utf-8") == "It began. It ended."
    assert stat.S_IMODE(draft.stat().st_mode) == 0o640
    reopened = SessionStore().open_draft(draft)
    assert reopened.id == session.id and reopened.spans == session.spans


def test_draft_edited_elsewhere_is_not_overwritten(tmp_path: Path, store: SessionStore) -> None:
    draft = tmp_path / "novel.md"
    draft.write_text("Mine.", encoding="utf-8")
    session = store.open_draft(draft)
    draft.write_text("Edited in another editor.", encoding="utf-8")
    session.set_text("Mine, continued.")
    with pytest.raises(DraftConflictError, match="changed on disk"):
        store.save(session)
    assert draft.read_text(encoding="utf-8") == "Edited in another editor."
    assert SessionStore().load(session.id).text == "Mine, continued."  # the session itself was saved
    store.save(session, overwrite_draft=True)
    assert draft.read_text(encoding="utf-8") == "Mine, continued."
    draft.write_text("Edited again elsewhere.", encoding="utf-8")
    assert SessionStore().open_draft(draft).text == "Edited again elsewhere."  # reopening takes the file


def test_text_written_on_after_a_conflict_is_kept_when_reopening_takes_the_file(
    tmp_path: Path, store: SessionStore
) -> None:
    """The file changed elsewhere; the author wrote on here (each save of the file refused,
    the session saved). Reopening took the file's text and dropped all of that silently."""
    draft = tmp_path / "novel.md"
    draft.write_text("Mine.", encoding="utf-8")
    session = store.open_draft(draft)
    store.save(session)
    draft.write_text("Edited in another editor.", encoding="utf-8")
    session.set_text("Mine, and an hour more.")
    with pytest.raises(DraftConflictError):
        store.save(session)
    notes: list[str] = []
    reopened = SessionStore().open_draft(draft, notes)
    assert reopened.text == "Edited in another editor."
    [note] = notes
    assert "changed by another program" in note and "“novel (copy)”" in note
    [copy_id] = [s.id for s in SessionStore().list() if s.title == "novel (copy)"]
    copy = SessionStore().load(copy_id)
    assert isinstance(copy, DraftSession) and copy.text == "Mine, and an hour more." and copy.draft_path is None
    assert SessionStore().take_draft_file(copy) is None  # opened from the list, it shows the author's text


def test_a_read_only_draft_file_is_never_written(tmp_path: Path, store: SessionStore) -> None:
    """The atomic write renames over the file, which its read-only mode does not stop: an
    autosave changed a chapter the author had made read-only to protect it."""
    draft = tmp_path / "finito.md"
    draft.write_text("Finished.", encoding="utf-8")
    draft.chmod(0o444)
    session = store.open_draft(draft)
    session.set_text("Finished. Or not.")
    for overwrite in (False, True):  # ctrl+s past a conflict does not override it either
        with pytest.raises(DraftFileError, match="finito.md is read-only"):
            store.save(session, overwrite_draft=overwrite)
    assert draft.read_text(encoding="utf-8") == "Finished."
    assert SessionStore().load(session.id).text == "Finished. Or not."  # the session itself was saved
    draft.chmod(0o644)
    store.save(session)
    assert draft.read_text(encoding="utf-8") == "Finished. Or not."


def test_crash_between_draft_and_session_write_keeps_newest_text(
    tmp_path: Path, store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    draft = tmp_path / "novel.md"
    session = store.open_draft(draft)  # not there yet: created on first save
    assert not draft.exists()
    session.set_text("First words.")
    store.save(session)
    session.set_text("First words. Second words.")
    monkeypatch.setattr(store, "_write_session", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        store.save(session)
    assert draft.read_text(encoding="utf-8") == "First words. Second words."
    assert SessionStore().open_draft(draft).text == "First words. Second words."


def test_draft_symlink_is_followed(tmp_path: Path, store: SessionStore) -> None:
    real = tmp_path / "real.md"
    real.write_text("x", encoding="utf-8")
    link = tmp_path / "link.md"
    link.symlink_to(real)
    session = store.open_draft(link)
    session.set_text("y")
    store.save(session)
    assert link.is_symlink() and real.read_text(encoding="utf-8") == "y"
    # The same file, opened by its own path or through another link, is the same session.
    assert store.open_draft(real).id == session.id
    (tmp_path / "other-link.md").symlink_to(real)
    assert store.open_draft(tmp_path / "other-link.md").id == session.id


def test_non_utf8_draft_is_refused_in_one_line(tmp_path: Path, store: SessionStore) -> None:
    draft = tmp_path / "latin1.md"
    draft.write_bytes("café".encode("latin-1"))
    with pytest.raises(SessionError, match="not UTF-8") as info:
        store.open_draft(draft)
    assert "\n" not in str(info.value)
    assert draft.read_bytes() == "café".encode("latin-1")


def test_session_format_ignores_unknown_keys_and_bad_spans(store: SessionStore, rich_draft: DraftSession) -> None:
    data = session_format.to_dict(rich_draft)
    data["future_key"] = {"x": 1}
    data["draft"]["model_spans"].append([10_000, 10_001, "g9"])
    assert session_format.from_dict(data) == rich_draft
