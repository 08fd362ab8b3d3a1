"""Chat mode, issue 6: the last reply's versions. Ctrl+R writes it again and Ctrl+B (while
inspecting it, F4) takes another alternative at a token and lets the model write on from
there; either way the earlier reply stays as a version, and alt+←/→ move between them.
A part of the chat pane (chat_pane.py): the versions, a plain object with their own
state; the pane keeps the keys, and branches and re-rolls with them.

Only the last reply has versions: an earlier one has the author's later turns answering it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from textual.binding import Binding

from scriptorium.app.tui.branches import shown_label
from scriptorium.app.tui.token_spans import TokenRecord
from scriptorium.app.i18n.marker import N_

if TYPE_CHECKING:
    from scriptorium.app.i18n.language import Language
    from scriptorium.app.tui.keys import KeyDisplay

BINDINGS = [
    Binding(
        "ctrl+b",
        "branch",
        N_("Branch"),
        show=False,
        id="chat.branch",
        tooltip=N_(
            "While inspecting the last reply (F4): take another alternative at the token, or your own "
            "word, and let the model write the reply on from there; the old reply stays as a version"
        ),
    ),
    Binding(
        # Esc b: what a stock Mac Terminal sends for Option+← (Option is not Meta there, see docs/guide/writing.md).
        "alt+left,alt+b",
        "reply_version(-1)",
        N_("Older reply"),
        show=False,
        id="chat.version_previous",
        tooltip=N_("Show the last reply's previous version (regenerated and branched replies are kept)"),
    ),
    Binding(
        "alt+right,alt+f",  # Esc f: Option+→ in a stock Mac Terminal
        "reply_version(1)",
        N_("Newer reply"),
        show=False,
        id="chat.version_next",
        tooltip=N_("Show the last reply's next version"),
    ),
]


@dataclass(slots=True)
class ReplyVersion:
    text: str
    records: list[TokenRecord] = field(default_factory=list)
    label: str = "first"
    ending: str = ""
    """How it ended when not by itself: 'stopped' (Esc) or 'failed'; shown under it."""


class ReplyVersions:
    """The last reply's versions (re-rolls, branches) and which of them shows."""

    def __init__(self, language: Language, key_display: KeyDisplay) -> None:
        self.language = language
        self.key_display = key_display
        self._versions: list[ReplyVersion] = []  # never mutated in place: replaced (a snapshot keeps it)
        self._shown = 0

    def __len__(self) -> int:
        return len(self._versions)

    def forget(self) -> None:
        """The conversation moved on (or was replaced): the last reply starts afresh."""
        self._versions, self._shown = [], 0

    def start_from(self, text: str, records: list[TokenRecord], ending: str = "") -> None:
        """The last reply is one already written (the author took back a later turn, or a
        session was reopened): it is its own first version, so a re-roll keeps it."""
        self._versions, self._shown = [ReplyVersion(text, list(records), ending=ending)], 0

    def finished(self, text: str, records: list[TokenRecord], label: str | None, ending: str = "") -> None:
        """A reply was written: a new version of the last reply (label) or a new reply (None)."""
        versions = list(self._versions) if label is not None else []
        versions.append(ReplyVersion(text, records, label or "first", ending))
        self._versions, self._shown = versions, len(versions) - 1

    def snapshot(self) -> tuple[list[ReplyVersion], int]:
        """The versions and the one shown, to put back later (restore)."""
        return self._versions, self._shown

    def restore(self, snapshot: tuple[list[ReplyVersion], int]) -> None:
        self._versions, self._shown = snapshot

    def current(self) -> ReplyVersion | None:
        return self._versions[self._shown] if self._versions else None

    def move(self, step: int) -> ReplyVersion | None:
        """Show the version `step` away and return it; None (nothing changes) past either end."""
        target = self._shown + step
        if not 0 <= target < len(self._versions):
            return None
        self._shown = target
        return self._versions[target]

    def title(self) -> str:
        if len(self._versions) < 2:
            return ""
        number = self.language.gettext("version {number}/{count}").format(
            number=self._shown + 1, count=len(self._versions)
        )
        return f"{number} · {shown_label(self._versions[self._shown].label, self.language)}"

    def note(self) -> str:
        """What the reply shows underneath: which version it is, and the keys to the others."""
        title = self.title()
        if not title:
            return ""
        return f"{title} · {self.key_display('chat.version_previous')} {self.key_display('chat.version_next')}"
