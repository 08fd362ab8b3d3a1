"""The screen the author lives in: draft or chat in the middle, panels at the side.

It is given the model and the sampler by the app (bound reactives) and passes them on to the panes and panels.
It owns the generation worker: panes post what they want run or stopped, and the worker's messages come back here
first. The worker posts tokens at most once per frame (settings.frame_interval), and each message is drawn once:
a fast model never costs a redraw per token."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.dom import DOMNode
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import ContentSwitcher
from textual.worker import get_current_worker

from scriptorium.inference.events import GenerationDone, TokenEvent
from scriptorium.inference.settings import LogitBias, SamplerSettings

from scriptorium.app.config.tui_settings import TuiSettings
from scriptorium.app.models.status import ModelStatus
from scriptorium.app.sessions.opening import DraftFile
from scriptorium.app.tui.generation import (
    ContextWasTrimmed, GenerationFailed, GenerationFinished, GenerationRequest, GenerationStarted, GenerationWithdrawn,
    PrefillFinished, PrefillProgressed, PromptPrepared, TokensGenerated, next_frame, stream_generation,
)
from scriptorium.app.tui.keys import KeyDisplay
from scriptorium.app.tui.token_spans import Span
from scriptorium.app.tui.widgets.chat_pane import ChatPane
from scriptorium.app.tui.widgets.draft_pane import DraftPane
from scriptorium.app.tui.widgets.key_footer import KeyFooter
from scriptorium.app.tui.widgets.mode_pane import ModePane, StreamSink
from scriptorium.app.tui.widgets.model_panel import ModelView
from scriptorium.app.tui.widgets.sampler_panel import SamplerView
from scriptorium.app.tui.widgets.sidebar import Sidebar
from scriptorium.app.tui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from scriptorium.inference.backend import Backend


@dataclass(slots=True)
class ActiveGeneration:
    request: GenerationRequest
    sink: StreamSink
    tokens: list[TokenEvent] = field(default_factory=list)


_PANE_STATE = ("backend", "model_status", "sampler", "bias", "lora_scale")
"""What each pane is given, as the app gives it to this screen (with last_seed, for panels)."""


class MainScreen(Screen[None], inherit_bindings=False):
    """Draft and chat modes, the side panels and the footer."""

    BINDINGS = [
        Binding("tab", "app.focus_next", "Next", show=False, id="focus.next",
                tooltip="Move the focus to the next widget (the editor takes Tab for a suggestion)"),
        Binding("shift+tab", "app.focus_previous", "Previous", show=False, id="focus.previous",
                tooltip="Move the focus to the previous widget"),
    ]

    backend: var[Backend | None] = var(None)
    model_status: var[ModelStatus] = var(lambda: ModelStatus("none"))
    sampler: var[SamplerSettings] = var(SamplerSettings)
    bias: var[LogitBias] = var(LogitBias)
    lora_scale: var[float | None] = var(None)
    last_seed: var[int | None] = var(None)
    sampler_view: var[SamplerView | None] = var(None)
    model_view: var[ModelView] = var(lambda: ModelView(ModelStatus("none")))

    def __init__(self, draft_file: DraftFile, draft_text: str, settings: TuiSettings, key_display: KeyDisplay) -> None:
        super().__init__()
        self._draft_file = draft_file
        self._draft_text = draft_text
        self._settings = settings
        self._key_display = key_display
        self._active: ActiveGeneration | None = None
        self._abandoned_id: int | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self.last_generation: tuple[GenerationRequest, list[TokenEvent], GenerationDone] | None = None
        """The latest finished generation: request, token events, summary (inspection starts there)."""

    def compose(self) -> ComposeResult:
        settings, keys = self._settings, self._key_display
        bound = [getattr(MainScreen, name) for name in _PANE_STATE]
        self.status = StatusBar(id="status").data_bind(model=MainScreen.model_status)
        self.draft = DraftPane(self._draft_file, self._draft_text, settings, keys, id="draft").data_bind(*bound)
        self.chat = ChatPane(settings, keys, id="chat").data_bind(*bound)
        self.sidebar = Sidebar(settings.top_n, settings.panels, id="sidebar").data_bind(
            MainScreen.sampler_view, MainScreen.model_view)
        self.sidebar.show(settings.sidebar)
        yield self.status
        with Horizontal(id="workspace"):
            with ContentSwitcher(initial=settings.mode, id="modes"):
                yield self.draft
                yield self.chat
            yield self.sidebar
        yield KeyFooter(keep={"quit", "help", "screen.switch_mode"}, lesser=("screen.focus_sampler", "command_palette"), compact=True)

    def on_mount(self) -> None:
        self.status.update_state(mode=self.mode, draft_name=self._draft_file.display_name)
        self.watch(self.draft, "modified", self.draft_state_changed, init=False)
        for shown in ("sampler", "bias", "lora_scale", "last_seed"):
            self.watch(self, shown, self._show_settings, init=False)
        self._show_settings()
        self._show_model_state()
        self.focus_mode()

    # ---- what the panels show, derived from what the app gives ---------------------------
    def _show_settings(self) -> None:
        backend, running = self.backend, self._active.request if self._active is not None else None
        pending = running is not None and (running.settings, running.bias, running.lora_scale) != (
            replace(self.sampler, stop=running.settings.stop), self.bias, self.lora_scale)
        load_hint = self._key_display("app.load_model")
        self.sampler_view = SamplerView(self.sampler, self.bias, backend.byte_token_ids if backend else None,
                                        self.lora_scale, pending, self.last_seed, load_hint)
        self.model_view = ModelView(self.model_status, self.lora_scale, load_hint)

    def watch_model_status(self) -> None:
        self._show_settings()
        if self.is_mounted:
            self._show_model_state()

    def _show_model_state(self) -> None:
        """What the panels say before a first token, true to the model's state, with the key that starts one."""
        start = (f"press {self._key_display('draft.continue')} to continue the draft" if self.mode == "draft"
                 else "press ⏎ to send a message")
        self.sidebar.show_model_state(self.model_status.state, start)

    def watch_backend(self, backend: Backend | None) -> None:
        self._show_settings()
        if self.is_mounted:
            # None while another loads or after a failure: the last model's cache is gone with it.
            self.sidebar.kv.show_model(backend.kv_usage() if backend is not None else None)

    # ---- modes and panels ----------------------------------------------------------
    @property
    def mode(self) -> str:
        return self.query_one(ContentSwitcher).current or "draft"

    def action_switch_mode(self) -> None:
        self.switch_mode()

    def switch_mode(self, mode: str | None = None) -> None:
        switcher = self.query_one(ContentSwitcher)
        switcher.current = mode or ("chat" if self.mode == "draft" else "draft")
        if self._active is None:  # a generation running keeps its numbers live, whichever mode shows
            self.sidebar.mode_switched()
        self.status.update_state(mode=self.mode)
        self._show_model_state()
        self.focus_mode()

    def focus_mode(self) -> None:
        if self.mode == "draft":
            self.draft.editor.focus()
        else:
            self.chat.input.focus()

    def on_resize(self) -> None:
        if self.sidebar.fit(self.size.width):  # the panels gave way: their keys go to the text
            self.focus_mode()

    def action_toggle_sidebar(self) -> None:
        self.sidebar.show(not self.sidebar.display)
        if not self.sidebar.display:
            self.focus_mode()

    def action_focus_sampler(self) -> None:
        self.sidebar.show(True)
        sampler = self.sidebar.sampler
        sampler.display = True
        # At once, not on the next idle as focus() does: the keys after Ctrl+T are for the sampler.
        self.set_focus(sampler, scroll_visible=False)
        sampler.scroll_visible(animate=False)

    def action_toggle_panel(self, name: str) -> None:
        self.sidebar.show(True)
        panel = self.sidebar.panel(name)
        had_focus = panel.has_focus
        if self.sidebar.toggle(name):
            panel.scroll_visible(animate=False)
        elif had_focus:
            # Keep the focus among the panels, so their keys keep working.
            self.sidebar.focus()

    def action_leave_panels(self) -> None:
        self.focus_mode()

    def command_targets(self) -> dict[str, DOMNode]:
        """Where the palette runs each section's actions (app/tui/keys.py): the hidden mode's would act unseen."""
        shown_pane = {"Draft": self.draft} if self.mode == "draft" else {"Chat": self.chat}
        return {"Focus": self, **shown_pane, "Panels": self.sidebar, "Sampler panel": self.sidebar.sampler}

    # ---- the draft and the chat, for the app's sessions -----------------------------------
    def draft_text(self) -> str:
        return self.draft.text

    def chat_messages(self) -> list[dict[str, str]]:
        return self.chat.kept_messages()

    def chat_unsent(self) -> str:
        """The message typed in the chat box and not sent yet: the author's words too."""
        return self.chat.input.value

    def draft_saved(self, saved: bool = True) -> None:
        self.draft.modified = not saved

    def draft_state_changed(self) -> None:
        self.status.update_state(draft_name=self._draft_file.display_name, modified=self.draft.modified)

    def show_draft(self, text: str, spans: list[Span]) -> None:
        self.draft.show_text(text, spans)
        self.draft_state_changed()
        self.switch_mode("draft")

    async def show_chat(self, messages: list[dict[str, str]], unsent: str = "", endings: list[str] | None = None) -> None:
        await self.chat.restore(messages, unsent, endings)
        self.switch_mode("chat")

    # ---- generation ----------------------------------------------------------------
    @property
    def is_generating(self) -> bool:
        return self._active is not None

    async def wait_until_idle(self) -> None:
        """Return once no generation is running (tests and the benchmark use it)."""
        await self._idle.wait()

    @on(ModePane.GenerationRequested)
    async def _generation_requested(self, message: ModePane.GenerationRequested) -> None:
        message.stop()
        backend, request, sink = self.backend, message.request, message.sink
        if self._active is not None or backend is None:
            # Two requests crossed (or the model went away) between the key and this moment.
            self.notify("The model is already writing: press Esc to stop it first." if backend is not None
                        else "No model is loaded.", severity="warning")
            await sink.stream_finished(None, None)
            self._show_generating()
            return
        self._active = ActiveGeneration(request, sink)
        self._idle.clear()
        anchor = self.draft.anchor_index() if request.kind == "draft" else None
        self.post_message(GenerationStarted(request, self.draft.text, anchor,
                                            self.chat.conversation() if request.kind == "chat" else []))
        self.sidebar.generation_started()
        self.status.update_state(activity="prefill…" if request.prepare is None else "fitting the prompt…")
        self._show_generating()
        # The engine starts once the screen has drawn this (the suggestion's box, the keys).
        self._generate(backend, request, self._settings.frame_interval, next_frame(self))

    @work(thread=True, exclusive=True, group="generation", exit_on_error=False)
    def _generate(self, backend: Backend, request: GenerationRequest, frame_interval: float,
                  drawn: threading.Event) -> None:
        worker = get_current_worker()
        stream_generation(backend, request, self.post_message, lambda: worker.is_cancelled, frame_interval, drawn)

    @on(ModePane.StopRequested)
    async def _stop_requested(self, message: ModePane.StopRequested) -> None:
        message.stop()
        active = self._active
        self.stop_generation()
        if message.forget:
            self.forget_generation()
        elif active is not None and active.request.prepare is not None:
            # Still making its prompt (a server slow to count tokens): nothing ran, it ends now.
            await self._ended(active, ran=False)

    def stop_generation(self) -> None:
        """Ask the worker to stop; GenerationFinished ('cancelled') follows."""
        if self._active is not None:
            self.workers.cancel_group(self, "generation")

    def forget_generation(self) -> None:
        """Detach the running generation: what it still sends is not drawn (accepted, rejected, re-rolled)."""
        active = self._active
        if active is not None:
            self._abandoned_id = active.request.id
            self._active = None
            self._idle.set()
            self._generation_ended()
            self._show_generating()

    def _generation_ended(self, *, failed: bool = False, ran: bool = True) -> None:
        self.status.update_state(activity="")
        self.sidebar.stream_ended(failed=failed, ran=ran)

    def _show_generating(self) -> None:
        """Tell the panes (attributes down) whether a generation runs, and for whom."""
        sink = self._active.sink if self._active is not None else None
        for pane in (self.draft, self.chat):
            pane.generating = sink is not None
            pane.streaming = sink is pane
        self._show_settings()

    def _current(self, request_id: int) -> ActiveGeneration | None:
        """The generation a worker message belongs to, if still to be drawn: not once the app quits (draft saved)."""
        active = self._active
        if active is None or active.request.id != request_id or not self.is_attached:
            return None
        return active

    @on(PromptPrepared)
    def _prompt_prepared(self, message: PromptPrepared) -> None:
        active = self._current(message.request_id)
        if active is not None:
            active.request = message.request
            active.sink.prompt_prepared(message.request, message.note)
            self.status.update_state(activity="prefill…")

    @on(PrefillProgressed)
    def _prefill_progressed(self, message: PrefillProgressed) -> None:
        if self._current(message.request_id):
            self.sidebar.prefill_progress(message.event)
            self.status.update_state(activity=f"prefill {message.event.done:,}/{message.event.total:,}")

    @on(PrefillFinished)
    def _prefill_finished(self, message: PrefillFinished) -> None:
        if self._current(message.request_id):
            self.sidebar.prefill_done(message.event)
            assert self._active is not None
            self.sidebar.kv.show_window(self._active.request.window)
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
        # Sinks keep each token's numbers (issue 6: inspect, colour).
        active.sink.stream_tokens(active.request, message.events)
        await active.sink.stream_text("".join(event.text for event in message.events))
        self.sidebar.token(message.events[-1], message.kv_cache)

    @on(GenerationFinished)
    async def _generation_finished(self, message: GenerationFinished) -> None:
        active = self._current(message.request_id)
        if active is None:
            if message.request_id == self._abandoned_id and self._active is None:
                self.sidebar.finished(message.event)
            return
        await self._ended(active, message.event)

    @on(GenerationFailed)
    @on(GenerationWithdrawn)
    async def _generation_cut_short(self, message: GenerationFailed | GenerationWithdrawn) -> None:
        active = self._current(message.request_id)
        if active is None:
            return
        if isinstance(message, GenerationFailed):
            self.notify(message.error, title=message.title, severity="error", timeout=10)
            await self._ended(active, error=message.error, retry_helps=message.retry_helps, ran=message.engine_started)
        else:
            await self._ended(active, ran=False)

    async def _ended(self, active: ActiveGeneration, done: GenerationDone | None = None,
                     error: str | None = None, retry_helps: bool = True, ran: bool = True) -> None:
        """`active` ends: finished (`done`), failed (`error`, `retry_helps`) or stopped first; `ran`: the engine was asked."""
        self._active = None
        self._generation_ended(failed=error is not None, ran=ran)
        if done is not None:
            self.sidebar.finished(done)
            self.last_generation = (active.request, active.tokens, done)
        await active.sink.stream_finished(done, error, retry_helps=retry_helps)
        self._show_generating()
        self._idle.set()

    # ---- what the panes ask to show ---------------------------------------------------
    @on(ModePane.TokenShown)
    def _token_shown(self, message: ModePane.TokenShown) -> None:
        self.sidebar.probabilities.show_token(message.event, message.note)

    @on(ModePane.ActivityShown)
    def _activity_shown(self, message: ModePane.ActivityShown) -> None:
        self.status.update_state(activity=message.text)

    @on(ModePane.CacheShown)
    def _cache_shown(self, message: ModePane.CacheShown) -> None:
        kv = self.sidebar.kv
        kv.forget_request()  # a generation's reuse and window are not what the cache holds now
        kv.show_window(message.window)
        kv.show_usage(message.usage)
