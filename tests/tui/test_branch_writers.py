"""Who wrote which characters of a suggestion: the rules acceptance credits by."""

from __future__ import annotations

from dataclasses import replace

from scriptorium.app.tui.branches import (
    Ghost,
    KeptWord,
    start_version,
    with_writer,
    writers_after,
    writers_before,
    written_parts,
)

# "Il lago" by request 1, " zebra" by the author, " dormiva." by request 2.
TEXT = "Il lago zebra dormiva."
WRITERS = [(1, 0), (None, 7), (2, 13)]


def test_each_part_is_its_writers_characters() -> None:
    assert [TEXT[s:e] for _, s, e in written_parts(WRITERS, len(TEXT))] == ["Il lago", " zebra", " dormiva."]
    assert written_parts(WRITERS, 10) == [(1, 0, 7), (None, 7, 10)]  # the next word only
    assert written_parts([], len(TEXT)) == []


def test_keeping_the_front_moves_the_rest() -> None:
    assert writers_after(WRITERS, 3) == [(1, 0), (None, 4), (2, 10)]
    assert writers_after(WRITERS, 7) == [(None, 0), (2, 6)]
    assert writers_after(WRITERS, 9) == [(None, 0), (2, 4)]
    assert writers_after(WRITERS, len(TEXT)) == [(2, 0)]  # it may still be writing


def test_a_branch_cuts_and_the_next_generation_writes_on() -> None:
    assert writers_before(WRITERS, 10) == [(1, 0), (None, 7)]
    assert with_writer([(1, 0)], "Il lago", 3) == [(1, 0), (3, 7)]
    # Text no one wrote yet (an alternative chosen in the draft) is the next generation's.
    assert with_writer([], " casa", 3) == [(3, 0)]


def test_a_word_given_back_takes_what_was_written_since_with_it() -> None:
    """ctrl+→ kept "Il", then the suggestion was continued (request 2): ctrl+z puts "Il"
    back in front, and request 2 still wrote its own characters."""
    ghost = Ghost(anchor=(0, 5), from_cursor=False, text="Il lago", request_ids=[1], writers=[(1, 0)])
    kept = KeptWord(replace(ghost, writers=list(ghost.writers)), " lago", 0, 1)
    ghost.text, ghost.anchor, ghost.writers = " lago", (0, 7), writers_after(ghost.writers, 2)
    ghost.writers = with_writer(ghost.writers, ghost.text, 2)
    ghost.text += " dormiva."
    assert kept.fits(ghost) and kept.give_back(ghost) == "Il"
    assert (ghost.text, ghost.anchor, ghost.writers) == ("Il lago dormiva.", (0, 5), [(1, 0), (2, 7)])
    start_version(ghost, "re-roll")  # what the rest became is no longer the rest: nothing to give back into
    assert not kept.fits(ghost)


def test_a_branch_at_a_line_break_says_which() -> None:
    """Branching at Gemma's '⏎⏎⏎' with '⏎⏎' labelled the version 'branch at “”'."""
    from scriptorium.app.tui.branches import branch_at, version_label
    from scriptorium.app.tui.token_spans import TokenRecord, TokenSource
    from scriptorium.inference.core.events import Candidate

    ghost = Ghost(anchor=(0, 0), from_cursor=False, text="Fine.\n\n\n", streaming=False)
    top = (Candidate(108, "\n\n\n", 0.5, False), Candidate(107, "\n\n", 0.2, False))
    ghost.tokens = [TokenRecord(5, "\n\n\n", 108, 0.5, top, TokenSource("generated"))]
    branch_at(ghost, 0, "\n\n")
    assert version_label(ghost) == "version 2/2 · branch at “⏎⏎”"
    branch_at(ghost, 0, " mare")
    assert version_label(ghost) == "version 3/3 · branch at “mare”"
