"""Draft mode with the real engine: type, continue, stop, accept, accept a word, reject,
re-roll, continue from the cursor, save."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from tui_helpers import Gate, generated, make_app, model_ready, ready, spying_loader, typed

from scriptorium import prompts
from scriptorium.app.config import prompt_templates
from scriptorium.app import paths
from scriptorium.app.tui.widgets.draft_editor import next_word, shifted_anchor
from scriptorium.inference.core.settings import preset

OPENING = "C'era una volta"


async def test_typing_goes_into_the_draft_while_the_model_loads(random_model: Path) -> None:
    app = make_app(random_model)
    async with app.run_test() as pilot:
        await typed(pilot, "Già è così")  # before the load has finished
        await model_ready(pilot)
        await pilot.press("enter")
        await typed(pilot, "ok")
        assert app.main.draft.editor.text == "Già è così\nok"
        assert app.main.draft.modified


async def test_continue_streams_a_suggestion_that_is_not_in_the_draft(random_model: Path) -> None:
    load, spies = spying_loader()
    async with ready(random_model, loader=load) as (app, pilot):
        await typed(pilot, OPENING)
        undo_before = [list(batch) for batch in app.main.draft.editor.history.undo_stack]
        done = await generated(pilot, "ctrl+g")
        draft = app.main.draft
        assert done.completion_tokens == 12 and done.text
        assert draft.editor.ghost is not None and draft.editor.ghost.text == done.text
        assert draft.editor.text == OPENING
        assert draft.suggestion.display and draft.suggestion.text == done.text
        assert [list(b) for b in draft.editor.history.undo_stack] == undo_before
        template = prompt_templates.load(prompts.CONTINUE, paths.prompts_dir())
        assert spies[0].last["prompt"] == prompts.render_continue(OPENING, template)


async def test_accept_puts_the_suggestion_in_the_draft_as_one_undo_step(random_model: Path) -> None:
    async with ready(random_model) as (app, pilot):
        await typed(pilot, OPENING)
        done = await generated(pilot, "ctrl+g")
        await pilot.press("tab")
        editor = app.main.draft.editor
        assert editor.text == OPENING + done.text
        assert editor.ghost is None and not app.main.draft.suggestion.display
        assert editor.cursor_location == editor.document.end
        await pilot.press("ctrl+z")
        assert editor.text == OPENING


async def test_accept_word_takes_the_next_word_each_time(random_model: Path) -> None:
    async with ready(random_model) as (app, pilot):
        await typed(pilot, OPENING)
        done = await generated(pilot, "ctrl+g")
        first = next_word(done.text)
        second = next_word(done.text[len(first) :])
        await pilot.press("ctrl+right")
        editor = app.main.draft.editor
        assert editor.text == OPENING + first
        assert editor.ghost is not None and editor.ghost.text == done.text[len(first) :]
        await pilot.press("ctrl+right")
        assert editor.text == OPENING + first + second


async def test_reject_leaves_no_trace_in_the_text_or_the_undo_history(random_model: Path) -> None:
    async with ready(random_model) as (app, pilot):
        await typed(pilot, OPENING)
        editor = app.main.draft.editor
        undo_before = [list(batch) for batch in editor.history.undo_stack]
        await generated(pilot, "ctrl+g")
        await pilot.press("escape", "escape")  # the first asks, the second throws it away
        assert editor.ghost is None and not app.main.draft.suggestion.display
        assert editor.text == OPENING
        assert [list(b) for b in editor.history.undo_stack] == undo_before
        await pilot.press("ctrl+z")  # brings the suggestion back: the draft had no edit since
        assert editor.ghost is not None and editor.text == OPENING
        await pilot.press("escape", "escape", "ctrl+z")
        assert editor.ghost is not None
        await pilot.press("escape", "escape", "x", "ctrl+z", "ctrl+z")  # the typing, then what was typed before
        assert editor.ghost is None and editor.text == ""


LONG_GREEDY = preset("greedy").with_changes(max_tokens=200)
"""Long enough that the model is still writing when a test acts."""


async def start_held_generation(pilot: Pilot[Any], gate: Gate) -> None:
    """Type the opening and continue it; return once the gate holds the model mid-way."""
    await model_ready(pilot)
    await typed(pilot, OPENING)
    await pilot.press("ctrl+g")
    await gate.wait_reached()


async def test_escape_stops_the_model_and_keeps_what_it_wrote(random_model: Path) -> None:
    gate = Gate(after_tokens=3)
    app = make_app(random_model, loader=gate.loader, sampler=LONG_GREEDY)
    async with app.run_test() as pilot:
        await start_held_generation(pilot, gate)
        tokens, done = await gate.escape(pilot)
        assert done.stop_reason == "cancelled"
        assert done.completion_tokens < 200
        ghost = app.main.draft.editor.ghost
        assert ghost is not None and not ghost.streaming
        kept = ghost.text
        assert kept == "".join(t.text for t in tokens) + done.tail_text
        await pilot.press("tab")
        assert app.main.draft.editor.text == OPENING + kept


async def test_the_cursor_stays_lit_while_the_model_writes(random_model: Path) -> None:
    gate = Gate(after_tokens=3)
    app = make_app(random_model, loader=gate.loader, sampler=LONG_GREEDY)
    async with app.run_test() as pilot:
        editor = app.main.draft.editor
        assert editor.cursor_blink
        await start_held_generation(pilot, gate)
        assert not editor.cursor_blink and editor._cursor_visible  # lit, not in a blink's dark half
        await pilot.press("escape")
        gate.release()
        await app.main.wait_until_idle()
        await pilot.pause()
        assert editor.cursor_blink


async def test_accept_while_streaming_takes_what_is_on_screen(random_model: Path) -> None:
    gate = Gate(after_tokens=4)
    app = make_app(random_model, loader=gate.loader, sampler=LONG_GREEDY)
    async with app.run_test() as pilot:
        await start_held_generation(pilot, gate)
        await pilot.pause()
        shown = app.main.draft.suggestion.text
        assert shown  # the first token is posted at once
        await pilot.press("tab")
        gate.release()
        await app.workers.wait_for_complete()
        await pilot.pause()
        editor = app.main.draft.editor
        assert editor.ghost is None and not app.main.is_generating
        assert editor.text == OPENING + shown  # nothing arrives after the accept


async def test_reroll_generates_again_from_the_same_place(random_model: Path) -> None:
    load, spies = spying_loader()
    sampler = preset("prose").with_changes(max_tokens=12, preset="prose")
    async with ready(random_model, loader=load, sampler=sampler) as (app, pilot):
        await typed(pilot, OPENING)
        first = await generated(pilot, "ctrl+g")
        second = await generated(pilot, "ctrl+r")
        assert len(spies[0].calls) == 2
        assert spies[0].calls[0]["prompt"] == spies[0].calls[1]["prompt"]
        assert first.seed != second.seed  # no fixed seed: a fresh draw each time
        ghost = app.main.draft.editor.ghost
        assert ghost is not None and ghost.text == second.text
        assert app.main.draft.editor.text == OPENING


async def test_continue_again_extends_the_waiting_suggestion(random_model: Path) -> None:
    load, spies = spying_loader()
    async with ready(random_model, loader=load) as (app, pilot):
        await typed(pilot, OPENING)
        first = await generated(pilot, "ctrl+g")
        second = await generated(pilot, "ctrl+g")
        assert spies[0].last["prompt"].endswith(OPENING + first.text)
        ghost = app.main.draft.editor.ghost
        assert ghost is not None and ghost.text == first.text + second.text
        assert second.reused_tokens > 0  # the KV cache kept the prefix


async def test_continue_from_the_cursor_uses_only_the_text_before_it(random_model: Path) -> None:
    load, spies = spying_loader()
    async with ready(random_model, loader=load) as (app, pilot):
        await typed(pilot, "Prima riga.")
        await pilot.press("enter")
        await typed(pilot, "Seconda riga.")
        await pilot.press("up", "end")
        done = await generated(pilot, "ctrl+o")
        assert spies[0].last["prompt"].endswith("Prima riga.")
        assert "Seconda" not in spies[0].last["prompt"]
        ghost = app.main.draft.editor.ghost
        assert ghost is not None and ghost.anchor == (0, 11) and ghost.from_cursor
        await pilot.press("tab")
        assert app.main.draft.editor.text == "Prima riga." + done.text + "\nSeconda riga."


async def test_typing_the_suggestion_consumes_it_and_other_typing_drops_it(random_model: Path) -> None:
    async with ready(random_model) as (app, pilot):
        await typed(pilot, OPENING)
        done = await generated(pilot, "ctrl+g")
        editor = app.main.draft.editor
        its_start = done.text[:3]
        await typed(pilot, its_start)
        assert editor.ghost is not None and editor.ghost.text == done.text[3:]
        await pilot.press("home", "X")  # an edit before the anchor moves it along
        assert editor.ghost is not None and editor.ghost.anchor == (0, len(OPENING) + 4)
        await pilot.press("end", "backspace")  # changing the text it continues drops it
        assert editor.ghost is None and not app.main.draft.suggestion.display


def test_anchor_arithmetic() -> None:
    # An edit on an earlier line moves the anchor by the lines it adds.
    assert shifted_anchor((3, 5), (1, 0), (1, 0), (2, 0)) == (4, 5)
    # On the anchor's own line, the column moves.
    assert shifted_anchor((0, 10), (0, 2), (0, 4), (0, 3)) == (0, 9)
    # After the anchor: nothing moves.
    assert shifted_anchor((0, 10), (0, 10), (0, 12), (0, 10)) == (0, 10)
    # Reaching the anchor (a backspace there) or across it: it is gone.
    assert shifted_anchor((0, 10), (0, 9), (0, 10), (0, 9)) is None
    assert shifted_anchor((0, 10), (0, 8), (0, 12), (0, 8)) is None
    assert next_word(" casa era") == " casa"
    assert next_word("\n\nLa notte") == "\n\nLa"
    assert next_word("  ") == "  "


async def test_save_creates_a_missing_draft_file(random_model: Path, tmp_path: Path) -> None:
    draft = tmp_path / "nuovo" / "bozza.md"

    async with ready(random_model, draft=draft) as (app, pilot):
        assert app.main.draft.editor.text == ""
        await typed(pilot, OPENING)
        await generated(pilot, "ctrl+g")  # a waiting suggestion is never saved
        await pilot.press("ctrl+s")
        assert draft.read_text(encoding="utf-8") == OPENING
        assert not app.main.draft.modified


async def test_quitting_saves_unsaved_changes_and_asks_only_when_saving_fails(tmp_path: Path) -> None:
    draft = tmp_path / "bozza.md"
    draft.write_text("vecchio\n", encoding="utf-8")

    app = make_app(None, draft=draft)
    async with app.run_test() as pilot:
        await pilot.press("end")
        await typed(pilot, " testo")
        # Another program changed the file: the save leaves it alone, so quitting asks.
        draft.write_text("altro\n", encoding="utf-8")
        await pilot.press("ctrl+q")
        assert app.is_running and type(app.screen).__name__ == "UnsavedScreen"
        await pilot.click("#save")  # the author's explicit choice replaces it
        await pilot.pause()
        assert not app.is_running
    assert draft.read_text(encoding="utf-8") == "vecchio testo\n"


async def test_accepting_and_rejecting_are_announced_for_sessions(random_model: Path) -> None:
    from textual import on

    from scriptorium.app.tui.app import ScriptoriumApp
    from scriptorium.app.tui.widgets.draft_pane import DraftPane

    seen: list[object] = []

    class Recording(ScriptoriumApp):
        @on(DraftPane.SuggestionAccepted)
        @on(DraftPane.SuggestionRejected)
        def record(self, message: object) -> None:
            seen.append(message)

    template = make_app(random_model)
    app = Recording(
        backend_loader=template.backend_loader,
        settings=template.settings,
        draft=template.manuscript.draft_file,
        load_options=template._initial_load,
    )
    async with app.run_test() as pilot:
        await model_ready(pilot)
        await typed(pilot, OPENING)
        done = await generated(pilot, "ctrl+g")
        request_id = app.main.last_generation[0].id
        await pilot.press("ctrl+right")
        word = next_word(done.text)
        await pilot.press("escape", "escape")
        await pilot.pause()
        accepted, rejected = seen
        assert isinstance(accepted, DraftPane.SuggestionAccepted)
        assert (accepted.text, accepted.at, accepted.request_ids) == (word, (0, len(OPENING)), (request_id,))
        assert isinstance(rejected, DraftPane.SuggestionRejected)
        assert (rejected.text, rejected.request_ids) == (done.text[len(word) :], (request_id,))


async def test_ctrl_end_and_ctrl_home_reach_the_end_and_the_start_of_the_draft(tmp_path: Path) -> None:
    """A draft opens with the cursor on its first line, and the editor had no key to its
    end: an author writing on at the end of a long chapter paged down through all of it
    (ctrl+end did nothing)."""
    draft = tmp_path / "capitolo.md"
    text = "\n\n".join(f"Paragrafo {i}: il fiume era grigio e largo." for i in range(300))
    draft.write_text(text, encoding="utf-8")

    app = make_app(None, draft=draft)
    async with app.run_test() as pilot:
        editor = app.main.draft.editor
        assert editor.cursor_location == (0, 0)
        await pilot.press("ctrl+end")
        assert editor.cursor_location == editor.document.end
        await typed(pilot, " Fine.")
        assert editor.text == text + " Fine."
        await pilot.press("ctrl+home")
        assert editor.cursor_location == (0, 0)
