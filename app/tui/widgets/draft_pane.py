"""Draft mode: the author's text, and the model continuing it on request.

The pane (continue, accept, reject, the file) is a ModePane (what both modes are given and
ask for) that composes parts, each a plain object of its own file with its own state:
Inspection (the token cursor, colours, branches, versions), Scorer (scoring the author's
text, the comparison with a second model), Candidates (several continuations side by
side) and WindowMark (where the model's window starts). Textual looks keys, actions and
message handlers up on the widget, so the pane keeps them all and hands each to its part;
a part reaches what it needs of the pane through the Protocol it declares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.reactive import var
from textual.widgets import TextArea

from scriptorium import prompts
from scriptorium.inference.core.backend import Backend
from scriptorium.inference.window.lore import Fired
from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.inference.core.settings import SamplerSettings
from scriptorium.inference.window.window import Window
from scriptorium.inference.window.window_layout import note_break

from scriptorium.app.config.tui_settings import TuiSettings
from scriptorium.app.sessions.opening import DraftFile
from scriptorium.app.tui.branches import (
    Ghost,
    every_request_id,
    lost_note,
    other_request_ids,
    place_by_first_text,
    start_version,
    with_break,
    with_writer,
    without_trailing_spaces,
    written_parts,
)
from scriptorium.app.tui.compared_colours import DraftComparison
from scriptorium.app.tui.engine_state import EngineState
from scriptorium.app.tui.generation_request import GenerationRequest
from scriptorium.app.tui.keys import KeyDisplay
from scriptorium.app.tui.token_spans import Span, close_records
from scriptorium.app.tui.widgets import draft_candidates, draft_inspect, draft_messages, draft_scoring
from scriptorium.app.tui.widgets.draft_anchors import asked_text, end_anchor, grapheme_end, insert_fim, prompt_anchor
from scriptorium.app.tui.widgets.draft_candidates import Candidates
from scriptorium.app.tui.widgets.draft_editor import DraftEditor
from scriptorium.app.tui.widgets.draft_inspect import Inspection
from scriptorium.app.tui.widgets.draft_scoring import Scorer
from scriptorium.app.tui.widgets.draft_window_mark import WindowMark
from scriptorium.app.tui.widgets.mode_pane import ModePane
from scriptorium.app.tui.widgets.find_bar import FindBar
from scriptorium.app.tui.widgets.suggestion_view import SuggestionView
from scriptorium.app.i18n.marker import N_

if TYPE_CHECKING:
    from scriptorium.inference.core.events import GenerationDone, TokenEvent

    from scriptorium.app.tui import scoring


class DraftPane(ModePane):
    """The editor and the suggestion view; also the sink of draft generations."""

    SuggestionAccepted = draft_messages.SuggestionAccepted
    SuggestionRejected = draft_messages.SuggestionRejected

    @dataclass
    class SuggestionRestored(Message):
        """The suggestion last thrown away is back (versions too); or an undo gave it back the word just kept."""

        request_ids: tuple[int, ...]
        taken_back: tuple[tuple[int | None, int, int], ...] = ()  # who wrote what of that word

    class SaveRequested(Message):
        """Save the draft to its file (ask for a name when it has none)."""

    BINDINGS = [
        *draft_inspect.LEADING_BINDINGS,
        *draft_scoring.LEADING_BINDINGS,
        Binding(
            "ctrl+g",
            "continue_draft",
            N_("Continue"),
            id="draft.continue",
            tooltip=N_("Continue the draft from its end; with a suggestion waiting, continue the suggestion"),
        ),
        Binding(
            "ctrl+o",
            "continue_here",
            N_("From cursor"),
            show=False,
            id="draft.continue_here",
            tooltip=N_("Continue from the cursor instead of the end (the text after it stays where it is)"),
        ),
        Binding(
            "tab",
            "accept",
            N_("Accept"),
            priority=True,
            id="draft.accept",
            tooltip=N_("Put the whole suggestion into the draft"),
        ),
        Binding(
            "ctrl+right",
            "accept_word",
            N_("Word"),
            key_display="^→",
            priority=True,
            show=False,
            id="draft.accept_word",
            tooltip=N_("Put the suggestion's next word into the draft"),
        ),
        Binding(
            "escape",
            "stop",
            N_("Stop"),
            id="draft.stop",
            tooltip=N_("Stop the model; what it wrote stays as a suggestion to accept or reject"),
        ),
        # Esc stops, and a stop never throws anything away: pressed as the model finished, the
        # stop found nothing to stop, and the same key threw the whole suggestion away. So a
        # finished suggestion goes at the second Esc (the first, or the stop, asks).
        Binding(
            "escape",
            "ask_reject",
            N_("Reject…"),
            id="draft.ask_reject",
            tooltip=N_("On a finished suggestion: ask to throw it away; Esc again does"),
        ),
        Binding(
            "escape",
            "reject",
            N_("Reject"),
            id="draft.reject",
            tooltip=N_("Throw the suggestion away (Esc after a stop or a first Esc); the undo key brings it back"),
        ),
        Binding(
            "ctrl+z",
            "undo_reject",
            N_("Undo reject"),
            show=False,
            priority=True,
            id="draft.undo_reject",
            tooltip=N_(
                "Bring back the suggestion just thrown away (until the draft is edited); "
                "otherwise the key undoes the last edit"
            ),
        ),
        # The editor's own undo and redo, named here so that F1 and the palette list them ("undo"
        # found nothing); not priority: with the editor focused its own keys answer first, the same edit.
        Binding(
            "ctrl+z", "undo", N_("Undo"), show=False, id="draft.undo", tooltip=N_("Undo the last edit of the draft")
        ),
        Binding("ctrl+y", "redo", N_("Redo"), show=False, id="draft.redo", tooltip=N_("Redo the edit just undone")),
        Binding(
            "ctrl+r",
            "reroll",
            N_("Re-roll"),
            show=False,
            id="draft.reroll",
            tooltip=N_("Throw the suggestion away and generate another from the same place"),
        ),
        Binding("ctrl+s", "save", N_("Save"), show=False, id="draft.save", tooltip=N_("Save the draft to its file")),
        Binding(
            "ctrl+f",
            "find",
            N_("Find"),
            show=False,
            id="draft.find",
            tooltip=N_("Find (and replace) words in the draft; a selection on one line is what it looks for"),
        ),
        # The editor has no keys of its own to the ends of the text: a long draft opens at its top.
        Binding(
            "ctrl+end",
            "cursor_to_end(True)",
            N_("End"),
            show=False,
            id="draft.end",
            tooltip=N_("Move the cursor to the end of the draft"),
        ),
        Binding(
            "ctrl+home",
            "cursor_to_end(False)",
            N_("Start"),
            show=False,
            id="draft.start",
            tooltip=N_("Move the cursor to the start of the draft"),
        ),
        *draft_inspect.BINDINGS,
        *draft_scoring.BINDINGS,
        *draft_candidates.BINDINGS,
    ]

    modified: var[bool] = var(False)
    """The draft differs from what is on disk."""

    def __init__(
        self, draft_file: DraftFile, text: str, settings: TuiSettings, key_display: KeyDisplay, **kwargs: object
    ) -> None:
        super().__init__(settings, key_display, **kwargs)
        self.draft_file = draft_file
        self._initial_text = text
        self._enabled: tuple[bool, ...] = ()
        self._thrown: tuple[Ghost, str] | None = None
        """The suggestion last thrown away, and the draft then: it comes back while the draft is unchanged."""
        self._asked: Ghost | None = None
        """The finished suggestion a first Esc (or the stop that finished it) asked about: the next Esc throws it away."""
        self._undo_rejects = False
        """The undo key brings back the suggestion just thrown away: no edit came since."""
        self._typed_over: Ghost | None = None
        """The suggestion typing stopped the model of (it is said once)."""
        self._no_healing_said: Backend | None = None
        """The backend last said to be unable to heal (say_healing_unavailable)."""
        self.inspection = Inspection(self)
        self.scorer = Scorer(self, self.inspection)
        self.candidates = Candidates(self, self.inspection)
        self.window_mark = WindowMark(self)

    def compose(self) -> ComposeResult:
        self.editor = DraftEditor(self._initial_text, id="editor")
        self.suggestion = SuggestionView(self.language, id="suggestion")
        self.suggestion.display = False
        self.find_bar = FindBar(self.editor, self.key_display, self._why_not_edit, self.language, id="find-bar")
        yield self.find_bar
        yield self.editor
        yield self.suggestion

    # ---- what is enabled when ------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if (inspect := self.inspection.check_action(action)) is not None:
            return inspect
        if action == "cancel_score":
            return self.scorer.running
        ghost = self.editor.ghost
        if action in ("accept", "accept_word") and self.find_bar.has_focus_within:
            return False  # Tab goes to the replace field, ctrl+→ a word on, as in any field
        if action in ("accept", "accept_word", "reroll"):
            return ghost is not None
        if action == "stop":
            # The chat's reply too: "press Esc to stop it first" is what a key refused meanwhile says.
            return self.generating
        if action == "reject":
            return ghost is not None and not self.streaming
        if action == "ask_reject":
            return ghost is not None and not self.streaming and ghost is not self._asked
        if action == "undo_reject":
            return self._undo_rejects and self._thrown is not None and ghost is None and not self.generating
        return True

    # ---- generation ----------------------------------------------------------------
    def ready_to_continue(self) -> tuple[Backend, str] | None:
        """The backend and the continue template, scoring stopped; None after telling the
        author why the model cannot write now."""
        if self.generating:
            said = self.language.gettext("The model is already writing: press Esc to stop it first.")
            self.notify(said, severity="warning")
            return None
        backend = self.ready_backend()
        template = self.prompt_template(prompts.CONTINUE) if backend is not None else None
        if backend is None or template is None:
            return None
        self.scorer.stop(N_("the model is writing"))
        return backend, template

    def action_continue_draft(self) -> None:
        self._continue(from_cursor=False)

    def action_continue_here(self) -> None:
        self._continue(from_cursor=True)

    def _continue(self, *, from_cursor: bool, reroll: bool = False) -> None:
        ready = self.ready_to_continue()
        if ready is None:
            return
        backend, template = ready
        self.say_healing_unavailable(backend)
        self.inspection.inspected = None
        # A first Esc asked about the text as it was (an Esc as this ends stops it); typing stops this one too.
        self._asked = self._typed_over = None
        editor = self.editor
        ghost = editor.ghost
        if ghost is not None and reroll:
            # The text re-rolled away stays as an earlier version (alt+← goes back to it): its
            # generations are decided with the version the author keeps (or throws away).
            start_version(ghost, "re-roll")
            ghost.streaming, ghost.request_ids = True, []
            fim = insert_fim(backend, editor.document, ghost.from_cursor, ghost.anchor)
        elif ghost is not None:
            fim = insert_fim(backend, editor.document, ghost.from_cursor, ghost.anchor)
            if not (self.heals(backend) and fim is None):  # healed, its trailing spaces are backed up over
                without_trailing_spaces(ghost)
            ghost.streaming = True
        else:
            if from_cursor:
                anchor = grapheme_end(editor.document, editor.selection.end)
            else:
                anchor = end_anchor(editor.document)
            fim = insert_fim(backend, editor.document, from_cursor, anchor)
            anchor, spaces = prompt_anchor(editor.document, anchor, self.heals(backend) and fim is None)
            ghost = editor.begin_ghost(anchor, from_cursor=from_cursor, spaces_left_out=spaces)
        prefix = editor.text_before(ghost.anchor) + ghost.text
        # The spaces it stands in for, when it is anchored before them (ghost.replaces them).
        asked = asked_text(editor.document, ghost.anchor, ghost.replaces if ghost.spaces_left_out else 0, ghost.text)
        lead = note_break(prefix, self.pinned.note, self.pinned.note_depth)
        ghost.text, ghost.writers = with_break(ghost.text, ghost.writers, lead)
        ghost.break_end = len(ghost.text) if lead else None
        # Fitted to the window in the generation's worker: counting tokens asks the engine's
        # process or a server, which may be slow to answer, and no key waits for it.
        request = self.new_request(
            "draft",
            self.window_preparer(backend, asked, template, fim),
            sampler=None if fim is not None else self.insert_sampler(backend, ghost),
            special=fim is not None,  # the fill-in-the-middle tokens are control tokens
        )
        ghost.request_ids.append(request.id)
        ghost.writers = with_writer(ghost.writers, ghost.text, request.id)
        self.start(request)
        self._redraw()

    def say_healing_unavailable(self, backend: Backend) -> None:
        """Once per backend: healing is asked for, but this backend cannot heal (a llama-server)."""
        if self.engine_state.sampler.heal and not backend.heals and self._no_healing_said is not backend:
            self._no_healing_said = backend
            _ = self.language.gettext
            self.notify(
                _(
                    "This llama-server cannot heal the token the cursor cut: the prompt ends before the spaces "
                    "ending the text, as without healing."
                ),
                title=_("Token healing"),
                timeout=10,
            )

    def insert_sampler(self, backend: Backend, ghost: Ghost) -> SamplerSettings | None:
        """An insert (ctrl+o with text after the cursor) stops at the end of its sentence
        unless a length mode is set: the model sees nothing of the text after the cursor,
        and 200 tokens would run into it. None: the sampler as it is. Only in-process (the
        engine that heals): a llama-server refuses length modes for now."""
        sampler = self.engine_state.sampler
        if not ghost.from_cursor or sampler.length != "tokens" or not backend.heals:
            return None
        document = self.editor.document
        if not document.get_text_range(ghost.anchor, document.end).strip():
            return None
        return sampler.with_changes(length="sentence")

    def write_on(self) -> None:
        """Continue the suggestion as it stands (after a branch put new text at its end)."""
        if (ghost := self.editor.ghost) is not None:
            self._continue(from_cursor=ghost.from_cursor)

    def redraw_suggestion(self) -> None:
        self._redraw()

    def action_reroll(self) -> None:
        if (ghost := self.editor.ghost) is None:
            return
        sampler = self.engine_state.sampler
        if sampler.seed is not None and sampler.temperature > 0:
            self.notify(
                self.language.gettext(
                    "The seed is fixed, so this gives the same text again. Press s in the sampler panel for a new seed."
                ),
                severity="warning",
            )
        # A cancelled generation still finishing holds the engine; the new one queues behind it.
        self.stop(forget=True)
        self._continue(from_cursor=ghost.from_cursor, reroll=True)

    def action_stop(self) -> None:
        ghost = self.editor.ghost
        self.stop()
        if self.streaming and ghost is not None:
            self._asked = ghost
            self.notify(
                self.language.gettext("Stopped: what the model wrote stays. {key} again throws it away.").format(
                    key=self.key_display("draft.reject")
                ),
                timeout=4,
            )

    def action_ask_reject(self) -> None:
        self._asked = self.editor.ghost
        self.notify(
            self.language.gettext("Kept. {key} again throws the suggestion away.").format(
                key=self.key_display("draft.reject")
            ),
            timeout=4,
        )
        self._redraw()

    def action_accept(self) -> None:
        if self.streaming:
            # What is on screen is what gets accepted; the rest is not waited for.
            self.stop(forget=True)
        self._accept(word_only=False)
        self.editor.clear_ghost("accepted")

    def action_accept_word(self) -> None:
        self._accept(word_only=True)

    def _accept(self, *, word_only: bool) -> None:
        ghost = self.editor.ghost
        if ghost is None:
            return
        at, request_ids, others = ghost.anchor, tuple(ghost.request_ids), other_request_ids(ghost)
        writers = list(ghost.writers)
        if ghost.replaces and ghost.text == self.editor.replaced_text():
            # The branch's "as it was" version: keeping it changes nothing in the draft.
            self.post_message(self.SuggestionRejected("", request_ids + others))
            self.editor.clear_ghost("rejected")
            return
        accepted = self.editor.accept_ghost(word_only=word_only)
        not_kept = others if not word_only or self.editor.ghost is None else ()  # the versions not kept
        if accepted:
            editor = self.editor
            self.post_message(
                self.SuggestionAccepted(
                    accepted,
                    at,
                    len(editor.text_before(at)),
                    request_ids,
                    tuple(written_parts(writers, len(accepted))),
                    editor.text,
                    not_kept,
                )
            )
        elif not_kept:
            self.post_message(self.SuggestionRejected("", not_kept))

    def action_reject(self) -> None:
        self.reject()

    def reject(self, *, say: bool = True) -> None:
        """Throw the suggestion away; `say`: that the undo key brings it back."""
        if self.streaming:
            self.stop(forget=True)
        ghost = self.editor.ghost
        if ghost is not None:
            self.post_message(self.SuggestionRejected(ghost.text, every_request_id(ghost), restorable=True))
            self._thrown, self._undo_rejects = (ghost, self.editor.text), say
            # Esc also leaves inspection and stops the model: one press too many must not cost the work.
            said = (
                self.language.gettext("The suggestion and its {count} versions were thrown away: {key} brings it back.")
                if len(ghost.versions) > 1
                else self.language.gettext("The suggestion was thrown away: {key} brings it back.")
            )
            if say:
                self.notify(
                    said.format(count=len(ghost.versions), key=self.key_display("draft.undo_reject")), timeout=4
                )
        self.editor.clear_ghost("rejected")

    def action_undo_reject(self) -> None:
        if self._thrown is None or self._thrown[1] != self.editor.text:
            self.editor.undo()  # the draft changed since: the key's own meaning
            return
        self.action_version(-1)

    def action_undo(self) -> None:
        self.editor.undo()

    def action_redo(self) -> None:
        self.editor.redo()

    def action_version(self, step: int) -> None:
        if self.editor.ghost is not None or step > 0:
            self.inspection.version(step)
            return
        thrown, self._thrown = self._thrown, None
        if thrown is None or thrown[1] != self.editor.text or self.generating:
            self.notify(self.language.gettext("No suggestion to bring back."))
            return
        self._undo_rejects, self._asked = False, None
        ghost = thrown[0]
        ghost.streaming = False
        self.editor.restore_ghost(ghost)
        self.post_message(self.SuggestionRestored(every_request_id(ghost)))

    # ---- the parts' keys, handlers and questions, handed to them -----------------------
    def action_inspect(self) -> None:
        self.inspection.inspect()

    def action_inspect_move(self, step: int) -> None:
        self.inspection.move(step)

    def action_leave_inspect(self) -> None:
        self.inspection.leave()

    def action_toggle_colours(self) -> None:
        self.inspection.toggle_colours()

    def action_branch(self) -> None:
        self.inspection.branch()

    def action_candidates(self) -> None:
        self.candidates.open()

    def action_score_draft(self) -> None:
        self.scorer.score()

    def action_cancel_score(self) -> None:
        self.scorer.cancel()

    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        if not self.scorer.compared_figure():
            self.inspection.cursor_moved()

    def on_scoring_window_made(self, message: scoring.ScoringWindowMade) -> None:
        self.scorer.window_made(message)

    def on_scores_arrived(self, message: scoring.ScoresArrived) -> None:
        self.scorer.scores_arrived(message)

    def on_scoring_progressed(self, message: scoring.ScoringProgressed) -> None:
        self.scorer.progressed(message)

    def on_scoring_finished(self, message: scoring.ScoringFinished) -> None:
        self.scorer.finished(message)

    def on_scoring_failed(self, message: scoring.ScoringFailed) -> None:
        self.scorer.failed(message)

    def watch_engine_state(self, old: EngineState, state: EngineState) -> None:
        if state.backend is not old.backend:
            self.window_mark.soon()

    def watch_pinned(self) -> None:
        self.window_mark.soon()

    def watch_lorebook(self) -> None:
        self.window_mark.soon()

    @property
    def scoring(self) -> bool:
        """A scoring of the draft is running."""
        return self.scorer.running

    def stop_scoring(self, reason: str, colours_kept: bool = True) -> None:
        """Stop a scoring run because the draft or the engine is needed for something else."""
        self.scorer.stop(reason, colours_kept)

    def model_replaced(self, options: LoadOptions) -> None:
        """The model of `options` is the one loaded now: the scores another model made go."""
        self.scorer.model_replaced(options)

    def show_comparison(self, comparison: DraftComparison) -> None:
        """Colour the draft by how `comparison.second` finds each word against `comparison.first`."""
        self.scorer.show_comparison(comparison)

    @property
    def last_lore(self) -> tuple[Fired, ...]:
        """The lorebook entries the last prompt made for the draft held and dropped."""
        return self.window_mark.last_lore

    def next_window(self, backend: Backend) -> tuple[Callable[[str], Window], str]:
        """What makes the window of the next continuation, and the text it is made of (the context viewer's)."""
        return self.window_mark.next_window(backend)

    # ---- the sink the screen streams into --------------------------------------------
    def stream_tokens(self, request: GenerationRequest, events: tuple[TokenEvent, ...]) -> None:
        self.inspection.stream_tokens(request, events)

    async def stream_text(self, text: str) -> None:
        ghost = self.editor.ghost
        if ghost is not None:
            ghost.text += text
            place_by_first_text(ghost)
            self.suggestion.grow()

    def prompt_prepared(self, request: GenerationRequest, note: str) -> None:
        if request.window is not None:
            window = request.window
            self.editor.show_window(*self.editor.window_in_text(window.start, window.fim_suffix_chars))
            self.window_mark.lore_seen(request.window.lore)
        super().prompt_prepared(request, note)

    async def stream_finished(
        self, done: GenerationDone | None, error: str | None, *, retry_helps: bool = True
    ) -> None:
        ghost = self.editor.ghost
        if done is not None:
            self.inspection.generation_seed(done.seed)
        if ghost is not None:
            ghost.streaming = False
            if done is not None:
                ghost.text += done.tail_text
                place_by_first_text(ghost)
            close_records(ghost.tokens, ghost.text)
            if ghost.break_end is not None and 0 < ghost.break_end == len(ghost.text):  # nothing after the break
                ghost.text, ghost.writers = ghost.text.rstrip("\n"), ghost.writers[:-2]  # the break's and the request's
            ghost.break_end = None
            if not ghost.text:
                self.editor.clear_ghost("empty")
                if done is not None and done.stop_reason != "cancelled":
                    self.notify(
                        self.language.gettext("The model wrote nothing (it stopped at once: {reason}).").format(
                            reason=done.stop_reason
                        )
                    )
        self._redraw()

    # ---- drawing -------------------------------------------------------------------
    def _redraw(self) -> None:
        ghost = self.editor.ghost
        context = ""
        if ghost is not None:
            row, column = ghost.anchor
            context = self.editor.document.get_line(row)[:column]
        self.set_class(ghost is not None, "-with-suggestion")
        inspection = self.inspection
        if ghost is None:
            inspection.inspected = None
        self.suggestion.show(ghost, context, self._hints(ghost), self.editor.replaced_text())
        self.suggestion.set_inspection(colour=inspection.colouring, inspected=inspection.inspected)
        # The footer rebuilds itself on refresh_bindings: only when what is enabled changed.
        enabled = (ghost is not None, ghost is not None and ghost.streaming, self.streaming, ghost is self._asked)
        if enabled != self._enabled:
            self._enabled = enabled
            self.refresh_bindings()

    def _hints(self, ghost: Ghost | None) -> list[str]:
        """The keys that act on the suggestion, the most useful first (the view shows as many as fit)."""
        if ghost is None:
            return []
        if ghost.streaming:
            names = (("draft.stop", N_("stop")), ("draft.accept", N_("accept")), ("draft.accept_word", N_("word")))
        elif ghost is self._asked:  # the next Esc throws it away: said first
            names = (
                ("draft.reject", N_("again: reject")),
                ("draft.accept", N_("accept")),
                ("draft.accept_word", N_("word")),
                ("draft.reroll", N_("re-roll")),
                ("draft.continue", N_("more")),
            )
        else:
            names = (
                ("draft.accept", N_("accept")),
                ("draft.accept_word", N_("word")),
                ("draft.ask_reject", N_("twice: reject")),
                ("draft.reroll", N_("re-roll")),
                ("draft.continue", N_("more")),
            )
        return [f"{self.key_display(binding_id)} {self.language.gettext(label)}" for binding_id, label in names]

    @on(DraftEditor.GhostChanged)
    def _ghost_changed(self, message: DraftEditor.GhostChanged) -> None:
        if message.reason == "interrupted" and self.streaming and self._typed_over is not self.editor.ghost:
            self._stopped_by_typing()
        if message.reason == "lost" and self.streaming and self.editor.ghost is None:
            # The text it was continuing changed: what it would still write is moot.
            self.stop(forget=True)
        lost = message.lost
        if lost is not None and lost.text and not lost.streaming:
            # Thrown away by the edit: recorded so, not left undecided. One still being written
            # is stopped above and recorded as it ends; one that showed nothing never ran.
            self.post_message(self.SuggestionRejected(lost.text, every_request_id(lost), bool(message.lost_from)))
            if message.lost_from:  # an undo or redo: with the draft so again, the suggestion can come back
                self._thrown = (lost, message.lost_from)
                self.notify(lost_note(lost, self.key_display("draft.version_previous"), self.language))
        if message.reason == "untaken" and (ghost := self.editor.ghost) is not None:
            self.post_message(self.SuggestionRestored((), tuple(written_parts(ghost.writers, len(message.taken_back)))))
        self._redraw()
        if self.editor.ghost is None:  # gone: the window is the draft's end again, not the suggestion's
            self.window_mark.soon()

    def _stopped_by_typing(self) -> None:
        """The author typed where the model was writing: it stops, and what it wrote stays a
        suggestion (a writer who types over it means to write, not to lose what it wrote)."""
        self.stop()
        self._typed_over = self.editor.ghost  # said once: a key typed before the model has stopped says no more
        self.notify(
            self.language.gettext(
                "Stopped: you typed. What the model wrote stays a suggestion: {accept} accepts it, "
                "{reject} twice throws it away."
            ).format(accept=self.key_display("draft.accept"), reject=self.key_display("draft.reject")),
            timeout=6,
        )

    @on(DraftEditor.Changed)
    def _text_changed(self) -> None:
        self._undo_rejects = False
        self.modified = True
        self.post_message(self.Edited())
        self.window_mark.soon()
        self.scorer.text_changed()

    # ---- find and replace ------------------------------------------------------------
    async def action_find(self) -> None:
        await self.find_bar.open()

    def _why_not_edit(self) -> str:
        """Why find-and-replace may not change the draft now ('' when it may)."""
        if self.streaming:
            return self.language.gettext(
                "The model is writing: {key} stops it, then replace (a replacement would move the text it continues)."
            ).format(key=self.key_display("draft.stop"))
        return ""

    # ---- the file ------------------------------------------------------------------
    @property
    def text(self) -> str:
        return self.editor.text

    def action_save(self) -> None:
        self.post_message(self.SaveRequested())

    def action_cursor_to_end(self, last: bool) -> None:
        self.editor.move_cursor(self.editor.document.end if last else (0, 0))

    def anchor_index(self) -> int | None:
        """Where a suggestion being written attaches, as an offset into the draft."""
        ghost = self.editor.ghost
        return len(self.editor.text_before(ghost.anchor)) if ghost is not None else None

    def show_text(self, text: str, spans: list[Span]) -> None:
        """Replace the draft with `text` (another session opened), as saved, with the tokens known of it."""
        self.editor.clear_ghost()
        self.unknown_said = ""  # another draft: its <unk> characters are said anew
        self.editor.load_text(text)
        self.editor.show_spans(spans)
        self.inspection.text_shown()
        self.modified = False
