"""Markdown export: front matter parsed back by a YAML parser, body, marks, footnotes, refusals."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pytest

from scriptorium.app.sessions.export import ExportError, ExportExistsError, export_session, render_markdown
from scriptorium.app.sessions import ChatSession, DraftSession, SessionStore

from markdown_shown import MARK, assert_literal, html_of, split_front_matter


def test_front_matter_says_how_the_text_was_made(rich_draft: DraftSession) -> None:
    meta, body = split_front_matter(render_markdown(rich_draft))
    assert meta["title"] == "Chapter: One" and meta["session"] == rich_draft.id and meta["kind"] == "draft"
    assert isinstance(meta["date"], datetime.date) and meta["created"] == rich_draft.created_at
    # The headline generation is the first whose text is in the draft: g1.
    assert meta["model"] == 'Tiny Llama: "test"' and meta["model_sha256"] == "ab" * 32
    assert meta["model_file"] == "tiny-Q4_K_M.gguf" and meta["quantization"] == "Q4_K_M"
    assert meta["lora"] is None and meta["lora_scale"] is None
    assert meta["sampler"]["temperature"] == 0.8 and meta["sampler"]["preset"] == "prose"
    assert meta["seed"] == 1234
    assert meta["logit_bias"] == "byte tokens 16000–16255 banned (256)"
    assert (meta["generations"], meta["accepted"], meta["partly_accepted"], meta["rejected"]) == (3, 1, 1, 1)
    assert meta["models"] == ['Tiny Llama: "test"', "Other"]
    assert body == "\n\\" + rich_draft.text + "\n"  # unmarked: the plain draft as written, its `#` no heading


def test_a_suggestion_left_undecided_is_counted(rich_draft: DraftSession, generate) -> None:
    """A branch still on screen when the app quit: the front matter said 'generations: 4,
    accepted 1, partly_accepted 1, rejected 1', and the fourth was in no count."""
    generate(rich_draft, " A branch never taken.", anchor=len(rich_draft.text))
    meta, _ = split_front_matter(render_markdown(rich_draft))
    counted = (meta["accepted"], meta["partly_accepted"], meta["rejected"], meta["undecided"])
    assert counted == (1, 1, 1, 1) and sum(counted) == meta["generations"]


def test_lora_and_bias_reach_the_front_matter(store: SessionStore, generate, lora_ref) -> None:
    from scriptorium.inference.core.settings import LogitBias

    session = store.create_draft(title="yes")  # a title YAML would read as a boolean
    g = generate(session, " x", lora=lora_ref, bias=LogitBias(ban_byte_tokens=False, entries=((42, 2.0),)))
    session.accept(g, g.text, 0)
    meta, _ = split_front_matter(render_markdown(session))
    assert meta["title"] == "yes"
    assert (meta["lora"], meta["lora_scale"], meta["lora_sha256"]) == ("style", 0.5, "ef" * 32)
    assert meta["logit_bias"] == "byte tokens allowed; 42: +2"


@pytest.mark.parametrize(
    "title", ['He said: "no"', "---", "a\nb", "null", "#hash", "1.5", "'quoted'", "[x]", "é ü 中文", "Capitolo\x85uno"]
)
def test_any_title_survives_yaml(store: SessionStore, title: str) -> None:
    session = store.create_draft(title=title)
    meta, _ = split_front_matter(render_markdown(session))
    assert meta["title"] == title.strip()
    assert meta["model"] is None and meta["seed"] is None and meta["generations"] == 0


def test_a_next_line_character_survives_the_front_matter(store: SessionStore) -> None:
    """PyYAML writes U+0085 raw and reads it back as a folded line break (a space): a
    memory pasted from a Windows-1252 text misread as Latin-1 came back changed."""
    session = store.create_draft(title="Città")
    session.memory = "Marco\x85Giulia, sorelle"
    meta, _ = split_front_matter(render_markdown(session))
    assert meta["memory"] == session.memory and meta["title"] == "Città"


def test_a_draft_with_its_own_front_matter_exports_one_block(store: SessionStore, generate) -> None:
    """Obsidian's properties or a pandoc header at the top of the draft: a second block
    after scriptorium's would be body text to Obsidian. One block, the author's keys first."""
    own = "---\ntitle: Il lago\ntags: [racconto, bozza]\n---\n\nC'era una volta."
    session = store.create_draft(title="bozza", text=own)
    g = generate(session, " Una casa.", anchor=len(own))
    session.accept(g, g.text, len(own))
    markdown = render_markdown(session, mark_model=True)
    meta, body = split_front_matter(markdown)
    assert markdown.count("---\n") == 2
    assert list(meta)[:2] == ["title", "tags"] and meta["title"] == "Il lago" and meta["tags"] == ["racconto", "bozza"]
    assert meta["session"] == session.id and meta["generations"] == 1
    assert MARK.findall(body) == [(g.id, "Una casa.")]
    assert MARK.sub(lambda m: m.group(2), body) == "\nC'era una volta. Una casa.\n"


