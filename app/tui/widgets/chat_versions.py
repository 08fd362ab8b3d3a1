"""Chat mode, issue 6: the last reply's versions. Ctrl+R writes it again and Ctrl+B (while
inspecting it, F4) takes another alternative at a token and lets the model write on from
there; either way the earlier reply stays as a version, and alt+←/→ move between them.
A layer of the chat pane, between ChatInspection and ChatPane.

Only the last reply has versions: an earlier one has the author's later turns answering it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.binding import Binding

from scriptorium.app.tui.branches import branch_label, shown_label
from scriptorium.app.tui.token_spans import TokenRecord, chosen_records
from scriptorium.app.tui.widgets.chat_inspect import ChatInspection
from scriptorium.app.tui.widgets.token_text import ReplyTokens
from scriptorium.app.i18n.marker import N_

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
        # Esc b: what a stock Mac Terminal sends for Option+← (Option is not Meta there, see the README).
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


class ChatVersions(ChatInspection):
    """The last reply's versions: the chat pane's layer for re-rolls and branches."""

    messages: list[dict[str, str]]
    _versions: list[ReplyVersion] = []  # never mutated in place: replaced
    _version: int = 0

    # What ChatPane, the layer above, does for this one.
    async def take_back_reply(self) -> None:
        raise NotImplementedError

    async def reply_again(
        self, *, label: str, prefix: str = "", prefix_records: list[TokenRecord] | None = None
    ) -> None:
        raise NotImplementedError

    async def show_last_reply(self, version: ReplyVersion) -> None:
        raise NotImplementedError

    def check_versions_action(self, action: str) -> bool | None:
        ends_with_reply = bool(self.messages) and self.messages[-1]["role"] == "assistant" and not self.streaming
        if action == "branch":
            views = self.query(ReplyTokens)
            # An empty reply has no tokens, hence no view: the last view is then an earlier
            # reply's, whose tokens cannot start a version of the last one.
            return (
                ends_with_reply
                and self.inspected is not None
                and bool(views)
                and self.inspected_reply == len(views) - 1
                and views.last().reply is self.transcript.query(".message").last()
            )  # type: ignore[attr-defined]
        if action == "reply_version":
            return ends_with_reply and len(self._versions) > 1
        return None

    def forget_versions(self) -> None:
        """The conversation moved on (or was replaced): the last reply starts afresh."""
        self._versions, self._version = [], 0

    def versions_from(self, text: str, records: list[TokenRecord], ending: str = "") -> None:
        """The last reply is one already written (the author took back a later turn, or a
        session was reopened): it is its own first version, so a re-roll keeps it."""
        self._versions, self._version = [ReplyVersion(text, list(records), ending=ending)], 0

    def version_finished(self, text: str, records: list[TokenRecord], label: str | None, ending: str = "") -> None:
        """A reply was written: a new version of the last reply (label) or a new reply (None)."""
        versions = list(self._versions) if label is not None else []
        versions.append(ReplyVersion(text, records, label or "first", ending))
        self._versions, self._version = versions, len(versions) - 1

    def version_title(self) -> str:
        if len(self._versions) < 2:
            return ""
        number = self.language.gettext("version {number}/{count}").format(
            number=self._version + 1, count=len(self._versions)
        )
        return f"{number} · {shown_label(self._versions[self._version].label, self.language)}"

    def version_note(self) -> str:
        """What the reply shows underneath: which version it is, and the keys to the others."""
        title = self.version_title()
        if not title:
            return ""
        return f"{title} · {self.key_display('chat.version_previous')} {self.key_display('chat.version_next')}"

    def current_version(self) -> ReplyVersion | None:
        return self._versions[self._version] if self._versions else None

    # ---- branching -----------------------------------------------------------------------
    def action_branch(self) -> None:
        views = list(self.query(ReplyTokens))
        if self.inspected is None or not views:
            return
        index = self.inspected
        record = views[-1].records[index]
        self.app.push_screen(
            self.alternatives_screen(record), lambda choice: self.call_later(self._branch_reply, index, choice)
        )

    async def _branch_reply(self, index: int, choice: str | None) -> None:
        views = list(self.query(ReplyTokens))
        if choice is None or self.streaming or not views or not self.messages:
            return
        records = views[-1].records
        if index >= len(records) or self.messages[-1]["role"] != "assistant":
            return
        record = records[index]
        prefix = self.messages[-1]["content"][: record.start] + choice
        self.action_leave_inspect()
        await self.take_back_reply()
        await self.reply_again(
            label=branch_label(choice),
            prefix=prefix,
            prefix_records=records[:index] + chosen_records(record, record.start, choice),
        )

    # ---- moving between versions ---------------------------------------------------------
    async def action_reply_version(self, step: int) -> None:
        target = self._version + step
        if not 0 <= target < len(self._versions):
            _ = self.language.gettext
            self.notify(_("No older version.") if step < 0 else _("No newer version."))
            return
        self._version = target
        self.action_leave_inspect()
        await self.show_last_reply(self._versions[target])
