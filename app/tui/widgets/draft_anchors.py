"""Where a suggestion in the draft attaches: the end of the writing, the cursor (never
inside a character), and before the spaces the prompt leaves out."""

from __future__ import annotations

from rich.cells import split_graphemes
from textual.widgets.text_area import DocumentBase, Location

from scriptorium.inference.core.backend import Backend
from scriptorium.inference.window.window import Fim, fim_suffix, prompt_end

from scriptorium.app.sessions.draft_files import end_of_writing


def end_anchor(document: DocumentBase) -> Location:
    """Where "continue from the end" attaches, as a location (see end_of_writing)."""
    end = document.end
    text = document.text
    if end_of_writing(text) < len(text):  # before the file's final newline: the end of the line above
        row = end[0] - 1
        return (row, len(document.get_line(row)))
    return end


def before_trailing_spaces(document: DocumentBase, location: Location) -> tuple[Location, int]:
    """`location` moved before the spaces and tabs ending the text there, and how many it
    passed. The prompt leaves them out (window.prompt_end), so a suggestion from there
    stands in for them until its first text decides whether it takes their place or
    follows them (branches.place_by_first_text); Esc leaves them as typed."""
    row, column = location
    start = prompt_end(document.get_line(row), column)
    return (row, start), column - start


def prompt_anchor(document: DocumentBase, location: Location, heals: bool) -> tuple[Location, int]:
    """Where a suggestion from `location` attaches, and how many spaces before it the
    prompt leaves out: healing (inference/local/healing.py) backs the prompt up over the spaces
    and has the model write them again, so it attaches at `location` itself; without
    healing, before the spaces (before_trailing_spaces)."""
    return (location, 0) if heals else before_trailing_spaces(document, location)


def asked_text(document: DocumentBase, anchor: Location, spaces: int, written: str) -> str:
    """The text a continuation at `anchor` asks its window for: the draft before it and what
    the suggestion has written so far; while it has written nothing, the draft up to the
    end of the `spaces` after `anchor` that the prompt leaves out, so that the window built
    from it leaves them out itself and records how many (Window.spaces_left_out, in the
    session as in `continue --json`)."""
    row, column = anchor
    return document.get_text_range((0, 0), (row, column + (0 if written else spaces))) + written


def grapheme_end(document: DocumentBase, location: Location) -> Location:
    """`location`, or the end of the character it falls inside: the editor's cursor steps
    by code point, so it can stand between an "e" and its combining accent, or inside an
    emoji's joined sequence, where a suggestion inserted would take the accent for itself."""
    row, column = location
    line = document.get_line(row)
    if 0 < column < len(line):
        for start, end, _ in split_graphemes(line)[0]:
            if start < column < end:
                return (row, end)
    return location


def shifted_anchor(anchor: Location, top: Location, bottom: Location, end: Location) -> Location | None:
    """Where `anchor` lands after the text between `top` and `bottom` became text ending
    at `end`; None when the edit reached the anchor (the text the suggestion continues
    has changed)."""
    if top >= anchor:
        return anchor
    if bottom < anchor:
        row, column = anchor
        if row == bottom[0]:
            return (end[0], end[1] + column - bottom[1])
        return (row + end[0] - bottom[0], column)
    return None


def insert_fim(backend: Backend, document: DocumentBase, from_cursor: bool, location: Location) -> Fim | None:
    """An insert (from the cursor at `location`, text after it) on a model with
    fill-in-the-middle tokens: its prompt carries the text after the cursor (window.Fim).
    None otherwise."""
    texts = backend.fim_texts
    if not from_cursor or texts is None:
        return None
    after = document.get_text_range(location, document.end)
    return Fim(texts, fim_suffix(after, 0)) if after.strip() else None
