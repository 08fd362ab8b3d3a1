"""Mark the model's passages in Markdown text, and hang footnote references on them.

A passage becomes `<mark class="model" data-generation="g3">…</mark>`: inline HTML that
CommonMark, pandoc and Obsidian all accept, with the Markdown inside still rendered
(Obsidian shows a highlight; pandoc keeps it in HTML and drops the tag, not the text, in
PDF/LaTeX). Obsidian's `==…==` was not chosen because pandoc does not read it by default.

Marks never cross a line: a passage spanning paragraphs is marked line by line, after any
block marker (`# `, `- `, `1. `, `> `) so headings and lists stay headings and lists. Lines
that a tag would break are left unmarked: code blocks, tables, HTML blocks, rules, and
`$$ … $$` display math (LaTeX); which lines are code, tables or math, markdown-it says
(blocks_as_written).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from scriptorium.app.sessions.export_breaks import blocks_as_written, code_spans, parse

MARK_OPEN = '<mark class="model" data-generation="{generation}">'
MARK_CLOSE = "</mark>"

_BLOCK_PREFIX = re.compile(
    r"(?:[ \t]*(?:#{1,6}(?:[ \t]+|$)|[-*+](?:[ \t]+|$)|\d{1,9}[.)](?:[ \t]+|$)|>[ \t]?|\[[ xX]\][ \t]+))*"
)
"""A line's block markers; one that ends the line (an empty list item or heading) too."""
_DELIMITERS = "*_~`"
_ATX_HEADING = re.compile(r" {0,3}(#{1,6})(?=[ \t]|$)")
_UNMARKABLE = re.compile(r"[ \t]{0,3}(?:\||<[A-Za-z!/]|([-*_=])(?:[ \t]*\1){2,}[ \t]*$)")


@dataclass(frozen=True, slots=True)
class Passage:
    start: int
    end: int
    generation: str


@dataclass(frozen=True, slots=True)
class _Line:
    start: int
    end: int
    """End of the content, before the newline."""
    as_written: bool
    """Left as written (blocks_as_written): code, tables, display math."""
    block_end: int
    """For a code line: the end of its block's last line."""


def replaced(text: str, passages: list[Passage], replacements: list[tuple[int, int, str]]) -> tuple[str, list[Passage]]:
    """`text` with each (start, stop, new) of `replacements` (in order, not overlapping) made,
    and `passages` moved to match. A passage that starts inside a replaced stretch starts
    after its new text, one that ends inside it ends before: a mark never holds only an
    indentation, nor opens on it. Text inserted (start == stop) goes with the character after
    it, as an escaping backslash does: a passage starting there starts before it."""
    if not replacements:
        return text, passages
    pieces, done = [], 0
    for start, stop, new in replacements:
        pieces += [text[done:start], new]
        done = stop
    moved = [
        Passage(_moved(p.start, replacements, end=False), _moved(p.end, replacements, end=True), p.generation)
        for p in passages
    ]
    return "".join(pieces) + text[done:], moved


def _moved(offset: int, replacements: list[tuple[int, int, str]], *, end: bool) -> int:
    shift = 0
    for start, stop, new in replacements:
        if offset < start or (offset == start and (end or start == stop)):
            break
        if offset < stop or (end and offset == stop):
            return start + shift + (0 if end else len(new))
        shift += len(new) - (stop - start)
    return offset + shift


def _lines(text: str) -> list[_Line]:
    raw = [(m.start(), m.start() + len(m.group().rstrip("\n"))) for m in re.finditer(r"[^\n]*\n|[^\n]+$", text)]
    block_end: dict[int, int] = {}
    for first, after_last in blocks_as_written(text):
        last = min(after_last, len(raw)) - 1
        block_end.update((line, raw[last][1]) for line in range(first, last + 1))
    return [_Line(start, end, index in block_end, block_end.get(index, end)) for index, (start, end) in enumerate(raw)]