def test_settings_changes_become_footnotes(rich_draft: DraftSession) -> None:
    markdown = render_markdown(rich_draft, mark_model=True, settings_changes=True)
    _, body = split_front_matter(markdown)
    assert body.count("[^g2]") == 2 and "[^g1]" not in body  # g1 matches the front matter
    assert "Gulls cried overhead.</mark>[^g2]" in body
    [note] = [line for line in body.splitlines() if line.startswith("[^g2]: ")]
    assert "temperature 0.8 → 1.1" in note and "LoRA none → style ×0.5" in note
    assert "logit bias byte tokens 16000–16255 banned (256); 42: +2; 7: -100" in note
    assert "seed 99" in note and "partly accepted" in note


def test_footnote_after_a_code_block_stays_outside_it(store: SessionStore, generate, tmp_path: Path) -> None:
    from scriptorium.inference.core.settings import preset

    session = store.create_draft(text="Start.", draft_path=tmp_path / "draft.md")  # Markdown: its code is code
    g1 = generate(session, " One.")
    session.accept(g1, g1.text, len(session.text))
    g2 = generate(session, "\n\n```\ncode\n```\n", settings=preset("creative"))
    session.accept(g2, g2.text, len(session.text))
    _, body = split_front_matter(render_markdown(session, settings_changes=True))
    assert "```\ncode\n```\n\n[^g2]" in body


def test_chat_is_one_section_per_turn(chat: ChatSession) -> None:
    meta, body = split_front_matter(render_markdown(chat, mark_model=True, settings_changes=True))
    assert meta["kind"] == "chat" and meta["rejected"] == 1 and meta["accepted"] == 2
    headings = re.findall(r"^## (.+)$", body, flags=re.M)
    assert headings == ["System prompt", "Author", 'Model (Tiny Llama: "test")', "Author", 'Model (Tiny Llama: "test")']
    assert "Bee." not in body  # the retracted reply is not part of the conversation
    assert '<mark class="model" data-generation="g1">Tree, free, and *glee*.</mark>' in body
    assert "```\nsea / tree\n```" in body  # the code block in the reply is not marked
    assert "Knee.</mark>[^g3]" in body and "[^g3]: Generation g3" in body


@pytest.mark.parametrize(("stop_reason", "ending"), [("cancelled", "stopped"), ("error", "failed")])
def test_a_chat_turns_own_headings_sit_under_the_turn_and_an_unfinished_reply_says_so(
    store: SessionStore, generate, stop_reason: str, ending: str
) -> None:
    """A reply's "## Title" read as a new turn beside "## Model" (an author's "# Idea" is no
    heading at all: typed text), and a reply stopped mid-sentence looked finished. One that
    failed midway was "cut short" in the export, "failed" in the chat: the chat's word."""
    session = store.create_chat(title="Headings")
    session.add_user_turn("# Idea\nA poem?")
    reply = generate(session, "## Title\n\n```\n# not a heading\n```\n###### Deep", anchor=0)
    session.record_reply(reply)
    reply.stop_reason = stop_reason
    _, body = split_front_matter(render_markdown(session))
    assert re.findall(r"^## (.+)$", body, flags=re.M) == ["Author", f'Model (Tiny Llama: "test") · {ending}']
    assert "\\# Idea\\\nA poem?" in body  # the author's message is shown as typed, `#` and all
    assert "#### Title" in body and "###### Deep" in body
    assert "```\n# not a heading\n```" in body  # code is left as it is


def test_a_replys_underlined_headings_sit_under_the_turn_too(store: SessionStore, generate) -> None:
    """A reply's "Titolo" over `===` or `---` (a setext heading, as the chat draws it) was a
    level 1 or 2 heading in the export: above "## Model" or beside it, a new turn to read."""
    session = store.create_chat(title="Setext")
    session.add_user_turn("Una poesia?")
    session.record_reply(generate(session, "Titolo\n===\n\nParte *una*\ne due\n---\nVersi.\n\nFine #\n---", anchor=0))
    _, body = split_front_matter(render_markdown(session))
    html = html_of(body)
    assert re.findall(r"<h(\d)>(.*?)</h\1>", html) == [
        ("2", "Author"),
        ("2", "Model (Tiny Llama: &quot;test&quot;)"),
        ("3", "Titolo"),
        ("4", "Parte <em>una</em> e due"),
        ("4", "Fine #"),
    ]
    assert "<p>Versi.</p>" in html


