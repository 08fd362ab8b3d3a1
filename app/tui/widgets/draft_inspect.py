"""Draft mode, issue 6: inspect tokens, colour them, branch, move between versions, and
score the author's own text. The layer of the draft pane below DraftPane itself (which
adds continuing, accepting and the file), so its keys are the draft's keys (help, palette
and keymap find them there).

Two cursors inspect: the editor's own cursor over accepted or scored text (always on),
and a token cursor in the suggestion (F4, then ←/→).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from textual.binding import Binding
from textual.widgets import TextArea
from textual.worker import get_current_worker

from scriptorium import prompts
from scriptorium.inference.core.events import TokenEvent

from scriptorium.app.sessions.draft_files import end_of_writing
from scriptorium.app.tui.branches import Version, branch_at, branch_label, move_version, start_version
from scriptorium.app.tui.compared_colours import DraftComparison, figure_at, highlights
from scriptorium.app.tui.scoring import (
    ScoresArrived,
    ScoringFailed,
    ScoringFinished,
    ScoringProgressed,
    ScoringWindowMade,
    new_score_id,
    scored_note,
    stream_scoring,
)
from scriptorium.app.tui.token_spans import (
    Span,
    TokenRecord,
    TokenSource,
    add_records,
    branch_choice,
    character_record,
    covering,
    record_from_score,
    scored_end,
)
from scriptorium.app.tui.widgets import draft_messages
from scriptorium.app.tui.widgets.draft_editor import DraftEditor
from scriptorium.app.tui.widgets.mode_pane import ModePane
from scriptorium.app.tui.widgets.suggestion_view import SuggestionView
from scriptorium.app.tui.widgets.token_text import TokenLegend
from scriptorium.app.tui.widgets.showing import set_shown
from scriptorium.app.i18n.marker import N_

if TYPE_CHECKING:
    from scriptorium.inference.core.load_options import LoadOptions
    from scriptorium.inference.window.window import Window

    from scriptorium.app.tui.generation import GenerationRequest

SCORED = TokenSource("scored")

# Checked before the draft's own Esc (stop, reject): leaving inspection or scoring comes first.
LEADING_BINDINGS = [
    Binding("escape", "leave_inspect", N_("Done"), id="draft.inspect_leave", tooltip=N_("Leave token inspection")),
    Binding(
        "escape",
        "cancel_score",
        N_("Stop scoring"),
        id="draft.score_cancel",
        tooltip=N_("Stop scoring the draft; what was scored stays coloured"),
    ),
]
BINDINGS = [
    Binding(
        "f4",
        "inspect",
        N_("Inspect"),
        id="draft.inspect",
        tooltip=N_("Step through the suggestion's tokens (←/→) and see what else the model considered"),
    ),
    Binding(
        "left",
        "inspect_move(-1)",
        N_("Previous token"),
        priority=True,
        show=False,
        id="draft.inspect_previous",
        tooltip=N_("While inspecting: the token before"),
    ),
    Binding(
        "right",
        "inspect_move(1)",
        N_("Next token"),
        priority=True,
        show=False,
        id="draft.inspect_next",
        tooltip=N_("While inspecting: the token after"),
    ),
    Binding(
        "ctrl+b",
        "branch",
        N_("Branch"),
        show=False,
        id="draft.branch",
        tooltip=N_(
            "At the inspected token (or the generated or scored token at the cursor): take another "
            "alternative, or your own word, and write on from there (in your own scored text, the rest "
            "of the line); the old text stays in the draft until you accept the branch, and as a version"
        ),
    ),
    Binding(
        # Esc b: what a stock Mac Terminal sends for Option+← (Option is not Meta there, see the README).
        "alt+left,alt+b",
        "version(-1)",
        N_("Older version"),
        show=False,
        id="draft.version_previous",
        tooltip=N_(
            "Show the suggestion's previous version (re-rolls and branches are kept); with none shown, "
            "bring back the one last thrown away"
        ),
    ),
    Binding(
        "alt+right,alt+f",  # Esc f: Option+→ in a stock Mac Terminal
        "version(1)",
        N_("Newer version"),
        show=False,
        id="draft.version_next",
        tooltip=N_("Show the suggestion's next version"),
    ),
    Binding(
        "f8",
        "toggle_colours",
        N_("Colours"),
        show=False,
        id="draft.colours",
        tooltip=N_("Colour generated and scored text by how probable the model found each token"),
    ),
    Binding(
        "f9",
        "score_draft",
        N_("Score"),
        show=False,
        id="draft.score",
        tooltip=N_("Score your own draft: how probable the model finds each of your tokens (Esc stops)"),
    ),
]


class DraftInspection(ModePane):
    """Inspecting, branching and scoring: the draft pane's layer for what the model thought."""

    SuggestionAccepted = draft_messages.SuggestionAccepted
    SuggestionRejected = draft_messages.SuggestionRejected

    editor: DraftEditor
    suggestion: SuggestionView
    inspected: int | None = None
    """Index into the suggestion's tokens under the token cursor, or None."""
    colouring: bool = False
    _score_id: int | None = None
    _score_text: str = ""
    _score_pending: TokenRecord | None = None
    _score_window: "Window | None" = None
    """What the model saw when scoring (memory, the draft window, the note): scores' offsets
    into its prompt are moved into the draft by it, and those outside the draft dropped."""
    _scored_tokens: int = 0
    _scored_by: "LoadOptions | None" = None
    """The model, as loaded, whose scores colour the draft."""
    _compared: DraftComparison | None = None
    """The draft coloured compared with a second model (the compare screen's choice), until
    the text changes or F9 scores it again."""

    # What DraftPane, the layer above, does for this one.
    def write_on(self) -> None:
        """Continue the suggestion as it stands (after a branch put new text at its end)."""
        raise NotImplementedError

    def redraw_suggestion(self) -> None:
        raise NotImplementedError

    def reject(self, *, say: bool = True) -> None:
        raise NotImplementedError

    @property
    def scoring(self) -> bool:
        return self._score_id is not None

    def check_inspect_action(self, action: str) -> bool | None:
        """Whether one of these actions is enabled; None for the pane's other actions."""
        ghost = self.editor.ghost
        if action in ("inspect_move", "leave_inspect"):
            return self.inspected is not None and ghost is not None
        if action == "cancel_score":
            return self.scoring
        if action == "version":  # with no suggestion: bring back the one thrown away (DraftPane)
            return ghost is None or len(ghost.versions) > 1
        return None

    # ---- tokens arriving ---------------------------------------------------------------
    def stream_tokens(self, request: GenerationRequest, events: tuple[TokenEvent, ...]) -> None:
        ghost = self.editor.ghost
        if ghost is None:
            return
        sources = self.__dict__.setdefault("_sources", {})
        source = sources.get(request.id)
        if source is None:
            source = sources[request.id] = TokenSource.generated(request.settings, request.window)
        add_records(ghost.tokens, events, len(ghost.text), source)

    def generation_seed(self, seed: int | None) -> None:
        """The seed a generation drew is known at its end; its tokens' source learns it
        (one generation at a time writes into the draft)."""
        sources = self.__dict__.get("_sources", {})
        for source in sources.values():
            source.seed = seed
        sources.clear()

    # ---- inspecting --------------------------------------------------------------------
    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        if self._compared is not None:
            offset = self.editor.document.get_index_from_location(self.editor.cursor_location)
            self.post_message(self.ActivityShown(figure_at(self._compared, offset)))
            return
        if self.inspected is not None or self.generating:
            return
        found = self.editor.token_at_cursor()
        if found is not None:
            span, index = found
            self.show_record(span.tokens[index])

    def action_inspect(self) -> None:
        ghost = self.editor.ghost
        if self.inspected is not None:
            self.action_leave_inspect()
            return
        key = self.key_display("draft.inspect")
        if ghost is not None and ghost.tokens:
            self.inspected = len(ghost.tokens) - 1 if not ghost.streaming else 0
            self._draw_inspection()
            return
        if ghost is not None and ghost.streaming:  # still reading its prompt (seconds, for a long one)
            self.notify(
                self.language.gettext("The model has not written a token yet: press {key} again once it has.").format(
                    key=key
                )
            )
            return
        found = self.editor.token_at_cursor()
        if found is not None:
            self.show_record(found[0].tokens[found[1]], asked=True)
            return
        self.notify(
            self.language.gettext(
                "Nothing to inspect here: generate a suggestion (inspect it with {key}), or move the cursor "
                "onto generated or scored text."
            ).format(key=key),
            severity="warning",
        )

    def action_inspect_move(self, step: int) -> None:
        ghost = self.editor.ghost
        if ghost is None or self.inspected is None or not ghost.tokens:
            return
        self.inspected = min(max(self.inspected + step, 0), len(ghost.tokens) - 1)
        self._draw_inspection()

    def action_leave_inspect(self) -> None:
        self.inspected = None
        self._draw_inspection()

    def _draw_inspection(self) -> None:
        ghost = self.editor.ghost
        if ghost is None or not ghost.tokens:
            self.inspected = None
        elif self.inspected is not None:
            self.inspected = min(self.inspected, len(ghost.tokens) - 1)
            self.show_record(ghost.tokens[self.inspected])
        self.suggestion.set_inspection(colour=self.colouring, inspected=self.inspected)
        self.refresh_bindings()

    # ---- colouring ---------------------------------------------------------------------
    def action_toggle_colours(self) -> None:
        self.set_colouring(not self.colouring)

    def set_colouring(self, on: bool) -> None:
        self.colouring = on
        self.editor.set_colouring(on)
        self.suggestion.set_inspection(colour=on, inspected=self.inspected)
        legends = self.query(TokenLegend)
        if legends:
            set_shown(legends.first(), on)
        elif on:
            self.mount(TokenLegend(self.language, id="draft-legend"))

    # ---- branches and versions ------------------------------------------------------------
    def action_branch(self) -> None:
        if self.generating:
            self.notify(
                self.language.gettext("The model is writing: press Esc to stop it, then branch."), severity="warning"
            )
            return
        ghost = self.editor.ghost
        if ghost is not None and self.inspected is not None:
            index = self.inspected
            record = ghost.tokens[index]
            self.app.push_screen(
                self.alternatives_screen(record), lambda choice: self._branch_suggestion(index, choice)
            )
            return
        found = self.editor.token_at_cursor()
        if found is None or found[0].tokens[found[1]].source.kind not in ("generated", "scored"):
            self.notify(
                self.language.gettext(
                    "Put the cursor on generated or scored text (or inspect the suggestion with {inspect}) to "
                    "branch there; {score} scores your own text, and text changed since it was generated."
                ).format(inspect=self.key_display("draft.inspect"), score=self.key_display("draft.score")),
                severity="warning",
            )
            return
        span, index = found
        self.app.push_screen(
            self.alternatives_screen(span.tokens[index]), lambda choice: self._branch_draft(span, index, choice)
        )

    def _branch_suggestion(self, index: int, choice: str | None) -> None:
        ghost = self.editor.ghost
        if choice is None or ghost is None or index >= len(ghost.tokens) or self.generating:
            return
        branch_at(ghost, index, choice)
        self.inspected = None
        self.write_on()

    def _branch_draft(self, span: Span, index: int, choice: str | None) -> None:
        editor = self.editor
        if choice is None or self.generating or span not in editor.spans.spans:
            if choice is not None:
                self.notify(
                    self.language.gettext("That text changed meanwhile; nothing was replaced."), severity="warning"
                )
            return
        record = span.tokens[index]
        start = span.start + record.start
        if record.source.kind == "scored":
            # The author's own words: the branch rewrites the rest of their line (paragraph),
            # not everything after it.
            line_end = editor.text.find("\n", start)
            end = len(editor.text) if line_end < 0 else line_end
            old_tokens = [
                r.moved(other.start - start)
                for other in editor.spans.spans
                if start <= other.start and other.end <= end
                for r in other.tokens
            ]
        else:
            end = span.end
            old_tokens = [r.moved(-record.start) for r in span.tokens[index:]]
        old_text = editor.text[start:end]
        if editor.ghost is not None:
            self.reject(say=False)  # the branch takes its place: no undo brings it back
        at = editor.document.get_location_from_index(start)
        editor.move_cursor(at)
        # The old text stays in the draft until the author accepts the branch (Tab).
        ghost = editor.begin_ghost(at, from_cursor=True)
        ghost.replaces = end - start
        ghost.versions.append(Version(old_text, old_tokens, "as it was"))
        ghost.text, ghost.tokens = old_text, old_tokens
        choice, chosen = branch_choice(record, choice, editor.text[max(0, start - 1) : start])
        start_version(ghost, branch_label(choice), choice, chosen, [] if chosen else [(None, 0)])
        self.write_on()

    def action_version(self, step: int) -> None:
        ghost = self.editor.ghost
        if ghost is None:
            return
        if self.generating:
            self.notify(self.language.gettext("The model is writing: press Esc to stop it first."), severity="warning")
            return
        if not move_version(ghost, step):
            _ = self.language.gettext
            self.notify(_("No older version.") if step < 0 else _("No newer version."))
            return
        self.inspected = None
        self.redraw_suggestion()
        self._draw_inspection()

    # ---- the draft compared with a second model ---------------------------------------------
    def show_comparison(self, comparison: DraftComparison) -> None:
        """Colour the draft by how `comparison.second` finds each word against `comparison.first`."""
        self._compared = comparison
        self.editor.show_compared(highlights(comparison))
        first, second = comparison.first_bits_per_character, comparison.second_bits_per_character
        overall = f" ({first:.3f} against {second:.3f} bits/char)" if first is not None and second is not None else ""
        self.notify(
            f"Your draft compared with {comparison.second} against {comparison.first}{overall}: green where it finds "
            f"your prose less surprising, red where more; the cursor on a word says by how much. "
            f"{self.key_display('draft.score')} scores it with the loaded model again.",
            markup=False,  # file names
        )

    def leave_comparison(self) -> None:
        if self._compared is not None:
            self._compared = None
            self.editor.show_compared([])
            self.post_message(self.ActivityShown(""))

    # ---- scoring the author's text ----------------------------------------------------------
    def action_score_draft(self) -> None:
        self.leave_comparison()
        if self.scoring:
            self.notify(self.language.gettext("Already scoring: press Esc to stop."), severity="warning")
            return
        if self.generating:
            self.notify(self.language.gettext("The model is writing: score when it has finished."), severity="warning")
            return
        backend = self.ready_backend()
        if backend is None:
            return
        text = self.editor.text
        if not text.strip():
            self.notify(self.language.gettext("There is no text to score yet."), severity="warning")
            return
        # Scored as continued, the same prompt (memory and note included, the draft before
        # the newline a file ends with, as ctrl+g reads it): what the model would not see is
        # not scored. The window is made in the worker (ScoringWindowMade).
        build = self.unknown_checked(backend, self.window_builder(backend, self.prompt_template(prompts.CONTINUE)))
        self.editor.spans.remove_kind("scored")
        score_id = self._score_id = new_score_id()
        self._score_text, self._score_pending, self._score_window, self._scored_tokens = text, None, None, 0
        self._scored_by = backend.options
        self.set_colouring(True)
        self.post_message(self.ActivityShown(self.language.gettext("scoring…")))
        self.refresh_bindings()
        top_n, frame = self.settings.top_n, self.settings.frame_interval

        def run() -> None:
            worker = get_current_worker()
            stream_scoring(
                backend,
                lambda: build(text[: end_of_writing(text)]),
                top_n,
                score_id,
                self.post_message,
                lambda: worker.is_cancelled,
                frame,
            )

        self.run_worker(run, thread=True, group="scoring", exclusive=True, exit_on_error=False)

    def action_cancel_score(self) -> None:
        if self.scoring:
            self.workers.cancel_group(self, "scoring")

    def stop_scoring(self, reason: str, colours_kept: bool = True) -> None:
        """Stop a scoring run because the draft or the engine is needed for something else."""
        if self.scoring:
            self.action_cancel_score()
            self._score_id = None
            self.post_message(self.ActivityShown(""))
            self.refresh_bindings()
            _ = self.language.gettext
            said = (
                _("Scoring stopped: {reason}; what was scored stays coloured ({key} scores it again).")
                if colours_kept
                else _("Scoring stopped: {reason}.")
            )
            self.notify(said.format(reason=_(reason), key=self.key_display("draft.score")))

    def model_replaced(self, options: LoadOptions) -> None:
        """The model of `options` is the one loaded now: the scores another model made go (the
        cursor on the author's words showed them as the new model's). Not when the load
        began: a file refused before the old model closed leaves it, and its scores, in place."""
        if options != self._scored_by and self.editor.spans.count_kind("scored"):
            self.editor.spans.remove_kind("scored")
            self.editor.set_colouring(self.colouring)
            self.notify(
                self.language.gettext(
                    "The colours of your own text were the last model's; {key} scores it with this one."
                ).format(key=self.key_display("draft.score"))
            )

    def _add_scored(self, record: TokenRecord, end: int) -> None:
        record = covering(record, self._score_text, end)
        self.editor.spans.add(Span(record.start, record.text, [record.moved(-record.start)]))

    def on_scoring_window_made(self, message: ScoringWindowMade) -> None:
        if message.score_id == self._score_id:
            self._score_window = message.window
            self.editor.show_window(message.window.start)  # the whole draft is scored: offsets are its own

    def on_scores_arrived(self, message: ScoresArrived) -> None:
        if message.score_id != self._score_id:
            return
        for score in message.scores:
            start = self._score_window.draft_offset(score.start) if self._score_window is not None else None
            if start is None:
                continue  # the memory's, the note's or the template's: not the author's draft
            record = record_from_score(replace(score, start=start), SCORED)
            self._scored_tokens += 1
            if (joined := character_record(self._score_pending, record)) is not None:
                self._score_pending = joined
                continue
            if self._score_pending is not None:
                self._add_scored(self._score_pending, start)
            self._score_pending = record
        self.editor.set_colouring(self.colouring)  # as the author left it (F8 while it ran)

    def on_scoring_progressed(self, message: ScoringProgressed) -> None:
        if message.score_id == self._score_id:
            progress = message.progress
            number = self.language.number
            said = self.language.gettext("scoring {done}/{total}")
            self.post_message(
                self.ActivityShown(said.format(done=number(progress.done, ","), total=number(progress.total, ",")))
            )

    def on_scoring_finished(self, message: ScoringFinished) -> None:
        if message.score_id != self._score_id:
            return
        pending = self._score_pending
        if pending is not None:
            # The last token reaches the end of what was scored: the window's end, before the
            # spaces the prompt left out (window.prompt_end), not over them.
            self._add_scored(
                pending,
                scored_end(pending, self._score_text)
                if message.done.cancelled
                else self._score_window.end
                if self._score_window is not None
                else len(self._score_text),
            )
        self._score_id, self._score_pending = None, None
        if message.done.kv_cache is not None:
            # Scoring filled the KV cache with the draft: the panel shows it as it is.
            self.post_message(self.CacheShown(message.done.kv_cache, self._score_window))
        self.editor.set_colouring(self.colouring)  # as the author left it (F8 while it ran)
        self.post_message(self.ActivityShown(""))
        self.refresh_bindings()
        start = self._score_window.start if self._score_window is not None else 0
        self.notify(
            scored_note(message.done, self._scored_tokens, self.key_display("draft.branch"), start, self.language)
        )

    def on_scoring_failed(self, message: ScoringFailed) -> None:
        if message.score_id != self._score_id:
            return
        self._score_id = None
        self.post_message(self.ActivityShown(""))
        self.refresh_bindings()
        self.notify(message.error, title=self.language.gettext("Scoring failed"), severity="error", timeout=10)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        # The comparison's words and scores arriving later are offsets into the text as it was: they would land wrong.
        self.leave_comparison()
        if self.scoring:
            self.stop_scoring(N_("the text changed"))
