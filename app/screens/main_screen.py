"""The screen the author lives in: draft or chat in the middle, panels at the side.

It owns the generation worker. The worker posts tokens at most once per frame
(settings.frame_interval), and each message is drawn once: a fast model never costs a
redraw per token.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import ContentSwitcher, Footer
from textual.worker import get_current_worker

from scriptorium.inference.events import GenerationDone, TokenEvent

from ..session_keeper import DraftFile
from ..generation import (
    ContextWasTrimmed,
    GenerationFailed,
    GenerationFinished,
    GenerationRequest,
    PrefillFinished,
    PrefillProgressed,
    TokensGenerated,
    stream_generation,
)
from ..widgets.chat_pane import ChatPane
from ..widgets.draft_pane import DraftPane
from ..widgets.sidebar import Sidebar
from ..widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from scriptorium.inference.engine import Engine

    from ..tui import ScriptoriumApp


class StreamSink(Protocol):
    """Where a generation's text goes: the draft's suggestion or a chat reply."""

    async def stream_text(self, text: str) -> None: ...

    async def stream_finished(self, done: GenerationDone | None, error: str | None) -> None: ...


@dataclass(slots=True)
class ActiveGeneration:
    request: GenerationRequest
    sink: StreamSink
    tokens: list[TokenEvent] = field(default_factory=list)


class MainScreen(Screen[None], inherit_bindings=False):
    """Draft and chat modes, the side panels and the footer."""

    BINDINGS = [
        Binding("tab", "app.focus_next", "Next", show=False, id="focus.next",
                tooltip="Move the focus to the next widget (the editor takes Tab for a suggestion)"),
        Binding("shift+tab", "app.focus_previous", "Previous", show=False, id="focus.previous",
                tooltip="Move the focus to the previous widget"),
    ]

    def __init__(self, draft_file: DraftFile, draft_text: str) -> None:
        super().__init__()
        self._draft_file = draft_file
        self._draft_text = draft_text
        self._active: ActiveGeneration | None = None
        self._abandoned_id: int | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self.last_generation: tuple[GenerationRequest, list[TokenEvent], GenerationDone] | None = None
        """The latest finished generation: its request, every token event and the summary
        (what token inspection and branching, issue 6, start from)."""

    @property
    def tui(self) -> "ScriptoriumApp":
        return cast("ScriptoriumApp", self.app)

    def compose(self) -> ComposeResult:
        settings = self.tui.settings
        self.status = StatusBar(id="status")
        self.draft = DraftPane(self._draft_file, self._draft_text, id="draft")
        self.chat = ChatPane(id="chat")
        self.sidebar = Sidebar(settings.top_n, settings.panels, id="sidebar")
        self.sidebar.display = settings.sidebar
        yield self.status
        with Horizontal(id="workspace"):
            with ContentSwitcher(initial=settings.mode, id="modes"):
                yield self.draft
                yield self.chat
            yield self.sidebar
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.status.update_state(mode=self.mode, draft_name=self._draft_file.display_name)
        self.focus_mode()
        self.show_model_state()

    def show_model_state(self) -> None:
        """The model's state in the status bar and in the panels' text before a first
        token, with the key that starts one in this mode."""
        status = self.tui.model_status
        self.status.update_state(model=status)
        start = (f"press {self.tui.key_display('draft.continue')} to continue the draft" if self.mode == "draft"
                 else "press ⏎ to send a message")
        self.sidebar.show_model_state(status.state, start)

    # ---- modes and panels ----------------------------------------------------------
    @property
    def mode(self) -> str:
        return self.query_one(ContentSwitcher).current or "draft"

    def switch_mode(self, mode: str | None = None) -> None:
        switcher = self.query_one(ContentSwitcher)
        switcher.current = mode or ("chat" if self.mode == "draft" else "draft")
        self.status.update_state(mode=self.mode)
        self.show_model_state()
        self.focus_mode()

    def focus_mode(self) -> None:
        if self.mode == "draft":
            self.draft.editor.focus()
        else:
            self.chat.input.focus()

    def action_toggle_panel(self, name: str) -> None:
        self.sidebar.display = True
        panel = self.sidebar.panel(name)
        had_focus = panel.has_focus
        if self.sidebar.toggle(name):
            panel.scroll_visible(animate=False)
        elif had_focus:
            # Keep the focus among the panels, so their keys keep working.
            self.sidebar.focus()

    def action_leave_panels(self) -> None:
        self.focus_mode()

    def draft_state_changed(self) -> None:
        self.status.update_state(draft_name=self.draft.draft_file.display_name, modified=self.draft.modified)

    # ---- generation ----------------------------------------------------------------
    @property
    def is_generating(self) -> bool:
        return self._active is not None

    @property
    def running_request(self) -> GenerationRequest | None:
        return self._active.request if self._active is not None else None

    def generating_for(self, sink: StreamSink) -> bool:
        return self._active is not None and self._active.sink is sink

    async def wait_until_idle(self) -> None:
        """Return once no generation is running (tests and the benchmark use it)."""
        await self._idle.wait()

    def start_generation(self, request: GenerationRequest, sink: StreamSink) -> None:
        engine = self.tui.engine
        assert engine is not None, "start_generation needs a loaded engine"
        self._active = ActiveGeneration(request, sink)
        self._idle.clear()
        self.tui.recording_started(request, sink)
        self.sidebar.generation_started()
        self.status.update_state(activity="prefill…")
        self.tui.refresh_sampler_panel()
        self._generate(engine, request, self.tui.settings.frame_interval)

    @work(thread=True, exclusive=True, group="generation", exit_on_error=False)
    def _generate(self, engine: "Engine", request: GenerationRequest, frame_interval: float) -> None:
        worker = get_current_worker()
        stream_generation(engine, request, self.post_message, lambda: worker.is_cancelled, frame_interval)

    def stop_generation(self) -> None:
        """Ask the worker to stop; GenerationFinished ('cancelled') follows."""
        if self._active is not None:
            self.workers.cancel_group(self, "generation")

    def forget_generation(self) -> None:
        """Detach the running generation from its sink: whatever it still sends is not
        drawn (used when its text was accepted, rejected or re-rolled)."""
        active = self._active
        if active is not None:
            self._abandoned_id = active.request.id
            self._clear_activity()
            self._active = None
            self._idle.set()
            self.tui.refresh_sampler_panel()

    def _current(self, request_id: int) -> ActiveGeneration | None:
        """The generation a worker message belongs to, if it is still to be drawn: not
        once the app is quitting and its panes are going (the draft is saved by then)."""
        active = self._active
        if active is None or active.request.id != request_id or not self.is_attached:
            return None
        return active

    @on(PrefillProgressed)
    def _prefill_progressed(self, message: PrefillProgressed) -> None:
        if self._current(message.request_id):
            self.sidebar.prefill_progress(message.event)
            self.status.update_state(activity=f"prefill {message.event.done:,}/{message.event.total:,}")

    @on(PrefillFinished)
    def _prefill_finished(self, message: PrefillFinished) -> None:
        if self._current(message.request_id):
            self.sidebar.prefill_done(message.event)
            self.status.update_state(activity="writing…")

    @on(ContextWasTrimmed)
    def _context_trimmed(self, message: ContextWasTrimmed) -> None:
        if self._current(message.request_id):
            event = message.event
            self.notify(f"The text is longer than the context: the oldest {event.dropped_tokens:,} tokens were "
                        f"left out ({event.kept_tokens:,} kept).", severity="warning")

    @on(TokensGenerated)
    async def _tokens_generated(self, message: TokensGenerated) -> None:
        """Draw a frame's worth of tokens: the text to the sink, the newest token to the panels."""
        active = self._current(message.request_id)
        if active is None:
            return
        active.tokens.extend(message.events)
        # Sinks that keep each token's numbers (issue 6: inspect, colour) get the events too.
        stream_tokens = getattr(active.sink, "stream_tokens", None)
        if stream_tokens is not None:
            stream_tokens(active.request, message.events)
        await active.sink.stream_text("".join(event.text for event in message.events))
        self.sidebar.token(message.events[-1], message.kv_cache)

    def _clear_activity(self) -> None:
        self.status.update_state(activity="")
        self.sidebar.probabilities.stream_ended()

    @on(GenerationFinished)
    async def _generation_finished(self, message: GenerationFinished) -> None:
        active = self._current(message.request_id)
        if active is None:
            if message.request_id == self._abandoned_id and self._active is None:
                self.sidebar.finished(message.event)
            return
        self._active = None
        self._clear_activity()
        self.sidebar.finished(message.event)
        self.tui.generation_finished(message.event)
        self.last_generation = (active.request, active.tokens, message.event)
        await active.sink.stream_finished(message.event, None)
        self._idle.set()

    @on(GenerationFailed)
    async def _generation_failed(self, message: GenerationFailed) -> None:
        active = self._current(message.request_id)
        if active is None:
            return
        self._active = None
        self._clear_activity()
        self.tui.refresh_sampler_panel()
        self.notify(message.error, title="Generation failed", severity="error", timeout=10)
        await active.sink.stream_finished(None, message.error)
        self._idle.set()
