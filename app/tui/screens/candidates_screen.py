"""Several continuations of one point, streamed side by side (stacked on a small
terminal); the author moves between them and takes one. Returns the candidates and the
index chosen, or None (Esc: nothing changes).

The candidates run one after another in a thread worker: one llama.cpp context, and the
engine's prefix reuse makes each after the first cost only its own decode. The worker
only posts messages; tokens arrive at most once per frame (generation.py) and each
message redraws one candidate.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static
from textual.worker import get_current_worker

from scriptorium.app.tui.candidates import MAX_CANDIDATES, Candidate, new_candidate
from scriptorium.app.tui.generation import (
    GenerationFailed,
    GenerationFinished,
    GenerationStarted,
    TokensGenerated,
    next_frame,
    stream_generation,
)
from scriptorium.app.tui.generation_request import GenerationRequest
from scriptorium.app.i18n.marker import N_
from scriptorium.app.i18n.language import ENGLISH, Language

if TYPE_CHECKING:
    from scriptorium.inference.core.backend import Backend
    from scriptorium.inference.core.settings import SamplerSettings

    from scriptorium.app.tui.engine_state import EngineState


@dataclass(frozen=True, slots=True)
class CandidatesChoice:
    candidates: list[Candidate]
    chosen: int


class CandidateView(VerticalScroll, can_focus=False):
    """One candidate: its text, its seed and mean probability in the border."""

    def __init__(self, candidate: Candidate, number: int, language: Language = ENGLISH) -> None:
        super().__init__(classes="candidate")
        self._language = language
        self.candidate = candidate
        self.number = number
        self._body = Static(id=f"candidate-text-{number}", classes="candidate-text")

    def compose(self) -> ComposeResult:
        yield self._body

    def on_mount(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        candidate = self.candidate
        # Follow the text as it grows, unless the author scrolled back to read it.
        following = self.scroll_y >= self.max_scroll_y - 1
        self._body.update(Text(candidate.text) if candidate.text else Text("…", style="dim"))
        self.border_title = self._language.gettext("{number} · seed {seed}").format(
            number=self.number, seed=candidate.seed
        )
        self.border_subtitle = candidate.status(self._language)
        self.set_class(candidate.error is not None, "-failed")
        if following and candidate.started and not candidate.finished:
            self.call_after_refresh(self.scroll_end, animate=False)


class CandidatesScreen(ModalScreen[CandidatesChoice | None]):
    """The candidates, generated one after another, the highlighted one outlined."""

    BINDINGS = [
        Binding(
            "escape",
            "cancel",
            N_("Cancel"),
            id="candidates.cancel",
            tooltip=N_("Stop generating and close; the draft stays as it is"),
        ),
        Binding(
            "enter",
            "choose",
            N_("Choose"),
            id="candidates.choose",
            tooltip=N_("Make the highlighted candidate the suggestion; the others stay as its versions"),
        ),
        Binding("right,down", "move(1)", N_("Next"), id="candidates.next", tooltip=N_("Highlight the next candidate")),
        Binding(
            "left,up",
            "move(-1)",
            N_("Previous"),
            id="candidates.previous",
            tooltip=N_("Highlight the previous candidate"),
        ),
        Binding(
            "plus,equals_sign",
            "more",
            N_("One more"),
            id="candidates.more",
            tooltip=N_("Add a candidate with another seed"),
        ),
        Binding("minus", "fewer", N_("One fewer"), id="candidates.fewer", tooltip=N_("Drop the last candidate")),
    ]

    def __init__(
        self,
        backend: "Backend",
        base: GenerationRequest,
        settings: "SamplerSettings",
        count: int,
        frame_interval: float,
        started: Callable[[GenerationRequest], GenerationStarted] | None = None,
        language: Language = ENGLISH,
    ) -> None:
        """`base` is the request continue would make; each candidate copies it with
        `settings` and its own seed. `started` gives the message that records each
        generation in the session as it starts."""
        super().__init__()
        self._language = language
        self.backend = backend
        self.base = base
        self.settings = settings
        self.frame_interval = frame_interval
        self._started = started
        self.candidates: list[Candidate] = []
        for _ in range(max(1, min(count, MAX_CANDIDATES))):
            self._add_candidate()
        self.selected = 0
        self._writing: Candidate | None = None
        self._lost: Backend | None = None
        """The backend whose engine died under a candidate: the rest wait for the app's reload."""

    def _add_candidate(self) -> Candidate:
        candidate = new_candidate(self.base, self.settings, [c.seed for c in self.candidates])
        self.candidates.append(candidate)
        return candidate

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="candidates-dialog"):
            yield Label(self._title(), classes="dialog-title", id="candidates-title")
            with Container(id="candidates-row"):
                for number, candidate in enumerate(self.candidates, 1):
                    yield CandidateView(candidate, number, self._language)
            yield Label(self._hints(), id="candidates-hints")

    def on_mount(self) -> None:
        self._highlight()
        self.watch(self.app, "engine_state", self._engine_changed, init=False)
        self._run_next()

    def _engine_changed(self, old: EngineState, state: EngineState) -> None:
        # The app reloaded the model after its engine died: the candidates left run on it.
        if state.backend is not old.backend and state.backend is not None:
            self.backend = state.backend
            self._run_next()

    # ---- drawing ------------------------------------------------------------------------
    def _title(self) -> str:
        s, number = self.settings, self._language.number
        said = self._language.gettext("{count} candidates from the same point")
        return (
            f"{said.format(count=len(self.candidates))} · T {number(s.temperature, 'g')} · top-k {s.top_k} "
            f"· top-p {number(s.top_p, 'g')}"
        )

    def _hints(self) -> str:
        keymap: dict[str, str] = getattr(self.app, "keymap", {})

        def keys(binding: Binding) -> str:
            # The first key only: the line has to fit an 80-column terminal.
            first = keymap.get(binding.id or "", binding.key).split(",")[0].strip()
            return self.app.get_key_display(Binding(first, ""))

        _ = self._language.gettext
        return " · ".join(f"{keys(b)} {_(b.description).lower()}" for b in self.BINDINGS if isinstance(b, Binding))

    def _views(self) -> list[CandidateView]:
        return list(self.query(CandidateView))

    def _view_of(self, candidate: Candidate) -> CandidateView | None:
        return next((view for view in self._views() if view.candidate is candidate), None)

    def _highlight(self) -> None:
        for index, view in enumerate(self._views()):
            view.set_class(index == self.selected, "-selected")
            if index == self.selected:
                view.scroll_visible(animate=False)

    # ---- generating, one candidate after another -------------------------------------------
    def _run_next(self) -> None:
        if self._writing is not None or self.backend is self._lost:
            return
        waiting = next((c for c in self.candidates if not c.started), None)
        if waiting is None:
            return
        waiting.started = True
        self._writing = waiting
        # The model the app holds now: after an engine crash or a server's restart it was
        # loaded again, and the one this dialog opened with is closed.
        engine_state: EngineState | None = getattr(self.app, "engine_state", None)
        self.backend = (engine_state.backend if engine_state is not None else None) or self.backend
        if self._started is not None:
            # Posted here, as the worker's messages are, so the session has the generation
            # before anything the worker says of it.
            self.post_message(self._started(waiting.request))
        view = self._view_of(waiting)
        if view is not None:
            view.redraw()
        self._generate(self.backend, waiting.request, next_frame(self))  # the engine starts once this is drawn

    @work(thread=True, exclusive=True, group="candidates", exit_on_error=False)
    def _generate(self, backend: Backend, request: GenerationRequest, drawn: threading.Event) -> None:
        worker = get_current_worker()
        stream_generation(backend, request, self.post_message, lambda: worker.is_cancelled, self.frame_interval, drawn)

    def _candidate(self, request_id: int) -> Candidate | None:
        return next((c for c in self.candidates if c.request.id == request_id), None)

    @on(TokensGenerated)
    def _tokens(self, message: TokensGenerated) -> None:
        candidate = self._candidate(message.request_id)
        if candidate is not None:
            candidate.add(message.events)
            view = self._view_of(candidate)
            if view is not None:
                view.redraw()

    @on(GenerationFinished)
    def _finished(self, message: GenerationFinished) -> None:
        candidate = self._candidate(message.request_id)
        if candidate is not None:
            candidate.finish(message.event)
        self._ended(candidate)

    @on(GenerationFailed)
    def _failed(self, message: GenerationFailed) -> None:
        candidate = self._candidate(message.request_id)
        if message.engine_lost:
            # Not the next candidate on a dead engine (each would fail at once, saying so again).
            self._lost = self.backend
        if candidate is not None:
            candidate.error = message.error
            title = self._language.gettext("Candidate failed") if message.engine_started else message.title
            self.notify(message.error, title=title, severity="error", timeout=10)
            if not message.engine_started:
                # The prompt they all share could not be made: none of them can run.
                for waiting in (c for c in self.candidates if not c.started):
                    waiting.started, waiting.error = True, message.error
                    view = self._view_of(waiting)
                    if view is not None:
                        view.redraw()
        self._ended(candidate)

    def _ended(self, candidate: Candidate | None) -> None:
        if candidate is not None:
            view = self._view_of(candidate)
            if view is not None:
                view.redraw()
        if candidate is not None and candidate is self._writing:
            self._writing = None
            self._run_next()

    # ---- keys ------------------------------------------------------------------------------
    def action_move(self, step: int) -> None:
        self.selected = (self.selected + step) % len(self.candidates)
        self._highlight()

    async def action_more(self) -> None:
        if len(self.candidates) >= MAX_CANDIDATES:
            said = self._language.gettext("At most {count} candidates at a time.")
            self.notify(said.format(count=MAX_CANDIDATES), severity="warning")
            return
        candidate = self._add_candidate()
        await self.query_one("#candidates-row").mount(CandidateView(candidate, len(self.candidates), self._language))
        self.query_one("#candidates-title", Label).update(self._title())
        self._run_next()

    async def action_fewer(self) -> None:
        if len(self.candidates) <= 1:
            self.notify(self._language.gettext("One candidate is the least there can be."), severity="warning")
            return
        candidate = self.candidates.pop()
        if candidate is self._writing:
            # Its end still arrives, for a candidate no longer listed: nothing to draw.
            self.workers.cancel_group(self, "candidates")
            self._writing = None
        view = self._view_of(candidate)
        if view is not None:
            await view.remove()
        self.selected = min(self.selected, len(self.candidates) - 1)
        self.query_one("#candidates-title", Label).update(self._title())
        self._highlight()
        self._run_next()

    def action_choose(self) -> None:
        candidate = self.candidates[self.selected]
        if not candidate.usable:
            _ = self._language.gettext
            if candidate.error is not None:
                said = _("Candidate {number} failed: choose another, or press Esc.")
            elif candidate.finished:
                said = _("Candidate {number} wrote nothing: choose another, or press Esc.")
            else:
                said = _("Candidate {number} is still being written: choose another, or press Esc.")
            self.notify(said.format(number=self.selected + 1), severity="warning")
            return
        # The ones still waiting or writing are not wanted any more.
        self.workers.cancel_group(self, "candidates")
        self.dismiss(CandidatesChoice(list(self.candidates), self.selected))

    def action_cancel(self) -> None:
        self.workers.cancel_group(self, "candidates")
        self.dismiss(None)
