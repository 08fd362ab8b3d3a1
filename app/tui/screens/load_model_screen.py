"""Small dialogs that ask for a path: which model to load, where to save the draft.

The model picker with discovery (issue 5) can replace LoadModelScreen; both return
what the app needs (LoadOptions, a Path) or None when the author backs out.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.app.i18n.language import ENGLISH, Language


def _expanded(text: str) -> Path | None:
    text = text.strip()
    return Path(text).expanduser() if text else None


class LoadModelScreen(ModalScreen[LoadOptions | None]):
    """Ask for a model file (and optionally a LoRA adapter and the SentencePiece .model to
    tokenize with); the draft stays as it is."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="load.cancel", tooltip="Keep writing without loading")]

    def __init__(
        self, current: LoadOptions | None, error: str = "", threads: int | None = None, language: Language = ENGLISH
    ) -> None:
        """`current`: the options to start from (the model that failed or is loaded);
        `threads`: llama.cpp threads when there is none."""
        super().__init__()
        self._language = language
        self._current = current
        self._error = error
        self._threads = threads

    def compose(self) -> ComposeResult:
        current = self._current
        _ = self._language.gettext
        with Vertical(id="dialog", classes="dialog"):
            yield Static(_("Load a model"), classes="dialog-title")
            if self._error:
                yield Static(self._error, classes="dialog-error", markup=False)
            yield Label(_("GGUF model file"))
            yield Input(str(current.model_path) if current else "", placeholder="/path/to/model.gguf", id="model-path")
            yield Label(_("LoRA adapter (optional)"))
            yield Input(
                str(current.lora_path) if current and current.lora_path else "",
                placeholder="/path/to/adapter.gguf",
                id="lora-path",
            )
            # Here too, or a .model that cannot be read would fail every model typed above.
            yield Label(_("SentencePiece .model it was trained with (optional)"))
            yield Input(
                str(current.spm_path) if current and current.spm_path else "",
                placeholder="/path/to/tokenizer.model",
                id="spm-path",
            )
            with Horizontal(classes="dialog-buttons"):
                yield Button(_("Load"), variant="primary", id="load")
                yield Button(_("Cancel"), id="cancel")

    def on_mount(self) -> None:
        self.query_one("#model-path", Input).focus()

    @on(Input.Submitted)
    @on(Button.Pressed, "#load")
    def _load(self) -> None:
        model = _expanded(self.query_one("#model-path", Input).value)
        if model is None:
            self.notify(self._language.gettext("Type the path of a .gguf model file."), severity="warning")
            return
        lora = _expanded(self.query_one("#lora-path", Input).value)
        spm = _expanded(self.query_one("#spm-path", Input).value)
        base = self._current or LoadOptions(model_path=model, n_threads=self._threads)
        self.dismiss(replace(base, model_path=model, lora_path=lora, spm_path=spm))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class SavePathScreen(ModalScreen[Path | None]):
    """Ask where an unnamed draft should be saved."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="save.cancel", tooltip="Do not save")]

    def __init__(self, language: Language = ENGLISH) -> None:
        super().__init__()
        self._language = language

    def compose(self) -> ComposeResult:
        _ = self._language.gettext
        with Vertical(id="dialog", classes="dialog"):
            yield Static(_("Save the draft as"), classes="dialog-title")
            yield Input(placeholder="draft.md", id="save-path")
            with Horizontal(classes="dialog-buttons"):
                yield Button(_("Save"), variant="primary", id="save")
                yield Button(_("Cancel"), id="cancel")

    @on(Input.Submitted)
    @on(Button.Pressed, "#save")
    def _save(self) -> None:
        path = _expanded(self.query_one(Input).value)
        if path is None:
            self.notify(self._language.gettext("Type a file name."), severity="warning")
            return
        self.dismiss(path)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
