"""Draft mode, issue 6: score the author's own text (F9), and colour the draft as compared
with a second model (the compare screen's choice). A part of the draft pane (draft_pane.py),
which keeps the keys and the message handlers and hands them to it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Callable, Protocol

from textual.binding import Binding
from textual.worker import get_current_worker

from scriptorium import prompts

from scriptorium.app.sessions.draft_files import end_of_writing
from scriptorium.app.tui.compared_colours import DraftComparison, figure_at, highlights
from scriptorium.app.tui.token_spans import (
    Span,
    TokenRecord,
    TokenSource,
    character_record,
    covering,
    record_from_score,
    scored_end,
)
from scriptorium.app.tui.widgets.mode_pane import ModePane
from scriptorium.app.i18n.marker import N_

if TYPE_CHECKING:
    from textual.message import Message
    from textual.worker import WorkerManager

    from scriptorium.inference.core.backend import Backend
    from scriptorium.inference.core.load_options import LoadOptions
    from scriptorium.inference.window.window import Window

    from scriptorium.app.config.tui_settings import TuiSettings
    from scriptorium.app.i18n.language import Language
    from scriptorium.app.tui.keys import KeyDisplay
    from scriptorium.app.tui.scoring import (
        ScoresArrived,
        ScoringFailed,
        ScoringFinished,
        ScoringProgressed,
        ScoringWindowMade,
    )
    from scriptorium.app.tui.widgets.draft_editor import DraftEditor

SCORED = TokenSource("scored")

# Checked before the draft's own Esc (stop, reject): stopping a scoring comes first.
LEADING_BINDINGS = [
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
        "f9",
        "score_draft",
        N_("Score"),
        show=False,
        id="draft.score",
        tooltip=N_("Score your own draft: how probable the model finds each of your tokens (Esc stops)"),
    ),
]


class Colours(Protocol):
    """The draft's colours by probability (the inspection part owns them): scores turn them on."""

    colouring: bool

    def set_colouring(self, on: bool) -> None: ...


class ScoringPane(Protocol):
    """What scoring needs of the draft pane it is part of."""

    editor: DraftEditor
    settings: TuiSettings
    language: Language
    key_display: KeyDisplay
    generating: bool

    @property
    def workers(self) -> WorkerManager: ...

    def notify(self, message: str, *, title: str = ..., severity: str = ..., timeout: float | None = ...) -> None: ...

    def post_message(self, message: Message) -> bool: ...

    def refresh_bindings(self) -> None: ...

    def run_worker(
        self, work: Callable[[], None], *, thread: bool, group: str, exclusive: bool, exit_on_error: bool
    ) -> object: ...

    def ready_backend(self) -> Backend | None: ...

    def prompt_template(self, name: str) -> str | None: ...

    def window_builder(self, backend: Backend, template: str | None) -> Callable[[str], Window]: ...

    def unknown_checked(self, backend: Backend, build: Callable[[str], Window]) -> Callable[[str], Window]: ...