POEM = (
    "Roses are red,\nviolets are blue.\n\n- one\n- two\n\n# Title\nUnder it\n\n```\ncode a\ncode b\n```\n\n"
    "    indented a\n    indented b\n\n> quoted a\n> quoted b\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    "Already broken  \nand escaped\\\nVia Roma 1\n00100 Roma"
)
"""A plain-text draft: a poem's and an address's single line breaks, and what Markdown would read as structure."""


def test_an_authors_single_line_breaks_stay_line_breaks(store: SessionStore, generate) -> None:
    """A poem, an address or lines of dialogue in a plain draft came out as one line in
    every Markdown viewer: a single newline is a soft break, read as a space."""
    session = store.create_draft(title="Poesie", text=POEM[: POEM.index("violets")])
    # The model's passages are marked line by line; the author wrote the indented lines.
    for start, end in (("violets", "    indented"), ("> quoted", None)):
        if not POEM[len(session.text) :].startswith(start):
            session.set_text(POEM[: POEM.index(start)])
        g = generate(session, POEM[POEM.index(start) : POEM.index(end) if end else None], anchor=len(session.text))
        session.accept(g, g.text, len(session.text))
    assert session.text == POEM
    for mark_model in (False, True):
        _, body = split_front_matter(render_markdown(session, mark_model=mark_model))
        assert_literal(body, POEM)  # every line a line, its Markdown characters as typed
        assert all(line.count("<mark") == line.count("</mark>") for line in body.splitlines())
        assert "Roses are red,\\\nviolets are blue.\n" in MARK.sub(lambda m: m.group(2), body)


NOVEL = "Capitolo uno\n\n    Era una notte buia.\n    Pioveva.\n\n\tLei aspettava.\n        Più in là.\n\n    # Non un titolo"
"""A plain-text novel: paragraphs opening with four spaces or a tab, as many are written."""


def test_a_plain_drafts_indented_paragraphs_are_paragraphs(store: SessionStore, generate, tmp_path: Path) -> None:
    """Four spaces or a tab before a paragraph made it a Markdown code block: monospace, in
    a box, and the model's marks shown as literal <mark> tags inside it."""
    # The model wrote the indentation too: its mark opens after it, on the text.
    session = store.create_draft(title="Romanzo", text=NOVEL[: NOVEL.index("    Pioveva")])
    g = generate(session, NOVEL[NOVEL.index("    Pioveva") : NOVEL.index("\tLei")], anchor=len(session.text))
    session.accept(g, g.text, len(session.text))
    session.set_text(NOVEL)
    _, body = split_front_matter(render_markdown(session, mark_model=True))
    html = html_of(body)
    assert "<pre>" not in html and "<code>" not in html and "&lt;mark" not in html
    assert html.splitlines() == [
        "<p>Capitolo uno</p>",
        "<p>\u2003Era una notte buia.<br />",
        '\u2003<mark class="model" data-generation="g1">Pioveva.</mark></p>',
        "<p>\u2003Lei aspettava.<br />",
        "\u2003\u2003Più in là.</p>",  # deeper indentation stays deeper
        "<p>\u2003# Non un titolo</p>",
    ]
    # A line indented under a paragraph's first is the paragraph's, its indentation kept
    # too, and backticks in plain text are backticks: no code span to hide it in.
    lines = store.create_draft(text="Disse:\n    «Vieni.»\n\nUn `codice\n    lungo`.")
    assert html_of(split_front_matter(render_markdown(lines))[1]) == (
        "<p>Disse:<br />\n\u2003«Vieni.»</p>\n<p>Un `codice<br />\n\u2003lungo`.</p>\n"
    )
    # Written in Markdown, the indentation is the author's code block, as written.
    markdown = store.create_draft(text=NOVEL, draft_path=tmp_path / "romanzo.md")
    assert split_front_matter(render_markdown(markdown))[1] == "\n" + NOVEL + "\n"


def test_a_markdown_draft_exports_as_written(tmp_path: Path, store: SessionStore) -> None:
    """A .md draft is Markdown already: its author wraps paragraphs as they like and
    expects them read as Markdown, so its soft breaks stay soft."""
    session = store.create_draft(text="Una riga\nche continua.", draft_path=tmp_path / "bozza.md")
    _, body = split_front_matter(render_markdown(session))
    assert body == "\nUna riga\nche continua.\n"


