"""Branching from a token: an alternative or your own word, and what is written from there (issue 6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input, OptionList
from tui_helpers import generated, ready, spying_loader, typed

from scriptorium.app.tui.screens.alternatives_screen import AlternativesScreen
from scriptorium.app.tui.widgets.suggestion_view import replaced_label

PROMPT = "C'era una volta una casa sul lago."


async def accept_a_suggestion(pilot: Pilot[Any]) -> str:
    """Type the prompt, generate, accept: the draft then holds a model passage."""
    await typed(pilot, PROMPT)
    await generated(pilot, "ctrl+g")
    accepted = pilot.app.main.draft.editor.ghost.text
    await pilot.press("tab")
    return accepted


async def test_choosing_an_alternative_writes_on_from_there_and_keeps_the_old_text(random_model: Path) -> None:
    loader, spies = spying_loader()

    async with ready(random_model, loader=loader, size=(120, 40)) as (app, pilot):
        await typed(pilot, PROMPT)
        await generated(pilot, "ctrl+g")
        draft = app.main.draft
        ghost = draft.editor.ghost
        first_text = ghost.text
        await pilot.press("f4", "left", "left")
        index = draft.inspection.inspected
        record = ghost.tokens[index]
        await pilot.press("ctrl+b")
        assert isinstance(app.screen, AlternativesScreen)
        # The second candidate: not what greedy sampling took.
        alternative = record.top[1]
        assert alternative.id != record.id
        app.screen.query_one(OptionList).highlighted = 1
        await generated(pilot, "enter")
        ghost = draft.editor.ghost
        prefix = first_text[: record.start] + alternative.text
        assert ghost.text.startswith(prefix) and len(ghost.text) > len(prefix)
        assert spies[0].last["prompt"].endswith(PROMPT + prefix)
        # The chosen alternative is itself a token with its numbers, then the new ones follow.
        assert ghost.tokens[index].id == alternative.id and ghost.tokens[index].p == alternative.p
        assert len(ghost.versions) == 2 and ghost.version == 1
        assert "version 2/2" in str(draft.suggestion.border_title)
        branched = ghost.text
        await pilot.press("alt+left")
        assert ghost.text == first_text and ghost.version == 0
        await pilot.press("alt+left")  # nothing older: says so, changes nothing
        assert ghost.text == first_text
        await pilot.press("alt+right")
        assert ghost.text == branched
        await pilot.press("tab")
        assert draft.editor.text == PROMPT + branched


async def test_a_branch_with_your_own_word_credits_each_generation_with_its_own_text(random_model: Path) -> None:
    async with ready(random_model, size=(120, 40)) as (app, pilot):
        await typed(pilot, PROMPT)
        await generated(pilot, "ctrl+g")
        draft = app.main.draft
        ghost = draft.editor.ghost
        first_text = ghost.text
        await pilot.press("f4", "left", "left", "left")
        record = ghost.tokens[draft.inspection.inspected]
        await pilot.press("ctrl+b")
        app.screen.query_one(Input).focus()
        await typed(pilot, "zebra")
        await generated(pilot, "enter")
        ghost = draft.editor.ghost
        own = ghost.text[record.start : record.start + ghost.text[record.start :].index("zebra") + 5]
        written_after = ghost.text[record.start + len(own) :]
        assert written_after
        await pilot.press("tab")
        session = app.sessions.draft
        assert session is not None and session.text == PROMPT + first_text[: record.start] + own + written_after
        first, second = session.generations[0], session.generations[-1]
        assert len(session.generations) == 2
        by_generation = {
            g: session.text[m.start : m.end] for g in (first.id, second.id) for m in session.spans if m.generation == g
        }
        # Each generation is credited with exactly what it wrote; the author's word with no one.
        assert by_generation == {first.id: first_text[: record.start], second.id: written_after}
        assert first.accepted_text == first_text[: record.start] and second.accepted_text == written_after


async def test_branching_in_accepted_text_with_your_own_word(random_model: Path) -> None:
    async with ready(random_model, size=(120, 40)) as (app, pilot):
        accepted = await accept_a_suggestion(pilot)
        draft = app.main.draft
        span = draft.editor.spans.spans[0]
        record = span.tokens[3]
        draft.editor.move_cursor((0, span.start + record.start))
        await pilot.press("ctrl+b")
        assert isinstance(app.screen, AlternativesScreen)
        app.screen.query_one(Input).focus()
        await typed(pilot, "zebra")
        await generated(pilot, "enter")
        # Nothing leaves the draft until the branch is accepted.
        assert draft.editor.text == PROMPT + accepted
        ghost = draft.editor.ghost
        own = (record.text[0] if record.text[0].isspace() else "") + "zebra"
        assert ghost.text.startswith(own)
        assert ghost.replaces == len(accepted) - record.start
        assert f"replaces {replaced_label(ghost.replaces)}" in str(draft.suggestion.border_title)
        branched = ghost.text
        # The replaced text is the first version: accepting it leaves the draft as it was.
        await pilot.press("alt+left")
        assert ghost.text == accepted[record.start :]
        await pilot.press("tab")
        assert draft.editor.text == PROMPT + accepted and draft.editor.ghost is None
        # Taken again and accepted, the branch replaces the rest of the passage, in one undo step.
        draft.editor.move_cursor((0, span.start + record.start))
        await pilot.press("ctrl+b")
        app.screen.query_one(Input).focus()
        await typed(pilot, "zebra")
        await generated(pilot, "enter")
        branched = draft.editor.ghost.text
        await pilot.press("tab")
        assert draft.editor.text == PROMPT + accepted[: record.start] + branched
        # The session saw a replacement: the author's word is theirs, what the model wrote
        # after it the model's, the old tail gone.
        session = app.sessions.draft
        assert session is not None and session.text == draft.editor.text
        start = len(PROMPT + accepted[: record.start])
        assert not any(m.start < start + len(own) and m.end > start for m in session.spans)
        assert any(m.start == start + len(own) and m.end == len(session.text) for m in session.spans)
        draft.editor.focus()
        await pilot.press("ctrl+z")
        assert draft.editor.text == PROMPT + accepted


async def test_a_rejected_or_invalidated_branch_leaves_the_draft_as_it_was(random_model: Path) -> None:
    async with ready(random_model, size=(120, 40)) as (app, pilot):
        await accept_a_suggestion(pilot)
        draft = app.main.draft
        whole = draft.editor.text
        span = draft.editor.spans.spans[0]
        record = span.tokens[2]
        for leave in ("escape", "edit inside"):
            draft.editor.move_cursor((0, span.start + record.start))
            await pilot.press("ctrl+b")
            app.screen.query_one(OptionList).highlighted = 1
            await generated(pilot, "enter")
            assert draft.editor.ghost is not None and draft.editor.ghost.replaces
            if leave == "escape":
                await pilot.press("escape", "escape")
                assert draft.editor.text == whole
            else:
                # Typing inside the text the branch would replace: the branch no longer fits.
                inside = span.start + record.start + 2
                draft.editor.insert("X", draft.editor.document.get_location_from_index(inside))
                await pilot.pause()
                assert draft.editor.text == whole[:inside] + "X" + whole[inside:]
            assert draft.editor.ghost is None


async def test_branch_elsewhere_says_how(random_model: Path) -> None:
    async with ready(random_model, size=(120, 40)) as (app, pilot):
        await typed(pilot, PROMPT)
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert not isinstance(app.screen, AlternativesScreen)
        assert any("cursor on generated or scored text" in n.message for n in app.notices)
        assert app.main.draft.editor.text == PROMPT


async def test_branching_in_your_own_scored_words_rewrites_the_rest_of_the_line(random_model: Path) -> None:
    first_line, second_line = "La casa era buia, e la notte più lunga.", "Il gatto dorme sul letto."

    async with ready(random_model, size=(120, 40)) as (app, pilot):
        draft = app.main.draft
        draft.editor.load_text(first_line + "\n" + second_line)
        await pilot.press("f9")
        await app.workers.wait_for_complete()
        await pilot.pause()
        span, index = next((s, 0) for s in draft.editor.spans.spans if s.start >= 8)
        record = span.tokens[index]
        assert record.source.kind == "scored"
        draft.editor.move_cursor((0, span.start))
        await pilot.press("ctrl+b")
        assert isinstance(app.screen, AlternativesScreen)
        alternative = next(c for c in record.top if c.id != record.id)
        app.screen.query_one(OptionList).highlighted = list(record.top).index(alternative)
        await generated(pilot, "enter")
        ghost = draft.editor.ghost
        # Up to the end of the author's line, and nothing changes before Tab.
        assert ghost.replaces == len(first_line) - span.start
        assert draft.editor.text == first_line + "\n" + second_line
        assert ghost.text.startswith(alternative.text)
        assert ghost.versions[0].text == first_line[span.start :]
        branched = ghost.text
        await pilot.press("tab")
        assert draft.editor.text == first_line[: span.start] + branched + "\n" + second_line


async def test_a_byte_token_alternative_is_not_written_into_the_text(byte_loop_model: Path) -> None:
    """A byte token's label (<0xFF>) is not text: one byte of a character, whatever the
    candidate list calls it. Taking it would write the label itself into the draft."""

    async with ready(byte_loop_model, size=(120, 40)) as (app, pilot):
        await typed(pilot, PROMPT)
        await generated(pilot, "ctrl+g")  # the bytes are banned: Italian words come
        draft = app.main.draft
        ghost = draft.editor.ghost
        before = ghost.text
        await pilot.press("f4", "ctrl+b")
        assert isinstance(app.screen, AlternativesScreen)
        record = ghost.tokens[draft.inspection.inspected]
        assert record.top[0].text == "<0xFF>"  # the model's favourite, banned
        options = app.screen.query_one(OptionList)
        options.highlighted = 0
        await pilot.press("enter")
        await pilot.pause()
        assert "<0x" not in draft.editor.ghost.text and draft.editor.ghost.text == before
        assert options.get_option_at_index(0).disabled


async def test_branching_at_the_first_scored_word_adds_no_space_before_the_text(random_model: Path) -> None:
    """The tokenizer reads the text with a space before it (SentencePiece's dummy prefix),
    so the model's alternatives to the first word carry that space (" quella" for "La");
    written at the start of the draft it would be a space the author never typed."""
    text = "La casa era buia."

    async with ready(random_model, size=(120, 40)) as (app, pilot):
        draft = app.main.draft
        draft.editor.load_text(text)
        await pilot.press("f9")
        await app.workers.wait_for_complete()
        await pilot.pause()
        span = next(s for s in draft.editor.spans.spans if s.start == 0)
        record = span.tokens[0]
        assert record.text == "La"
        draft.editor.move_cursor((0, 0))
        await pilot.press("ctrl+b")
        assert isinstance(app.screen, AlternativesScreen)
        alternative = next(c for c in record.top if c.id != record.id and c.text.startswith(" "))
        app.screen.query_one(OptionList).highlighted = list(record.top).index(alternative)
        await generated(pilot, "enter")
        assert draft.editor.ghost.text.startswith(alternative.text.lstrip(" "))
        await pilot.press("tab")
        assert draft.editor.text.startswith(alternative.text.lstrip(" "))


async def test_a_control_token_alternative_is_not_written_into_the_text(sentence_model: Path) -> None:
    """<unk>, <s> and </s> are named in the candidate list, but their names are not text:
    taking one would write "<unk>" into the draft."""

    async with ready(sentence_model, size=(120, 40)) as (app, pilot):
        await typed(pilot, "C'era una volta")
        await generated(pilot, "ctrl+g")  # " La casa era buia."
        draft = app.main.draft
        before = draft.editor.ghost.text
        await pilot.press("f4", "ctrl+b")
        assert isinstance(app.screen, AlternativesScreen)
        record = draft.editor.ghost.tokens[draft.inspection.inspected]
        named = [i for i, c in enumerate(record.top) if c.text in ("<unk>", "<s>", "</s>")]
        assert named  # the markov model's other tokens tie, and the lowest ids come first
        options = app.screen.query_one(OptionList)
        options.highlighted = named[0]
        await pilot.press("enter")
        await pilot.pause()
        assert draft.editor.ghost.text == before
        assert all(options.get_option_at_index(i).disabled for i in named)


async def test_a_byte_level_piece_holding_part_of_a_character_is_not_written_into_the_text() -> None:
    """SmolLM2 writes Japanese in byte-level pieces: at "パ" (<0xE3><0x83> then <0x91>) every
    alternative was part of a character, labelled "\\xe3\\x83", "\\x92"... and taking one wrote
    that escape into the draft."""
    from textual.app import App

    from scriptorium.app.tui.token_spans import TokenRecord, TokenSource
    from scriptorium.inference.core.events import Candidate
    from scriptorium.inference.core.text import piece_text

    pieces = ["パ".encode(), b"\xe3\x83", b"\x92", b" \xe3", "ー".encode()]
    top = tuple(Candidate(10 + i, piece_text(piece), 0.5 ** (i + 1), False) for i, piece in enumerate(pieces))
    record = TokenRecord(0, "パ", 10, top[0].p, top, TokenSource("generated"))
    chosen: list[str | None] = []

    app: App[None] = App()
    async with app.run_test(size=(100, 30)) as pilot:
        app.push_screen(AlternativesScreen(record), chosen.append)
        await pilot.pause()
        options = app.screen.query_one(OptionList)
        assert [options.get_option_at_index(i).disabled for i in range(len(top))] == [
            False,
            True,
            True,
            True,
            False,
        ]
        assert [c.text for c in top[1:4]] == ["<0xE3><0x83>", "<0x92>", " <0xE3>"]
        options.highlighted = 1
        await pilot.press("enter")
        await pilot.pause()
        assert chosen == []  # a disabled option takes nothing
        options.highlighted = 4
        await pilot.press("enter")
        await pilot.pause()
        assert chosen == ["ー"]
