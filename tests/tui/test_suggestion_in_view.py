"""A suggestion to a long draft: the end it continues stays in view above it."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import generated, make_app, model_ready, run


def test_the_line_a_suggestion_continues_stays_visible_when_the_editor_shrinks(random_model: Path,
                                                                                tmp_path: Path) -> None:
    draft = tmp_path / "lungo.txt"
    draft.write_text("".join(f"Riga {n} del capitolo, che il fiume porta via.\n" for n in range(120)),
                     encoding="utf-8")

    async def scenario() -> None:
        app = make_app(random_model, draft=draft)
        async with app.run_test(size=(160, 45)) as pilot:
            await model_ready(pilot)
            await pilot.press("ctrl+end")
            await pilot.pause()
            await generated(pilot, "ctrl+g")
            await pilot.pause()
            editor = app.main.draft.editor
            assert editor.ghost is not None
            row = editor.cursor_location[0]
            top = editor.scroll_offset.y
            assert top <= row < top + editor.scrollable_content_region.height, \
                f"the cursor's line {row} is out of view ({top} to {top + editor.scrollable_content_region.height})"

    run(scenario)
