"""Marking the model's passages in an export (`--mark-model`): the marks change nothing a
viewer shows but the highlight, and never land inside code, math, tables or a delimiter run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scriptorium.app.sessions.export import render_markdown
from scriptorium.app.sessions.export_marks import Passage, render
from scriptorium.app.sessions import DraftSession, SessionStore

from markdown_shown import MARK, html_of, split_front_matter


def test_mark_model_marks_exactly_the_model_passages(rich_draft: DraftSession) -> None:
    _, body = split_front_matter(render_markdown(rich_draft, mark_model=True))
    assert MARK.findall(body) == [("g1", "The waves rose, grey and slow."), ("g2", "Gulls cried overhead.")]
    assert MARK.sub(lambda m: m.group(2), body) == "\n\\" + rich_draft.text + "\n"


def test_marks_keep_markdown_structure() -> None:
    text = "Intro\n\n## Heading\n- item one\n> quoted\n\n```\ncode line\n```\n| a | b |\n\n---\nEnd"
    marked = render(text, [Passage(0, len(text), "g1")], mark=True, notes={})
    lines = marked.split("\n")
    assert lines[2] == '## <mark class="model" data-generation="g1">Heading</mark>'
    assert lines[3] == '- <mark class="model" data-generation="g1">item one</mark>'
    assert lines[4] == '> <mark class="model" data-generation="g1">quoted</mark>'
    assert lines[6:9] == ["```", "code line", "```"]
    assert lines[9] == "| a | b |" and lines[11] == "---"
    assert all(line.count("<mark") == line.count("</mark>") for line in lines)


def test_a_mark_changes_nothing_a_viewer_shows_but_the_highlight() -> None:
    """A reply's code span over two lines got a mark on each line, so `</mark>` and `<mark …>`
    showed as typed inside the code; an empty list item `-` or `1.` became `<mark>-</mark>`,
    a paragraph with a dash in it."""
    text = "Un `codice\nlungo` qui.\n\n-\n\n1.\n\n#\n\nFine."
    marked = render(text, [Passage(0, len(text), "g1")], mark=True, notes={})
    html = html_of(marked)
    # Only Fine. is marked: the paragraph whose code runs over its lines is left as written.
    assert "&lt;" not in html and html.count("<mark ") == html.count("</mark>") == 1
    assert re.sub(r"</?mark[^>]*>", "", html) == html_of(text)


@pytest.mark.parametrize(
    ("text", "written_by_the_author"),
    [
        ("Un `codice` qui.", "Un `co"),
        ("Un ``due ` spunte`` qui.", "Un ``due ` sp"),
        ("Una parola __forte__ qui.", "Una parola _"),
        ("Una **forte** qui.", "Una *"),
    ],
)
def test_a_mark_never_opens_or_closes_inside_code_or_a_delimiter_run(text: str, written_by_the_author: str) -> None:
    """A suggestion accepted inside a code span (the author wrote "`co", the model "dice`")
    had its mark open inside it: the tag showed as typed code. One accepted between the two
    `_` of `__` split the run, and the bold was lost. The mark takes in the whole span or run."""
    for passage in (Passage(len(written_by_the_author), len(text), "g1"), Passage(0, len(written_by_the_author), "g1")):
        marked = render(text, [passage], mark=True, notes={})
        html = html_of(marked)
        assert "&lt;" not in html and html.count("<mark ") == html.count("</mark>") == 1
        assert re.sub(r"</?mark[^>]*>", "", html) == html_of(text)


def test_a_mark_never_follows_an_escaping_backslash() -> None:
    """A model passage ending in a backslash (a line's hard break, the `\\` of `\\*`) had its
    mark closed right after it: `\\</mark>` is a literal `<`, so the mark never closed, the
    rest of the text was inside it, and the break or the escaped `*` was lost."""
    from markdown_it import MarkdownIt

    text = "Fine riga\\\nVia \\*x* fine"
    for start, end in ((0, 10), (5, len("Fine riga\\\nVia \\")), (len("Fine riga\\\nVia \\"), len(text))):
        marked = render(text, [Passage(start, end, "g1")], mark=True, notes={})
        html = MarkdownIt("commonmark").render(marked)
        assert "&lt;" not in html and html.count("<mark ") == html.count("</mark>")
        assert MARK.sub(lambda m: m.group(2), marked) == text
        assert "<br />" in html and "*x*" in html


def test_no_mark_or_footnote_inside_any_code_block(store: SessionStore, generate, tmp_path: Path) -> None:
    """Only ``` fences at a line's start were known as code: in an indented code block, a
    fence inside a quote or a list, the model's <mark> tags and its footnote reference
    showed as typed text in the code."""
    from scriptorium.inference.core.settings import preset

    code = "\n\n    codice rientrato\n    altra riga\n\n> ```\n> in citazione\n> ```\n\n- voce\n\n      in lista"
    session = store.create_draft(text="Inizio.", draft_path=tmp_path / "bozza.md")
    for text, settings in ((" Uno.", preset("prose")), (code, preset("creative"))):
        g = generate(session, text, settings=settings)
        session.accept(g, g.text, len(session.text))
    _, body = split_front_matter(render_markdown(session, mark_model=True, settings_changes=True))
    html = html_of(body)
    assert "&lt;mark" not in html and "[^g2]" not in "".join(re.findall(r"<code>.*?</code>", html, re.S))
    assert '<mark class="model" data-generation="g2">voce</mark>' in body
    assert MARK.sub(lambda m: m.group(2), body).startswith("\n" + session.text)


def test_a_model_table_without_edge_pipes_stays_a_table(store: SessionStore, generate) -> None:
    """Only a line opening with `|` was known as a table's: in `a | b` over `--|--` each row
    got a mark, the delimiter row was no longer one, and the table became a paragraph."""
    session = store.create_chat(title="Tabelle")
    session.add_user_turn("Una tabella?")
    session.record_reply(generate(session, "Ecco:\n\nnome | età\n--|--\nAda | 36\n\nFine.", anchor=0))
    _, body = split_front_matter(render_markdown(session, mark_model=True))
    html = html_of(body)
    assert (
        "<th>nome</th>" in html
        and "<td>36</td>" in html
        and "<mark" not in html.split("<table>")[1].split("</table>")[0]
    )
    assert '<mark class="model" data-generation="g1">Fine.</mark>' in body
