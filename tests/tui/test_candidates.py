"""Side-by-side candidates (issue 6): N continuations of one point, one seed each, and
the author takes one. Real engine on the phrases model, whose every choice wins by a
wide margin: the sampled texts are the same on any CPU, and the same when a candidate
reuses the cached prompt as when it is prefilled afresh."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import Any, Callable

from textual.pilot import Pilot
from tui_helpers import (
    candidates_written,
    EngineSpy,
    fixed_clock_loader,
    Gate,
    GREEDY,
    make_app,
    model_ready,
    ready,
    saved,
    spying_loader,
    typed,
    write_pinned,
)

from scriptorium.app.tui.screens.candidates_screen import CandidatesScreen
from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.events import GenerationDone
from scriptorium.inference.core.settings import PRESETS

PROMPT = "C'era una volta una casa sul lago."
SAMPLED = GREEDY.with_changes(temperature=1.5, top_k=0, top_p=1.0, seed=1234, max_tokens=10, preset="custom")
"""Hot enough that the phrases model writes something different for every seed."""


def solo_text(model: Path, call: dict[str, Any]) -> str:
    """What Engine.generate writes for this prompt and seed on a fresh engine."""
    engine = Engine.load(LoadOptions(model_path=model, n_ctx=512, n_threads=1))
    try:
        with closing(engine.generate(call["prompt"], call["settings"], call["bias"], top_n=call["top_n"])) as events:
            done = [event for event in events if isinstance(event, GenerationDone)]
        return done[0].text
    finally:
        engine.close()


async def test_each_candidate_is_what_its_seed_writes_alone_and_the_chosen_one_is_accepted(phrases_model: Path) -> None:
    loader, spies = spying_loader()

    async with ready(phrases_model, sampler=SAMPLED, loader=loader, size=(130, 40)) as (app, pilot):
        assert any(row[4] == "draft.candidates" for row in app.keys.rows())  # F1
        assert "Draft: Candidates" in [command.title for command in app.get_system_commands(app.main)]
        await typed(pilot, PROMPT)
        await pilot.press("ctrl+n")
        screen = await candidates_written(pilot)
        candidates = screen.candidates
        assert [c.seed for c in candidates] == [1234, 1235, 1236]
        calls = spies[0].calls
        assert [call["settings"].seed for call in calls] == [1234, 1235, 1236]
        assert {call["prompt"] for call in calls} == {calls[0]["prompt"]} and calls[0]["prompt"].endswith(PROMPT)
        texts = [c.text for c in candidates]
        assert len(set(texts)) == 3, texts
        for candidate, call in zip(candidates, calls):
            assert candidate.text == solo_text(phrases_model, call)
            mean = sum(e.p for e in candidate.events) / len(candidate.events)
            assert f"seed {candidate.seed}" in str(screen._view_of(candidate).border_title)
            assert f"{mean * 100:.1f}%" in str(screen._view_of(candidate).border_subtitle)
        await pilot.press("right", "enter")
        assert not isinstance(app.screen, CandidatesScreen)
        draft = app.main.draft
        ghost = draft.editor.ghost
        assert ghost is not None and ghost.text == texts[1] and not ghost.streaming
        # The others are versions of the suggestion.
        assert [v.text for v in ghost.versions] == texts and ghost.version == 1
        assert "".join(r.text for r in ghost.tokens) == texts[1]
        await pilot.press("alt+left")
        assert ghost.text == texts[0]
        await pilot.press("alt+right", "tab")
        assert draft.editor.text == PROMPT + texts[1]
        assert draft.editor.ghost is None


async def test_candidates_continue_a_waiting_suggestion(phrases_model: Path) -> None:
    loader, spies = spying_loader()

    async with ready(
        phrases_model,
        sampler=SAMPLED.with_changes(seed=7, preset="custom"),
        loader=loader,
        size=(130, 40),
    ) as (app, pilot):
        await typed(pilot, PROMPT)
        await pilot.press("ctrl+g")
        await app.main.wait_until_idle()
        await pilot.pause()
        first = app.main.draft.editor.ghost.text
        await pilot.press("ctrl+n", "minus")  # two candidates are enough here
        screen = await candidates_written(pilot)
        assert len(screen.candidates) == 2
        assert spies[0].last["prompt"].endswith(PROMPT + first)
        await pilot.press("down", "down", "enter")  # wraps round to the first
        ghost = app.main.draft.editor.ghost
        assert ghost.text == first + screen.candidates[0].text
        await pilot.press("tab")
        assert app.main.draft.editor.text == PROMPT + first + screen.candidates[0].text


async def test_esc_stops_the_candidates_and_leaves_the_draft_alone(phrases_model: Path) -> None:
    gate = Gate(after_tokens=2)
    spies: list[EngineSpy] = []

    def loader(options: LoadOptions, on_progress: Callable[[float], None]) -> Engine:
        engine = gate.loader(options, on_progress)
        spies.append(EngineSpy(engine))
        return engine

    async with ready(phrases_model, sampler=SAMPLED, loader=loader, size=(130, 40)) as (app, pilot):
        await typed(pilot, PROMPT)
        await pilot.press("ctrl+n")
        await gate.wait_reached()
        screen = app.screen
        assert isinstance(screen, CandidatesScreen)
        await pilot.press("escape")
        gate.release()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not isinstance(app.screen, CandidatesScreen)
        assert app.main.draft.editor.text == PROMPT
        assert app.main.draft.editor.ghost is None
        # The first candidate was stopped mid-way and the others never started.
        assert len(spies[0].calls) == 1
        assert screen.candidates[0].done is None or screen.candidates[0].done.stop_reason == "cancelled"
        # The engine is free for the next generation.
        await pilot.press("ctrl+g")
        await app.main.wait_until_idle()
        assert app.main.last_generation is not None and app.main.last_generation[2].stop_reason != "cancelled"


async def test_greedy_candidates_borrow_the_prose_sampling_and_say_so(phrases_model: Path) -> None:
    loader, spies = spying_loader()

    async with ready(phrases_model, sampler=GREEDY, loader=loader, size=(80, 24)) as (app, pilot):
        await typed(pilot, PROMPT)
        await pilot.press("ctrl+n", "plus")
        screen = await candidates_written(pilot)
        prose = PRESETS["prose"]
        settings = [call["settings"] for call in spies[0].calls]
        assert len(settings) == 4 and len({s.seed for s in settings}) == 4
        assert all(
            (s.temperature, s.top_k, s.top_p) == (prose.temperature, prose.top_k, prose.top_p)
            and s.max_tokens == GREEDY.max_tokens
            for s in settings
        )
        assert len({c.text for c in screen.candidates}) > 1
        assert any("Greedy sampling writes the same text" in n.message for n in app.notices)
        assert app.engine_state.sampler == GREEDY  # the author's own sampler is untouched
        await pilot.press("escape")


async def candidates_dialog(pilot: Pilot[Any]) -> None:
    await model_ready(pilot)
    pilot.app.main.draft.editor.cursor_blink = False
    await typed(pilot, PROMPT)
    await pilot.press("ctrl+n")
    await candidates_written(pilot)
    await pilot.press("right")
    await saved(pilot)


def test_candidates_dialog_side_by_side(snap_compare: Any, phrases_model: Path) -> None:
    app = make_app(phrases_model, sampler=SAMPLED, loader=fixed_clock_loader)
    assert snap_compare(app, terminal_size=(130, 36), run_before=candidates_dialog)


def test_candidates_dialog_stacked_on_a_small_terminal(snap_compare: Any, phrases_model: Path) -> None:
    app = make_app(phrases_model, sampler=SAMPLED, loader=fixed_clock_loader)
    assert snap_compare(app, terminal_size=(80, 24), run_before=candidates_dialog)


async def test_a_prompt_that_cannot_be_fitted_fails_every_candidate_once(phrases_model: Path) -> None:
    """The candidates share one prompt, fitted to the window in the first one's worker: when
    the memory leaves no room, each candidate says so and the author is told once."""
    from textual.widgets import TextArea

    from scriptorium.app.tui.screens.pinned_screen import PinnedScreen

    async with ready(phrases_model, sampler=SAMPLED, size=(130, 40)) as (app, pilot):
        await typed(pilot, PROMPT)
        await pilot.press("alt+e")
        await pilot.pause()
        assert isinstance(app.screen, PinnedScreen)
        app.screen.query_one("#pinned-text", TextArea).text = "Il gatto nero dorme sul tetto. " * 200
        await pilot.press("ctrl+s", "ctrl+n")
        screen = await candidates_written(pilot)
        assert all(c.error and "memory" in c.error for c in screen.candidates)
        said = [n for n in app.notices if n.severity == "error"]
        assert len(said) == 1 and said[0].title == "Window"
        await pilot.press("escape")
        assert app.main.draft.editor.ghost is None and app.main.draft.editor.text == PROMPT
        session = app.sessions.draft
        assert session is not None and session.generations == []


async def test_the_candidate_kept_from_the_versions_is_the_one_credited(phrases_model: Path) -> None:
    """The candidates the author did not pick stay as versions of the suggestion: keeping
    one of them later credits its own generation, and the others are rejected then."""

    async with ready(phrases_model, sampler=SAMPLED, size=(130, 40)) as (app, pilot):
        await typed(pilot, PROMPT)
        await pilot.press("ctrl+n")
        screen = await candidates_written(pilot)
        ids = [c.request.id for c in screen.candidates]
        texts = [c.text for c in screen.candidates]
        await pilot.press("right", "enter")  # the second one
        session = app.sessions.draft
        assert session is not None
        assert all(g.outcome == "pending" for g in session.generations)  # versions: not decided yet
        await pilot.press("alt+left", "tab")  # back to the first, and kept
        await pilot.pause()
        by_seed = {g.seed: g for g in session.generations}
        kept = by_seed[screen.candidates[0].seed]
        assert kept.outcome == "accepted" and kept.accepted_text == texts[0]
        assert all(by_seed[c.seed].outcome == "rejected" for c in screen.candidates[1:])
        assert len(ids) == 3 and app.main.draft.editor.text == PROMPT + texts[0]


async def test_a_candidate_after_a_note_at_depth_zero_keeps_its_paragraph_break(phrases_model: Path) -> None:
    """The candidates' model writes on after the note's paragraph, as a continuation's does:
    the one chosen glued to the draft's last word."""

    async with ready(phrases_model, sampler=SAMPLED, size=(130, 40)) as (app, pilot):
        await typed(pilot, PROMPT)
        await write_pinned(pilot, "alt+n", "[Tono cupo.]", depth="0")
        await pilot.press("ctrl+n")
        screen = await candidates_written(pilot)
        texts = [c.text for c in screen.candidates]
        await pilot.press("enter")
        ghost = app.main.draft.editor.ghost
        assert ghost is not None and [v.text for v in ghost.versions] == ["\n\n" + text for text in texts]
        await pilot.press("tab")
        assert app.main.draft.editor.text == PROMPT + "\n\n" + texts[0]
