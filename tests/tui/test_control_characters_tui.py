"""With the byte ban lifted, a model writing control bytes (<0x1F>, <0x0E>, <0x16>, <0x17>)
put them in the draft file, invisible (`od` showed them), and the suggestion's box lost
its border's line: each took a cell on the terminal and none in the layout. They show as
their control pictures (␟), in the suggestion, the draft and its file."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_helpers import generated, ready

from control_bytes_model import PICTURES, write_control_bytes_model
from scriptorium.inference.core.settings import preset


@pytest.fixture(scope="session")
def controls_model(gguf_dir: Path) -> Path:
    return write_control_bytes_model(gguf_dir / "controls.gguf")


def is_control(character: str) -> bool:
    return ord(character) < 0x20 or 0x7F <= ord(character) < 0xA0


async def test_control_bytes_show_as_pictures_in_an_aligned_box_and_never_reach_the_file(
    controls_model: Path, tmp_path: Path
) -> None:
    draft = tmp_path / "porto.md"
    draft.write_text("La casa", encoding="utf-8")

    async with ready(
        controls_model,
        draft=draft,
        sampler=preset("greedy").with_changes(max_tokens=10, preset="greedy"),
        size=(80, 24),
    ) as (app, pilot):
        await pilot.press("ctrl+t", "b", "escape", "ctrl+end")
        assert not app.engine_state.bias.ban_byte_tokens
        done = await generated(pilot, "ctrl+g")
        assert done.text == (PICTURES + " casa") * 2
        view = app.main.draft.suggestion
        region = view.region
        rows = app.screen._compositor.render_strips()[region.y : region.bottom]
        drawn = [row.crop(region.x, region.right) for row in rows]
        assert any(PICTURES in strip.text for strip in drawn)
        # Every row of the box is as wide as the box, its right edge a border: nothing in it is a control.
        assert all(strip.cell_length == region.width and not any(map(is_control, strip.text)) for strip in drawn)
        assert len({strip.text[-1] for strip in drawn[1:-1]}) == 1
        await pilot.press("tab", "ctrl+s")
        await pilot.pause()
    written = draft.read_bytes().decode("utf-8")
    assert written == "La casa" + (PICTURES + " casa") * 2
    assert not any(map(is_control, written))
