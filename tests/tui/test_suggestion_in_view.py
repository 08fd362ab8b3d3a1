"""A suggestion to a long draft: the line it continues stays in view above it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui_helpers import generated, make_app, ready

SIZE = (160, 45)


def long_draft(folder: Path) -> Path:
    draft = folder / "lungo.txt"
    draft.write_text("".join(f"Riga {n} del capitolo, che il fiume porta via.\n" for n in range(120)), encoding="utf-8")
    return draft


def assert_anchor_in_view(app: Any) -> None:
    editor = app.main.draft.editor
    assert editor.ghost is not None
    row = editor.ghost.anchor[0]  # lines this short never wrap: a row of the document is a row on screen
    top, height = editor.scroll_offset.y, editor.scrollable_content_region.height
    assert top <= row < top + height, f"the suggestion's line {row} is out of view ({top} to {top + height})"


async def test_the_line_a_suggestion_continues_stays_visible_when_the_editor_shrinks(
    random_model: Path, tmp_path: Path
) -> None:
    async with ready(random_model, draft=long_draft(tmp_path), size=SIZE) as (app, pilot):
        await pilot.press("ctrl+end")
        await pilot.pause()
        await generated(pilot, "ctrl+g")
        await pilot.pause()
        assert_anchor_in_view(app)


async def test_a_suggestion_brought_back_by_resume_shows_with_the_line_it_continues(
    random_model: Path, tmp_path: Path
) -> None:
    draft = long_draft(tmp_path)

    async def left_undecided() -> None:
        async with ready(random_model, draft=draft, size=SIZE) as (app, pilot):
            await generated(pilot, "ctrl+g")  # from the end, the cursor still on the first line
            await pilot.press("ctrl+q")
            await pilot.pause()

    async def reopened() -> None:
        app = make_app(None, resume=True)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.pause()
            assert_anchor_in_view(app)

    await left_undecided()
    await reopened()


def test_a_branch_replacing_one_character_says_so_in_the_singular() -> None:
    from scriptorium.app.tui.widgets.suggestion_view import replaced_label

    assert (replaced_label(1), replaced_label(2), replaced_label(1200)) == (
        "1 character",
        "2 characters",
        "1,200 characters",
    )
