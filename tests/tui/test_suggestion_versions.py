"""The versions of a suggestion: re-rolls kept, and a suggestion thrown away or undone that
comes back with them (issue 6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from tui_helpers import drawn_border, generated, GREEDY, ready, typed

PROMPT = "C'era una volta una casa sul lago."
VARIED = GREEDY.with_changes(temperature=1.5, top_k=0, top_p=1.0, seed=None, preset="custom")
"""Each re-roll writes another text."""


async def test_reroll_keeps_earlier_versions(random_model: Path) -> None:
    async with ready(random_model, sampler=VARIED, size=(120, 40)) as (app, pilot):
        await typed(pilot, PROMPT)
        await generated(pilot, "ctrl+g")
        ghost = app.main.draft.editor.ghost
        texts = [ghost.text]
        for _ in range(2):
            await generated(pilot, "ctrl+r")
            texts.append(ghost.text)
        assert len(ghost.versions) == 3 and ghost.version == 2
        await pilot.press("alt+left")
        assert ghost.text == texts[1]
        await pilot.press("alt+left")
        assert ghost.text == texts[0]
        # The tokens travel with their version.
        assert ghost.tokens and all(ghost.text[r.start : r.end] == r.text for r in ghost.tokens)
        await pilot.press("alt+right", "alt+right")
        assert ghost.text == texts[2]


async def two_versions(pilot: Pilot[Any]) -> tuple[Any, Any, Any]:
    """The prompt typed, continued and re-rolled: the editor, the session and the suggestion of two versions."""
    app = pilot.app
    await typed(pilot, PROMPT)
    await generated(pilot, "ctrl+g")
    await generated(pilot, "ctrl+r")
    return app.main.draft.editor, app.sessions.draft, app.main.draft.editor.ghost


async def test_a_suggestion_thrown_away_comes_back_with_its_versions(random_model: Path) -> None:
    """Esc also leaves inspection and stops the model: one press too many must not cost the
    versions explored. alt+left brings the suggestion back while the draft is unchanged."""

    async with ready(random_model, sampler=VARIED, size=(120, 40)) as (app, pilot):
        editor, session, ghost = await two_versions(pilot)
        shown, ids = ghost.text, tuple(ghost.request_ids)
        await pilot.press("escape", "escape")
        await pilot.pause()
        assert editor.ghost is None
        assert any("2 versions were thrown away" in n.message for n in app.notices)
        last = session.generations[-1]
        assert last.outcome == "rejected"
        await pilot.press("alt+right")  # newer: nothing, and the thrown suggestion stays there to bring back
        await pilot.press("alt+left")
        await pilot.pause()
        assert editor.ghost is ghost and ghost.text == shown and len(ghost.versions) == 2
        assert tuple(ghost.request_ids) == ids and last.outcome == "pending"
        await pilot.press("tab")
        assert editor.text == PROMPT + shown
        assert last.outcome == "accepted" and last.accepted_text == shown
        # Once the draft changed, what was thrown away stays away.
        await generated(pilot, "ctrl+g")
        await pilot.press("escape", "escape")
        await typed(pilot, " e")
        await pilot.press("alt+left")
        await pilot.pause()
        assert editor.ghost is None
        assert any("No suggestion to bring back" in n.message for n in app.notices)


async def test_a_suggestion_an_undo_took_comes_back_after_the_redo(random_model: Path) -> None:
    """ctrl+z with a suggestion of several versions on screen undid the author's last typing
    and took the suggestion with it: its versions were gone for good, even once ctrl+y put
    the typing back. With the draft as it was, alt+left brings them back, and it is said."""

    async with ready(random_model, sampler=VARIED, size=(120, 40)) as (app, pilot):
        editor, session, ghost = await two_versions(pilot)
        shown = ghost.text
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert editor.ghost is None and editor.text != PROMPT
        assert any("and its 2 versions went with the undo" in n.message for n in app.notices)
        await pilot.press("ctrl+y")
        await pilot.pause()
        assert editor.text == PROMPT
        await pilot.press("alt+left")
        await pilot.pause()
        assert editor.ghost is ghost and ghost.text == shown and len(ghost.versions) == 2
        assert session.generations[-1].outcome == "pending"


async def test_the_suggestions_title_at_80_columns_shows_whole_parts(random_model: Path) -> None:
    """At 80 columns the suggestion's title was cut at its box's edge: 'suggestion from the
    end · versio…', and while a re-roll streamed, 'writing… ·…' ate the version."""

    async with ready(random_model, sampler=VARIED, size=(80, 24)) as (app, pilot):
        await two_versions(pilot)
        await pilot.pause()
        view = app.main.draft.suggestion
        shown = drawn_border(view).split(" · ")
        # Every part, whole, in the 38 cells of a 44-cell border: "suggestion" gave way.
        assert shown == ["from the end", "version 2/2", "re-roll"], shown
