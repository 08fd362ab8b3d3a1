"""What the app said: every notification of this run, newest last, with its time.

A toast goes after a few seconds, and some say what the author needs later: the name of
the copy a conflicting save kept ("porto.md.disk-20261203-101500"), why a load failed,
which characters the vocabulary lacks. Here they can be read again."""

from __future__ import annotations

import time
from collections.abc import Iterable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.notifications import Notification
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from scriptorium.app.i18n.language import ENGLISH, Language

SEVERITY_STYLE = {"information": "", "warning": "bold yellow", "error": "bold red"}


class MessagesScreen(ModalScreen[None]):
    """The notifications given to it (the app's record of what it said), one option each."""

    BINDINGS = [Binding("escape,q", "dismiss", "Close", id="messages.close", tooltip="Close the messages")]

    def __init__(self, notices: Iterable[Notification], language: Language = ENGLISH) -> None:
        super().__init__()
        self._notices = list(notices)
        self._language = language

    def compose(self) -> ComposeResult:
        with Vertical(id="messages-box"):
            count, language = len(self._notices), self._language
            heading = language.ngettext(
                "{count} message this run, newest last · Esc closes",
                "{count} messages this run, newest last · Esc closes",
                count,
            ).format(count=count)
            yield Static(heading if count else language.gettext("Nothing said yet · Esc closes"), id="messages-title")
            yield OptionList(*(_option(notice) for notice in self._notices), id="messages-list")

    def on_mount(self) -> None:
        messages = self.query_one(OptionList)
        messages.focus()
        if self._notices:
            messages.highlighted = len(self._notices) - 1


def _option(notice: Notification) -> Option:
    said_at = time.strftime("%H:%M:%S", time.localtime(notice.raised_at))
    message = Content.from_markup(notice.message) if notice.markup else Content(notice.message)
    line = Text.assemble((said_at, "dim"), "  ", (notice.title or notice.severity, SEVERITY_STYLE[notice.severity]))
    return Option(Content.assemble(Content.from_rich_text(line), "\n", message))
