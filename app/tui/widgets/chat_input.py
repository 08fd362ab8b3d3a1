"""The chat's message field: a few lines that grow with the message, Enter sends it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea

from scriptorium.app.tui.keys import type_invisible, typed_with_alt
from scriptorium.app.tui.widgets.formatting import fitting
from scriptorium.app.i18n.marker import N_

_IN_TURN = ("send", "new_line")
"""The field's own keys that change what the keys after them type into."""


class ChatInput(TextArea):
    """The message being written. A pasted poem or dialogue keeps its line breaks, and the
    author types one with ctrl+j, the one key every terminal tells apart from Enter.
    Alt+letter keys reach the bindings instead of the text."""

    BINDINGS = [
        Binding("enter", "send", N_("Send"), key_display="⏎", id="chat.send", tooltip=N_("Send the message")),
        Binding(
            "ctrl+j",
            "new_line",
            N_("New line"),
            id="chat.new_line",
            tooltip=N_("Start a new line in the message (Enter sends it)"),
        ),
        # Where the terminal tells them apart (the kitty keyboard protocol: kitty, WezTerm,
        # foot, Ghostty), shift+enter and alt+enter start a new line too, as in other chats;
        # but never offered (no id: not in F1, the palette or the keymap), since elsewhere
        # they arrive as Enter and send the message half written. Under tmux (3.3, which
        # does not speak that protocol) shift+enter is passed on as Enter, and alt+enter as
        # ESC Enter, which Textual 8 reads as Enter (textual#6663).
        Binding("shift+enter,alt+enter", "new_line", N_("New line"), show=False),
    ]

    @dataclass
    class Submitted(Message):
        """Enter was pressed: `value` is the message as it stands."""

        input: "ChatInput"
        value: str

        @property
        def control(self) -> "ChatInput":
            return self.input

    def __init__(self, *, placeholders: Sequence[str] = ("",), id: str | None = None) -> None:
        """`placeholders`: the empty field's hint, the fullest first; the first that fits
        shows. The field is one line high: a longer hint was cut at its edge."""
        super().__init__(
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            highlight_cursor_line=False,
            placeholder=placeholders[0],
            id=id,
        )
        self._placeholders = tuple(placeholders)

    def on_resize(self) -> None:
        # One cell short of the width: the cursor stands after the hint.
        self.placeholder = fitting(self.content_size.width - 1, *self._placeholders)
        # TextArea rewraps at the new width but repaints only when its height in lines changes
        # (as the draft editor found): a message typed at the old width kept its old breaks on
        # screen, a word hidden past the edge, until the next key.
        self.refresh()

    @property
    def value(self) -> str:
        return self.text

    @value.setter
    def value(self, text: str) -> None:
        """Put `text` in the field, the cursor at its end (to go on writing it)."""
        self.load_text(text)
        self.move_cursor(self.document.end)

    async def _on_key(self, event: events.Key) -> None:
        if typed_with_alt(event):
            # Not typed: the key goes on up to the bindings (alt+e opens the memory).
            event.prevent_default()
            return
        own = self.screen.active_bindings.get(event.key) if not event.is_printable else None
        if own is not None and own.node is self and own.binding.action in _IN_TURN:
            # Run here, in turn with the keys around it. Left to bubble up to the bindings, a
            # new line typed quickly landed after the letters that followed it; as a priority
            # binding, before the letters that came first.
            event.stop()
            event.prevent_default()
            await self.run_action(own.binding.action)
            return
        type_invisible(self, event)  # TextArea's own handler, which would drop it, then does not run

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # ↑ in the empty field takes the last message back (the chat pane's key), not a cursor move.
        return not (action == "cursor_up" and not self.text)

    def action_send(self) -> None:
        self.post_message(self.Submitted(self, self.text))

    def action_new_line(self) -> None:
        self.replace("\n", *self.selection, maintain_selection_offset=False)
