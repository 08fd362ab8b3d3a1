"""The side panels' base: a kind of panel that does not say what it draws is refused when
its class is made, not when the screen first draws it (the drawing itself is covered by
test_panels.py and the snapshots)."""

from __future__ import annotations

import pytest
from rich.text import Text

from scriptorium.app.tui.widgets.panel import Panel


def test_a_panel_without_lines_is_refused_when_its_class_is_made() -> None:
    with pytest.raises(TypeError, match="Silent is a Panel that does not say what it draws"):

        class Silent(Panel):
            PANEL_NAME = "silent"


def test_a_panel_with_lines_is_made() -> None:
    class Drawn(Panel):
        PANEL_NAME = "drawn"

        def lines(self, width: int) -> list[Text]:
            return [Text("x" * width)]

    assert [line.plain for line in Drawn.lines(Drawn.__new__(Drawn), 3)] == ["xxx"]
