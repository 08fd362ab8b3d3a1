"""Draft mode, issue 6: ask for several candidates of the current point and take one.
A part of the draft pane (draft_pane.py), which keeps the key and hands it to it.

The point is the one continue would use: the end of the suggestion when one is waiting,
else the end of the draft.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Protocol

from textual.binding import Binding

from scriptorium.inference.window.window_layout import note_break

from scriptorium.app.tui.candidates import candidate_sampler, put_on_ghost
from scriptorium.app.tui.generation_request import GenerationRequest, prepared_once
from scriptorium.app.tui.widgets import draft_messages
from scriptorium.app.tui.widgets.draft_anchors import asked_text, end_anchor, prompt_anchor
from scriptorium.app.tui.widgets.mode_pane import ModePane
from scriptorium.app.i18n.marker import N_

if TYPE_CHECKING:
    from textual.app import App
    from textual.message import Message
    from textual.widgets.text_area import Location

    from scriptorium.inference.core.backend import Backend
    from scriptorium.inference.window.window import Pinned

    from scriptorium.app.config.tui_settings import TuiSettings
    from scriptorium.app.i18n.language import Language
    from scriptorium.app.tui.generation import GenerationStarted
    from scriptorium.app.tui.generation_request import Prepared
    from scriptorium.app.tui.screens.candidates_screen import CandidatesChoice
    from scriptorium.app.tui.widgets.draft_editor import DraftEditor
    from scriptorium.app.tui.widgets.draft_inspect import Inspection

BINDINGS = [
    Binding(
        "ctrl+n",
        "candidates",
        N_("Candidates"),
        show=False,
        id="draft.candidates",
        tooltip=N_(
            "Write several continuations of this point side by side, each with its own seed, "
            "and choose one (the others stay as versions)"
        ),
    ),
]


class CandidatesPane(Protocol):
    """What choosing among candidates needs of the draft pane it is part of."""

    editor: DraftEditor
    settings: TuiSettings
    language: Language
    pinned: Pinned

    @property
    def app(self) -> App[object]: ...

    def notify(self, message: str, *, timeout: float | None = ...) -> None: ...

    def post_message(self, message: Message) -> bool: ...

    def refresh_bindings(self) -> None: ...

    def ready_to_continue(self) -> tuple[Backend, str] | None: ...

    def heals(self, backend: Backend) -> bool: ...

    def new_request(self, kind: str, prompt: Callable[[], Prepared]) -> GenerationRequest: ...

    def window_preparer(self, backend: Backend, text: str, template: str | None) -> Callable[[], Prepared]: ...

    def redraw_suggestion(self) -> None: ...


def not_taken(started: list[int], choice: CandidatesChoice | None) -> tuple[int, ...]:
    """The candidates' generations that are rejected by the choice: all of them when the
    author chose none, else those that wrote nothing usable (the usable ones stay as
    versions, decided with the one the author keeps)."""
    kept = {c.request.id for c in choice.candidates if c.usable} if choice is not None else set()
    return tuple(request_id for request_id in started if request_id not in kept)


class Candidates:
    """Several continuations of the same point, side by side (CandidatesScreen); the one
    chosen becomes the suggestion, the others its versions."""

    def __init__(self, pane: CandidatesPane, inspection: Inspection) -> None:
        self.pane = pane
        self.inspection = inspection

    def open(self) -> None:
        pane = self.pane
        ready = pane.ready_to_continue()
        if ready is None:
            return
        backend, template = ready
        editor = pane.editor
        ghost = editor.ghost
        anchor, spaces = (
            (ghost.anchor, 0)
            if ghost is not None
            else prompt_anchor(editor.document, end_anchor(editor.document), pane.heals(backend))
        )
        written = ghost.text if ghost is not None else ""
        # One prompt for every candidate, fitted to the window by the first one's worker.
        asked = asked_text(editor.document, anchor, spaces, written)
        base = pane.new_request("draft", prepared_once(pane.window_preparer(backend, asked, template)))
        settings, note = candidate_sampler(base.settings, pane.language)
        if note is not None:
            pane.notify(note, timeout=8)
        started: list[int] = []

        def record(request: GenerationRequest) -> GenerationStarted:
            started.append(request.id)
            return self._record_candidate(request, anchor)

        from scriptorium.app.tui.screens.candidates_screen import CandidatesScreen  # opened on demand

        screen = CandidatesScreen(
            backend, base, settings, pane.settings.candidates, pane.settings.frame_interval, record, pane.language
        )
        pane.app.push_screen(screen, lambda choice: self._chosen(choice, anchor, spaces, started))

    def _record_candidate(self, request: GenerationRequest, anchor: Location) -> GenerationStarted:
        # Like any generation, each candidate is kept in the session with its settings and seed.
        from scriptorium.app.tui.generation import GenerationStarted  # loaded after the first frame

        editor = self.pane.editor
        return GenerationStarted(request, editor.text, len(editor.text_before(anchor)), [])

    def _chosen(self, choice: CandidatesChoice | None, anchor: Location, spaces: int, started: list[int]) -> None:
        pane = self.pane
        editor = pane.editor
        rejected = not_taken(started, choice)
        if rejected:
            pane.post_message(draft_messages.SuggestionRejected("", rejected))
        if choice is None:
            return
        # The dialog kept every key from the draft, so the suggestion (if any) is as it was.
        ghost = editor.ghost or editor.begin_ghost(anchor, from_cursor=False, spaces_left_out=spaces)
        self.inspection.inspected = None
        lead = note_break(editor.text_before(anchor) + ghost.text, pane.pinned.note, pane.pinned.note_depth)
        put_on_ghost(ghost, choice.candidates, choice.chosen, lead)
        pane.post_message(ModePane.SeedChosen(choice.candidates[choice.chosen].seed))
        pane.redraw_suggestion()
        pane.refresh_bindings()
