"""Plain text in the export (a .txt draft, a draft only in its session, the author's chat
message, the system prompt): rendered by a CommonMark viewer, it reads as the text the author
sees in the app, every word kept and nothing turned into markup the author did not write.

Checked by rendering the export with markdown-it (CommonMark with tables and strikethrough,
as GitHub and Obsidian read it) and reading back the text a reader sees."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from scriptorium.app.sessions import SessionStore
from scriptorium.app.sessions.export import render_markdown

from markdown_shown import assert_literal, shown

MARK = re.compile(r'<mark class="model" data-generation="(g\d+)">(.*?)</mark>')


def body_of(markdown: str) -> str:
    return markdown.split("\n---\n", 1)[1]


def test_display_math_is_not_paired_across_a_code_fence(store: SessionStore) -> None:
    """A `$$` in a ``` block paired with one after it: the lines between were taken for
    LaTeX, their breaks and indentation dropped, and the fence became a code box."""
    text = "```\n$$\n```\nUna riga\n    rientrata\n$$ fine"
    assert_literal(body_of(render_markdown(store.create_draft(text=text))), text)


@pytest.mark.parametrize("text", ["- voce\n    continua", "1. primo\n     segue\n\n      più in là", "* a\n\tb"])
def test_a_list_items_indented_lines_keep_their_indentation(store: SessionStore, text: str) -> None:
    """A line indented under a `- ` line of a plain draft lost its indentation (joined to the
    item) or, after a blank line, became a code block inside a list the author never made."""
    assert_literal(body_of(render_markdown(store.create_draft(text=text))), text)


PROSE = [
    "# Capitolo uno",
    "## Due",
    "#hashtag",
    "1. primo\n2. secondo",
    "2026. Un anno.",
    "3) terzo",
    "- trattino",
    "* stella",
    "+ più",
    "> citato",
    "Sopra\n---\nsotto",
    "Titolo\n===",
    "---",
    "***",
    "___",
    "- - -",
    "<div>blocco</div>",
    "a <b>grassetto</b> e <br>",
    "<!-- nota -->",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "uno | due",
    "il `codice` qui",
    "```\nrecinto\n```",
    "~~~\ntilde\n~~~",
    "~~barrato~~",
    "*enfasi* e _x_",
    "**forte** e __forte__",
    "a_b_c e 2*3*4",
    "[link](x) e ![img](y)",
    "[rif]: http://x",
    "[^1] nota",
    "<http://x.it> e <a@b.it>",
    "&amp; &copy; &#35; &#x23; AT&T",
    "fine riga \\\nsotto",
    "barra\\ e \\* e \\\\",
    "\\",
    "$x$ e $$y$$",
    "$$\nx = y\n$$",
    "==evidenziato== e %%commento%%",
    "Due spazi  \nsotto",
    "    rientro\n    di codice",
    "\tTab",
    "Testo\n- interrompe\n> anche\n# e questo",
    "a\n\n\n\nb",
]


@pytest.mark.parametrize("text", PROSE)
def test_a_plain_draft_reads_as_written(store: SessionStore, generate, tmp_path: Path, text: str) -> None:
    """Markdown characters in a plain-text draft are prose: `# `, `- `, `1. `, a `|` table or
    `*stars*` became a heading, a list, a table or emphasis, `<div>` vanished, `&amp;` became `&`."""
    assert_literal(body_of(render_markdown(store.create_draft(text=text))), text)
    # Written by the model, with its passage marked: the same text, marked.
    session = store.create_draft(text="Inizio.\n\n")
    g = generate(session, text, anchor=len(session.text))
    session.accept(g, g.text, len(session.text))
    body = body_of(render_markdown(session, mark_model=True))
    assert_literal(body, session.text)
    assert MARK.findall(body)
    # The same text in a .md draft is the author's Markdown: as written.
    markdown = store.create_draft(text=text, draft_path=tmp_path / "bozza.md")
    assert body_of(render_markdown(markdown)) == "\n" + text + "\n"


def test_what_only_pandoc_or_obsidian_read_as_markup_is_escaped_too(store: SessionStore) -> None:
    """markdown-it leaves these as text, but pandoc reads `$x$` as math and `2^10^` as a
    superscript, Obsidian `==x==` as a highlight and hides `%%x%%` (a comment) and a
    closing `^id` (a block id): words lost or turned into markup. Each is escaped."""
    text = "Costa $5, e $$x$$; ==evidenziato==, %%nascosto%%, 2^10^ e fine ^blocco1"
    body = body_of(render_markdown(store.create_draft(text=text)))
    assert_literal(body, text)
    unescaped = re.compile(r"(?<!\\)(?:\\\\)*(?:[$^]|==|%%)")
    assert not unescaped.search(body), body


def test_an_underscore_inside_a_word_is_left_alone(store: SessionStore) -> None:
    """Every `_` got a backslash, so a draft naming `file_name` or a footnote's `top_p` read
    `file\\_name` in the file, though no viewer takes an underscore between letters for
    emphasis. Only one that could open or close emphasis is escaped."""
    text = "file_name, città_è, 1_000 e _corsivo_, a__b__c"
    body = body_of(render_markdown(store.create_draft(text=text)))
    assert_literal(body, text)
    assert "file_name, città_è, 1_000 e \\_corsivo\\_, a\\_\\_b\\_\\_c" in body


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from("ab #>-+*_=`~|<>&;$[]()!^\\:.1%\n\r\t"), max_size=40))
def test_any_plain_text_reads_as_written(text: str) -> None:
    from scriptorium.app.sessions.export_plain import plain_as_markdown
    from scriptorium.app.sessions.export_breaks import soft_break_ends
    from scriptorium.app.sessions.export_marks import render

    markdown, _ = plain_as_markdown(text, [])
    assert_literal(render(markdown, [], mark=False, notes={}, hard_breaks=soft_break_ends(markdown)), text)


def test_the_authors_chat_message_reads_as_typed_and_the_reply_as_markdown(store: SessionStore, generate) -> None:
    """The chat shows the author's message as typed and the model's reply as Markdown: the
    export read the message as Markdown too (`# Idea` a heading, `*` emphasis)."""
    message = "# Idea\n- una poesia\n*breve*, <per favore>\n    rientrata"
    session = store.create_chat(title="Chat", system_prompt="Sei *breve*.\n> Rispondi | in italiano.")
    session.add_user_turn(message)
    session.record_reply(generate(session, "Il *mare*\ne il cielo.\n\n- uno", anchor=0))
    body = body_of(render_markdown(session))
    system, author, model = (section.split("\n\n", 1)[1] for section in body.split("## ")[1:])
    assert_literal(system, session.system_prompt)
    assert_literal(author, message)
    html_tags = shown(model)[1]
    assert shown(model)[0] == "Il mare\ne il cielo.\n\nuno" and {"em", "li"} <= html_tags


def test_a_models_name_in_a_reply_heading_is_text(store: SessionStore, generate, model_ref) -> None:
    """A model named from its file, `__base__ <q4> *mini*`, had its name read as Markdown in
    the reply's heading: bold, emphasis, an HTML tag that vanished."""
    import dataclasses

    session = store.create_chat(title="Nomi")
    session.add_user_turn("Ciao")
    name = "__base__ <q4> *mini*"
    session.record_reply(generate(session, "Ciao.", anchor=0, model=dataclasses.replace(model_ref, name=name)))
    heading = next(line for line in body_of(render_markdown(session)).splitlines() if line.startswith("## Model"))
    assert_literal(heading.removeprefix("## "), f"Model ({name})")


