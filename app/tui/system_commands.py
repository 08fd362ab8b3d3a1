"""Textual's own palette entries (Theme, Quit, Keys, Screenshot...) in the interface's
language: Textual writes them in English, and they sat in English among the app's translated
entries. A title Textual adds later, and the catalog lacks, shows as Textual wrote it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from textual.app import SystemCommand

from scriptorium.app.i18n.marker import N_

TEXTUAL_WORDS = (
    N_("Theme"),
    N_("Change the current theme"),
    N_("Quit"),
    N_("Quit the application as soon as possible"),
    N_("Keys"),
    N_("Hide the keys and widget help panel"),
    N_("Show help for the focused widget and a summary of available keys"),
    N_("Minimize"),
    N_("Minimize the widget and restore to normal size"),
    N_("Maximize"),
    N_("Maximize the focused widget"),
    N_("Screenshot"),
    N_("Save an SVG 'screenshot' of the current screen"),
)
"""What Textual 8's App.get_system_commands says, listed only so that Babel extracts it."""


def translated(commands: Iterable[SystemCommand], gettext: Callable[[str], str]) -> Iterator[SystemCommand]:
    for command in commands:
        yield command._replace(title=gettext(command.title), help=gettext(command.help))
