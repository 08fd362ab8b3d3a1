"""Chat mode, issue 6: each reply keeps its tokens; F8 colours them by probability and
F4 steps through the replies' tokens (←/→ token by token, across replies; ↑/↓ a reply at
a time), starting at the end of the last, with their alternatives in the panel.
A part of the chat pane (chat_pane.py), which keeps the keys and hands them to it.

A reply is Markdown; coloured or inspected it is drawn as its tokens instead (a
ReplyTokens beside it), since Markdown rendering would move characters around.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from textual.binding import Binding

from scriptorium.app.tui.token_spans import TokenRecord, TokenSource, add_records, close_records
from scriptorium.app.tui.widgets.token_text import ReplyTokens, TokenLegend
from scriptorium.app.tui.widgets.showing import set_shown
from scriptorium.app.i18n.marker import N_

if TYPE_CHECKING:
    from textual.containers import VerticalScroll
    from textual.css.query import DOMQuery
    from textual.widget import Widget

    from scriptorium.inference.core.events import TokenEvent

    from scriptorium.app.i18n.language import Language
    from scriptorium.app.tui.engine_state import EngineState
    from scriptorium.app.tui.generation_request import GenerationRequest
    from scriptorium.app.tui.widgets.chat_input import ChatInput

LEADING_BINDINGS = [
    Binding("escape", "leave_inspect", N_("Done"), id="chat.inspect_leave", tooltip=N_("Leave token inspection")),
]
BINDINGS = [
    Binding(
        "f4",
        "inspect",
        N_("Inspect"),
        show=False,
        id="chat.inspect",
        tooltip=N_("Step through the replies' tokens (←/→, ↑/↓ by reply) and see what else the model considered"),
    ),
    Binding(
        "left",
        "inspect_move(-1)",
        N_("Previous token"),
        priority=True,
        show=False,
        id="chat.inspect_previous",
        tooltip=N_("While inspecting: the token before (the end of the reply before, at a reply's start)"),
    ),
    Binding(
        "right",
        "inspect_move(1)",
        N_("Next token"),
        priority=True,
        show=False,
        id="chat.inspect_next",
        tooltip=N_("While inspecting: the token after (the start of the next reply, at a reply's end)"),
    ),
    Binding(
        "up",
        "inspect_reply(-1)",
        N_("Previous reply"),
        priority=True,
        show=False,
        id="chat.inspect_previous_reply",
        tooltip=N_("While inspecting: the first token of the reply before"),
    ),
    Binding(
        "down",
        "inspect_reply(1)",
        N_("Next reply"),
        priority=True,
        show=False,
        id="chat.inspect_next_reply",
        tooltip=N_("While inspecting: the first token of the next reply"),
    ),
    Binding(
        "f8",
        "toggle_colours",
        N_("Colours"),
        show=False,
        id="chat.colours",
        tooltip=N_(
            "Colour the replies by how probable the model found each token; "
            "those speculative decoding guessed are underlined"
        ),
    ),
]


class ReplyInspectionPane(Protocol):
    """What the replies' inspection needs of the chat pane it is part of."""

    transcript: VerticalScroll
    input: ChatInput
    language: Language
    engine_state: EngineState
    streaming: bool

    def notify(self, message: str, *, severity: str = ...) -> None: ...

    def refresh_bindings(self) -> None: ...

    def query(self, selector: type[TokenLegend]) -> DOMQuery[TokenLegend]: ...

    def mount(self, *widgets: Widget, before: Widget | None = None) -> object: ...

    def show_record(self, record: TokenRecord, *, asked: bool = False) -> None: ...


