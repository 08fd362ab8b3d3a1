"""The main screen's generation: one at a time, in a worker thread, its messages drawn here.

Panes post what they want run or stopped (ModePane.GenerationRequested, StopRequested); the
worker's messages (app/tui/generation.py) come back to the screen first, which hands them to
its GenerationRunner: drawn once each, they go on to the pane that asked (its StreamSink)
and to the side panels. The worker posts tokens at most once per frame
(settings.frame_interval): a fast model never costs a redraw per token.

The runner is a part the main screen composes, not a base class of it: what it needs of the
screen is passed in (GeneratingScreen, a Protocol, and two callables)."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Callable, Protocol

from textual.worker import get_current_worker

from scriptorium.app.config.tui_settings import TuiSettings
from scriptorium.app.tui import key_timing
from scriptorium.app.tui.generation_request import GenerationRequest
from scriptorium.app.tui.widgets.mode_pane import ModePane, StreamSink
from scriptorium.app.i18n.marker import N_

if TYPE_CHECKING:
    from textual.message import Message
    from textual.timer import Timer
    from textual.worker import WorkerManager

    from scriptorium.inference.core.backend import Backend
    from scriptorium.inference.core.events import GenerationDone, TokenEvent

    from scriptorium.app.tui.engine_state import EngineState
    from scriptorium.app.tui.generation import (
        ContextWasTrimmed,
        GenerationFailed,
        GenerationFinished,
        GenerationWithdrawn,
        PrefillFinished,
        PrefillProgressed,
        PromptPrepared,
        TokensGenerated,
    )
    from scriptorium.app.tui.widgets.chat_pane import ChatPane
    from scriptorium.app.tui.widgets.draft_pane import DraftPane
    from scriptorium.app.tui.widgets.sidebar import Sidebar
    from scriptorium.app.tui.widgets.status_bar import StatusBar


SILENCE_NOTICE_AFTER = 5.0
"""Seconds without a message from the engine before the status line says so: a llama-server
that stops answering otherwise shows "writing…" until its 120 s read timeout, and the author
cannot tell a stall from a slow token. Five seconds is well past a token or a prefill batch on
a small model, yet short enough that the author learns Esc is the way out."""
WRITING = N_("writing…")
"""The status line's activity once the first token is in (translated where shown)."""
SILENCE_CHECK_EVERY = 1.0
"""Seconds between checks of the engine's silence: the count shown moves once a second."""


@dataclass(slots=True)
class ActiveGeneration:
    request: GenerationRequest
    sink: StreamSink
    tokens: list[TokenEvent] = field(default_factory=list)


class GeneratingScreen(Protocol):
    """What the generation runner needs of the screen it is part of (MainScreen): the model,
    the panes it tells whether a generation runs, the panels it feeds, and the screen's
    own messages, workers and timers."""

    engine_state: EngineState
    draft: DraftPane
    chat: ChatPane
    sidebar: Sidebar
    status: StatusBar

    @property
    def is_attached(self) -> bool: ...

    @property
    def workers(self) -> WorkerManager: ...

    def notify(self, message: str, *, title: str = ..., severity: str = ..., timeout: float | None = ...) -> None: ...

    def post_message(self, message: Message) -> bool: ...

    def set_interval(self, interval: float, callback: Callable[[], None]) -> Timer: ...

    def run_worker(
        self, work: Callable[[], None], *, thread: bool, group: str, exclusive: bool, exit_on_error: bool
    ) -> object: ...

    def call_after_refresh(self, callback: Callable[[], None]) -> bool: ...


