"""HTML a model wrote in a chat reply, kept as text in the export, as the chat shows it.

The chat draws a reply as Markdown but its HTML as typed (chat_reply.py): Textual draws no
HTML, and a tag that vanished took the model's words with it. A Markdown viewer would
render the same tags, or hide them (`<think>`, `<!-- … -->`, an unknown tag), so the
export puts a backslash before each `<` that CommonMark would read as the start of HTML:
an inline tag, comment, declaration or processing instruction (markdown-it's own pattern
for them), or the opening of an HTML block. Code is left as written: there a `<` is
already text, and a backslash would show.
"""

from __future__ import annotations

import re

from scriptorium.app.sessions.export_breaks import NEWLINE, code_spans, inside

_BLOCK_OPENING = re.compile(r"<(?:(?:script|pre|style|textarea)(?=[\s>]|$)|!--|\?|![A-Za-z]|!\[CDATA\[)", re.I)
"""CommonMark's HTML blocks 1 to 5; 6 and 7 open with a tag, which _inline_tag finds."""


def html_starts(text: str) -> list[int]:
    """Offsets of the `<`s in `text` (a reply, Markdown) that a CommonMark viewer reads as
    HTML, outside code blocks and code spans."""
    from markdown_it import MarkdownIt  # with the first export, as export_breaks.parse
    from markdown_it.common.html_re import HTML_TAG_RE

    # Read as it will be once escaped, HTML as text: its code is the code the viewer shows.
    tokens = MarkdownIt("commonmark").enable("table").disable(["html_block", "html_inline"]).parse(text)
    code_lines = {
        line for token in tokens if token.type in ("fence", "code_block") and token.map for line in range(*token.map)
    }
    line_starts = [0, *(match.end() for match in NEWLINE.finditer(text))]

    def lines_end(after_last: int) -> int:
        return line_starts[after_last] if after_last < len(line_starts) else len(text)

    # A code span may run over a paragraph's lines: spans are found over each block's lines.
    spans = [
        span
        for token in tokens
        if token.type == "inline" and token.map
        for span in code_spans(text, line_starts[token.map[0]], lines_end(token.map[1]))
    ]
    starts: list[int] = []
    for number, line_start in enumerate(line_starts):
        if number in code_lines:
            continue
        position = text.find("<", line_start, lines_end(number + 1))
        while position != -1:
            if not inside(spans, position) and (
                HTML_TAG_RE.match(text, position) or _BLOCK_OPENING.match(text, position)
            ):
                starts.append(position)
            position = text.find("<", position + 1, lines_end(number + 1))
    return starts