class ReplyInspection:
    """Each reply's tokens: kept as they stream, coloured, and stepped through."""

    def __init__(self, pane: ReplyInspectionPane) -> None:
        self.pane = pane
        self.colouring = False
        self.inspected: int | None = None
        """The token under the cursor, in reply number `inspected_reply`; None when not inspecting."""
        self.inspected_reply = 0
        self._records: list[TokenRecord] | None = None
        self._source: TokenSource | None = None
        self._request_id = 0
        self.reply_prefix = ""
        """What the streaming reply starts with (a branch), before the model's text."""
        self._base_records: list[TokenRecord] = []  # never mutated: replaced by expect_reply

    def check_action(self, action: str) -> bool | None:
        """Whether one of inspection's actions is enabled; None for the pane's other actions."""
        if action in ("inspect_move", "inspect_reply", "leave_inspect"):
            return self.inspected is not None
        return None

    def expect_reply(self, prefix: str, records: list[TokenRecord]) -> None:
        """The next reply starts with `prefix` (a branch: the reply up to the branch point and
        the chosen word), whose tokens are `records`; the model's tokens follow it."""
        self.reply_prefix, self._base_records = prefix, list(records)

    def stream_tokens(self, request: GenerationRequest, events: tuple[TokenEvent, ...]) -> None:
        if self._records is None or request.id != self._request_id:
            self._records, self._source = list(self._base_records), TokenSource("generated", request.settings)
            self._request_id = request.id
        offset = max(self._records[-1].end if self._records else 0, len(self.reply_prefix))
        assert self._source is not None
        add_records(self._records, events, offset, self._source)

    async def attach_tokens(self, reply: Widget, seed: int | None, text: str) -> list[TokenRecord]:
        """Keep the finished reply's tokens beside it (drawn when colouring or inspecting);
        `text` is the whole reply, `seed` the one its generation drew. Returns them."""
        records, source = self._records or list(self._base_records), self._source
        self._records = self._source = None
        self.reply_prefix, self._base_records = "", []
        if source is not None:
            source.seed = seed
        # The text stops before a stop string; tokens past it are not in the reply.
        records = [r for r in records if r.end <= len(text)]
        close_records(records, text)
        await self.attach_records(reply, text, records)
        return records

    async def attach_records(self, reply: Widget, text: str, records: list[TokenRecord]) -> None:
        """Draw `reply` as these tokens when colouring or inspecting (replacing any before)."""
        transcript = self.pane.transcript
        for view in transcript.query(ReplyTokens):
            if view.reply is reply:  # type: ignore[attr-defined]
                await view.remove()
        if records:
            backend = self.pane.engine_state.backend
            view = ReplyTokens(text, records, classes="reply-tokens")
            view.unknown_ids = frozenset(backend.facts.unknown_token_ids) if backend else frozenset()
            view.reply = reply  # type: ignore[attr-defined]
            set_shown(view, False)
            await transcript.mount(view, after=reply)
        self.draw()

    def views(self) -> list[ReplyTokens]:
        """The replies' token views, dropping those whose reply was taken back."""
        views = []
        for view in self.pane.transcript.query(ReplyTokens):
            if view.reply.is_attached:  # type: ignore[attr-defined]
                views.append(view)
            else:
                view.remove()
        return views

    def draw(self) -> None:
        pane = self.pane
        views = self.views()
        if self.inspected is not None and not views:
            self.inspected = None
        if self.inspected is not None:
            self.inspected_reply = min(self.inspected_reply, len(views) - 1)
            self.inspected = min(self.inspected, len(views[self.inspected_reply].records) - 1)
        for number, view in enumerate(views):
            cursor = self.inspected if number == self.inspected_reply else None
            shown = self.colouring or cursor is not None
            view.show(colour=self.colouring, cursor=cursor)
            set_shown(view, shown)
            set_shown(view.reply, not shown)  # type: ignore[attr-defined]
        # The mark on guessed tokens is named while some reply holds one.
        guessed = self.colouring and any(record.drafted for view in views for record in view.records)
        legends = pane.query(TokenLegend)
        if legends:
            set_shown(legends.first(), self.colouring)
            legends.first().show_guessed(guessed)
        elif self.colouring:
            pane.mount(TokenLegend(pane.language, guessed=guessed, id="chat-legend"), before=pane.input)
        if self.inspected is not None:
            view = views[self.inspected_reply]
            record = view.records[self.inspected]
            pane.show_record(record)
            pane.transcript.scroll_to_widget(view, animate=False)
        pane.refresh_bindings()

    def toggle_colours(self) -> None:
        self.colouring = not self.colouring
        self.draw()

    def inspect(self) -> None:
        if self.inspected is not None:
            self.leave()
            return
        views = self.views()
        if not views or self.pane.streaming:
            self.pane.notify(self.pane.language.gettext("No finished reply to inspect yet."), severity="warning")
            return
        self.inspected_reply = len(views) - 1
        self.inspected = len(views[-1].records) - 1
        self.draw()

    def move(self, step: int) -> None:
        views = self.views()
        if self.inspected is None or not views:
            return
        reply, token = self.inspected_reply, self.inspected + step
        if token < 0 and reply > 0:
            reply -= 1
            token = len(views[reply].records) - 1
        elif token >= len(views[reply].records) and reply < len(views) - 1:
            reply, token = reply + 1, 0
        self.inspected_reply = reply
        self.inspected = min(max(token, 0), len(views[reply].records) - 1)
        self.draw()

    def move_reply(self, step: int) -> None:
        views = self.views()
        if self.inspected is None or not views:
            return
        self.inspected_reply = min(max(self.inspected_reply + step, 0), len(views) - 1)
        self.inspected = 0
        self.draw()

    def leave(self) -> None:
        self.inspected = None
        self.draw()
