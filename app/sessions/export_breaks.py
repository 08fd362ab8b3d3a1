"""Single line breaks kept: the author's and a chat reply's, in the Markdown export and the chat.

In CommonMark a single newline inside a paragraph is a soft break: viewers join the two
lines with a space, so a poem, an address or lines of dialogue in a plain-text draft, an
author's chat message or a model's reply read as one line. The export ends each such line with a
backslash, CommonMark's hard break (pandoc, Obsidian and GitHub read it too). Not with two
trailing spaces, the other hard break: editors and hooks that strip trailing whitespace
undo them unseen, and nobody reading the file can see them.

Which newlines are soft breaks is asked of markdown-it (the parser Textual's Markdown
already brings), not guessed by rules of our own: only a newline inside a paragraph's
text is one. Code (fenced or indented), headings, tables, HTML blocks, and a line just
before a list item, quote or heading that interrupts the paragraph are left as written:
a backslash there would show as one, or change the block. So are the lines of `$$ … $$`
display math (display_math), which CommonMark reads as paragraph text but is LaTeX.

The same reading says where the model's marks must not go (blocks_as_written,
code_spans; export_marks places them).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it.token import Token

NEWLINE = re.compile(r"\r\n?|\n")
"""What markdown-it counts as the end of a line."""


def soft_break_ends(text: str) -> list[int]:
    """Offsets in `text` of the ends of lines (before their newline) that a CommonMark
    viewer joins to the next one: where a backslash makes the break stay a break."""
    line_ends = [match.start() for match in NEWLINE.finditer(text)]
    return [line_ends[line] for _, line in kept_soft_breaks(parse(text))]


def parse(text: str) -> list[Token]:
    """`text` as the export reads it: CommonMark with tables, as pandoc, Obsidian and GitHub do."""
    from markdown_it import MarkdownIt  # ~25 ms: with the first export, not at start

    return MarkdownIt("commonmark").enable("table").parse(text)


def kept_soft_breaks(tokens: list[Token]) -> Iterator[tuple[Token, int]]:
    """The softbreak tokens of a parsed text that are to stay line breaks, each with the
    line (of the parsed text, from 0) that it ends. The export puts a backslash there; the
    chat (chat_reply.py) makes the token a hardbreak, so that both keep the same breaks."""
    for paragraph, breaks in paragraphs_of_lines(tokens):
        first = paragraph.map[0]  # type: ignore[index]
        math = display_math(paragraph.content)
        line_ends = [match.start() for match in NEWLINE.finditer(paragraph.content)]
        yield from (
            (child, first + line)
            for line, child in enumerate(breaks)
            if child.type == "softbreak" and not inside(math, line_ends[line])
        )


_MATH_SCAN = re.compile(r"\\[\s\S]|`+|\$\$|(?:\r\n?|\n)[ \t]*(?=[\r\n])")
"""What display math is looked for among: escapes, code span delimiters, `$$`, blank lines."""
_BLANK_LINE = re.compile(r"(?:\r\n?|\n)[ \t]*(?:\r\n?|\n)")


def display_math(text: str) -> list[tuple[int, int]]:
    """The `$$ … $$` display math in `text`, as (start of the opening `$$`, end of the
    closing one), as pandoc (tex_math_dollars) and Obsidian read it: never across a blank
    line, nor in a code span or from an escaped `\\$`. Its lines are LaTeX, where a
    backslash added at a line's end is a command: they stay as written. (CommonMark and
    markdown-it read it as paragraph text, so it is looked for here.)"""
    spans: list[tuple[int, int]] = []
    opened: int | None = None
    position = 0
    while (match := _MATH_SCAN.search(text, position)) is not None:
        found, position = match.group(), match.end()
        if found[0] == "`":  # a code span: to its closing run, within the paragraph
            blank = _BLANK_LINE.search(text, position)
            position = code_span_end(text, position, found, blank.start() if blank else len(text)) or position
        elif found == "$$":
            if opened is None:
                opened = match.start()
            else:
                spans.append((opened, match.end()))
                opened = None
        elif found[0] != "\\":  # a blank line: a `$$` still open was no math
            opened = None
    return spans


def code_span_end(text: str, after_opening: int, opening: str, limit: int) -> int | None:
    """The end of the code span whose backtick run `opening` ends at `after_opening`: after
    the next run of as many backticks before `limit`. None if there is none (the run is text)."""
    closing = re.compile(rf"(?<!`){opening}(?!`)").search(text, after_opening, limit)
    return closing.end() if closing else None


_CODE_SCAN = re.compile(r"\\[\s\S]|`+")


def code_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The code spans in text[start:end] (one line), from opening backtick to closing."""
    spans: list[tuple[int, int]] = []
    position = start
    while (match := _CODE_SCAN.search(text, position, end)) is not None:
        position = match.end()
        if match.group()[0] == "`" and (closing := code_span_end(text, position, match.group(), end)) is not None:
            spans.append((match.start(), closing))
            position = closing
    return spans


