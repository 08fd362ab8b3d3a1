"""Base of the side panels: a titled box that redraws from its own state.

Panels keep a constant number of lines, so a per-frame update is a repaint
(`refresh()`), never a new layout of the screen. They draw through Textual's line API
(`render_line`), one Strip per line from their own Rich Text, and a line is turned
into cells only when it changed (`line_strip`). While a model streams, every cell drawn
is CPU time taken from llama.cpp's threads, which on a small machine share the cores
with the interface: the decode loses what the interface draws.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar

from rich.style import Style
from rich.text import Text
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from scriptorium.app.i18n.language import Language
from scriptorium.app.tui.widgets.strips import line_strip


class Panel(Widget):
    """A side panel. Each kind of panel says what it draws, `lines(width)`: one Rich Text
    per line, `line_count` of them (`LINES` fixes their number). A kind that does not is
    refused when its class is made, not when it is first drawn."""

    lines: Callable[[int], list[Text]]
    """The panel's lines at `width` cells, drawn from its own state (every kind defines it)."""

    PANEL_NAME: ClassVar[str] = ""
    """Stable name used by settings, keys and the command palette."""
    TITLE: ClassVar[str] = ""
    """In English, marked with N_: `title` is the one shown."""
    LINES: ClassVar[int] = 1

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not callable(getattr(cls, "lines", None)):
            raise TypeError(f"{cls.__name__} is a Panel that does not say what it draws: it needs lines(width)")

    def __init__(self, language: Language) -> None:
        super().__init__(id=self.PANEL_NAME, classes="panel")
        self.language = language
        """The interface's words and numbers: the panels write every label and figure with it."""
        self.title = language.gettext(self.TITLE)
        self._rich_component_styles: dict[str, Style] = {}
        self._strips: list[Strip] | None = None
        self._strips_width = 0
        self._rich_base: Style | None = None
        self._drawn: dict[int, tuple[tuple[object, ...], Strip]] = {}
        """Per line: what it showed last (text, style, spans, width) and its cells."""
        self.border_title = self.title

    @property
    def line_count(self) -> int:
        return self.LINES

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self.line_count

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
        self._rich_base = None
        self._strips = None
        self._drawn.clear()
        super().notify_style_update()

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False) -> "Panel":
        self._strips = None
        super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)
        return self

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        if self._strips is None or self._strips_width != width:
            lines = self.lines(width)
            base = self._base_style()
            self._strips = [self._line_strip(number, line, width, base) for number, line in enumerate(lines)]
            self._strips_width = width
        return self._strips[y] if y < len(self._strips) else Strip.blank(width, self._base_style())

    def _base_style(self) -> Style:
        # rich_style walks every ancestor's styles: once per style update, not per frame.
        if self._rich_base is None:
            self._rich_base = self.rich_style
        return self._rich_base

    def _line_strip(self, number: int, line: Text, width: int, base: Style) -> Strip:
        """The cells of one line, reused when the line shows what it showed last frame."""
        key = (line.plain, line.style, tuple(line.spans), width, base)
        drawn = self._drawn.get(number)
        if drawn is not None and drawn[0] == key:
            return drawn[1]
        strip = line_strip(line, width, base, self.app.console)
        self._drawn[number] = (key, strip)
        return strip