def test_the_chat_lines_stay_lines(store: SessionStore, generate) -> None:
    """The author's message showed its lines in the chat, and the model's reply shows its
    own (chat_reply.py); the export joined the reply's, a poem read as one line."""
    session = store.create_chat(title="Lettera", system_prompt="Sei breve.\nRispondi in italiano.")
    session.add_user_turn("Caro Marco,\nti scrivo.\n\n# Idea\nUna poesia?")
    session.record_reply(generate(session, "Il mare\ne il cielo.\n\n```\nverso a\nverso b\n```", anchor=0))
    for mark_model in (False, True):
        _, body = split_front_matter(render_markdown(session, mark_model=mark_model))
        assert "Sei breve.\\\nRispondi in italiano." in body
        assert "Caro Marco,\\\nti scrivo.\n\n\\# Idea\\\nUna poesia?\n" in body  # as typed
        assert "\nIl mare\\\ne il cielo.\n\n```\nverso a\nverso b\n```\n" in MARK.sub(lambda m: m.group(2), body)
        assert html_of(body).count("<br />") == 4
        assert ('<mark class="model" data-generation="g1">Il mare</mark>\\\n' in body) is mark_model


MATH = "La formula:\n$$\na = b \\\\\n    c = d\n$$\ne poi.\n\nUn `$$`\nsolo."
MATH_EXPORTED = "La formula:\\\n$$\na = b \\\\\n    c = d\n$$\\\ne poi.\n\nUn `$$`\\\nsolo."
"""Display math over lines as written; the lines around it, and a `$$` in code, are lines."""


def test_display_math_lines_stay_as_written(store: SessionStore, generate) -> None:
    """A `$$ … $$` block over several lines of a reply is LaTeX: the backslash added at each
    line's end broke it in Obsidian and pandoc. In plain text (a plain draft, the author's
    message) `$$` is as typed, no math, and its lines are lines."""
    chat = store.create_chat(title="Math")
    chat.add_user_turn(MATH)
    chat.record_reply(generate(chat, MATH, anchor=0))
    _, body = split_front_matter(render_markdown(chat))
    assert f"\n\n{MATH_EXPORTED}\n" in body.split("## Model")[1]
    assert_literal(body.split("## Author\n")[1].split("## Model")[0], MATH)
    assert_literal(split_front_matter(render_markdown(store.create_draft(text=MATH)))[1], MATH)


def test_a_model_passage_is_not_marked_inside_display_math(store: SessionStore, generate, tmp_path: Path) -> None:
    """With the model's passages marked, each line of a `$$ … $$` block got a <mark> tag:
    LaTeX between `$$` and `$$`, broken in pandoc and Obsidian. Math is left as written, as
    code is; a `$$` in a code block pairs with none outside it."""
    fenced = "~~~\n$$\n~~~\nPrima\n"
    chat = store.create_chat(title="Math")
    chat.add_user_turn("?")
    chat.record_reply(generate(chat, fenced + MATH, anchor=0))
    draft = store.create_draft(text="Inizio.\n\n", draft_path=tmp_path / "bozza.md")
    g = generate(draft, fenced + MATH, anchor=len(draft.text))
    draft.accept(g, g.text, len(draft.text))
    for session, math in ((chat, MATH_EXPORTED), (draft, MATH)):
        _, body = split_front_matter(render_markdown(session, mark_model=True))
        lines = body.splitlines()
        opening = lines.index("$$", lines.index("$$") + 1)  # the first is in the code block
        assert lines[opening : opening + 4] == math.splitlines()[1:5]  # no tag in the LaTeX
        assert '<mark class="model" data-generation="g1">Prima</mark>' in body
        assert MARK.sub(lambda m: m.group(2), body).endswith(math + "\n")


def test_export_writes_and_refuses_to_overwrite(tmp_path: Path, rich_draft: DraftSession) -> None:
    out = tmp_path / "chapter.md"
    assert export_session(rich_draft, out) == out
    first = out.read_text(encoding="utf-8")
    assert first == render_markdown(rich_draft)
    out.write_text("the author's own notes", encoding="utf-8")
    with pytest.raises(ExportExistsError, match="already exists; use --force"):
        export_session(rich_draft, out, mark_model=True)
    assert out.read_text(encoding="utf-8") == "the author's own notes"
    export_session(rich_draft, out, force=True, mark_model=True)
    assert MARK.search(out.read_text(encoding="utf-8"))
    in_folder = export_session(rich_draft, tmp_path)
    assert in_folder == tmp_path / f"{rich_draft.id}.md" and in_folder.exists()


def test_export_never_overwrites_the_draft_file(tmp_path: Path, store: SessionStore) -> None:
    draft = tmp_path / "novel.md"
    draft.write_text("words", encoding="utf-8")
    session = store.open_draft(draft)
    with pytest.raises(ExportError, match="is the draft file of this session"):
        export_session(session, draft, force=True)
    assert draft.read_text(encoding="utf-8") == "words"


def test_unwritable_path_is_one_line(tmp_path: Path, rich_draft: DraftSession, unwritable_dir: Path) -> None:
    for out, reason in ((unwritable_dir / "x.md", "Permission denied"), (tmp_path / "no" / "x.md", "does not exist")):
        with pytest.raises(ExportError) as info:
            export_session(rich_draft, out)
        assert reason in str(info.value) and "\n" not in str(info.value)
