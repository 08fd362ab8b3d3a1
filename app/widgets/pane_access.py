"""What both mode panes need to reach: the main screen and the app, typed."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from scriptorium import prompts

from .. import paths

if TYPE_CHECKING:
    from ..screens.main_screen import MainScreen
    from ..tui import ScriptoriumApp


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

    def prompt_template(self, name: str) -> str | None:
        """The author's prompt template `name` (else the packaged one); None, after a
        notification, when the author's copy cannot be read: nothing on screen changes."""
        try:
            return prompts.load(name, paths.prompts_dir())
        except prompts.PromptError as error:
            self.notify(str(error), title="Prompt template", severity="error", timeout=15)  # type: ignore[attr-defined]
            return None