def test_a_settings_footnote_shows_its_stop_strings(store: SessionStore, generate) -> None:
    """A footnote said which settings changed, stop strings among them: `</s>` is an HTML
    tag to a viewer, and vanished from the note; `*` made emphasis."""
    from scriptorium.inference.core.settings import preset

    session = store.create_draft(text="Inizio.")
    for sampler in (preset("prose"), preset("prose").with_changes(stop=("</s>", "*fine*"))):
        g = generate(session, " Poi.", settings=sampler)
        session.accept(g, g.text, len(session.text))
    [note] = [
        line
        for line in body_of(render_markdown(session, settings_changes=True)).splitlines()
        if line.startswith("[^g2]: ")
    ]
    assert "stop [] → ['</s>', '*fine*']" in shown(note)[0]


def test_a_plain_export_reads_the_text_once(store: SessionStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each markdown-it parse costs most of a second per megabyte of novel: an export with no
    marks or notes to place parses the escaped text once, for its line breaks."""
    from scriptorium.app.sessions import export_breaks

    parses: list[str] = []
    real_parse = export_breaks.parse
    monkeypatch.setattr(export_breaks, "parse", lambda text: parses.append(text) or real_parse(text))
    render_markdown(store.create_draft(text="    Rientro.\n\n# Non un titolo\nriga"))
    assert len(parses) == 1
