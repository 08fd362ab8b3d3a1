"""What both mode panes need to reach: the main screen and the app, typed."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from scriptorium.app.tui.screens.main_screen import MainScreen
    from scriptorium.app.tui.app import ScriptoriumApp


class PaneAccess:
    """Typed access from a mode pane to its screen and app; mixed into DraftPane and ChatPane."""

    @property
    def main(self) -> "MainScreen":
        return cast("MainScreen", self.screen)  # type: ignore[attr-defined]

    @property
    def tui(self) -> "ScriptoriumApp":
        return cast("ScriptoriumApp", self.app)  # type: ignore[attr-defined]

    @property
    def streaming(self) -> bool:
        """Whether a generation for this pane is running."""
        return self.main.generating_for(self)
