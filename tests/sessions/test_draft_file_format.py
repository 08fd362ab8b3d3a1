"""The draft file's own form (BOM, CRLF or CR line breaks) survives a save, while inside
scriptorium the text has "\\n" line breaks only, as the editor and the model's offsets count."""

from __future__ import annotations

from pathlib import Path

import pytest

from scriptorium.app.sessions import DraftConflictError, SessionStore, draft_files


@pytest.mark.parametrize("newline, bom", [("\r\n", False), ("\r\n", True), ("\r", False), ("\n", True)])
def test_a_saved_draft_keeps_its_bom_and_line_breaks(
    tmp_path: Path, store: SessionStore, generate, newline: str, bom: bool
) -> None:
    """A CRLF draft was held with "\\r\\n" while accepted text had "\\n": every model passage
    after a line break sat one character off; a BOM typed before went into the middle."""
    draft = tmp_path / "capitolo.md"
    prefix = "\ufeff".encode() if bom else b""
    draft.write_bytes(prefix + newline.join(["Perché la città", "", "è bella"]).encode())
    session = store.open_draft(draft)
    assert session.text == "Perché la città\n\nè bella"
    g = generate(session, ".\nFine.")
    session.accept(g, g.text, len(session.text))
    assert [session.text[s.start : s.end] for s in session.spans] == [".\nFine."]
    session.set_text("Titolo\n" + session.text)  # typed at the very start
    store.save(session)
    assert draft.read_bytes() == prefix + newline.join(["Titolo", "Perché la città", "", "è bella.", "Fine."]).encode()
    reopened = SessionStore().open_draft(draft)
    assert reopened.id == session.id and reopened.text == session.text and reopened.spans == session.spans
    store.save(session)  # the file is the session's text in the file's form: no conflict


def test_a_file_changed_elsewhere_is_still_a_conflict(tmp_path: Path, store: SessionStore) -> None:
    draft = tmp_path / "note.md"
    draft.write_bytes(b"One.\r\nTwo.")
    session = store.open_draft(draft)
    draft.write_bytes(b"One.\r\nThree.")
    session.set_text("One.\nTwo, and more.")
    with pytest.raises(DraftConflictError):
        store.save(session)
    assert draft.read_bytes() == b"One.\r\nThree."


def test_line_breaks_the_editor_cannot_keep_are_said_at_opening(tmp_path: Path, store: SessionStore) -> None:
    """The editor splits on every str.splitlines break: a form feed or U+2028 became a
    plain line break on the next save, and a mixed CRLF/LF file all CRLF, unsaid."""
    draft = tmp_path / "mixed.md"
    draft.write_bytes("a\r\nb\nc\x0cd\u2028e".encode())
    notes: list[str] = []
    session = store.open_draft(draft, notes)
    assert session.text == "a\nb\nc\nd\ne"
    [note] = notes
    assert note.startswith("mixed.md:") and "(LF, form feed, U+2028 line separator) as CRLF" in note
    clean = tmp_path / "clean.md"
    clean.write_bytes(b"a\r\nb\r\n")
    notes.clear()
    store.open_draft(clean, notes)
    assert notes == []


def test_file_form_is_the_inverse_of_the_inside_form() -> None:
    for newline in ("\n", "\r\n", "\r"):
        for bom in (False, True):
            text = "x\ny\n\nz\n"
            assert draft_files.inside_form(draft_files.file_form(text, newline, bom)) == text
    # Text still holding "\r\n" (a session saved before) is not given a second "\r".
    assert draft_files.file_form("a\r\nb", "\r\n", False) == "a\r\nb"
