"""Token inspection and colouring (issue 6): every generated token keeps its numbers,
in the suggestion and in the draft, for as long as its text is unchanged."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tui_helpers import drawn_border, drawn_lines, generated, ready, typed

from scriptorium.app.tui.token_spans import BUCKETS, bucket
from scriptorium.app.tui.widgets.token_text import TokenLegend
from scriptorium.inference.core.settings import preset

PROMPT = "C'era una volta una casa sul lago."


async def test_the_suggestions_tokens_keep_their_numbers_and_the_token_cursor_shows_them(random_model: Path) -> None:
    async with ready(random_model, size=(120, 40)) as (app, pilot):
        await typed(pilot, PROMPT)
        await generated(pilot, "ctrl+g")
        _, events, _ = app.main.last_generation
        ghost = app.main.draft.editor.ghost
        assert [r.text for r in ghost.tokens] == [e.text for e in events if e.text]
        assert all(ghost.text[r.start : r.end] == r.text for r in ghost.tokens)
        panel = app.main.sidebar.probabilities
        await pilot.press("f4")
        last = len(ghost.tokens) - 1
        assert app.main.draft.inspection.inspected == last
        await pilot.press("left", "left")
        assert app.main.draft.inspection.inspected == last - 2
        expected = [e for e in events if e.text][last - 2]
        assert panel.event.id == expected.id and panel.event.top == expected.top and panel.event.p == expected.p
        assert panel.border_subtitle == "greedy"
        # The editor's cursor did not move: ← went to the token cursor.
        assert app.main.draft.editor.cursor_location == (0, len(PROMPT))
        await pilot.press("escape")
        assert app.main.draft.inspection.inspected is None and app.main.draft.editor.ghost is not None


async def test_accepted_text_keeps_its_tokens_until_it_is_edited(random_model: Path) -> None:
    async with ready(random_model, size=(120, 40)) as (app, pilot):
        await typed(pilot, PROMPT)
        await generated(pilot, "ctrl+g")
        _, events, _ = app.main.last_generation
        editor = app.main.draft.editor
        suggestion = editor.ghost.text
        await pilot.press("tab")
        assert editor.text == PROMPT + suggestion
        [span] = editor.spans.spans
        assert span.start == len(PROMPT) and span.text == suggestion
        tokens = [e for e in events if e.text]
        # Cursor onto the third generated token: the panel shows its numbers as sampled.
        third = span.tokens[2]
        editor.move_cursor((0, len(PROMPT) + third.start))
        await pilot.pause()
        panel = app.main.sidebar.probabilities
        assert panel.event.id == tokens[2].id and panel.event.top == tokens[2].top
        # Typing before the span moves it; the numbers stay with the same characters.
        editor.move_cursor((0, 0))
        await pilot.press("X")
        [span] = editor.spans.spans
        assert span.start == len(PROMPT) + 1 and editor.text[span.start : span.end] == suggestion
        # An edit inside it drops it: its numbers would no longer describe the text.
        editor.move_cursor((0, span.start + third.start + 1))
        await pilot.press("Z")
        assert len(editor.spans) == 0
        # Undo brings the text back, but the token data stays gone (never shown wrong).
        await pilot.press("ctrl+z")
        assert editor.text[1 + len(PROMPT) :] == suggestion
        editor.move_cursor((0, 1 + len(PROMPT) + third.start))
        await pilot.pause()
        assert editor.token_at_cursor() is None


async def test_colouring_by_probability_turns_on_and_off_with_a_legend(random_model: Path) -> None:
    async with ready(random_model, size=(120, 40)) as (app, pilot):
        await typed(pilot, PROMPT)
        await generated(pilot, "ctrl+g")
        editor = app.main.draft.editor
        tokens = list(editor.ghost.tokens)
        await pilot.press("tab", "f8")
        legend = app.main.draft.query_one(TokenLegend)
        assert legend.display
        row = editor.row_styles(0)
        ours = [h for h in row if h[2].startswith("p")]
        assert [name for _, _, name in ours] == [bucket(r.p) for r in tokens]
        assert ours[0][0] == len(PROMPT) + tokens[0].start
        assert editor._theme.syntax_styles["p0"] != editor._theme.syntax_styles["p50"]
        # The suggestion view colours the same way.
        assert app.main.draft.suggestion.colour_tokens
        await pilot.press("f8")
        assert not legend.display
        assert not [h for h in editor.row_styles(0) if h[2].startswith("p")]


async def test_text_pasted_with_crlf_before_generated_text_leaves_its_tokens_in_place(random_model: Path) -> None:
    """A paste from a Windows program brings "\r\n", which the editor keeps as one line
    break: the generated text after it was moved on by two characters a line, so its
    colours and its tokens under the cursor sat on the wrong letters."""
    from textual import events

    async with ready(random_model) as (app, pilot):
        await typed(pilot, "Era notte")
        await generated(pilot, "ctrl+g")
        await pilot.press("tab")
        editor = app.main.draft.editor
        editor.move_cursor((0, 0))
        app.post_message(events.Paste("Uno\r\ndue\r\n"))
        await pilot.pause()
        assert editor.text.startswith("Uno\ndue\nEra notte")
        [span] = editor.spans.spans
        assert editor.text[span.start : span.end] == span.text


async def test_inspecting_before_the_first_token_says_the_model_has_not_written_one(random_model: Path) -> None:
    """F4 pressed while the model read a long prompt said 'Nothing to inspect here: generate
    a suggestion (inspect it with F4)', with the suggestion being generated."""
    import threading

    from tui_helpers import loader_calling

    started, go = threading.Event(), threading.Event()

    def held() -> None:
        started.set()
        go.wait(30)

    async with ready(random_model, loader=loader_calling(held), size=(120, 40)) as (app, pilot):
        app.main.draft.editor.load_text("La casa era buia.")
        await pilot.press("ctrl+g")
        assert await asyncio.to_thread(started.wait, 30)
        await pilot.press("f4")
        go.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        said = [n.message for n in app.notices]
        assert any("has not written a token yet" in message for message in said), said
        assert not any("generate a suggestion" in message for message in said), said


