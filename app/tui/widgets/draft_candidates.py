"""Draft mode, issue 6: ask for several candidates of the current point and take one.
A layer of the draft pane, so its key is a draft key (help, palette and keymap find it there).

The point is the one continue would use: the end of the suggestion when one is waiting,
else the end of the draft.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.binding import Binding

from scriptorium import prompts
from scriptorium.inference.window.window_layout import note_break

from scriptorium.app.tui.candidates import candidate_sampler, put_on_ghost
from scriptorium.app.tui.generation import GenerationRequest, GenerationStarted, prepared_once
from scriptorium.app.tui.widgets.draft_anchors import asked_text, end_anchor, prompt_anchor
from scriptorium.app.tui.widgets.draft_inspect import DraftInspection
from scriptorium.app.i18n.marker import N_

if TYPE_CHECKING:
    from textual.widgets.text_area import Location

    from scriptorium.inference.core.backend import Backend

    from scriptorium.app.tui.screens.candidates_screen import CandidatesChoice

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


class DraftCandidates(DraftInspection):
    """The candidates key: the draft pane's layer for choosing among several continuations."""

    def ready_to_continue(self) -> tuple[Backend, str] | None:
        """The backend and the continue template, scoring stopped; None after telling the
        author why the model cannot write now."""
        if self.generating:
            self.notify("The model is already writing: press Esc to stop it first.", severity="warning")
            return None
        backend = self.ready_backend()
        template = self.prompt_template(prompts.CONTINUE) if backend is not None else None
        if backend is None or template is None:
            return None
        self.stop_scoring(N_("the model is writing"))
        return backend, template

    def action_candidates(self) -> None:
        ready = self.ready_to_continue()
        if ready is None:
            return
        backend, template = ready
        editor = self.editor
        ghost = editor.ghost
        anchor, spaces = (
            (ghost.anchor, 0)
            if ghost is not None
            else prompt_anchor(editor.document, end_anchor(editor.document), self.heals(backend))
        )
        written = ghost.text if ghost is not None else ""
        # One prompt for every candidate, fitted to the window by the first one's worker.
        asked = asked_text(editor.document, anchor, spaces, written)
        base = self.new_request("draft", prepared_once(self.window_preparer(backend, asked, template)))
        settings, note = candidate_sampler(base.settings)
        if note is not None:
            self.notify(note, timeout=8)
        started: list[int] = []

        def record(request: GenerationRequest) -> GenerationStarted:
            started.append(request.id)
            return self._record_candidate(request, anchor)

        from scriptorium.app.tui.screens.candidates_screen import CandidatesScreen  # opened on demand

        screen = CandidatesScreen(
            backend, base, settings, self.settings.candidates, self.settings.frame_interval, record, self.language
        )
        self.app.push_screen(screen, lambda choice: self._candidate_chosen(choice, anchor, spaces, started))

    def _record_candidate(self, request: GenerationRequest, anchor: "Location") -> GenerationStarted:
        # Like any generation, each candidate is kept in the session with its settings and seed.
        editor = self.editor
        return GenerationStarted(request, editor.text, len(editor.text_before(anchor)), [])

    def _candidate_chosen(
        self, choice: CandidatesChoice | None, anchor: "Location", spaces: int, started: list[int]
    ) -> None:
        editor = self.editor
        # The usable candidates stay as versions, decided with the one the author keeps.
        kept = {c.request.id for c in choice.candidates if c.usable} if choice is not None else set()
        not_taken = tuple(rid for rid in started if rid not in kept)
        if not_taken:
            self.post_message(self.SuggestionRejected("", not_taken))
        if choice is None:
            return
        # The dialog kept every key from the draft, so the suggestion (if any) is as it was.
        ghost = editor.ghost or editor.begin_ghost(anchor, from_cursor=False, spaces_left_out=spaces)
        self.inspected = None
        lead = note_break(editor.text_before(anchor) + ghost.text, self.pinned.note, self.pinned.note_depth)
        put_on_ghost(ghost, choice.candidates, choice.chosen, lead)
        self.post_message(self.SeedChosen(choice.candidates[choice.chosen].seed))
        self.redraw_suggestion()
        self.refresh_bindings()
