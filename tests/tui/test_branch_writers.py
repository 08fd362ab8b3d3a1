"""Who wrote which characters of a suggestion: the rules acceptance credits by."""

from __future__ import annotations

from scriptorium.app.tui.branches import with_writer, writers_after, writers_before, written_parts

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