async def test_how_an_inspected_token_was_sampled_is_never_cut_inside_a_number(random_model: Path) -> None:
    """Under the probabilities, how the inspected token was sampled: at 80 columns it was
    cut at the box's edge as "T 0.8 · top-k 50 · top-p 0.…", a top-p that reads as any."""

    async with ready(
        random_model,
        sampler=preset("prose").with_changes(max_tokens=6, seed=1234567),
        size=(80, 24),
    ) as (app, pilot):
        await typed(pilot, PROMPT)
        await generated(pilot, "ctrl+g")
        await pilot.press("f4")
        await pilot.pause()
        panel = app.main.sidebar.probabilities
        note = app.main.draft.editor.ghost.tokens[-1].source.describe()
        parts = note.split(" · ")
        assert len(parts) > 3 and not panel.border_subtitle.endswith("sampling")  # the note, long
        shown = drawn_border(panel, bottom=True)
        assert shown and set(shown.split(" · ")) <= {*parts, "…"}, (shown, note)


async def test_the_colour_legend_names_every_band_at_80_columns(random_model: Path) -> None:
    """At 80 columns the legend ran past the draft's edge: the last band, "<1%" (the tokens
    the model least expected, the ones colouring is for), was not named."""

    async with ready(random_model, size=(80, 24)) as (app, pilot):
        await typed(pilot, PROMPT)
        await generated(pilot, "ctrl+g")
        await pilot.press("f8")
        await pilot.pause()
        legend = app.main.draft.query_one(TokenLegend)
        assert legend.display
        shown = drawn_lines(legend)[0]
        assert all(label in shown for _, _, label in BUCKETS), shown
