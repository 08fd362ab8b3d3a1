"""Chat mode: a transcript whose replies stream in, and an input box.

The pane (sending, replies, the conversation) is a ModePane that composes its parts like
the draft pane: ReplyInspection (each reply's tokens, coloured and stepped through) and
ReplyVersions (the last reply's versions), each a plain object with its own state. The
pane keeps the keys and hands each to its part."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static, TextArea

from scriptorium import prompts
from scriptorium.inference.window.chat_window import fit_chat
from scriptorium.inference.window.window import prompt_budget

from scriptorium.app.config.tui_settings import TuiSettings
from scriptorium.app.sessions.records import REPLY_ENDINGS
from scriptorium.app.tui.branches import branch_label
from scriptorium.app.tui.generation_request import GenerationRequest, Prepared
from scriptorium.app.tui.keys import KeyDisplay
from scriptorium.app.tui.token_spans import TokenRecord, chosen_records
from scriptorium.app.tui.widgets import chat_inspect, chat_versions
from scriptorium.app.tui.widgets.chat_input import ChatInput
from scriptorium.app.tui.widgets.chat_inspect import ReplyInspection
from scriptorium.app.tui.widgets.chat_versions import ReplyVersion, ReplyVersions
from scriptorium.app.tui.widgets.mode_pane import ModePane
from scriptorium.app.tui.widgets.token_text import ReplyTokens
from scriptorium.app.i18n.marker import N_

if TYPE_CHECKING:
    from textual.css.query import DOMQuery
    from textual.widgets.markdown import MarkdownStream

    from scriptorium.inference.core.events import GenerationDone, TokenEvent

    from scriptorium.app.tui.widgets.chat_reply import AssistantMessage


class UserMessage(Static):
    """What the author wrote."""


class ChatPane(ModePane):
    """The conversation (system prompt from prompts/chat_system.txt) and the sink of chat
    generations."""

    BINDINGS = [
        *chat_inspect.LEADING_BINDINGS,
        Binding("escape", "stop", N_("Stop"), id="chat.stop", tooltip=N_("Stop the reply; what was written stays")),
        Binding(
            "ctrl+r",
            "regenerate",
            N_("Regenerate"),
            id="chat.regenerate",
            tooltip=N_("Write the last reply again; the old one stays as a version (alt+←/→)"),
        ),
        Binding(
            "up",
            "edit_last",
            N_("Edit last"),
            key_display="↑",
            id="chat.edit_last",
            tooltip=N_("Take back your last message (and its reply) to edit and send it again"),
        ),
        Binding(
            "escape",
            "put_back",
            N_("Put back"),
            id="chat.put_back",
            tooltip=N_("Put the message taken back, unchanged, and its reply back into the conversation"),
        ),
        *chat_inspect.BINDINGS,
        *chat_versions.BINDINGS,
    ]

    def __init__(self, settings: TuiSettings, key_display: KeyDisplay, **kwargs: object) -> None:
        super().__init__(settings, key_display, **kwargs)
        self.messages: list[dict[str, str]] = []
        """The conversation without the system prompt: {'role', 'content'} dicts."""
        self._stream: MarkdownStream | None = None
        self._reply: AssistantMessage | None = None
        self._reply_label: str | None = None
        """How the streaming reply is a new version of the last one ('re-roll'...), or None."""
        self._streamed = ""
        """The streaming reply's text so far, after its prefix."""
        self.system_prompt = ""
        """The system prompt the last reply was asked with (the session keeps it for the export)."""
        self._taken_back: tuple[list[dict[str, str]], tuple[list[ReplyVersion], int]] | None = None
        """The turns the edit key took back, with the reply's versions: Esc puts them back."""
        self.inspection = ReplyInspection(self)
        self.versions = ReplyVersions(self.language, key_display)

    def compose(self) -> ComposeResult:
        self.transcript = VerticalScroll(id="transcript")
        self.input = ChatInput(
            placeholders=(
                self.language.gettext("Message the model — Enter sends, {key} starts a new line").format(
                    key=self.key_display("chat.new_line")
                ),
                self.language.gettext("Message the model — Enter sends"),
            ),
            id="chat-input",
        )
        yield self.transcript
        yield self.input

    def on_mount(self) -> None:
        # Stay at the bottom while replies grow, unless the author scrolls up to read.
        self.transcript.anchor()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        inspect = self.inspection.check_action(action)
        if inspect is not None:
            return inspect
        ends_with_reply = bool(self.messages) and self.messages[-1]["role"] == "assistant" and not self.streaming
        if action == "branch":
            views = self.query(ReplyTokens)
            # An empty reply has no tokens, hence no view: the last view is then an earlier
            # reply's, whose tokens cannot start a version of the last one.
            return (
                ends_with_reply
                and self.inspection.inspected is not None
                and bool(views)
                and self.inspection.inspected_reply == len(views) - 1
                and views.last().reply is self.transcript.query(".message").last()
            )  # type: ignore[attr-defined]
        if action == "reply_version":
            return ends_with_reply and len(self.versions) > 1
        if action == "stop":
            # The draft's suggestion too: "press Esc to stop it first" is what Enter says meanwhile.
            return self.generating
        if action == "regenerate":  # a reply again, or the one that failed
            return bool(self.messages) and not self.streaming
        if action == "edit_last":
            return not self.input.value and not self.streaming and any(m["role"] == "user" for m in self.messages)
        if action == "put_back":
            taken = self._taken_back
            return taken is not None and not self.generating and self.input.value == taken[0][0]["content"]
        return True

    # ---- sending -------------------------------------------------------------------
    @on(TextArea.Changed, "#chat-input")
    def _input_changed(self) -> None:
        # The edit and put-back keys hang on the field being empty, or unchanged: the footer follows it.
        self.refresh_bindings()

    @on(ChatInput.Submitted, "#chat-input")
    async def _submitted(self, event: ChatInput.Submitted) -> None:
        text = event.value.strip()
        if not text:
            return
        if self.generating:
            self.notify(
                self.language.gettext("The model is still writing: press Esc to stop it first."), severity="warning"
            )
            return
        if not self.ready_backend():
            return
        self.input.value = ""
        if self.messages and self.messages[-1]["role"] == "assistant":
            # Its versions go with the turn that now answers it: so do their keys under it.
            self._show_version_note(self._replies().last(), versions=False)
        self.versions.forget()
        self.messages.append({"role": "user", "content": text})
        await self.transcript.mount(UserMessage(text, markup=False, classes="message"))
        await self._reply_to_conversation()

    async def reply_again(
        self, *, label: str, prefix: str = "", prefix_records: list[TokenRecord] | None = None
    ) -> None:
        """Write the last reply again as a new version of it, starting with `prefix` (whose
        tokens are `prefix_records`)."""
        await self._reply_to_conversation(prefix=prefix, prefix_records=prefix_records or [], label=label)

    async def _reply_to_conversation(
        self, *, prefix: str = "", prefix_records: list[TokenRecord] | None = None, label: str | None = None
    ) -> None:
        backend = self.ready_backend()
        if backend is None:
            return
        self._taken_back = None  # the conversation moves on without it
        system = self.prompt_template(prompts.CHAT_SYSTEM)
        fallback = self.prompt_template(prompts.CHAT_FALLBACK) if system is not None else None
        if system is None or fallback is None:
            return
        self.system_prompt = system.strip()
        conversation = self.conversation()
        budget, memory = prompt_budget(backend.n_ctx, self.engine_state.sampler.max_tokens), self.pinned.memory

        def prepare() -> Prepared:
            # In the generation's worker: counting tokens asks the engine's process or a
            # server. The oldest turns leave the window first; the system prompt and memory stay.
            # A branched reply goes on from its prefix (the model continues its own turn):
            # counted with the turns, so older turns leave for it, not the prompt's start.
            fitted = fit_chat(
                conversation,
                budget=budget,
                count=backend.count_tokens,
                render=lambda turns: backend.chat_prompt(turns, fallback),
                memory=memory,
                reply_start=prefix,
            )
            dropped = fitted.dropped_turns
            note = (
                self.language.ngettext(
                    "The oldest message no longer fits the model's {n_ctx}-token context: it does not see it.",
                    "The {count} oldest messages no longer fit the model's {n_ctx}-token context: it does not see them.",
                    dropped,
                ).format(count=dropped, n_ctx=self.language.number(backend.n_ctx, ","))
                if dropped
                else ""
            )
            return Prepared(fitted.prompt, note=note)

        # A model without its own template talks in the fallback's turns: stop where
        # it would start writing the author's next turn.
        stops = () if backend.facts.has_chat_template else self.settings.chat_stop
        request = self.new_request("chat", prepare, special=True, extra_stop=stops)
        self._reply_label = label
        self.inspection.expect_reply(prefix, prefix_records or [])
        self._reply = self._new_reply()
        await self.transcript.mount(self._reply)
        self._stream = self._reply.stream()
        if prefix:
            await self._stream.write(prefix)
        self.start(request)
        self.refresh_bindings()

    def kept_messages(self) -> list[dict[str, str]]:
        """The conversation to save: with the turns ↑ took back, until they are sent again
        (changed or not) or put back, so that quitting meanwhile loses neither."""
        return self.messages + (self._taken_back[0] if self._taken_back is not None else [])

    def conversation(self) -> list[dict[str, str]]:
        """The conversation with the system prompt it was last asked with, first."""
        system = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        return system + self.messages

    # ---- actions -------------------------------------------------------------------
    def action_stop(self) -> None:
        self.stop()

    async def action_regenerate(self) -> None:
        if not self.messages or self.streaming:
            return
        if self.messages[-1]["role"] == "user":  # its reply failed (a server down, an engine restarted)
            await self._reply_to_conversation()
            return
        self.inspection.leave()
        await self.take_back_reply()
        await self.reply_again(label="re-roll")

    async def take_back_reply(self) -> None:
        """Take the last reply off the screen and out of the conversation (its versions stay)."""
        if self.messages and self.messages[-1]["role"] == "assistant":
            self.messages.pop()
        replies = self._replies()
        if replies:
            await replies.last().remove()
        await self._remove_taken_back_tokens()

    async def _remove_taken_back_tokens(self) -> None:
        """Remove the token views of replies taken off the screen: coloured (F8), a view
        is what shows, and would go on showing a reply no longer in the conversation."""
        for view in self.transcript.query(ReplyTokens):
            if not view.reply.is_attached:  # type: ignore[attr-defined]
                await view.remove()

    async def show_last_reply(self, version: ReplyVersion) -> None:
        """Show `version` as the last reply, and make it the conversation's."""
        replies = self._replies()
        if not replies or not self.messages or self.messages[-1]["role"] != "assistant":
            return
        reply = replies.last()
        self.messages[-1] = {"role": "assistant", "content": version.text}
        await reply.update(version.text)
        self._show_version_note(reply)
        await self.inspection.attach_records(reply, version.text, version.records)
        self.post_message(self.Edited())
        self.refresh_bindings()

    async def action_edit_last(self) -> None:
        """Put the last user message back into the input and remove it (and its reply)."""
        last_user = max((i for i, m in enumerate(self.messages) if m["role"] == "user"), default=None)
        if last_user is None:
            return
        text = self.messages[last_user]["content"]
        removed = len(self.messages) - last_user
        # A stray ↑ must not cost the reply: kept until the message is sent or put back.
        self._taken_back = (self.messages[last_user:], self.versions.snapshot()) if removed > 1 else None
        del self.messages[last_user:]
        for widget in list(self.transcript.query(".message"))[-removed:]:
            await widget.remove()
        await self._remove_taken_back_tokens()
        self._versions_from_last_reply()
        self.input.value = text
        self.input.focus()
        if self._taken_back is not None:
            self.notify(
                self.language.gettext(
                    "Your message is back in the input to edit; {key} puts it and its reply back as they were."
                ).format(key=self.key_display("chat.put_back")),
                timeout=6,
            )
        self.refresh_bindings()

    async def action_put_back(self) -> None:
        """Undo the edit key: the message and its reply (with its versions) come back."""
        if self._taken_back is None or self.generating:
            return
        turns, versions = self._taken_back
        self._taken_back = None
        self.input.value = ""
        if self.messages and self.messages[-1]["role"] == "assistant":
            self._show_version_note(self._replies().last(), versions=False)
        self.messages.extend(turns)
        await self.transcript.mount(UserMessage(turns[0]["content"], markup=False, classes="message"))
        self.versions.restore(versions)
        shown, reply = self.versions.current(), self._new_reply(turns[1]["content"])
        await self.transcript.mount(reply)
        if shown is not None:
            await self.inspection.attach_records(reply, shown.text, shown.records)
        self._show_version_note(reply)
        self.post_message(self.Edited())
        self.refresh_bindings()

    # ---- the replies' tokens (ReplyInspection's) ---------------------------------------
    def action_inspect(self) -> None:
        self.inspection.inspect()

    def action_inspect_move(self, step: int) -> None:
        self.inspection.move(step)

    def action_inspect_reply(self, step: int) -> None:
        self.inspection.move_reply(step)

    def action_leave_inspect(self) -> None:
        self.inspection.leave()

    def action_toggle_colours(self) -> None:
        self.inspection.toggle_colours()

    # ---- the last reply's versions: branching and moving between them -----------------------
    def action_branch(self) -> None:
        views = list(self.query(ReplyTokens))
        index = self.inspection.inspected
        if index is None or not views:
            return
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
        self.inspection.leave()
        await self.take_back_reply()
        await self.reply_again(
            label=branch_label(choice),
            prefix=prefix,
            prefix_records=records[:index] + chosen_records(record, record.start, choice),
        )

    async def action_reply_version(self, step: int) -> None:
        version = self.versions.move(step)
        if version is None:
            _ = self.language.gettext
            self.notify(_("No older version.") if step < 0 else _("No newer version."))
            return
        self.inspection.leave()
        await self.show_last_reply(version)

    # ---- the sink ------------------------------------------------------------------
    def stream_tokens(self, request: GenerationRequest, events: tuple[TokenEvent, ...]) -> None:
        self.inspection.stream_tokens(request, events)

    async def stream_text(self, text: str) -> None:
        if self._stream is not None:
            self._streamed += text
            await self._stream.write(text)

    async def stream_finished(
        self, done: GenerationDone | None, error: str | None, *, retry_helps: bool = True
    ) -> None:
        prefix = self.inspection.reply_prefix  # read before attach_tokens, which forgets it
        stream, reply, label, streamed = await self._end_stream()
        if reply is None:
            return
        # A reply failed midway (the engine died, the server went away) stays as far as it got,
        # as a stopped one does: the author has read it. One that wrote nothing goes.
        if done is None and not (error is not None and streamed):
            self.inspection.expect_reply("", [])
            await reply.remove()
            previous = self.versions.current() if label is not None else None
            if previous is not None:
                # Writing a new version failed: the one it was to replace comes back.
                self.messages.append({"role": "assistant", "content": previous.text})
                restored = self._new_reply(previous.text)
                await self.transcript.mount(restored)
                await self.inspection.attach_records(restored, previous.text, previous.records)
                self._show_version_note(restored)
            elif error is not None and not retry_helps and not self.input.value:
                # Refused as it stands (this model cannot chat, a character it cannot encode,
                # a message too long): asked again, it fails the same way. The message goes
                # back into the input, to be changed or kept, not left as a turn with no reply.
                await self.action_edit_last()
            self.refresh_bindings()
            return
        text = prefix + (done.text if done is not None else streamed)
        # One full render at the end, so the reply is exactly the engine's text.
        await reply.update(text)
        records = await self.inspection.attach_tokens(reply, done.seed if done is not None else None, text)
        ending = REPLY_ENDINGS["error"] if done is None else REPLY_ENDINGS.get(done.stop_reason, "")
        self.versions.finished(text, records, label, ending)
        self._show_version_note(reply)
        self.messages.append({"role": "assistant", "content": text})
        self.refresh_bindings()

    async def _end_stream(self) -> tuple[MarkdownStream | None, AssistantMessage | None, str | None, str]:
        """The streaming reply's stream (stopped), widget, version label and text, forgotten here."""
        ended = (self._stream, self._reply, self._reply_label, self._streamed)
        self._stream = self._reply = self._reply_label = None
        self._streamed = ""
        if ended[0] is not None:
            await ended[0].stop()
        return ended

    @staticmethod
    def _new_reply(text: str = "") -> AssistantMessage:
        # Imported with the first reply: Markdown takes ~25 ms to import, the first screen has no reply.
        from scriptorium.app.tui.widgets.chat_reply import AssistantMessage

        return AssistantMessage(text, classes="message")

    def _replies(self) -> DOMQuery[AssistantMessage]:
        # As in _new_reply: there are replies to find only once the module is imported.
        from scriptorium.app.tui.widgets.chat_reply import AssistantMessage

        return self.transcript.query(AssistantMessage)

    def _versions_from_last_reply(self) -> None:
        """The reply now last becomes its own first version: without one, a re-roll of it
        would throw it away with no alt+← to bring it back. Its note loses the count of
        versions it had while it was last (those were forgotten when a turn followed it)."""
        replies = self._replies()
        if not replies or not self.messages or self.messages[-1]["role"] != "assistant":
            self.versions.forget()
            return
        reply = replies.last()
        views = [view for view in self.transcript.query(ReplyTokens) if view.reply is reply]  # type: ignore[attr-defined]
        self.versions.start_from(self.messages[-1]["content"], views[0].records if views else [], reply.ending)
        self._show_version_note(reply)

    def _show_version_note(self, reply: AssistantMessage, *, versions: bool = True) -> None:
        """Under the reply: which version it is (with the keys to the others; not once a turn
        follows it) and, if it did not end by itself, that it was stopped or failed. Each
        version keeps its own."""
        version = self.versions.current()
        reply.show_note(version.ending if version is not None else "", self.versions.note() if versions else "")

    # ---- for sessions (issue 4) ------------------------------------------------------
    async def restore(self, messages: list[dict[str, str]], unsent: str = "", endings: list[str] | None = None) -> None:
        """Show a saved conversation (roles 'user' and 'assistant'), `unsent` in the chat box,
        each reply marked with its `endings` entry as it was when it was written ('stopped'...).
        A reply still streaming was forgotten (kept in the session it belongs to): its
        stream ends here, unfinished."""
        await self._end_stream()
        self.inspection.expect_reply("", [])
        self.input.value = unsent
        await self.transcript.remove_children()
        self.versions.forget()
        self._taken_back = None
        self.messages = [dict(m) for m in messages]
        for message, ending in zip(self.messages, endings or [""] * len(messages)):
            if message["role"] == "user":
                await self.transcript.mount(UserMessage(message["content"], markup=False, classes="message"))
            else:
                reply = self._new_reply(message["content"])
                await self.transcript.mount(reply)
                reply.show_note(ending)
        self._versions_from_last_reply()
        self.refresh_bindings()