def inside(spans: list[tuple[int, int]], position: int) -> bool:
    """`position` is strictly within one of `spans`."""
    return any(start < position < end for start, end in spans)


def paragraphs_of_lines(tokens: list[Token]) -> Iterator[tuple[Token, list[Token]]]:
    """Each paragraph (its inline token, with a map) whose every newline is a line break,
    with those breaks in order. One with a newline inside a code span or an HTML tag is
    left out: that newline makes no break, so which line ends in one is unknown, and a
    character added inside `code` would show. It is left as written."""
    for token in _paragraph_inlines(tokens):
        breaks = _line_breaks(token)
        if breaks is not None:
            yield token, breaks


def _line_breaks(paragraph: Token) -> list[Token] | None:
    """The paragraph's line breaks, one a newline; None if a newline makes none (it is in a
    code span or an HTML tag)."""
    first, after_last = paragraph.map  # type: ignore[misc]
    breaks = [child for child in _inline(paragraph.children or []) if child.type in ("softbreak", "hardbreak")]
    return breaks if len(breaks) == after_last - first - 1 else None


def blocks_as_written(text: str) -> list[tuple[int, int]]:
    """The lines of `text` that a tag the export adds (a model passage's mark, a footnote
    reference) must not touch, as (first line, line after the last), from 0: code blocks
    (fenced or indented, in a quote or a list too), where it would be typed text; tables,
    whose delimiter row it would break; display math, found paragraph by paragraph
    (display_math, so never paired across a code block), whose LaTeX it would break; and
    a paragraph with a code span or an HTML tag over its lines, where a tag at a line's
    end or start would be inside it."""
    tokens = parse(text)
    blocks = [
        (token.map[0], token.map[1])
        for token in tokens
        if token.type in ("fence", "code_block", "table_open") and token.map
    ]
    for paragraph in _paragraph_inlines(tokens):
        first, after_last = paragraph.map  # type: ignore[misc]
        if _line_breaks(paragraph) is None:
            blocks.append((first, after_last))
            continue
        blocks += [
            (first + _line_of(paragraph.content, start), first + _line_of(paragraph.content, end) + 1)
            for start, end in display_math(paragraph.content)
        ]
    return blocks


def _line_of(text: str, offset: int) -> int:
    return len(NEWLINE.findall(text, 0, offset))


def _paragraph_inlines(tokens: list[Token]) -> Iterator[Token]:
    """The inline token of each paragraph, whose map says its lines."""
    for before, token in zip(tokens, tokens[1:]):
        if before.type == "paragraph_open" and token.type == "inline" and token.map is not None:
            yield token


def _inline(children: list[Token]) -> Iterator[Token]:
    """The inline tokens in order, an image's alt text (its own children) included."""
    for child in children:
        yield child
        yield from _inline(child.children or [])
