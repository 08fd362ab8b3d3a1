"""Base of the side panels: a titled box that redraws from its own state.

Panels keep a constant number of lines, so a per-frame update is a repaint
(`refresh()`), never a new layout of the screen. They draw through Textual's line API
(`render_line`), one Strip per line from their own Rich Text: a frame costs the UI
thread less that way, and the UI thread's time is time the generation waits for.
"""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget


class Panel(Widget):
    """A side panel. Subclasses fill `lines()`; `LINES` fixes their number."""

    PANEL_NAME: ClassVar[str] = ""
    """Stable name used by settings, keys and the command palette."""
    TITLE: ClassVar[str] = ""
    LINES: ClassVar[int] = 1

    def __init__(self) -> None:
        super().__init__(id=self.PANEL_NAME, classes="panel")
        self._rich_component_styles: dict[str, Style] = {}
        self._strips: list[Strip] | None = None
        self._strips_width = 0
        self.border_title = self.TITLE

    @property
    def line_count(self) -> int:
        return self.LINES

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self.line_count

    def lines(self, width: int) -> list[Text]:
        raise NotImplementedError

    def refresh_lines(self, first: int, count: int) -> None:
        """Repaint only some content lines: the rest of the panel did not change, and
        repainting less is what keeps the UI thread out of the generation's way."""
        self.refresh(Region(0, first, self.content_size.width, count))

    def style_of(self, component: str) -> Style:
        # Cached here: a refresh empties Textual's own cache, and panels refresh per frame.
        style = self._rich_component_styles.get(component)
        if style is None:
            style = self._rich_component_styles[component] = self.get_component_rich_style(component, partial=True)
        return style

    def notify_style_update(self) -> None:
        self._rich_component_styles.clear()
        self._strips = None
        super().notify_style_update()

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False,
                recompose: bool = False) -> "Panel":
        self._strips = None
        super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)
        return self

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        if self._strips is None or self._strips_width != width:
            base = self.rich_style
            console = self.app.console
            self._strips = [
                Strip(list(line.render(console))).crop_extend(0, width, base).apply_style(base)
                for line in self.lines(width)
            ]
            self._strips_width = width
        return self._strips[y] if y < len(self._strips) else Strip.blank(width, self.rich_style)
