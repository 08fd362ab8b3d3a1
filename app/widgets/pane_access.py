"""What both mode panes need to reach: the main screen and the app, typed."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from ..screens.main_screen import MainScreen
    from ..tui import ScriptoriumApp


class PaneAccess:
    """Typed access from a mode pane to its screen and app; mixed into DraftPane and ChatPane."""

    @property
    def main(self) -> "MainScreen":
        """The pane's screen; raises NoScreen once the pane has left it (check on_screen
        first where the call can come late: a timer, a bubbled message, a worker)."""
        return cast("MainScreen", self.screen)  # type: ignore[attr-defined]

    @property
    def on_screen(self) -> bool:
        """False once the pane has left its screen or the app is quitting: what still
        arrives then (an autosave, a bubbled message handled by the app, a generation's
        last tokens) has nothing to update."""
        return bool(self.is_attached)  # type: ignore[attr-defined]

    @property
    def tui(self) -> "ScriptoriumApp":
        return cast("ScriptoriumApp", self.app)  # type: ignore[attr-defined]

    @property
    def streaming(self) -> bool:
        """Whether a generation for this pane is running."""
        return self.on_screen and self.main.generating_for(self)
