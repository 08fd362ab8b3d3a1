"""A paragraph re-wrapped from the rows an edit reaches breaks where Textual's whole re-wrap
breaks it: the same rows, the same cursor places, whatever is typed or deleted where."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from textual.document._document import Document
from textual.document._wrapped_document import WrappedDocument

from scriptorium.app.tui.widgets import paragraph_wrap
from scriptorium.app.tui.widgets.paragraph_wrap import ParagraphWrap

WORDS = ["la", "sera", "scese", "piano", "sul", "porto", "così", "città", "e", "precipitevolissimevolmente", "東京"]


def paragraph(seed: int, words: int) -> str:
    chooser = random.Random(seed)
    return " ".join(chooser.choice(WORDS) + ("," if chooser.random() < 0.1 else "") for _ in range(words))


def assert_same_rows(fast: ParagraphWrap, document: Document, width: int, *, lookups: int = 0) -> None:
    """The same breaks and rows as Textual's whole wrap; and the same answers to `lookups` rows'
    cursor questions (each of Textual's divides the whole line: a sample of a long text)."""
    whole = WrappedDocument(document, width=width, tab_width=4)
    assert fast._wrap_offsets == whole._wrap_offsets
    assert fast._offset_to_line_info == whole._offset_to_line_info
    assert fast._line_index_to_offsets == whole._line_index_to_offsets
    assert fast._tab_width_cache == whole._tab_width_cache
    assert fast.height == whole.height
    if not lookups:
        return
    for row, line in enumerate(document.lines):
        assert fast.get_sections(row) == whole.get_sections(row)
        for column in {0, len(line) // 3, len(line) // 2, len(line)}:
            assert fast.location_to_offset((row, column)) == whole.location_to_offset((row, column))
    for y in range(0, whole.height, max(whole.height // lookups, 1)):
        for x in (0, 5, width - 1, width + 3):
            assert fast.offset_to_location((x, y)) == whole.offset_to_location((x, y))


EDIT = st.tuples(
    st.integers(min_value=0, max_value=10_000),  # where, as a share of the line
    st.integers(min_value=0, max_value=12),  # characters replaced
    st.sampled_from(["", "a", " ", "  ", "parola ", "ab cd", "è", "\n", "x\ny", "lunghissimaparolasenzaspazi" * 3]),
)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=50),
    width=st.integers(min_value=6, max_value=60),
    edits=st.lists(EDIT, min_size=1, max_size=12),
)
def test_edits_rewrap_as_a_whole_rewrap_does(seed: int, width: int, edits: list[tuple[int, int, str]]) -> None:
    text = paragraph(seed, 120) + "\n\n" + paragraph(seed + 1, 40) + "\n" + paragraph(seed + 2, 60)
    document = Document(text)
    fast = ParagraphWrap(document, width=width, tab_width=4)
    for where, replaced, inserted in edits:
        row = where % document.line_count
        line = document[row]
        column = where * len(line) // 10_000
        start, end = (row, column), (row, min(column + replaced, len(line)))
        result = document.replace_range(start, end, inserted)
        fast.wrap_range(start, end, result.end_location)
        assert_same_rows(fast, document, width)
    assert_same_rows(fast, document, width, lookups=40)


def test_typing_at_the_end_of_a_long_paragraph_wraps_a_few_rows_only(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The point of it: a key in a 100,000-character paragraph re-wraps a few hundred characters, not the paragraph."""
    document = Document(paragraph(3, 16_000))
    fast = ParagraphWrap(document, width=70, tab_width=4)
    wrapped: list[int] = []
    real = paragraph_wrap.compute_wrap_offsets

    def counting(text: str, width: int, tab_size: int) -> list[int]:
        wrapped.append(len(text))
        return real(text, width, tab_size)

    monkeypatch.setattr(paragraph_wrap, "compute_wrap_offsets", counting)
    end = (0, len(document[0]))
    for letter in "e poi ":
        result = document.replace_range(end, end, letter)
        fast.wrap_range(end, end, result.end_location)
        end = result.end_location
    assert len(document[0]) > 90_000
    assert wrapped and max(wrapped) < 1_000
    assert_same_rows(fast, document, 70, lookups=4)


def test_a_range_wider_than_the_edit_still_wraps_right() -> None:
    """An undo names the range of a batch of edits, not one edit: checked against the line as last
    wrapped, a range that is not exact goes to the whole re-wrap."""
    document = Document(paragraph(5, 300))
    fast = ParagraphWrap(document, width=40, tab_width=4)
    for column, inserted in ((200, "abc "), (700, "x"), (10, "una due tre ")):
        result = document.replace_range((0, column), (0, column), inserted)
        # As _undo_batch passes it: the last edit's bottom, which is not where this one ended.
        fast.wrap_range((0, column), (0, column + 1), (0, column))
        assert_same_rows(fast, document, 40, lookups=10)
        assert result.end_location == (0, column + len(inserted))


def test_a_tab_in_the_paragraph_is_left_to_the_whole_rewrap() -> None:
    document = Document("prima\tdopo " * 40)
    fast = ParagraphWrap(document, width=30, tab_width=4)
    result = document.replace_range((0, 100), (0, 100), "parola ")
    fast.wrap_range((0, 100), (0, 100), result.end_location)
    assert_same_rows(fast, document, 30, lookups=20)
