"""What a reader of rendered Markdown sees, to compare an export with the text it came from.

Rendered with markdown-it (CommonMark with tables and strikethrough, as GitHub and Obsidian
read it), then read back as text: a <br /> is a line break, a soft break a space."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import yaml

MARK = re.compile(r'<mark class="model" data-generation="(g\d+)">(.*?)</mark>')
"""A model passage as `--mark-model` marks it: (generation id, text)."""


class _Reader(HTMLParser):
    """The text of rendered HTML as a reader sees it, and the tags it was rendered with."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.tags: set[str] = set()
        self._after_break = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.add(tag)
        if tag == "br":
            self.parts.append("\n")
            self._after_break = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "p":
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if self._after_break and data.startswith("\n"):  # the newline markdown-it writes after <br />
            data = data[1:]
        self._after_break = False
        # Any other newline in a paragraph is a soft break, which a viewer shows as a space.
        self.parts.append(data.replace("\n", " "))


def shown(markdown: str) -> tuple[str, set[str]]:
    """What a reader of `markdown` sees (lines without their edge whitespace, one blank line
    between paragraphs), and the HTML tags it became."""
    from markdown_it import MarkdownIt

    reader = _Reader()
    reader.feed(MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(markdown))
    reader.close()
    lines = "\n".join(line.strip(" \t") for line in "".join(reader.parts).split("\n"))
    return re.sub(r"\n{3,}", "\n\n", lines).strip("\n"), reader.tags


def as_seen(plain: str) -> str:
    """`plain` as the export promises to show it: each line's indentation an em space per
    four columns (less is trimmed, as every viewer trims it), one blank line between paragraphs."""
    lines = []
    for line in re.split(r"\r\n|[\r\n]", plain):
        indentation = re.match(r"[ \t]*", line).group()  # type: ignore[union-attr]
        columns = 0
        for char in indentation:
            columns = (columns // 4 + 1) * 4 if char == "\t" else columns + 1
        words = line[len(indentation) :].rstrip(" \t")
        lines.append("\u2003" * (columns // 4) + words if words else "")
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")


def assert_literal(markdown: str, plain: str) -> None:
    """`markdown` shows as the plain text `plain`, and became nothing but paragraphs, line
    breaks and the model's marks."""
    text, tags = shown(markdown)
    assert (text, tags - {"p", "br", "mark"}) == (as_seen(plain), set())


def split_front_matter(markdown: str) -> tuple[dict, str]:
    """An export's front matter, read as YAML, and the body after it."""
    assert markdown.startswith("---\n")
    head, separator, body = markdown[4:].partition("\n---\n")
    assert separator, "front matter is not closed"
    return yaml.safe_load(head), body


def html_of(markdown: str) -> str:
    """The export as CommonMark with tables renders it."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(markdown)
