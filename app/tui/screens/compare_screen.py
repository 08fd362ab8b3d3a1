"""Which model writes most like the author, on the draft itself (issue 35): the models to
compare (the loaded one first), a LoRA adapter and its scales, then a table of each row's
numbers (app/models/comparing.py's columns, as `scriptorium compare` prints them) and where
in the text each model finds the prose surprising: bits per character paragraph by
paragraph, a sparkline per row and the figures beside each paragraph's first words.

The comparison runs in a thread worker of this screen, each model in a child process of its
own (app/tui/comparing.py); Esc or ctrl+c stops it and keeps the rows that finished.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Input, Label, ProgressBar, Sparkline, Static
from textual.worker import get_current_worker

from scriptorium.app.display_text import display_safe
from scriptorium.app.i18n.language import ENGLISH, Language
from scriptorium.app.models.comparing import COLUMNS, cell, paragraph_bits, paragraph_opening
from scriptorium.app.tui.compared_colours import DraftComparison, compared_words
from scriptorium.app.tui.comparing import (
    ComparisonEnded,
    ComparisonFailed,
    ComparisonProgressed,
    ComparisonRowFinished,
    new_run_id,
    request_from_fields,
    run_comparison_posting,
)
from scriptorium.app.tui.widgets.showing import set_shown

if TYPE_CHECKING:
    from scriptorium.inference.core.load_options import LoadOptions

SHOWN_COLUMNS = ("bits_per_character", "perplexity", "kld_mean", "top1_agreement", "prefill_tps", "peak_memory_bytes")
"""The table's columns (of COLUMNS): what fits a dialog; `scriptorium compare` prints them all."""


