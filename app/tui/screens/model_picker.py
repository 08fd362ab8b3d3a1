"""The model picker: what discovery finds (models, and the LoRA adapters for the chosen
model's architecture), to switch to without restarting. The welcome screen is the same
picker with a word on how to point scriptorium at a GGUF, shown when there is no model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from scriptorium.inference.gguf.discovery import (
    KIND_LORA,
    KIND_MODEL,
    SOURCE_CONFIG,
    SOURCE_DEMO,
    SOURCE_MODELS_DIR,
    Discovery,
    FoundModel,
)

from scriptorium.app.models import choice as model_choice
from scriptorium.app import paths
from scriptorium.app.config.schema import Config
from scriptorium.app.i18n.language import ENGLISH, Language
from scriptorium.app.i18n.marker import N_
from scriptorium.app.units import format_bytes


@dataclass(frozen=True, slots=True)
class ModelChoice:
    model: Path
    lora: Path | None
    lora_scale: float


SOURCE_NAMES = {SOURCE_CONFIG: N_("config"), SOURCE_MODELS_DIR: N_("models folder"), SOURCE_DEMO: N_("demo")}
"""Where discovery found a model, in words to translate (LM Studio and Hugging Face are names)."""


def _describe(model: FoundModel, language: Language) -> Text:
    size = format_bytes(model.size_bytes, language.number)
    source = language.gettext(SOURCE_NAMES[model.source]) if model.source in SOURCE_NAMES else model.source
    facts = " · ".join(x for x in (model.path.name, model.architecture, model.quantization, size, source) if x)
    # Text, not markup: a model name may hold brackets.
    return Text.assemble(model.name, ("  " + facts, "dim"))


class ModelPickerScreen(ModalScreen[ModelChoice | None]):
    """Returns the model (and adapter) to load, or None to keep the current one."""

    BINDINGS = [
        Binding(
            "escape",
            "dismiss(None)",
            "Cancel",
            id="picker.cancel",
            tooltip="Keep the current model and go back to writing",
        )
    ]
    TITLE_TEXT = N_("Choose a model")

    def __init__(
        self,
        config: Config,
        *,
        discovery: Discovery | None = None,
        lora_scale: float = 1.0,
        language: Language = ENGLISH,
    ) -> None:
        super().__init__()
        self._language = language
        self._config = config
        self._discovery = discovery
        self._scale = lora_scale
        self._models: list[FoundModel] = []
        self._adapters: list[FoundModel] = []
        self._dismissed = False

    def intro(self) -> str:
        return ""

    def compose(self) -> ComposeResult:
        _ = self._language.gettext
        with Vertical(classes="dialog picker"):
            yield Static(_(self.TITLE_TEXT), classes="dialog-title")
            if self.intro():
                yield Static(self.intro(), id="picker-intro", markup=False)
            yield Label(_("Models found (Enter loads)"))
            yield OptionList(Option(_("Looking for GGUF files…"), disabled=True), id="picker-models")
            yield Label(_("LoRA adapter for this model's architecture"))
            yield OptionList(Option(self._no_adapter(), id="none"), id="picker-adapters")
            yield Label(_("Adapter scale (0 disables it, 1 as trained)"))
            # As typed back: float() reads a point, so the field keeps Python's form in any language.
            yield Input(f"{self._scale:g}", id="picker-scale")
            with Horizontal(classes="dialog-buttons"):
                yield Button(_("Load"), variant="primary", id="load")
                yield Button(_("Cancel"), id="cancel")

    def _no_adapter(self) -> str:
        return self._language.pgettext("LoRA adapter", "none")

    def on_mount(self) -> None:
        self.query_one("#picker-models", OptionList).focus()
        if self._discovery is not None:
            self._show(self._discovery)
        else:
            self._discover()

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _discover(self) -> None:
        # Scanning the Hugging Face cache can take a while: never on the UI thread.
        try:
            found = model_choice.discover(self._config)
        except Exception as error:  # noqa: BLE001 - a bad folder must not take the app down
            said = self._language.gettext("Discovery failed: {error}").format(error=error)
            self.app.call_from_thread(self.notify, said, severity="error")
            found = Discovery(models=())
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show, found)

    def _show(self, discovery: Discovery) -> None:
        self._discovery = discovery
        self._models = discovery.usable(KIND_MODEL)
        models = self.query_one("#picker-models", OptionList)
        models.clear_options()
        if self._models:
            models.add_options([Option(_describe(m, self._language), id=str(i)) for i, m in enumerate(self._models)])
            models.highlighted = 0
        else:
            said = self._language.gettext("No GGUF models found (see above for where to put one).")
            models.add_option(Option(said, disabled=True))
        for problem in discovery.problems:
            self.notify(problem, severity="warning", timeout=10)

    @on(OptionList.OptionHighlighted, "#picker-models")
    def _model_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        model = self._model(event.option_index)
        adapters = self.query_one("#picker-adapters", OptionList)
        adapters.clear_options()
        adapters.add_option(Option(self._no_adapter(), id="none"))
        self._adapters = []
        if model is not None and model.architecture and self._discovery is not None:
            self._adapters = [a for a in self._discovery.adapters_for(model.architecture) if a.kind == KIND_LORA]
            adapters.add_options(
                [Option(_describe(a, self._language), id=str(i)) for i, a in enumerate(self._adapters)]
            )
        adapters.highlighted = 0

    def _model(self, index: int | None) -> FoundModel | None:
        return self._models[index] if index is not None and 0 <= index < len(self._models) else None

    @on(OptionList.OptionSelected, "#picker-models")
    @on(OptionList.OptionSelected, "#picker-adapters")
    @on(Input.Submitted, "#picker-scale")
    @on(Button.Pressed, "#load")
    def _load(self) -> None:
        model = self._model(self.query_one("#picker-models", OptionList).highlighted)
        if model is None:
            self.notify(self._language.gettext("There is no model to load here yet."), severity="warning")
            return
        index = self.query_one("#picker-adapters", OptionList).highlighted
        adapter = self._adapters[index - 1].path if index and 0 < index <= len(self._adapters) else None
        text = self.query_one("#picker-scale", Input).value.strip()
        try:
            scale = float(text)
        except ValueError:
            scale = -1.0
        if not 0.0 <= scale <= 4.0:
            said = self._language.gettext("The adapter scale must be a number between 0 and 4, not '{text}'.")
            self.notify(said.format(text=text), severity="error")
            return
        self.dismiss(ModelChoice(model.path, adapter, scale))

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)

    def dismiss(self, result: ModelChoice | None = None) -> AwaitComplete:
        """Once only. A second Enter (or Esc) queued before the first was handled arrives
        after this screen is gone, and Textual's pop would take the main screen instead."""
        if self._dismissed or self.app.screen is not self:
            return AwaitComplete()
        self._dismissed = True
        return super().dismiss(result)


class WelcomeScreen(ModelPickerScreen):
    """No model given, none configured, no demo model: how to get one, and what was found."""

    TITLE_TEXT = N_("Welcome to scriptorium: there is no model yet")

    def __init__(
        self, config: Config, *, discovery: Discovery | None = None, demo_hint: str = "", language: Language = ENGLISH
    ) -> None:
        super().__init__(config, discovery=discovery, language=language)
        self._demo_hint = demo_hint

    def intro(self) -> str:
        _ = self._language.gettext
        config_file = self._config.source or paths.config_file()
        lines = [
            _("Point scriptorium at a GGUF model file in any of these ways:"),
            _("  • start it with  scriptorium --model FILE.gguf"),
            _('  • set  path = "FILE.gguf"  under [model] in {config_file}  (scriptorium config path)').format(
                config_file=config_file
            ),
            _("  • put .gguf files in {folder}  (also found: LM Studio, Hugging Face cache)").format(
                folder=paths.models_dir()
            ),
        ]
        if self._demo_hint:
            lines.append(_("  • or install the small demo model: {hint}").format(hint=self._demo_hint))
        lines.append(_("Pick one below to load it now, or press Esc to write without a model."))
        return "\n".join(lines)
