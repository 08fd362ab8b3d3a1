"""A continuation from after a space with token healing off (the rule a llama-server, which
cannot heal, keeps too): the prompt leaves the spaces ending the text out
(window.prompt_end), and the suggestion takes their place in the draft. With healing on
the spaces are backed up over like any cut token (tests/tui/test_healing_tui.py).

The "sentence" model writes " La casa era buia." after any token outside that sentence
(a lone "▁" too) and "." after "▁buia", each by a wide margin."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Awaitable, Callable

from textual import on
from textual.pilot import Pilot
from textual.widgets import OptionList

from scoring_helpers import scored
from tui_helpers import candidates_written, generated, make_app, model_ready, ready, spying_loader, typed

from scriptorium.app.tui.app import ScriptoriumApp
from scriptorium.app.tui.branches import Ghost, move_version, start_version
from scriptorium.app.tui.widgets.draft_editor import DraftEditor
from scriptorium.app.tui.widgets.draft_pane import DraftPane
from scriptorium.inference.core.settings import preset

UNHEALED = preset("greedy").with_changes(heal=False)


async def continuing(
    model: Path, typed: str | list[str], then: Callable[[Pilot[Any], DraftEditor], Awaitable[None]], **app_options: Any
) -> None:
    """Type `typed` (or press its keys) into a new draft, press ctrl+g, then run `then`."""

    async with ready(model, **{"sampler": UNHEALED, **app_options}, size=(120, 40)) as (app, pilot):
        await pilot.press(*typed)
        await generated(pilot, "ctrl+g")
        await then(pilot, app.main.draft.editor)


async def test_a_suggestion_after_a_space_takes_its_place(sentence_model: Path) -> None:
    loader, spies = spying_loader()

    async def then(pilot: Pilot[Any], editor: DraftEditor) -> None:
        assert spies[-1].last["prompt"].endswith("dorme")  # not a lone "▁" the model never saw
        window = pilot.app.main.last_generation[0].window
        assert window is not None and window.spaces_left_out == 1  # and the window says so, as `continue --json`
        assert editor.ghost is not None and editor.ghost.text == " La casa era buia."
        title = str(pilot.app.main.draft.suggestion.border_title)
        assert "suggestion from the end" in title and "replaces" not in title  # the space it stands in for: no news
        await pilot.press("escape")
        assert editor.text == "Il gatto dorme "  # Esc: the author's space as typed
        await generated(pilot, "ctrl+g")
        await pilot.press("tab")
        assert editor.text == "Il gatto dorme La casa era buia."  # one space, not two

    await continuing(sentence_model, "Il gatto dorme ", then, loader=loader)


async def test_closing_punctuation_the_model_writes_takes_the_authors_space(sentence_model: Path) -> None:
    # "buia " + "." kept the author's space, "buia .": no language sets one before a full stop.
    async def then(pilot: Pilot[Any], editor: DraftEditor) -> None:
        await generated(pilot, "ctrl+r")  # a re-roll writes from the same place
        assert editor.ghost is not None and editor.ghost.text == "."
        await pilot.press("tab")
        assert editor.text == "La casa era buia."

    await continuing(sentence_model, "La casa era buia ", then)


async def test_typing_after_the_space_types_through_the_suggestion(sentence_model: Path) -> None:
    async def then(pilot: Pilot[Any], editor: DraftEditor) -> None:
        await pilot.press("x")  # not what it writes: the suggestion goes, the text is as typed
        assert editor.ghost is None and editor.text == "Il gatto dorme x"
        await pilot.press("backspace")
        await generated(pilot, "ctrl+g")
        await pilot.press("L")  # what the suggestion writes after the space
        assert editor.ghost is not None and editor.ghost.text == "a casa era buia."
        await pilot.press("tab")
        assert editor.text == "Il gatto dorme La casa era buia."

    await continuing(sentence_model, "Il gatto dorme ", then)


async def test_a_candidate_chosen_after_a_space_takes_its_place(sentence_model: Path) -> None:
    async with ready(sentence_model, sampler=UNHEALED, size=(130, 40)) as (app, pilot):
        await typed(pilot, "Il gatto dorme ")
        await pilot.press("ctrl+n")
        await candidates_written(pilot)
        await pilot.press("enter")
        await pilot.pause()
        editor = app.main.draft.editor
        assert editor.ghost is not None and editor.ghost.text == " La casa era buia."
        await pilot.press("tab")
        assert editor.text == "Il gatto dorme La casa era buia."


async def test_writing_on_from_a_space_the_suggestion_ends_with_takes_its_place(sentence_model: Path) -> None:
    # A branch at "▁casa" to the lone "▁" among its alternatives: the suggestion then ends
    # in a space, and what is written on from there comes in place of it, as after the draft's.
    async def then(pilot: Pilot[Any], editor: DraftEditor) -> None:
        draft = pilot.app.main.draft
        await pilot.press("f4")
        while draft.inspection.inspected != 1:
            await pilot.press("left")
        record = editor.ghost.tokens[1]
        assert record.text == " casa"
        await pilot.press("ctrl+b")
        pilot.app.screen.query_one(OptionList).highlighted = [c.text for c in record.top].index(" ")
        await generated(pilot, "enter")
        assert editor.ghost.text == " La casa era buia."  # after "▁La" the model writes "▁casa": one space

    await continuing(sentence_model, "Il gatto dorme", then)


async def test_candidates_after_a_suggestion_ending_in_a_space_take_its_place(sentence_model: Path) -> None:
    async def then(pilot: Pilot[Any], editor: DraftEditor) -> None:
        ghost = editor.ghost
        # As if the model had stopped right after a lone "▁": " La" then " ".
        ghost.text, ghost.tokens = " La ", ghost.tokens[:1]
        await pilot.press("ctrl+n")
        await candidates_written(pilot)
        await pilot.press("enter")
        await pilot.pause()
        assert editor.ghost.text == " La casa era buia."  # after "▁La" the model writes "▁casa": one space
        await pilot.press("alt+left")
        assert editor.ghost.text == " La "  # the suggestion as it was, an earlier version

    await continuing(sentence_model, "Il gatto dorme", then)


async def test_scoring_colours_no_space_the_prompt_left_out(random_model: Path) -> None:
    async with ready(random_model, sampler=UNHEALED, size=(120, 40)) as (app, pilot):
        await scored(pilot, "Il gatto dorme \t")
        last = max(app.main.draft.editor.spans.spans, key=lambda span: span.end)
        assert last.end == len("Il gatto dorme")  # what the model read is scored, not the spaces after it


# The "utf8_bytes" model writes "è" (the bytes <0xC3> <0xA8>) after any token outside its
# chains, "." and a newline too, by a wide margin: a first token with no space before it.
GREEDY_FOUR = preset("greedy").with_changes(max_tokens=4, heal=False, preset="greedy")
BYTES_ALLOWED = ["ctrl+t", "b", "escape"]  # the sampler panel's byte ban lifted


async def test_a_word_written_after_the_authors_space_keeps_it(utf8_model: Path) -> None:
    seen: list[DraftPane.SuggestionAccepted] = []

    class Recording(ScriptoriumApp):
        @on(DraftPane.SuggestionAccepted)
        def record(self, message: DraftPane.SuggestionAccepted) -> None:
            seen.append(message)

    template = make_app(utf8_model, sampler=GREEDY_FOUR)
    app = Recording(
        backend_loader=template.backend_loader,
        settings=template.settings,
        draft=template.manuscript.draft_file,
        load_options=template._initial_load,
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await model_ready(pilot)
        await pilot.press(*BYTES_ALLOWED)
        await typed(pilot, "pronto. ")
        editor = app.main.draft.editor
        await generated(pilot, "ctrl+g")
        assert editor.ghost is not None and editor.ghost.text == "èè"
        await pilot.press("ctrl+right")  # a word: after the author's space, not in its place
        assert editor.text == "pronto. èè"
        assert (seen[-1].text, seen[-1].at, seen[-1].at_index) == ("èè", (0, 8), 8)
        await pilot.press("ctrl+z")
        assert editor.text == "pronto. "
        await generated(pilot, "ctrl+g")
        await pilot.press("escape")
        assert editor.text == "pronto. "
        await generated(pilot, "ctrl+g")
        await generated(pilot, "ctrl+r")  # a re-roll: the same text, in the same place
        await pilot.press("tab")
        assert editor.text == "pronto. èè"
        assert (seen[-1].text, seen[-1].at_index) == ("èè", 8)


async def test_typing_after_the_authors_space_types_through_a_word_that_follows_it(utf8_model: Path) -> None:
    async def then(pilot: Pilot[Any], editor: DraftEditor) -> None:
        await pilot.press("è")
        assert editor.ghost is not None and editor.ghost.text == "è"
        await pilot.press("tab")
        assert editor.text == "pronto. èè"

    await continuing(utf8_model, [*BYTES_ALLOWED, *"pronto. "], then, sampler=GREEDY_FOUR)


async def test_an_unindented_line_written_after_the_indentation_keeps_it(utf8_model: Path) -> None:
    async def then(pilot: Pilot[Any], editor: DraftEditor) -> None:
        assert editor.ghost is not None and editor.ghost.text == "èè"
        await pilot.press("tab")
        assert editor.text == "Il gatto\n    èè"

    await continuing(utf8_model, [*BYTES_ALLOWED, *"Il gatto", "enter", *"    "], then, sampler=GREEDY_FOUR)


def test_each_version_takes_the_spaces_place_only_if_it_begins_with_white_space() -> None:
    ghost = Ghost(anchor=(0, 7), from_cursor=False, replaces=1, spaces_left_out=1)  # "pronto." then " "
    start_version(ghost, "first", "lire")
    assert (ghost.anchor, ghost.replaces) == ((0, 8), 0)
    start_version(ghost, "re-roll", " La")
    assert (ghost.anchor, ghost.replaces) == ((0, 7), 1)
    move_version(ghost, -1)
    assert (ghost.anchor, ghost.replaces) == ((0, 8), 0)