class GenerationRunner:
    """Runs the screen's generations, one at a time, and draws what their worker sends."""

    def __init__(
        self,
        screen: GeneratingScreen,
        settings: TuiSettings,
        show_settings: Callable[[], None],
        ask_key: Callable[[], str],
    ) -> None:
        self.screen = screen
        self._settings = settings
        self._show_settings = show_settings
        """The sampler panel shows whether a change waits for the running generation."""
        self._ask_key = ask_key
        """The key that asks the model in the mode showing."""
        self.active: ActiveGeneration | None = None
        self._abandoned_id: int | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self._activity = ""
        self._activity_values: dict[str, object] = {}
        """What the status line says the generation is doing, shown again once a silent engine answers."""
        self._heard_at = 0.0
        """When (time.monotonic) the running generation's worker last sent a message."""
        self._silence_shown = False
        self._silence_timer: Timer | None = None
        self.last_generation: tuple[GenerationRequest, list[TokenEvent], GenerationDone] | None = None
        """The latest finished generation: request, token events, summary (inspection starts there)."""

    @property
    def is_generating(self) -> bool:
        return self.active is not None

    async def wait_until_idle(self) -> None:
        """Return once no generation is running (tests and the benchmark use it)."""
        await self._idle.wait()

    async def requested(self, message: ModePane.GenerationRequested) -> None:
        from scriptorium.app.tui.generation import GenerationStarted, next_frame  # after the first frame

        message.stop()
        backend, request, sink = self.screen.engine_state.backend, message.request, message.sink
        if self.active is not None or backend is None:
            # Two requests crossed (or the model went away) between the key and this moment.
            _ = self._settings.language.gettext
            self.screen.notify(
                _("The model is already writing: press Esc to stop it first.")
                if backend is not None
                else _("No model is loaded."),
                severity="warning",
            )
            await sink.stream_finished(None, None)
            self._show_generating()
            return
        self.active = ActiveGeneration(request, sink)
        self._idle.clear()
        anchor = self.screen.draft.anchor_index() if request.kind == "draft" else None
        self.screen.post_message(
            GenerationStarted(
                request,
                self.screen.draft.text,
                anchor,
                self.screen.chat.conversation() if request.kind == "chat" else [],
            )
        )
        self.screen.sidebar.generation_started()
        self._show_activity(N_("prefill…") if request.prepare is None else N_("fitting the prompt…"))
        self._heard_at = time.monotonic()
        self._silence_timer = self.screen.set_interval(SILENCE_CHECK_EVERY, self._check_silence)
        self._show_generating()
        # The engine starts once the screen has drawn this (the suggestion's box, the keys).
        drawn = next_frame(self.screen)  # type: ignore[arg-type]
        frame_interval = self._settings.frame_interval
        self.screen.run_worker(
            partial(stream_generation_in_worker, backend, request, self.screen.post_message, frame_interval, drawn),
            thread=True,
            group="generation",
            exclusive=True,
            exit_on_error=False,
        )

    async def stop_requested(self, message: ModePane.StopRequested) -> None:
        message.stop()
        active = self.active
        self.stop()
        if message.forget:
            self.forget()
        elif active is not None and active.request.prepare is not None:
            # Still making its prompt (a server slow to count tokens): nothing ran, it ends now.
            await self._ended(active, ran=False)

    def stop(self) -> None:
        """Ask the worker to stop; GenerationFinished ('cancelled') follows."""
        if self.active is not None:
            self.screen.workers.cancel_group(self.screen, "generation")  # type: ignore[arg-type]

    def forget(self) -> None:
        """Detach the running generation: what it still sends is not drawn (accepted, rejected, re-rolled)."""
        active = self.active
        if active is not None:
            self._abandoned_id = active.request.id
            self.active = None
            self._idle.set()
            self._generation_ended()
            self._show_generating()

    def _generation_ended(self, *, failed: bool = False, ran: bool = True) -> None:
        if self._silence_timer is not None:
            self._silence_timer.stop()
            self._silence_timer = None
        self._show_activity("")
        self.screen.sidebar.stream_ended(failed=failed, ran=ran)

    def _show_generating(self) -> None:
        """Tell the panes (attributes down) whether a generation runs, and for whom."""
        sink = self.active.sink if self.active is not None else None
        for pane in (self.screen.draft, self.screen.chat):
            pane.generating = sink is not None
            pane.streaming = sink is pane
        self._show_settings()

    def _show_activity(self, activity: str, **values: object) -> None:
        """`activity`: English, marked, with {names} for `values`; shown in the interface's language."""
        self._activity = activity
        self._activity_values = values
        self._silence_shown = False
        self.screen.status.update_state(activity=self._settings.language.gettext(activity).format(**values))

    def _check_silence(self) -> None:
        """Timer: say so while the engine has sent nothing for a while (a stalled server), and that Esc stops."""
        silent = time.monotonic() - self._heard_at
        if self.active is None or silent < SILENCE_NOTICE_AFTER:
            return
        _, number = self._settings.language.gettext, self._settings.language.number
        backend = self.screen.engine_state.backend
        server = backend is not None and backend.origin
        # Before the first token the silence may be a long prompt being read (a server sends
        # no progress): said as what it may be, not as a stall.
        if self._activity != WRITING:
            said = (
                _("the server has not answered for {seconds} s (reading the prompt?) · Esc stops")
                if server
                else _("the model has not answered for {seconds} s (reading the prompt?) · Esc stops")
            )
        else:
            said = (
                _("the server has not answered for {seconds} s · Esc stops")
                if server
                else _("the model has not answered for {seconds} s · Esc stops")
            )
        self._silence_shown = True
        self.screen.status.update_state(activity=said.format(seconds=number(silent, ".0f")))

    def _current(self, request_id: int) -> ActiveGeneration | None:
        """The generation a worker message belongs to, if still to be drawn: not once the app quits (draft saved)."""
        active = self.active
        if active is None or active.request.id != request_id or not self.screen.is_attached:
            return None
        self._heard_at = time.monotonic()
        if self._silence_shown:  # it answers again: back to what it is doing
            self._show_activity(self._activity, **self._activity_values)
        return active

    def prompt_prepared(self, message: PromptPrepared) -> None:
        active = self._current(message.request_id)
        if active is not None:
            active.request = message.request
            active.sink.prompt_prepared(message.request, message.note)
            self._show_activity(N_("prefill…"))

    def prefill_progressed(self, message: PrefillProgressed) -> None:
        if self._current(message.request_id):
            self.screen.sidebar.prefill_progress(message.event)
            number = self._settings.language.number
            self._show_activity(
                N_("prefill {done}/{total}"),
                done=number(message.event.done, ","),
                total=number(message.event.total, ","),
            )

    def prefill_finished(self, message: PrefillFinished) -> None:
        if self._current(message.request_id):
            assert self.active is not None
            self.screen.sidebar.prefill_done(message.event, self.active.request.window)
            self._show_activity(WRITING)

    def context_trimmed(self, message: ContextWasTrimmed) -> None:
        if self._current(message.request_id):
            event = message.event
            said = self._settings.language.gettext(
                "The text is longer than the context: the oldest {dropped} tokens were left out ({kept} kept)."
            )
            number = self._settings.language.number
            self.screen.notify(
                said.format(dropped=number(event.dropped_tokens, ","), kept=number(event.kept_tokens, ",")),
                severity="warning",
            )

    async def tokens_generated(self, message: TokensGenerated) -> None:
        """Draw a frame's worth of tokens: the text to the sink, the newest token to the panels."""
        active = self._current(message.request_id)
        if active is None:
            return
        first = not active.tokens
        active.tokens.extend(message.events)
        # Sinks keep each token's numbers (issue 6: inspect, colour).
        active.sink.stream_tokens(active.request, message.events)
        await active.sink.stream_text("".join(event.text for event in message.events))
        if first:  # what the author waited for, from the key: the prompt's making and the hand-over too
            self.screen.sidebar.first_token_shown((key_timing.now() - active.request.asked_at) * 1000.0)
        self.screen.sidebar.token(message.events[-1], message.kv_cache)

    async def finished(self, message: GenerationFinished) -> None:
        active = self._current(message.request_id)
        if active is None:
            if message.request_id == self._abandoned_id and self.active is None:
                self.screen.sidebar.finished(message.event)
            return
        await self._ended(active, message.event)

    async def failed(self, message: GenerationFailed) -> None:
        active = self._current(message.request_id)
        if active is None:
            return
        # Nothing to connect to until it runs again; then the same backend answers (or finds it restarted).
        said = self._settings.language.gettext("Nothing to reconnect: once it runs again, {key} tries again.")
        again = "\n" + said.format(key=self._ask_key()) if message.server_gone else ""
        title = self._settings.language.gettext(message.title)
        self.screen.notify(message.error + again, title=title, severity="error", timeout=10)
        await self._ended(active, error=message.error, retry_helps=message.retry_helps, ran=message.engine_started)

    async def withdrawn(self, message: GenerationWithdrawn) -> None:
        if (active := self._current(message.request_id)) is not None:
            await self._ended(active, ran=False)

    async def _ended(
        self,
        active: ActiveGeneration,
        done: GenerationDone | None = None,
        error: str | None = None,
        retry_helps: bool = True,
        ran: bool = True,
    ) -> None:
        """`active` ends: finished (`done`), failed (`error`, `retry_helps`) or stopped first; `ran`: the engine was asked."""
        self.active = None
        self._generation_ended(failed=error is not None, ran=ran)
        if done is not None:
            self.screen.sidebar.finished(done)
            self.last_generation = (active.request, active.tokens, done)
        await active.sink.stream_finished(done, error, retry_helps=retry_helps)
        self._show_generating()
        self._idle.set()


def stream_generation_in_worker(
    backend: Backend,
    request: GenerationRequest,
    post: Callable[[Message], object],
    frame_interval: float,
    drawn: threading.Event,
) -> None:
    """The generation's worker thread: it only posts messages, and stops when cancelled."""
    from scriptorium.app.tui.generation import stream_generation

    worker = get_current_worker()
    stream_generation(backend, request, post, lambda: worker.is_cancelled, frame_interval, drawn)
