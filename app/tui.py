"""ScriptoriumApp: the Textual application around one engine.

It holds what outlives a screen: the engine (loaded in a background worker), the live
sampler state the keys change, the keymap, and the registry of bindings that the help
screen and the command palette are built from.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Callable, ClassVar, Mapping

from textual import on, work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.reactive import var

from scriptorium.inference.engine import Engine, LoadOptions
from scriptorium.inference.events import GenerationDone
from scriptorium.inference.settings import LogitBias, SamplerSettings

from . import tuning
from .config import Config
from .generation import GenerationRequest
from .model_startup import ModelSource
from .model_loading import ModelLoadFailed, ModelLoaded, ModelLoadProgressed, load_engine
from .screens.help_screen import HelpScreen
from .screens.load_model_screen import LoadModelScreen, SavePathScreen
from .screens.main_screen import MainScreen
from .screens.unsaved_screen import UnsavedScreen
from .session_keeper import DraftFile, SessionKeeper, open_draft_at_start
from .sessions import SessionStore
from .tui_bindings import BindingRegistry
from .tui_sessions import SESSION_BINDINGS, SessionsMixin
from .tui_settings import TuiSettings
from .widgets.draft_pane import DraftPane
from .widgets.model_panel import ModelStatus

EngineLoader = Callable[[LoadOptions, Callable[[float], None]], Engine]
"""Loads an engine, reporting llama.cpp's progress (0..1); Engine.load by default."""

GIL_SWITCH_INTERVAL = 0.001
"""Seconds a thread may hold the GIL while another waits for it (Python's default: 0.005)."""

