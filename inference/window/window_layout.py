"""Where the parts of a window's prompt sit in it (window.py builds the prompt): the
memory, the author's note, and the draft's own text before and after the note.

Scoring scores the whole prompt and colours only the draft's tokens, at their places in
the draft; a character the vocabulary cannot encode is named where the author wrote it
(the draft, line and column, or the memory, or the note), not where the prompt has it.

Pure: no llama.cpp, no Textual.
"""

from __future__ import annotations

from typing import Sequence

from ..vocab.tokenizer import UnencodableTextError, describe_position

Spans = tuple[tuple[int, int, int], ...]
"""(offset in the prompt, offset in the author's text, length) of stretches copied whole."""


def draft_spans(lead: int, start: int, end: int, note_at: int | None, note_length: int) -> Spans:
    """The draft's own text in the prompt: the window from `start` to `end`, cut where the
    note of `note_length` characters goes (`note_at`; after the window or None: uncut).
    `lead`: what comes before the window (the memory, the template's words)."""
    if note_at is None or note_at >= end:
        return ((lead, start, end - start),)
    return ((lead, start, note_at - start), (lead + note_at - start + note_length, note_at, end - note_at))


def note_break(text: str, note: str, depth: int) -> str:
    """What a continuation of `text` begins with: at depth 0 the note closes the window in
    a paragraph of its own, so the model writes on after a paragraph break, which the
    draft gets too ("dorme" + "La notte" would glue); "" when the note sits elsewhere or
    the text already ends a line."""
    return "\n\n" if depth == 0 and note.strip() and text and text[-1] != "\n" else ""


def in_text(spans: Spans, prompt_offset: int) -> int | None:
    """Where a character of the prompt is in the author's text; None outside `spans`."""
    for in_prompt, in_source, length in spans:
        if in_prompt <= prompt_offset < in_prompt + length:
            return in_source + prompt_offset - in_prompt
    return None


def pinned_spans(at: int, text: str) -> Spans:
    """A memory or note as its block in the prompt holds it (stripped), from `at`."""
    stripped = text.strip()
    return ((at, len(text) - len(text.lstrip()), len(stripped)),) if stripped else ()


def placed(error: UnencodableTextError, sources: Sequence[tuple[str, str, Spans]]) -> UnencodableTextError:
    """`error`, raised on a prompt, with its character placed in the text the author wrote.
    `sources`: (name, the author's text, where it is in the prompt)."""
    if error.index < 0:
        return error  # the space before the text: the vocabulary's, nobody's text
    for name, text, spans in sources:
        offset = in_text(spans, error.index)
        if offset is not None:
            return error.placed(f"{describe_position(text, offset)} of the {name}")
    return error.placed(
        f"character {error.index + 1} of the prompt, in what scriptorium puts between the memory, "
        "the note, the draft and the continue template"
    )


Parts = tuple[tuple[str, int, int], ...]
"""(what, start, end) of each stretch of a prompt, in order: 'memory', 'lore', 'template'
(the continue template's own words), 'draft', 'note'. Together they are the whole prompt."""


def prompt_parts(length: int, memory: int, lore: int, spans: Spans, note: int) -> Parts:
    """The stretches of a prompt of `length` characters that opens with `memory` and `lore`
    characters and holds the draft at `spans` (draft_spans), the note's `note` characters
    (its paragraph break included) after the first of them: what the context viewer shows."""
    parts = [("memory", 0, memory), ("lore", memory, memory + lore)]
    at = memory + lore
    for index, (in_prompt, _, size) in enumerate(spans):
        parts.append(("template", at, in_prompt))
        parts.append(("draft", in_prompt, in_prompt + size))
        at = in_prompt + size
        if index == 0 and note:
            parts.append(("note", at, at + note))
            at += note
    parts.append(("template", at, length))
    return tuple(part for part in parts if part[2] > part[1])


def with_after_cursor(parts: Parts, start: int, length: int) -> Parts:
    """`parts` with the `length` characters at `start` (a fill-in-the-middle prompt's text
    after the cursor, which prompt_parts counts as the template's words around it) named
    "after" instead: the part holding them is split around them."""
    if length <= 0:
        return parts
    end = start + length
    split: list[tuple[str, int, int]] = []
    for name, since, until in parts:
        if since <= start and end <= until:
            split += [(name, since, start), ("after", start, end), (name, end, until)]
        else:
            split.append((name, since, until))
    return tuple(part for part in split if part[2] > part[1])