class Scorer:
    """Scores the author's draft in a worker and colours it as the scores arrive; or shows
    it compared with a second model. One scoring at a time, told apart by its id."""

    def __init__(self, pane: ScoringPane, colours: Colours) -> None:
        self.pane = pane
        self.colours = colours
        self._score_id: int | None = None
        self._text = ""
        self._pending: TokenRecord | None = None
        self.window: Window | None = None
        """What the model saw when scoring (memory, the draft window, the note): scores' offsets
        into its prompt are moved into the draft by it, and those outside the draft dropped."""
        self._scored_tokens = 0
        self._scored_by: LoadOptions | None = None
        """The model, as loaded, whose scores colour the draft."""
        self._compared: DraftComparison | None = None
        """The draft coloured compared with a second model (the compare screen's choice), until
        the text changes or F9 scores it again."""

    @property
    def running(self) -> bool:
        return self._score_id is not None

    # ---- the draft compared with a second model ---------------------------------------------
    def show_comparison(self, comparison: DraftComparison) -> None:
        """Colour the draft by how `comparison.second` finds each word against `comparison.first`."""
        pane = self.pane
        self._compared = comparison
        pane.editor.show_compared(highlights(comparison))
        _, number = pane.language.gettext, pane.language.number
        first, second = comparison.first_bits_per_character, comparison.second_bits_per_character
        overall = (
            _(" ({first} against {second} bits/char)").format(first=number(first, ".3f"), second=number(second, ".3f"))
            if first is not None and second is not None
            else ""
        )
        said = _(
            "Your draft compared with {second} against {first}{overall}: green where it finds your prose less "
            "surprising, red where more; the cursor on a word says by how much. {key} scores it with the loaded "
            "model again."
        )
        pane.notify(
            said.format(
                second=comparison.second,
                first=comparison.first,
                overall=overall,
                key=pane.key_display("draft.score"),
            ),
            markup=False,  # file names
        )

    def leave_comparison(self) -> None:
        if self._compared is not None:
            self._compared = None
            self.pane.editor.show_compared([])
            self.pane.post_message(ModePane.ActivityShown(""))

    def compared_figure(self) -> bool:
        """With the draft compared, show the figure of the word at the cursor; False when not compared."""
        if self._compared is None:
            return False
        editor = self.pane.editor
        offset = editor.document.get_index_from_location(editor.cursor_location)
        self.pane.post_message(ModePane.ActivityShown(figure_at(self._compared, offset, self.pane.language)))
        return True

    # ---- scoring the author's text ----------------------------------------------------------
    def score(self) -> None:
        from scriptorium.app.tui.scoring import new_score_id, stream_scoring  # loaded with the first scoring

        pane = self.pane
        self.leave_comparison()
        if self.running:
            pane.notify(pane.language.gettext("Already scoring: press Esc to stop."), severity="warning")
            return
        if pane.generating:
            pane.notify(pane.language.gettext("The model is writing: score when it has finished."), severity="warning")
            return
        backend = pane.ready_backend()
        if backend is None:
            return
        text = pane.editor.text
        if not text.strip():
            pane.notify(pane.language.gettext("There is no text to score yet."), severity="warning")
            return
        # Scored as continued, the same prompt (memory and note included, the draft before
        # the newline a file ends with, as ctrl+g reads it): what the model would not see is
        # not scored. The window is made in the worker (ScoringWindowMade).
        build = pane.unknown_checked(backend, pane.window_builder(backend, pane.prompt_template(prompts.CONTINUE)))
        pane.editor.spans.remove_kind("scored")
        score_id = self._score_id = new_score_id()
        self._text, self._pending, self.window, self._scored_tokens = text, None, None, 0
        self._scored_by = backend.options
        self.colours.set_colouring(True)
        pane.post_message(ModePane.ActivityShown(pane.language.gettext("scoring…")))
        pane.refresh_bindings()
        top_n, frame = pane.settings.top_n, pane.settings.frame_interval

        def run() -> None:
            worker = get_current_worker()
            stream_scoring(
                backend,
                lambda: build(text[: end_of_writing(text)]),
                top_n,
                score_id,
                pane.post_message,
                lambda: worker.is_cancelled,
                frame,
            )

        pane.run_worker(run, thread=True, group="scoring", exclusive=True, exit_on_error=False)

    def cancel(self) -> None:
        if self.running:
            self.pane.workers.cancel_group(self.pane, "scoring")  # type: ignore[arg-type]

    def stop(self, reason: str, colours_kept: bool = True) -> None:
        """Stop a scoring run because the draft or the engine is needed for something else."""
        pane = self.pane
        if self.running:
            self.cancel()
            self._score_id = None
            pane.post_message(ModePane.ActivityShown(""))
            pane.refresh_bindings()
            _ = pane.language.gettext
            said = (
                _("Scoring stopped: {reason}; what was scored stays coloured ({key} scores it again).")
                if colours_kept
                else _("Scoring stopped: {reason}.")
            )
            pane.notify(said.format(reason=_(reason), key=pane.key_display("draft.score")))

    def model_replaced(self, options: LoadOptions) -> None:
        """The model of `options` is the one loaded now: the scores another model made go (the
        cursor on the author's words showed them as the new model's). Not when the load
        began: a file refused before the old model closed leaves it, and its scores, in place."""
        pane = self.pane
        if options != self._scored_by and pane.editor.spans.count_kind("scored"):
            pane.editor.spans.remove_kind("scored")
            pane.editor.set_colouring(self.colours.colouring)
            pane.notify(
                pane.language.gettext(
                    "The colours of your own text were the last model's; {key} scores it with this one."
                ).format(key=pane.key_display("draft.score"))
            )

    def text_changed(self) -> None:
        # The comparison's words and scores arriving later are offsets into the text as it was: they would land wrong.
        self.leave_comparison()
        if self.running:
            self.stop(N_("the text changed"))

    def _add_scored(self, record: TokenRecord, end: int) -> None:
        record = covering(record, self._text, end)
        self.pane.editor.spans.add(Span(record.start, record.text, [record.moved(-record.start)]))

    # ---- what the scoring worker posts (the pane hands its messages on) -----------------------
    def window_made(self, message: ScoringWindowMade) -> None:
        if message.score_id == self._score_id:
            self.window = message.window
            self.pane.editor.show_window(message.window.start)  # the whole draft is scored: offsets are its own

    def scores_arrived(self, message: ScoresArrived) -> None:
        if message.score_id != self._score_id:
            return
        for score in message.scores:
            start = self.window.draft_offset(score.start) if self.window is not None else None
            if start is None:
                continue  # the memory's, the note's or the template's: not the author's draft
            record = record_from_score(replace(score, start=start), SCORED)
            self._scored_tokens += 1
            if (joined := character_record(self._pending, record)) is not None:
                self._pending = joined
                continue
            if self._pending is not None:
                self._add_scored(self._pending, start)
            self._pending = record
        self.pane.editor.set_colouring(self.colours.colouring)  # as the author left it (F8 while it ran)

    def progressed(self, message: ScoringProgressed) -> None:
        if message.score_id == self._score_id:
            progress = message.progress
            number = self.pane.language.number
            said = self.pane.language.gettext("scoring {done}/{total}")
            self.pane.post_message(
                ModePane.ActivityShown(said.format(done=number(progress.done, ","), total=number(progress.total, ",")))
            )

    def finished(self, message: ScoringFinished) -> None:
        from scriptorium.app.tui.scoring import scored_note

        if message.score_id != self._score_id:
            return
        pane = self.pane
        pending = self._pending
        if pending is not None:
            # The last token reaches the end of what was scored: the window's end, before the
            # spaces the prompt left out (window.prompt_end), not over them.
            self._add_scored(
                pending,
                scored_end(pending, self._text)
                if message.done.cancelled
                else self.window.end
                if self.window is not None
                else len(self._text),
            )
        self._score_id, self._pending = None, None
        if message.done.kv_cache is not None:
            # Scoring filled the KV cache with the draft: the panel shows it as it is.
            pane.post_message(ModePane.CacheShown(message.done.kv_cache, self.window))
        pane.editor.set_colouring(self.colours.colouring)  # as the author left it (F8 while it ran)
        pane.post_message(ModePane.ActivityShown(""))
        pane.refresh_bindings()
        start = self.window.start if self.window is not None else 0
        pane.notify(
            scored_note(message.done, self._scored_tokens, pane.key_display("draft.branch"), start, pane.language)
        )

    def failed(self, message: ScoringFailed) -> None:
        if message.score_id != self._score_id:
            return
        pane = self.pane
        self._score_id = None
        pane.post_message(ModePane.ActivityShown(""))
        pane.refresh_bindings()
        pane.notify(message.error, title=pane.language.gettext("Scoring failed"), severity="error", timeout=10)
