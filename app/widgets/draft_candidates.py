"""Draft mode, issue 6: ask for several candidates of the current point and take one.
A mixin of DraftPane, so its key is a draft key (help, palette and keymap find it there).

The point is the one continue would use: the end of the suggestion when one is waiting,
else the end of the draft.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.binding import Binding

from scriptorium import prompts

from ..candidates import candidate_sampler, put_on_ghost
from ..generation import GenerationRequest

if TYPE_CHECKING:
    from textual.widgets.text_area import Location

    from ..screens.candidates_screen import CandidatesChoice
    from .draft_pane import DraftPane

BINDINGS = [
    Binding("ctrl+n", "candidates", "Candidates", show=False, id="draft.candidates",
            tooltip="Write several continuations of this point side by side, each with its own seed, "
                    "and choose one (the others stay as versions)"),
]


class DraftCandidates:
    """The candidates key; mixed into DraftPane."""

    @property
    def _draft(self) -> "DraftPane":
        return self  # type: ignore[return-value]

    def action_candidates(self) -> None:
        pane = self._draft
        if pane.main.is_generating:
            pane.notify("The model is already writing: press Esc to stop it first.", severity="warning")
            return
        engine = pane.tui.require_engine()
        template = pane.prompt_template(prompts.CONTINUE) if engine is not None else None
        if engine is None or template is None:
            return
        from ..screens.candidates_screen import CandidatesScreen
        from .draft_pane import end_anchor

        pane.stop_scoring("the model is writing")
        editor = pane.editor
        ghost = editor.ghost
        anchor = ghost.anchor if ghost is not None else end_anchor(editor.document)
        prefix = editor.text_before(anchor) + (ghost.text if ghost is not None else "")
        base = pane.tui.new_request("draft", prompts.render_continue(prefix, template))
        settings, note = candidate_sampler(base.settings)
        if note is not None:
            pane.notify(note, timeout=8)
        started: list[int] = []

        def record(request: GenerationRequest) -> None:
            started.append(request.id)
            self._record_candidate(request, anchor)

        screen = CandidatesScreen(engine, base, settings, pane.tui.settings.candidates,
                                  pane.tui.settings.frame_interval, record)
        pane.app.push_screen(screen, lambda choice: self._candidate_chosen(choice, anchor, started))

    def _record_candidate(self, request: GenerationRequest, anchor: "Location") -> None:
        # Like any generation, each candidate is kept in the session with its settings and seed.
        pane = self._draft
        tui = pane.tui
        if tui.engine is not None:
            editor = pane.editor
            tui.sessions.generation_started(request, tui.engine, editor.text, len(editor.text_before(anchor)),
                                            pane.main.chat.messages)

    def _candidate_chosen(self, choice: "CandidatesChoice | None", anchor: "Location", started: list[int]) -> None:
        pane = self._draft
        editor = pane.editor
        chosen_id = choice.candidates[choice.chosen].request.id if choice is not None else None
        not_taken = tuple(rid for rid in started if rid != chosen_id)
        if not_taken:
            pane.post_message(pane.SuggestionRejected("", not_taken))
        if choice is None:
            return
        # The dialog kept every key from the draft, so the suggestion (if any) is as it was.
        ghost = editor.ghost or editor.begin_ghost(anchor, from_cursor=False)
        pane.inspected = None
        put_on_ghost(ghost, choice.candidates, choice.chosen)
        seed = choice.candidates[choice.chosen].seed
        pane.tui.last_seed = seed
        pane.redraw_suggestion()
        pane.refresh_bindings()
