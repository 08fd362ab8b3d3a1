"""A suggestion left undecided when the author quits comes back when the draft is reopened:
its text, where it was, its tokens and its generation, which accepting it then records."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import generated, make_app, model_ready, run, saved_draft

OPENING = "C'era una volta"


def quit_with_a_suggestion_on_screen(model: Path, draft: Path) -> tuple[str, int]:
    """Write OPENING in `draft`, let the model suggest, quit without deciding; the suggestion's text and token count."""
    left: list[tuple[str, int]] = []

    async def scenario() -> None:
        app = make_app(model, draft=draft)
        async with app.run_test() as pilot:
            await model_ready(pilot)
            await pilot.press(*OPENING)
            done = await generated(pilot, "ctrl+g")
            ghost = app.main.draft.editor.ghost
            assert ghost is not None and ghost.text == done.text != ""
            left.append((ghost.text, len(ghost.tokens)))
            await pilot.press("ctrl+q")
            await pilot.pause()
            assert not app.is_running

    run(scenario)
    return left[0]


def test_a_suggestion_left_undecided_comes_back_with_resume_and_tab_accepts_it(random_model: Path,
                                                                                 tmp_path: Path) -> None:
    draft = tmp_path / "bozza.md"
    text, token_count = quit_with_a_suggestion_on_screen(random_model, draft)
    assert saved_draft(draft).generations[0].outcome == "pending"

    async def reopened() -> None:
        app = make_app(None, resume=True)
        async with app.run_test() as pilot:
            await pilot.pause()
            editor = app.main.draft.editor
            assert editor.text == OPENING
            ghost = editor.ghost
            assert ghost is not None and ghost.text == text and not ghost.streaming
            assert editor.document.get_index_from_location(ghost.anchor) == len(OPENING)
            assert len(ghost.tokens) == token_count and "".join(t.text for t in ghost.tokens) == text
            await pilot.press("tab")
            await pilot.pause()
            assert editor.ghost is None and editor.text == OPENING + text
            session = saved_draft(draft)
            (generation,) = session.generations
            assert generation.outcome == "accepted" and generation.accepted_text == text
            assert [(s.start, s.end, s.generation) for s in session.spans] == [(len(OPENING), len(OPENING + text), generation.id)]
            assert session.suggestion is None

    run(reopened)


def test_a_suggestion_whose_place_changed_in_the_file_is_dropped_and_said_so(random_model: Path, tmp_path: Path) -> None:
    draft = tmp_path / "bozza.md"
    quit_with_a_suggestion_on_screen(random_model, draft)
    draft.write_text("Un'altra storia, scritta altrove", encoding="utf-8")  # another program changed the draft file

    async def reopened() -> None:
        app = make_app(None, draft=draft)
        async with app.run_test() as pilot:
            await pilot.pause()
            assert app.main.draft.editor.text == "Un'altra storia, scritta altrove"
            assert app.main.draft.editor.ghost is None
            dropped = [n.message for n in app._notifications if "suggestion left undecided" in n.message]
            assert len(dropped) == 1 and "changed" in dropped[0]

    run(reopened)


def test_the_rest_of_a_suggestion_kept_word_by_word_comes_back_and_tab_completes_it(random_model: Path,
                                                                                      tmp_path: Path) -> None:
    draft = tmp_path / "bozza.md"
    left: list[str] = []

    async def first() -> None:
        app = make_app(random_model, draft=draft)
        async with app.run_test() as pilot:
            await model_ready(pilot)
            await pilot.press(*OPENING)
            done = await generated(pilot, "ctrl+g")
            await pilot.press("ctrl+right")  # one word kept
            await pilot.pause()
            ghost = app.main.draft.editor.ghost
            assert ghost is not None and done.text.endswith(ghost.text) and ghost.text != done.text
            left.extend([app.main.draft.editor.text, ghost.text, done.text])
            await pilot.press("ctrl+q")
            await pilot.pause()

    async def reopened() -> None:
        app = make_app(None, resume=True)
        async with app.run_test() as pilot:
            await pilot.pause()
            text, rest, whole = left
            editor = app.main.draft.editor
            ghost = editor.ghost
            assert editor.text == text and ghost is not None and ghost.text == rest
            assert "".join(t.text for t in ghost.tokens) == rest
            await pilot.press("tab")
            await pilot.pause()
            assert editor.text == OPENING + whole
            (generation,) = saved_draft(draft).generations
            assert generation.outcome == "accepted" and generation.accepted_text == whole

    run(first)
    run(reopened)