def render(
    text: str, passages: list[Passage], *, mark: bool, notes: dict[str, str], hard_breaks: Sequence[int] = ()
) -> str:
    """`text` with the passages marked (if `mark`) and, after the first passage of each
    generation named in `notes`, the footnote reference `[^label]`; a backslash (a hard
    line break) at each offset of `hard_breaks`, ends of lines (export_breaks)."""
    # Where the lines and their blocks are takes a parse: only when a tag is to be placed.
    lines = _lines(text) if passages and (mark or notes) else []
    # (offset, order: close < ref < open < line break, string): the break ends its line.
    inserts: list[tuple[int, int, str]] = [(offset, 3, "\\") for offset in hard_breaks]
    noted: set[str] = set()
    for passage in sorted(passages, key=lambda p: p.start):
        if mark:
            for line in lines:
                if line.end < passage.start or line.start >= passage.end:
                    continue
                segment = _segment(text, line, passage)
                if segment:
                    inserts.append((segment[0], 2, MARK_OPEN.format(generation=passage.generation)))
                    inserts.append((segment[1], 0, MARK_CLOSE))
        label = notes.get(passage.generation)
        if label and passage.generation not in noted:
            noted.add(passage.generation)
            inserts.append(_reference(text, lines, passage, label))
    out: list[str] = []
    cursor = 0
    for offset, _, string in sorted(inserts, key=lambda item: (item[0], item[1])):
        out.append(text[cursor:offset])
        out.append(string)
        cursor = offset
    out.append(text[cursor:])
    return "".join(out)


def _segment(text: str, line: _Line, passage: Passage) -> tuple[int, int] | None:
    if line.as_written or _UNMARKABLE.match(text, line.start, line.end):
        return None
    start, end = max(passage.start, line.start), min(passage.end, line.end)
    prefix_end = _BLOCK_PREFIX.match(text, line.start, line.end).end()  # type: ignore[union-attr]
    start = max(start, prefix_end)
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    # A tag inside a code span is typed text, and one inside a run of `*`, `_` or `~` splits
    # it into two runs, which mean something else: the mark takes in the whole span or run.
    for span_start, span_end in code_spans(text, line.start, line.end):
        start = span_start if span_start < start < span_end else start
        end = span_end if span_start < end < span_end else end
    while line.start < start < end and text[start - 1] == text[start] and text[start] in _DELIMITERS:
        start -= 1
    while start < end < line.end and text[end - 1] == text[end] and text[end] in _DELIMITERS:
        end += 1
    # A tag must not follow a backslash that escapes the character after it: `\</mark>`
    # is a literal `<`, the mark never closes, and the escaped `*` or line break is lost.
    # The backslash goes with what it escapes.
    if _escaping(text, line.start, end):
        end -= 1
    if _escaping(text, line.start, start):
        start -= 1
    return (start, end) if start < end else None


def _escaping(text: str, line_start: int, position: int) -> bool:
    """The character before `position` is a backslash that escapes the one at `position`."""
    run = position
    while run > line_start and text[run - 1] == "\\":
        run -= 1
    return (position - run) % 2 == 1


def _reference(text: str, lines: list[_Line], passage: Passage, label: str) -> tuple[int, int, str]:
    position = passage.end
    while position > passage.start and text[position - 1].isspace():
        position -= 1
    for line in lines:
        if line.start <= position <= line.end and line.as_written:
            # In code the reference would be typed text, in a table or math it would break them:
            # after the block.
            return (line.block_end, 1, f"\n\n[^{label}]")
    return (position, 1, f"[^{label}]")


def below_headings(text: str, levels: int) -> str:
    """`text` with its headings `levels` deeper, at most `######`: a chat turn's own headings
    then sit under the export's turn headings instead of reading as new turns (pandoc's
    --shift-heading-level-by). ATX headings (`# `..`###### `, not in code) get more
    `#`; a top-level setext heading (a line over `===` or `---`), which has only two levels,
    is written as the ATX heading it is first."""
    text = _setext_as_atx(text)
    pieces, done = [], 0
    for line in _lines(text):
        match = None if line.as_written else _ATX_HEADING.match(text, line.start, line.end)
        if match is not None:
            pieces += [text[done : match.start(1)], "#" * min(len(match.group(1)) + levels, 6)]
            done = match.end(1)
    return "".join(pieces) + text[done:]


def _setext_as_atx(text: str) -> str:
    lines = _lines(text)
    tokens = parse(text)
    pieces, done = [], 0
    for opening, inline in zip(tokens, tokens[1:]):
        if opening.type != "heading_open" or opening.markup not in ("=", "-") or opening.level or not opening.map:
            continue
        first, after_underline = opening.map
        # One line, as an ATX heading must be; a trailing `#` run escaped, or it would be
        # read as the optional closing sequence and dropped.
        words = re.sub(r"(?<![^ \t])(#+)$", r"\\\1", re.sub(r"\n[ \t]*", " ", inline.content))
        pieces += [text[done : lines[first].start], "#" * int(opening.tag[1]), " ", words]
        done = lines[after_underline - 1].end
    return "".join(pieces) + text[done:]