class CompareScreen(ModalScreen[DraftComparison | None]):
    """Compare models, quantizations and LoRA scales on the draft; Enter on a later row
    closes it with the draft to be coloured compared with that row."""

    DEFAULT_CSS = """
    CompareScreen { align: center middle; }
    CompareScreen #compare-dialog { width: 96%; height: 94%; }
    CompareScreen .compare-fields { height: auto; }
    CompareScreen .compare-fields Input { width: 1fr; }
    CompareScreen #compare-models { width: 1fr; }
    CompareScreen #compare-status { height: auto; }
    CompareScreen #compare-results { height: 1fr; }
    CompareScreen #compare-table { height: auto; max-height: 12; }
    CompareScreen #compare-paragraphs { height: auto; }
    CompareScreen .compare-plot { height: 2; }
    CompareScreen .compare-plot Label { width: 36; }
    CompareScreen .compare-plot Sparkline { width: 1fr; }
    """

    BINDINGS = [
        Binding("escape", "stop_or_close", "Stop / close", id="compare.close", tooltip="Stop the comparison, or close"),
        Binding(
            "ctrl+c",
            "stop",
            "Stop",
            priority=True,
            show=False,
            id="compare.stop",
            tooltip="Stop the comparison; the rows that finished stay",
        ),
    ]

    def __init__(self, text: str, loaded: LoadOptions | None, language: Language = ENGLISH) -> None:
        """`text`: the draft to score; `loaded`: the model loaded (the first to compare, and how models run)."""
        super().__init__()
        self._language = language
        self._text = text
        self._loaded = loaded
        self._run_id: int | None = None
        self._records: list[dict] = []

    @property
    def running(self) -> bool:
        return self._run_id is not None

    def compose(self) -> ComposeResult:
        loaded = self._loaded
        models = shlex.quote(str(loaded.model_path)) if loaded is not None else ""
        lora = str(loaded.lora_path) if loaded is not None and loaded.lora_path is not None else ""
        _ = self._language.gettext
        with Vertical(id="compare-dialog", classes="dialog"):
            yield Static(_("Compare models on this draft"), classes="dialog-title")
            yield Label(_("Model files, the first the one the others are measured against (quote a path with spaces)"))
            yield Input(models, placeholder="mine.gguf mine-Q4_K_M.gguf other.gguf", id="compare-models")
            with Horizontal(classes="compare-fields"):
                yield Input(lora, placeholder=_("LoRA adapter (optional)"), id="compare-lora")
                # The scales are read with a point (float()): the example keeps it in any language.
                yield Input("0 1" if lora else "", placeholder=_("LoRA scales, e.g. 0 0.5 1"), id="compare-scales")
            with Horizontal(classes="dialog-buttons"):
                yield Button(_("Compare"), variant="primary", id="compare-start")
                yield Button(_("Close"), id="compare-close")
            yield ProgressBar(show_eta=False, id="compare-progress")
            yield Static("", id="compare-status", markup=False)
            with VerticalScroll(id="compare-results"):
                yield DataTable(id="compare-table", cursor_type="row", zebra_stripes=True)
                yield Static("", id="compare-plots-title", markup=False)
                yield Vertical(id="compare-plots")
                yield DataTable(id="compare-paragraphs", zebra_stripes=True)

    def on_mount(self) -> None:
        set_shown(self.query_one("#compare-progress", ProgressBar), False)
        table = self.query_one("#compare-table", DataTable)
        _ = self._language.gettext
        headings = {key: heading for key, heading, _style in COLUMNS}
        table.add_columns(_("model"), *(_(headings[key]) for key in SHOWN_COLUMNS))
        self.query_one("#compare-models", Input).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop":  # ctrl+c copies in the fields when nothing runs
            return self.running
        return True

    # ---- starting and stopping -------------------------------------------------------
    @on(Input.Submitted)
    @on(Button.Pressed, "#compare-start")
    def start(self) -> None:
        _ = self._language.gettext
        if self.running:
            self.notify(_("Already comparing: Esc stops it."), severity="warning")
            return
        if not self._text.strip():
            self.notify(_("There is no text to compare on yet: write some first."), severity="warning")
            return
        try:
            request = request_from_fields(
                self.query_one("#compare-models", Input).value,
                self.query_one("#compare-lora", Input).value,
                self.query_one("#compare-scales", Input).value,
                self._loaded,
                self._language,
            )
        except ValueError as error:
            self.notify(str(error), severity="warning")
            return
        self._clear_results()
        run_id = self._run_id = new_run_id()
        progress = self.query_one("#compare-progress", ProgressBar)
        set_shown(progress, True)
        progress.update(total=None, progress=0)
        self._say(_("Checking the model files…"))
        text = self._text

        def run() -> None:
            worker = get_current_worker()
            run_comparison_posting(request, text, run_id, self.post_message, lambda: worker.is_cancelled)

        self.run_worker(run, thread=True, group="compare", exclusive=True, exit_on_error=False)

    def action_stop(self) -> None:
        if self.running:
            self.workers.cancel_group(self, "compare")
            self._say(self._language.gettext("Stopping…"))

    def action_stop_or_close(self) -> None:
        if self.running:
            self.action_stop()
        else:
            self.dismiss(None)

    @on(Button.Pressed, "#compare-close")
    def close(self) -> None:  # the result is None: the draft's colours stay as they are
        self.action_stop()  # the worker sees it within a tenth of a second and ends the child
        self.dismiss(None)

    # ---- what the worker posts ---------------------------------------------------------
    def on_comparison_progressed(self, message: ComparisonProgressed) -> None:
        if message.run_id != self._run_id:
            return
        progress = self.query_one("#compare-progress", ProgressBar)
        # Rows in all, a row's windows its fraction: one bar for the whole run.
        progress.update(total=message.rows, progress=message.row - 1 + message.windows_done / max(message.windows, 1))
        said = self._language.gettext("[{row}/{rows}] scoring {label}")
        self._say(said.format(row=message.row, rows=message.rows, label=message.label))

    def on_comparison_row_finished(self, message: ComparisonRowFinished) -> None:
        if message.run_id != self._run_id:
            return
        self._records.append(message.record)
        self._show_results()

    def on_comparison_ended(self, message: ComparisonEnded) -> None:
        if message.run_id != self._run_id:
            return
        self._run_id = None
        set_shown(self.query_one("#compare-progress", ProgressBar), False)
        language = self._language
        finished = sum(1 for record in self._records if "error" not in record)
        if message.stopped:
            said = language.ngettext(
                "Stopped: {count} row finished (shown below).",
                "Stopped: {count} rows finished (shown below).",
                finished,
            )
            self._say(said.format(count=finished))
        else:
            self._say(self._notes() or language.gettext("Done."))
        if finished > 1:
            self.notify(
                language.gettext("Enter on a row colours your draft compared with the first row (F9 scores it again).")
            )

    def on_comparison_failed(self, message: ComparisonFailed) -> None:
        if message.run_id != self._run_id:
            return
        self._run_id = None
        set_shown(self.query_one("#compare-progress", ProgressBar), False)
        self._say("")
        title = self._language.gettext("Comparison not run")
        self.notify(message.error, title=title, severity="error", timeout=12, markup=False)

    @on(DataTable.RowSelected, "#compare-table")
    def colour_the_draft(self, event: DataTable.RowSelected) -> None:
        """Close with the draft coloured by the chosen row against the first finished one."""
        finished = [record for record in self._records if "error" not in record]
        chosen = self._records[event.cursor_row] if event.cursor_row < len(self._records) else None
        if self.running or chosen is None or "error" in chosen or not finished or chosen is finished[0]:
            said = self._language.gettext("Choose a later row that finished, once the comparison has ended.")
            self.notify(said, severity="warning")
            return
        self.dismiss(compared_words(self._text, finished[0], chosen))

    # ---- showing the rows ------------------------------------------------------------------
    def _say(self, line: str) -> None:
        self.query_one("#compare-status", Static).update(line)

    def _notes(self) -> str:
        return "\n".join(f"{record['label']}: {note}" for record in self._records for note in record.get("notes", ()))

    def _clear_results(self) -> None:
        self._records = []
        self.query_one("#compare-table", DataTable).clear()
        self.query_one("#compare-plots", Vertical).remove_children()
        self.query_one("#compare-plots-title", Static).update("")
        self.query_one("#compare-paragraphs", DataTable).clear(columns=True)

    def _show_results(self) -> None:
        from scriptorium.inference.local.comparison import paragraph_spans

        formats = {key: style for key, _, style in COLUMNS}
        number = self._language.number
        table = self.query_one("#compare-table", DataTable)
        record = self._records[-1]
        # Text, not markup: a file name may hold brackets.
        table.add_row(
            Text(display_safe(record["label"], 40)),
            *(cell(record.get(key), formats[key], number) for key in SHOWN_COLUMNS),
        )
        spans = paragraph_spans(self._text)
        scored = [(r, paragraph_bits(r, spans)) for r in self._records if "error" not in r]
        if not scored:
            return
        self.query_one("#compare-plots-title", Static).update(
            self._language.gettext(
                "Bits per character, paragraph by paragraph (higher: the model finds your prose more surprising there)"
            )
        )
        plots = self.query_one("#compare-plots", Vertical)
        if "error" not in record:
            values = [value or 0.0 for value in scored[-1][1]]
            plots.mount(
                Horizontal(
                    Label(display_safe(record["label"], 34), markup=False),
                    Sparkline(values, summary_function=max),
                    classes="compare-plot",
                )
            )
        self._show_paragraphs(spans, scored)

    def _show_paragraphs(self, spans: list[tuple[int, int]], scored: list[tuple[dict, list[float | None]]]) -> None:
        """One line per paragraph: its first words, each row's bits per character, and each
        later row's difference from the first (negative: it finds the prose less surprising)."""
        _, written = self._language.gettext, self._language.number
        table = self.query_one("#compare-paragraphs", DataTable)
        table.clear(columns=True)
        first_label = scored[0][0]["label"]
        labels = [display_safe(r["label"], 24) for r, _bits in scored]
        differences = [_("{label} − first").format(label=label) for label in labels[1:]]
        table.add_columns("#", _("paragraph"), *(Text(label) for label in (*labels, *differences)))
        first = scored[0][1]
        for number, (start, end) in enumerate(spans):
            values = [bits[number] for _, bits in scored]
            changes = [
                None if value is None or first[number] is None else value - first[number] for value in values[1:]
            ]
            table.add_row(
                str(number + 1),
                Text(display_safe(paragraph_opening(self._text[start:end], 32), 32)),
                *(cell(value, "{:.3f}", written) for value in values),
                *(cell(change, "{:+.3f}", written) for change in changes),
            )
        said = _("The first row, {label}, is the one the others are measured against.")
        table.tooltip = said.format(label=first_label)
