"""Plain text written as CommonMark that a viewer shows as that text.

A plain-text draft (a .txt file, or a draft kept only in its session), the author's chat
messages and the system prompt are prose: the app shows them as typed. Read as Markdown,
`# Chapter one` was a heading, `- ` and `1. ` lists, a `|` line a table, `*word*`
emphasis, `<div>` vanished and `&amp;` became `&`. The export escapes what a viewer would
read as markup, so every character shows as written. One rule for all plain text
(_escape_markup), and for what the export says in words (a model's name, a footnote):

- Anywhere: `\\`, `` ` ``, `*`, `_`, `[`, `<`, `|`, `~`, `$`, `^` (code, emphasis, links
  and footnotes, HTML, tables, fences and strikethrough, pandoc's and Obsidian's math,
  pandoc's superscript and Obsidian's block id, which hides the word), `&` where it starts
  an entity, and doubled `==` and `%%` (Obsidian's highlight, and its comment, which hides
  the words). Not a `_` between letters or digits (`top_p`, `file_name`): no viewer
  reads one there as emphasis, and the file stays readable.
- At a line's start: `#`, `>`, `-`, `+`, `=` (headings, quotes, lists, rules, setext
  underlines) and the `.` or `)` of `1. ` (an ordered list).

A backslash before ASCII punctuation is CommonMark's escape, read by pandoc, Obsidian and
GitHub alike; the character shows, the backslash does not.

Indentation. In a novel kept as plain text a paragraph often opens with four spaces or a
tab. In Markdown four columns of indentation make an indented code block: a viewer showed
the paragraph in monospace, in a box, with the model's `<mark>` tags as literal text; on a
paragraph's later line they are dropped. So the export writes it as `&emsp;`, one per four
columns (a tab reaching the next multiple of four, as in CommonMark), then the text.

Why `&emsp;`: the entity is still text when a viewer trims a paragraph's leading
whitespace, so it is kept, and every CommonMark viewer (GitHub, Obsidian, pandoc) decodes
it to U+2003 EM SPACE, which HTML does not collapse and pandoc writes as `\\quad` in LaTeX.
The indentation stays visible, and the file says plainly what it is. A raw U+00A0 or U+2003
would be trimmed by markdown-it (Python's strip and JavaScript's trim take them) but kept
by cmark: indented in one viewer and not in the next, and invisible in the file. Dropping
the indentation would be safe everywhere, but lose what the author wrote. Less than four
columns is trimmed by every viewer, as the export leaves it.
"""

from __future__ import annotations

import re

from scriptorium.app.sessions.export_marks import Passage, replaced

INDENT = "&emsp;"
_TAB_STOP = 4
_MARKUP_ANYWHERE = re.compile(
    r"[\\`*\[<|~$^]|(?<![^\W_])_|_(?![^\W_])"
    r"|&(?=#[0-9]{1,7};|#[xX][0-9a-fA-F]{1,6};|[A-Za-z][A-Za-z0-9]*;)|=(?==)|%(?=%)"
)
_LINE_START = r"(?:\A|(?<=[\n\r]))"
"""After any line break CommonMark knows: "\n", "\r\n" (a session from before they were
normalised) or a lone "\r"."""
_MARKUP_AT_LINE_START = re.compile(_LINE_START + r"[ \t]*(?:[#>+=-]|[0-9]{1,9}([.)])(?=[ \t\r\n]|\Z))")
_LEADING = re.compile(_LINE_START + r"[ \t]+(?=[^ \t\r\n])")
"""A line's indentation, when text follows it on the line."""


def plain_as_markdown(text: str, passages: list[Passage]) -> tuple[str, list[Passage]]:
    """`text` as CommonMark that shows as `text`, and `passages` moved to match. Its single
    line breaks are left to the caller (export_breaks), which reads them off the result."""
    return _indents_as_typography(*_escape_markup(text, passages))


def _escape_markup(text: str, passages: list[Passage]) -> tuple[str, list[Passage]]:
    """`text` with a backslash before each character a viewer would read as markup."""
    at = {match.start() for match in _MARKUP_ANYWHERE.finditer(text)}
    at |= {match.start(1) if match.group(1) else match.end() - 1 for match in _MARKUP_AT_LINE_START.finditer(text)}
    return replaced(text, passages, [(offset, offset, "\\") for offset in sorted(at)])


def _indents_as_typography(text: str, passages: list[Passage]) -> tuple[str, list[Passage]]:
    """Escaped `text` with each line's indentation of four columns or more written as
    INDENT. Once escaped, every line is a paragraph's or an indented code block's: no list
    or quote gives indentation a meaning of its own."""
    replacements = [
        (match.start(), match.end(), INDENT * (_columns(match.group()) // _TAB_STOP))
        for match in _LEADING.finditer(text)
        if _columns(match.group()) >= _TAB_STOP
    ]
    return replaced(text, passages, replacements)


def _columns(indentation: str) -> int:
    columns = 0
    for char in indentation:
        columns = (columns // _TAB_STOP + 1) * _TAB_STOP if char == "\t" else columns + 1
    return columns