class ScriptoriumApp(SessionsMixin, BindingRegistry, App[None], inherit_bindings=False):
    """Write with your own model: draft and chat, with llama.cpp's numbers beside them."""

    # Absolute, so that a subclass defined elsewhere still finds the stylesheet.
    CSS_PATH = Path(__file__).with_name("scriptorium.tcss")
    TITLE = "scriptorium"
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (120, "-wide")]
    VERTICAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-short"), (36, "-tall")]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1", "help", "Keys", id="app.help", tooltip="Every key, what it does, and its id for remapping"),
        Binding("ctrl+p", "command_palette", "Commands", show=False, priority=True, id="app.palette",
                tooltip="Search every action by name"),
        Binding("f2", "toggle_mode", "Mode", id="app.mode", tooltip="Switch between draft and chat"),
        Binding("f3", "toggle_sidebar", "Panels", show=False, id="app.sidebar", tooltip="Show or hide the side panels"),
        Binding("ctrl+t", "tune", "Tune", id="app.tune",
                tooltip="Go to the sampler panel: change settings with keys there (1-5 toggle panels)"),
        Binding("ctrl+q", "quit", "Quit", priority=True, id="app.quit", tooltip="Leave scriptorium"),
        Binding("ctrl+l", "load_model", "Model", show=False, id="app.load_model",
                tooltip="Load another model (and LoRA adapter)"),
        Binding("ctrl+c", "help_quit", "How to quit", show=False, system=True, id="app.help_quit",
                tooltip="Says which key quits (ctrl+c copies in the editor)"),
        *SESSION_BINDINGS,
    ]

    sampler: var[SamplerSettings] = var(SamplerSettings)
    bias: var[LogitBias] = var(LogitBias)
    lora_scale: var[float | None] = var(None)
    """The adapter scale the next generation uses; None when no adapter is loaded."""
    model_status: var[ModelStatus] = var(lambda: ModelStatus("none"))

    def __init__(
        self,
        *,
        settings: TuiSettings | None = None,
        keymap: Mapping[str, str] | None = None,
        draft: DraftFile | Path | None = None,
        load_options: LoadOptions | None = None,
        engine_loader: EngineLoader = Engine.load,
        store: SessionStore | None = None,
        resume: bool = False,
        model_source: ModelSource | None = None,
        config: Config | None = None,
        config_problems: list[str] | None = None,
        run_config: object | None = None,
    ) -> None:
        """`keymap` maps binding ids to keys (from the config file); `load_options`, when
        given, starts loading that model at once, else `model_source` is resolved (the demo
        model, the welcome screen); `engine_loader` is the seam for another way of getting
        an engine. The draft (a file, or with `resume` the last session) opens here: a
        SessionError names what cannot be read."""
        super().__init__()
        self.settings = (settings or TuiSettings()).validated()
        self.keymap = dict(keymap or {})
        self.config = config or Config()
        self.run_config = run_config  # type: ignore[assignment]
        self._config_problems = list(config_problems or ())
        self._model_source = model_source
        path = draft.path if isinstance(draft, DraftFile) else draft
        self.draft_file = DraftFile(path)
        self.sessions = SessionKeeper(store or SessionStore(), self.draft_file, self.notify,
                                      lambda: self.key_display("draft.save"))
        session, self._startup_notes = open_draft_at_start(self.sessions.store, path, resume)
        self.sessions.adopt(session)
        self._draft_text = self.sessions.draft.text if self.sessions.draft else ""
        self.engine: Engine | None = None
        self.engine_loader = engine_loader
        self.last_seed: int | None = None
        self._initial_load = load_options
        self._failed_options: LoadOptions | None = None
        self._load_id = 0
        self._screen_ready = False
        self._switch_interval = sys.getswitchinterval()
        self.set_reactive(ScriptoriumApp.sampler, self.settings.sampler)
        self.set_reactive(ScriptoriumApp.bias, self.settings.bias)

    # ---- start and stop ------------------------------------------------------------
    async def on_mount(self) -> None:
        # After each llama.cpp call the generation thread needs the GIL back; with the
        # default 5 ms switch interval a redraw in progress makes it wait that long.
        sys.setswitchinterval(GIL_SWITCH_INTERVAL)
        if self.keymap:
            self.set_keymap(self.keymap)
        self.main = MainScreen(self.draft_file, self._draft_text)
        await self.push_screen(self.main)
        self._screen_ready = True
        self._warn_unknown_keymap_ids()
        self._apply_config()
        self.refresh_sampler_panel()
        self.watch_model_status()
        chat = self.sessions.chat
        if chat is not None:
            await self.show_session(chat)
        if self._initial_load is not None:
            self.load_model(self._initial_load)
        elif self._model_source is not None:
            self.resolve_model(self._model_source)

    def _apply_config(self) -> None:
        for line in [*self._config_problems, *self._startup_notes]:
            self.notify(line, title="Config" if line in self._config_problems else "Sessions",
                        severity="warning" if line in self._config_problems else "information", timeout=15)
        theme = self.config.ui.theme
        if theme and theme in self.available_themes:
            self.theme = theme
        elif theme:
            self.notify(f"Unknown theme '{theme}' in the config; using the default "
                        f"(known: {', '.join(sorted(self.available_themes))}).", severity="warning", timeout=15)
        self.sessions.report_damaged()

    def _warn_unknown_keymap_ids(self) -> None:
        known = {binding.id for _, _, bindings in self.binding_sections() for binding in bindings}
        unknown = sorted(set(self.keymap) - known)
        if unknown:
            self.notify(f"Keymap names no such binding: {', '.join(unknown)} (F1 lists the ids)",
                        severity="warning", timeout=10)

    async def action_quit(self) -> None:
        draft = self.main.draft
        # The author's text is saved on the way out; only a failed save asks what to do.
        if self.save_everything():
            self.exit()
            return

        def decided(choice: str | None) -> None:
            if choice == "discard" or (choice == "save" and draft.save()):
                self.exit()
            elif choice == "save-as":
                self.ask_save_path(draft, then_exit=True)

        self.push_screen(UnsavedScreen(self.draft_file.display_name, has_path=self.draft_file.path is not None),
                         decided)

    def on_unmount(self) -> None:
        sys.setswitchinterval(self._switch_interval)
        if self._screen_ready:
            self.main.stop_generation()
        if self.engine is not None:
            self.engine.close()
            self.engine = None

    # ---- the model -----------------------------------------------------------------
    def load_model(self, options: LoadOptions) -> None:
        """Load `options` in the background; the editor stays usable meanwhile. The old
        model, if any, is closed first (two big models rarely fit in memory)."""
        old, self.engine = self.engine, None
        if old is not None:
            self.main.stop_generation()
            self.main.forget_generation()
        self.model_status = ModelStatus("loading", path=options.model_path,
                                        file_size=_size_or_zero(options.model_path))
        self._load_id += 1
        self._load_worker(old, options, self._load_id)

    @work(thread=True, exclusive=True, group="model", exit_on_error=False)
    def _load_worker(self, old: Engine | None, options: LoadOptions, load_id: int) -> None:
        load_engine(self.engine_loader, old, options, load_id, self.post_message)

    @on(ModelLoadProgressed)
    def _load_progressed(self, message: ModelLoadProgressed) -> None:
        if message.load_id == self._load_id and self.model_status.state == "loading":
            self.model_status = replace(self.model_status, progress=message.progress)

    @on(ModelLoaded)
    def _model_loaded(self, message: ModelLoaded) -> None:
        engine = message.engine
        if message.load_id != self._load_id:
            # Another model was asked for while this one loaded: it is not wanted.
            self.run_worker(engine.close, thread=True, group="model-close")
            return
        self.engine = engine
        self.lora_scale = engine.lora_scale if engine.adapter is not None else None
        self.model_status = ModelStatus("ready", path=engine.options.model_path, progress=1.0, facts=engine.facts,
                                        n_ctx=engine.n_ctx, adapter=engine.adapter,
                                        file_size=engine.facts.file_size)
        self._failed_options = None
        self.main.sidebar.kv.show_usage(engine.kv_usage())
        self.refresh_sampler_panel()

    @on(ModelLoadFailed)
    def _model_failed(self, message: ModelLoadFailed) -> None:
        if message.load_id != self._load_id:
            return
        self.model_status = ModelStatus("failed", path=message.options.model_path, error=message.error)
        self._failed_options = message.options
        self.notify(f"{message.error}\nYour text is safe; press {self.key_display('app.load_model')} to load "
                    "another model.", title="Model not loaded", severity="error", timeout=15)

    def watch_model_status(self) -> None:
        if not self._screen_ready:
            return
        self.main.show_model_state()
        self.main.sidebar.model.show(self.model_status, self.lora_scale, self.key_display("app.load_model"))

    def require_engine(self) -> Engine | None:
        """The engine, or None after telling the author why there is none."""
        if self.engine is not None:
            return self.engine
        status = self.model_status
        if status.state == "loading":
            self.notify(f"The model is still loading ({status.progress * 100:.0f}%); keep writing meanwhile.")
        else:
            self.notify(f"No model is loaded: press {self.key_display('app.load_model')} to choose one.",
                        severity="warning")
        return None

    def action_load_model(self) -> None:
        current = self._failed_options or (self.engine.options if self.engine else None)

        def chosen(options: LoadOptions | None) -> None:
            if options is not None:
                self.load_model(options)

        self.push_screen(LoadModelScreen(current, self.model_status.error, self.settings.generation_threads()),
                         chosen)

    # ---- generation ----------------------------------------------------------------
    def new_request(self, kind: str, prompt: str, *, special: bool = False,
                    extra_stop: tuple[str, ...] = ()) -> GenerationRequest:
        """A request with the sampler as it is right now."""
        sampler = self.sampler
        if extra_stop:
            sampler = replace(sampler, stop=sampler.stop + tuple(s for s in extra_stop if s not in sampler.stop))
        return GenerationRequest.create(kind=kind, prompt=prompt, settings=sampler, bias=self.bias,
                                        top_n=self.settings.top_n, lora_scale=self.lora_scale, special=special)

    def generation_finished(self, done: GenerationDone) -> None:
        if done.seed is not None:
            self.last_seed = done.seed
        self.refresh_sampler_panel()

    # ---- live sampler state (the keys in the sampler panel) ------------------------------
    def refresh_sampler_panel(self) -> None:
        running = self.main.running_request
        pending = running is not None and (running.settings, running.bias, running.lora_scale) != (
            replace(self.sampler, stop=running.settings.stop), self.bias, self.lora_scale)
        byte_ids = self.engine.byte_token_ids if self.engine is not None else None
        self.main.sidebar.sampler.show(self.sampler, self.bias, byte_ids, self.lora_scale, pending=pending)
        self.main.sidebar.model.show(self.model_status, self.lora_scale, self.key_display("app.load_model"))

    def watch_sampler(self) -> None:
        if self._screen_ready:
            self.refresh_sampler_panel()

    def watch_bias(self) -> None:
        self.watch_sampler()

    def watch_lora_scale(self) -> None:
        self.watch_sampler()

    def action_nudge(self, knob: str, direction: int) -> None:
        self.sampler = tuning.nudge(self.sampler, knob, direction)

    def action_cycle_preset(self) -> None:
        self.sampler = tuning.next_preset(self.sampler)

    def action_toggle_ban(self) -> None:
        self.bias = tuning.with_ban_toggled(self.bias)

    def action_new_seed(self) -> None:
        self.sampler = tuning.with_new_seed(self.sampler)

    def action_fix_seed(self) -> None:
        self.sampler = tuning.with_seed_fixed(self.sampler, self.last_seed)

    def action_lora_scale(self, direction: int) -> None:
        if self.lora_scale is None:
            self.notify("No LoRA adapter is loaded (start with --lora PATH, or load one with "
                        f"{self.key_display('app.load_model')}).", severity="warning")
            return
        self.lora_scale = tuning.lora_scale_moved(self.lora_scale, direction)

    # ---- screens, panels, modes -------------------------------------------------------
    def action_toggle_mode(self) -> None:
        self.main.switch_mode()

    def action_toggle_sidebar(self) -> None:
        self.main.sidebar.display = not self.main.sidebar.display
        if not self.main.sidebar.display:
            self.main.focus_mode()

    def action_tune(self) -> None:
        if self.screen is not self.main:
            return  # a dialog is open: it keeps the keys
        sidebar = self.main.sidebar
        sidebar.display = True
        sidebar.sampler.display = True
        # At once, not on the next idle as focus() does: the keys after Ctrl+T are for the sampler.
        self.main.set_focus(sidebar.sampler, scroll_visible=False)
        sidebar.sampler.scroll_visible(animate=False)

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.binding_rows()))

    def ask_save_path(self, pane: DraftPane, *, then_exit: bool = False) -> None:
        def chosen(path: Path | None) -> None:
            if path is None:
                return
            pane.draft_file.path = path
            self.main.draft_state_changed()
            if pane.save() and then_exit:
                self.exit()

        self.push_screen(SavePathScreen(), chosen)


def _size_or_zero(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
