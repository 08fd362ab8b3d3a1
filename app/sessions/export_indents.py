"""A plain-text draft's indented paragraphs, exported as indented paragraphs.

In a novel kept as plain text a paragraph often opens with four spaces or a tab. In
Markdown four columns of indentation make an indented code block: a viewer showed the
paragraph in monospace, in a box, with the model's `<mark>` tags as literal text. In a
plain-text draft indentation is typography, so the export writes it as `&emsp;`, one per
four columns (a tab reaching the next multiple of four, as in CommonMark), then the text.

Why `&emsp;`: the entity is still text when a viewer trims a paragraph's leading
whitespace, so it is kept, and every CommonMark viewer (GitHub, Obsidian, pandoc) decodes
it to U+2003 EM SPACE, which HTML does not collapse and pandoc writes as `\\quad` in LaTeX.
The indentation stays visible, and the file says plainly what it is. A raw U+00A0 or U+2003
would be trimmed by markdown-it (Python's strip and JavaScript's trim take them) but kept
by cmark: indented in one viewer and not in the next, and invisible in the file. Dropping
the indentation would be safe everywhere, but lose what the author wrote.

Only indentation Markdown would make code or drop is rewritten: in top-level indented
code blocks, and on paragraph lines indented by four columns or more (not in a paragraph
with a code span across lines, nor in `$$` display math: an entity there would show as
typed). Fenced code, lists and quotes are left as written.
"""

from __future__ import annotations

import re

from scriptorium.app.sessions.export_breaks import display_math, inside, line_starts, paragraphs_of_lines, parse
from scriptorium.app.sessions.export_marks import Passage

INDENT = "&emsp;"
_TAB_STOP = 4
_LEADING = re.compile(r"[ \t]+(?=[^ \t\r\n])")
"""A line's indentation, when text follows it on the line."""


def indents_as_typography(text: str, passages: list[Passage]) -> tuple[str, list[Passage]]:
    """`text` with its paragraphs' indentation written as INDENT, and `passages` moved to match."""
    starts = line_starts(text)
    replacements: list[tuple[int, int, str]] = []
    tokens = parse(text)
    blocks = [token.map for token in tokens if token.type == "code_block" and token.level == 0 and token.map]
    blocks += [inline.map for inline, _ in paragraphs_of_lines(tokens) if inline.level == 1 and inline.map]
    math = display_math(text)
    for first, after_last in sorted(blocks):
        for line in range(first, after_last):
            if inside(math, starts[line]):
                continue  # LaTeX, where the entity would be typed text: as written
            match = _LEADING.match(text, starts[line])
            columns = _columns(match.group()) if match else 0
            if match and columns >= _TAB_STOP:
                replacements.append((match.start(), match.end(), INDENT * (columns // _TAB_STOP)))
    if not replacements:
        return text, passages
    pieces, done = [], 0
    for start, end, new in replacements:
        pieces += [text[done:start], new]
        done = end
    moved = [Passage(_moved(p.start, replacements, end=False), _moved(p.end, replacements, end=True), p.generation)
             for p in passages]
    return "".join(pieces) + text[done:], moved


def _columns(indentation: str) -> int:
    columns = 0
    for char in indentation:
        columns = (columns // _TAB_STOP + 1) * _TAB_STOP if char == "\t" else columns + 1
    return columns


def _moved(offset: int, replacements: list[tuple[int, int, str]], *, end: bool) -> int:
    """Where `offset` is once the replacements are made. A passage that starts inside an
    indentation starts after its INDENT, one that ends inside it ends before: a mark never
    holds only the indentation, nor opens on it."""
    shift = 0
    for start, stop, new in replacements:
        if offset < start or (end and offset == start):
            break
        if offset < stop or (end and offset == stop):
            return start + shift + (0 if end else len(new))
        shift += len(new) - (stop - start)
    return offset + shift
