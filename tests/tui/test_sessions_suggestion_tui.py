"""A suggestion left undecided when the author quits comes back when the draft is reopened:
its text, where it was, its tokens and its generation, which accepting it then records."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from tui_helpers import generated, GREEDY, make_app, ready, saved_draft, typed

from scriptorium.app.tui.manuscript import session_keeper as keeper
from scriptorium.inference.core.settings import SamplerSettings

OPENING = "C'era una volta"


@dataclass
class Left:
    """What was on screen when the author quit: the draft, the suggestion, its tokens, its versions' texts."""

    draft: str
    suggestion: str
    tokens: int
    versions: list[str]
    generated: str
    """The text the first generation wrote."""


async def quit_with_a_suggestion_on_screen(
    model: Path, draft: Path, *then: str, sampler: SamplerSettings = GREEDY
) -> Left:
    """Write OPENING in `draft`, let the model suggest, press `then` (each key that starts a
    generation waits for it), quit without deciding; what was left on screen."""
    left: list[Left] = []

    async with ready(model, draft=draft, sampler=sampler) as (app, pilot):
        await typed(pilot, OPENING)
        done = await generated(pilot, "ctrl+g")
        for key in then:
            await (generated(pilot, key) if key == "ctrl+r" else pilot.press(key))
            await pilot.pause()
        editor = app.main.draft.editor
        ghost = editor.ghost
        assert ghost is not None and ghost.text != ""
        versions = [ghost.text if i == ghost.version else v.text for i, v in enumerate(ghost.versions)]
        left.append(Left(editor.text, ghost.text, len(ghost.tokens), versions, done.text))
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app.is_running
    return left[0]


async def test_a_suggestion_left_undecided_comes_back_with_resume_and_tab_accepts_it(
    random_model: Path, tmp_path: Path
) -> None:
    draft = tmp_path / "bozza.md"
    left = await quit_with_a_suggestion_on_screen(random_model, draft)
    text = left.suggestion
    assert text == left.generated and saved_draft(draft).generations[0].outcome == "pending"

    app = make_app(None, resume=True)
    async with app.run_test() as pilot:
        await pilot.pause()
        editor = app.main.draft.editor
        assert editor.text == OPENING
        ghost = editor.ghost
        assert ghost is not None and ghost.text == text and not ghost.streaming
        assert editor.document.get_index_from_location(ghost.anchor) == len(OPENING)
        assert len(ghost.tokens) == left.tokens and "".join(t.text for t in ghost.tokens) == text
        assert "accept" in str(app.main.draft.suggestion.border_subtitle)  # the keys that act on it show under it
        await pilot.press("tab")
        await pilot.pause()
        assert editor.ghost is None and editor.text == OPENING + text
        session = saved_draft(draft)
        (generation,) = session.generations
        assert generation.outcome == "accepted" and generation.accepted_text == text
        assert [(s.start, s.end, s.generation) for s in session.spans] == [
            (len(OPENING), len(OPENING + text), generation.id)
        ]
        assert session.suggestion is None


async def test_a_suggestion_whose_place_changed_in_the_file_is_dropped_and_said_so(
    random_model: Path, tmp_path: Path
) -> None:
    draft = tmp_path / "bozza.md"
    await quit_with_a_suggestion_on_screen(random_model, draft)
    draft.write_text("Un'altra storia, scritta altrove", encoding="utf-8")  # another program changed the draft file

    app = make_app(None, draft=draft)
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.main.draft.editor.text == "Un'altra storia, scritta altrove"
        assert app.main.draft.editor.ghost is None
        dropped = [n.message for n in app.notices if "suggestion left undecided" in n.message]
        assert len(dropped) == 1 and "changed" in dropped[0]


async def test_the_rest_of_a_suggestion_kept_word_by_word_comes_back_and_tab_completes_it(
    random_model: Path, tmp_path: Path
) -> None:
    draft = tmp_path / "bozza.md"
    left = await quit_with_a_suggestion_on_screen(random_model, draft, "ctrl+right")  # one word kept
    assert left.generated.endswith(left.suggestion) and left.suggestion != left.generated

    app = make_app(None, resume=True)
    async with app.run_test() as pilot:
        await pilot.pause()
        editor = app.main.draft.editor
        ghost = editor.ghost
        assert editor.text == left.draft and ghost is not None and ghost.text == left.suggestion
        assert "".join(t.text for t in ghost.tokens) == left.suggestion
        await pilot.press("tab")
        await pilot.pause()
        assert editor.text == OPENING + left.generated
        (generation,) = saved_draft(draft).generations
        assert generation.outcome == "accepted" and generation.accepted_text == left.generated


async def test_a_suggestions_versions_come_back_and_keeping_the_first_records_it_and_rejects_the_re_roll(
    random_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The acceptance was saved at once but the re-roll's rejection waited for the next
    autosave: a crash in between left it undecided. Both are now in the same save."""
    draft = tmp_path / "bozza.md"
    varied = GREEDY.with_changes(temperature=1.5, top_k=0, top_p=1.0, seed=None, preset="custom")
    texts = (await quit_with_a_suggestion_on_screen(random_model, draft, "ctrl+r", sampler=varied)).versions
    assert len(texts) == 2
    # The crash comes before any autosave: none is due while the test reads.
    monkeypatch.setattr(keeper, "AUTOSAVE_SECONDS", 3600.0)
    monkeypatch.setattr(keeper, "AUTOSAVE_LONGEST_SECONDS", 3600.0)

    app = make_app(None, resume=True)
    async with app.run_test() as pilot:
        await pilot.pause()
        ghost = app.main.draft.editor.ghost
        assert ghost is not None and len(ghost.versions) == 2 and ghost.version == 1 and ghost.text == texts[1]
        await pilot.press("alt+left")
        assert ghost.text == texts[0] and "".join(t.text for t in ghost.tokens) == texts[0]
        await pilot.press("tab")
        await pilot.pause()
        assert app.main.draft.editor.text == OPENING + texts[0]
        app.sessions.store.flush()  # the acceptance's save, started at once on the store's thread
        first_one, re_roll = saved_draft(draft).generations
        assert (first_one.outcome, re_roll.outcome) == ("accepted", "rejected")
