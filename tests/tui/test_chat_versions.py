"""The chat pane's reply versions on their own: which one shows, what its note says, and
what the edit key takes away and puts back (the Pilot tests in test_chat_tokens.py drive
the keys)."""

from __future__ import annotations

from scriptorium.app.i18n.language import ENGLISH
from scriptorium.app.tui.widgets.chat_versions import ReplyVersions


def versions() -> ReplyVersions:
    return ReplyVersions(ENGLISH, lambda binding_id: f"<{binding_id}>")


def test_a_new_reply_starts_afresh_and_a_reroll_is_its_next_version() -> None:
    kept = versions()
    kept.finished("Ciao", [], None)
    assert len(kept) == 1 and kept.title() == "" and kept.note() == ""
    kept.finished("Salve", [], "re-roll", "stopped")
    assert kept.title() == "version 2/2 · re-roll"
    assert kept.note() == "version 2/2 · re-roll · <chat.version_previous> <chat.version_next>"
    current = kept.current()
    assert current is not None and (current.text, current.ending) == ("Salve", "stopped")
    kept.finished("Buongiorno", [], None)  # the next turn's reply
    assert len(kept) == 1 and kept.title() == ""


def test_moving_stops_at_either_end() -> None:
    kept = versions()
    kept.start_from("Ciao", [])
    kept.finished("Salve", [], "re-roll")
    assert kept.move(1) is None
    older = kept.move(-1)
    assert older is not None and older.text == "Ciao" and older.label == "first"
    assert kept.move(-1) is None and kept.title() == "version 1/2 · first"


def test_a_snapshot_puts_back_the_versions_and_the_one_shown() -> None:
    kept = versions()
    kept.start_from("Ciao", [])
    kept.finished("Salve", [], "re-roll")
    kept.move(-1)
    taken = kept.snapshot()
    kept.forget()
    assert len(kept) == 0 and kept.current() is None
    kept.restore(taken)
    current = kept.current()
    assert len(kept) == 2 and current is not None and current.text == "Ciao"
