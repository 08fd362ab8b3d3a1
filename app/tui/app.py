"""ScriptoriumApp: the Textual application around one model.

It holds what outlives a screen, as one reactive value the main screen receives (attributes down):
`engine_state` (tui/engine_state.py), the backend, the model's status, the live sampler settings
the keys change; replaced whole here, as the requests for it come up. Each part has one owner:
the model lifecycle (models/lifecycle.py) for loading and switching, the manuscript (tui/manuscript/: the
draft file, the sessions, the autosave) for what is written and saved. Requests come up as messages,
handled here once.
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Iterable, Mapping

from textual import on
from textual.app import App, SystemCommand
from textual.binding import BindingType
from textual.dom import DOMNode
from textual.notifications import Notification, Notify
from textual.reactive import var
from textual.screen import Screen
from textual.worker import get_current_worker

from scriptorium.inference.core.backend import BackendLoader
from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.inference.core.settings import SamplerSettings
from scriptorium.inference.core.speculation import next_speculation

from scriptorium.app.config.run_settings import RunSettings
from scriptorium.app.config.schema import Config
from scriptorium.app.config.tui_settings import TuiSettings
from scriptorium.app.models import startup as model_startup
from scriptorium.app.models.lifecycle import ModelLifecycle
from scriptorium.app.models.replaced import REPLACED_TITLE
from scriptorium.app.sessions import AnySession, SessionStore
from scriptorium.app.tui.manuscript.session_keeper import SessionKeeper
from scriptorium.app.sessions.opening import DraftFile, open_draft_at_start
from scriptorium.app.tui import pinning, saving, system_commands
from scriptorium.app.tui.bindings import APP_BINDINGS, binding_sections, keymap_problems
from scriptorium.app.tui.engine_state import EngineState
from scriptorium.app.tui.keys import KeyMap
from scriptorium.app.tui.manuscript import Manuscript, SaveFailed
from scriptorium.app.tui.process_tuning import ProcessTuning
from scriptorium.app.tui.quit_signals import QuitOnSignals
from scriptorium.app.tui.screens.main_screen import MainScreen
from scriptorium.app.tui.widgets.draft_pane import DraftPane
from scriptorium.app.tui.widgets.mode_pane import ModePane
from scriptorium.app.tui.widgets.sampler_panel import SamplerPanel

# The screens an action opens (help, sessions, compare, the model picker, the context viewer)
# are imported by that action, the first time it runs: the author waits for the first frame,
# and only the main screen is on it.
if TYPE_CHECKING:
    from scriptorium.app.models import loading
    from scriptorium.app.tui import generation
    from scriptorium.app.tui.compared_colours import DraftComparison
    from scriptorium.app.tui.screens.model_picker import ModelChoice


NOTICES_KEPT = 200
"""A long session's messages: enough to find the one that mattered, bounded all the same."""


class ScriptoriumApp(App[None], inherit_bindings=False):
    """Write with your own model: draft and chat, with llama.cpp's numbers beside them."""

    # Absolute, so that a subclass defined elsewhere still finds the stylesheet.
    CSS_PATH = Path(__file__).with_name("scriptorium.tcss")
    TITLE = "scriptorium"
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-slim"), (76, "-narrow"), (120, "-wide")]
    VERTICAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-short"), (36, "-tall")]
    BINDINGS: ClassVar[list[BindingType]] = APP_BINDINGS

    engine_state: var[EngineState] = var(EngineState)
    """The model and the sampler the next generation takes: owned here, bound into the main screen."""

    def __init__(
        self,
        *,
        backend_loader: BackendLoader,
        settings: TuiSettings | None = None,
        keymap: Mapping[str, str] | None = None,
        draft: DraftFile | Path | None = None,
        load_options: LoadOptions | None = None,
        store: SessionStore | None = None,
        resume: bool = False,
        model_source: model_startup.ModelSource | None = None,
        config: Config | None = None,
        config_problems: list[str] | None = None,
        run_config: RunSettings | None = None,
    ) -> None:
        """`backend_loader`: chosen by app/cli; `load_options` loads at once, else `model_source` resolves."""
        super().__init__()
        self.settings = (settings or TuiSettings()).validated()
        self.config = config or Config()
        self._custom_sampler: SamplerSettings | None = None
        """The author's own values last tuned (set on the command line, or with the keys): the preset cycle comes back to them."""
        self.language = self.settings.language
        self.keys = KeyMap(binding_sections(self.BINDINGS), keymap or {}, self.get_key_display, self.language.gettext)
        self.models = ModelLifecycle(
            run_config, self.settings.generation_threads(), self._show_model, self.keys.key_display, self.language
        )
        self.backend_loader = backend_loader
        self._config_problems = list(config_problems or ())
        self._model_source = model_source
        self._initial_load = load_options
        path = draft.path if isinstance(draft, DraftFile) else draft
        self.notices: deque[Notification] = deque(maxlen=NOTICES_KEPT)
        """Every notification of this run (the last NOTICES_KEPT): the messages screen shows them."""
        # What it says comes up as messages (a background save's failure from the writing thread: posted, never
        # waited for).
        self.manuscript = Manuscript(
            store or SessionStore(),
            DraftFile(path),
            self.post_message,
            self.set_timer,
            self.language,
            save_key=lambda: self.keys.key_display("draft.save"),
            notification_timeout=self.NOTIFICATION_TIMEOUT,
        )
        session, self._startup_notes = open_draft_at_start(self.sessions.store, path, resume, self.language.gettext)
        self.sessions.adopt(session)
        self._draft_text = self.sessions.draft.text if self.sessions.draft else ""
        self._screen_ready = False
        self._tuning = ProcessTuning()
        self.set_reactive(
            ScriptoriumApp.engine_state,
            EngineState(sampler=self.settings.sampler, bias=self.settings.bias, speculation=self.settings.speculation),
        )
        self.theme = self.config.ui.theme or self.theme  # the config checked the name

    @property
    def sessions(self) -> SessionKeeper:
        """The manuscript's session keeper: the sessions open now, what they recorded, the store."""
        return self.manuscript.sessions

    # ---- start and stop ------------------------------------------------------------
    async def on_mount(self) -> None:
        self._tuning.start()
        self.call_after_refresh(self._tuning.first_frame)
        self._quit_signals = QuitOnSignals.started(self._quit_on_signal)
        if self.keys.keymap:
            self.set_keymap(self.keys.for_textual())
        self.main = MainScreen(
            self.manuscript.draft_file, self._draft_text, self.settings, self.keys.key_display
        ).data_bind(ScriptoriumApp.engine_state)
        # The classes of the terminal's size, which the screen's first resize sets: set then,
        # they restyled the whole screen a second time before the first frame.
        self.main.add_class(*self._breakpoint_classes())
        await self.push_screen(self.main)
        self.manuscript.shown_on(self.main)
        self._screen_ready = True
        self._report_startup()
        if (chat := self.sessions.chat) is not None:  # adopted: not saved over with the empty screen first
            await self.main.show_chat(chat.turn_messages(), chat.unsent, chat.turn_endings())
        # Options given (a server), else the session reopened goes on with its model unless --model named one.
        if start := self._initial_load or self.models.session_options(
            self._model_source, self.sessions.last_generation()
        ):
            self.load_model(start)
        elif self._model_source is not None:
            self.resolve_model(self._model_source)

    def _breakpoint_classes(self) -> list[str]:
        """Textual's rule: per axis, the class of the largest breakpoint the size reaches."""
        width, height = self.size
        return [
            max((edge, name) for edge, name in breakpoints if size >= edge)[1]
            for size, breakpoints in ((width, self.HORIZONTAL_BREAKPOINTS), (height, self.VERTICAL_BREAKPOINTS))
        ]

    def _report_startup(self) -> None:
        _ = self.language.gettext
        for line in [*self._config_problems, *keymap_problems(self.keys.keymap)]:
            self.notify(line, title=_("Config"), severity="warning", timeout=15)
        for line in self._startup_notes:
            self.notify(line, title=_("Sessions"), timeout=15)
        self.sessions.report_damaged()

    def _quit_on_signal(self) -> None:  # the terminal closed, or a kill: nobody to ask what to do
        if self._screen_ready:
            self.manuscript.leave_and_save(pinning.typed_in_editors(self.screen_stack))
        self.exit()

    async def action_quit(self) -> None:
        # The author's text is saved; only a failed save asks what to do.
        if self.manuscript.leave_and_save(pinning.typed_in_editors(self.screen_stack)):
            return self.exit()
        saving.ask_before_quitting(self, self.manuscript)

    def on_unmount(self) -> None:
        self.sessions.close()  # the session files still being written in the background, and their claims
        self._tuning.stop()
        self._quit_signals.stop()
        if self._screen_ready:
            self.main.stop_generation()
        self.models.close()

    # ---- the model -----------------------------------------------------------------
    def _show_model(self) -> None:  # the lifecycle changed: what the screen receives follows it
        backend, lora_scale = self.models.backend, self.engine_state.lora_scale
        if backend is not None:
            lora_scale = backend.lora_scale if backend.adapter is not None else None
        self.engine_state = replace(
            self.engine_state, backend=backend, model_status=self.models.status, lora_scale=lora_scale
        )

    def load_model(self, options: LoadOptions | None) -> None:
        """Load `options` in the background, the old model closed once their files pass; None loads nothing."""
        if options is None:
            return
        from scriptorium.app.models import loading

        load_id = self.models.asked()
        if not self.models.checks_files_first():
            return self.on_model_files_checked(loading.ModelFilesChecked(load_id, options))
        self.run_worker(
            lambda: loading.check_files(options, load_id, self.post_message), thread=True, exit_on_error=False
        )

    # The model's messages (models/loading.py) and the generation's (tui/generation.py) are
    # handled by name, not with @on(class): their modules load with the first model and the
    # first generation, after the first frame, which does not need their 18 dataclasses.
    def on_model_files_checked(self, message: loading.ModelFilesChecked) -> None:
        from scriptorium.app.models import loading

        if not self.models.is_current(message.load_id):  # another load was asked for meanwhile
            return
        if self._screen_ready:
            self.main.another_model_loading()
        old, options, load_id = self.models.begin_load(message.options), message.options, message.load_id
        self.run_worker(
            lambda: loading.load_backend(
                self.backend_loader, old, options, load_id, self.post_message, lambda: get_current_worker().is_cancelled
            ),  # another load began
            thread=True,
            exclusive=True,
            group="model",
            exit_on_error=False,
        )

    def on_model_load_progressed(self, message: loading.ModelLoadProgressed) -> None:
        self.models.progressed(message.load_id, message.progress)

    def on_model_loaded(self, message: loading.ModelLoaded) -> None:
        if not self.models.loaded(message.load_id, message.backend):  # another was asked for meanwhile: not wanted
            self.run_worker(message.backend.close, thread=True, group="model-close")
            return
        self._tuning.settle()
        self.sessions.hashes.loaded(message.backend)  # a file re-converted in place: its old hash is not this one
        if warning := self.engine_state.model_status.tokenizer_warning:
            title = self.language.gettext("Tokenizer")
            self.notify(warning, title=title, severity="warning", timeout=12)
        for title, note in self.models.notes_when_ready(self.sessions.last_generation()):
            self.notify(note, title=title, timeout=12)

    def on_model_load_failed(self, message: loading.ModelLoadFailed) -> None:
        if (said := self.models.failed(message.load_id, message.options, message.error, message.server)) is not None:
            self.notify(said, title=self.language.gettext("Model not loaded"), severity="error", timeout=15)

    def on_backend_crashed(self, message: loading.BackendCrashed) -> None:
        # The failed request has said what llama.cpp wrote; the text is saved before anything else.
        if (options := self.models.crashed(message.backend, self.engine_state.lora_scale)) is not None:
            _ = self.language.gettext
            saved = _(" Your text is saved.") if self.manuscript.save_everything() else ""
            reload = not self.models.gives_up(options)
            title, said = (
                self.models.reload_said(options)
                if reload
                else (_("Model not loaded"), self.engine_state.model_status.error)
            )
            last_words = "" if message.said else f"{message.error}. "
            self.notify(last_words + said + saved, title=title, timeout=12)
            if reload:
                self.load_model(options)

    def on_backend_unreachable(self, message: loading.BackendUnreachable) -> None:
        self.models.not_answering(message.backend)

    def on_model_file_hashed(self, message: loading.ModelFileHashed) -> None:
        self.sessions.hashes.arrived(message.path, message.sha256)
        if note := self.models.hashed(message.path, message.sha256):
            self.notify(note, title=self.language.gettext(REPLACED_TITLE), severity="warning", timeout=15)

    def resolve_model(self, source: model_startup.ModelSource) -> None:
        self.models.resolving(source.reference, source.config.model.path)
        self.run_worker(
            lambda: model_startup.resolve(source, self.post_message),
            thread=True,
            group="model-resolve",
            exit_on_error=False,
        )

    @on(model_startup.DemoProgressed)
    def _demo_progressed(self, message: model_startup.DemoProgressed) -> None:
        from scriptorium.inference.gguf.demo_model import DEMO_DISPLAY_NAME  # see _model_chosen

        self.models.preparing_demo(DEMO_DISPLAY_NAME, message.done / message.total if message.total else 1.0)

    @on(model_startup.ModelResolved)
    def _model_resolved(self, message: model_startup.ModelResolved) -> None:
        self.models.chose(message.path)
        self.load_model(self.models.options_from_config(message.path))

    @on(model_startup.NoModelFound)
    def _no_model_found(self, message: model_startup.NoModelFound) -> None:
        from scriptorium.inference.gguf.demo_model import DEMO_INSTALL_HINT

        from scriptorium.app.tui.screens.model_picker import WelcomeScreen

        self.models.none_found()
        self.push_screen(
            WelcomeScreen(
                self.config, discovery=message.discovery, demo_hint=DEMO_INSTALL_HINT, language=self.language
            ),
            self._model_chosen,
        )

    @on(model_startup.ModelNotResolved)
    def _model_not_resolved(self, message: model_startup.ModelNotResolved) -> None:
        title = self.language.gettext("Model not loaded")
        self.notify(self.models.not_resolved(message.error), title=title, severity="error", timeout=15)

    def action_load_model(self) -> None:
        if (server := self.models.server_to_connect_again(self.engine_state.lora_scale)) is not None:
            return self.load_model(server)
        from scriptorium.app.tui.screens.load_model_screen import LoadModelScreen

        self.push_screen(
            LoadModelScreen(
                self.models.dialog_options(),
                self.engine_state.model_status.error,
                self.settings.generation_threads(),
                self.language,
            ),
            self.load_model,
        )

    def action_pick_model(self) -> None:
        if refusal := self.models.picking_refused():
            return self.notify(refusal, title=self.language.gettext("Models"), severity="warning", timeout=12)
        from scriptorium.app.tui.screens.model_picker import ModelPickerScreen

        scale = self.engine_state.lora_scale if self.engine_state.lora_scale is not None else 1.0
        self.push_screen(ModelPickerScreen(self.config, lora_scale=scale, language=self.language), self._model_chosen)

    def _model_chosen(self, choice: ModelChoice | None) -> None:
        if choice is None:
            return
        self.models.chose(choice.model)
        # Imported when first used: model choice brings discovery and the GGUF reader (some 10 ms
        # to import), which the first frame does not need (tests/packaging/test_startup_imports.py).
        from scriptorium.app.models import choice as model_choice

        if model_choice.is_demo_model(choice.model) and not choice.model.is_file():
            # Listed but not assembled yet: assemble it first, with progress, in a worker.
            return self.resolve_model(model_startup.ModelSource(model_choice.DEMO_NAME, self.config))
        try:
            options = self.models.options_for(choice.model, choice.lora, choice.lora_scale)
        except Exception as error:  # noqa: BLE001 - a bad value is a message
            return self.notify(str(error), severity="error")
        # Every generation records the model it ran on, so the session keeps the switch.
        self.load_model(options)

    # ---- generations, as the session records them ------------------------------------
    def on_generation_started(self, message: generation.GenerationStarted) -> None:
        self.manuscript.generation_started(message, self.engine_state.backend)

    def on_tokens_generated(self, message: generation.TokensGenerated) -> None:
        self.sessions.tokens(message.request_id, message.events)

    def on_generation_finished(self, message: generation.GenerationFinished) -> None:
        if message.event.seed is not None:
            self.engine_state = replace(self.engine_state, last_seed=message.event.seed)
        self.manuscript.generation_finished(message)
        self.models.generation_finished(message.event.threads)

    def on_generation_failed(self, message: generation.GenerationFailed) -> None:
        self.manuscript.generation_cut_short(message.request_id, ran=message.engine_started)

    def on_generation_withdrawn(self, message: generation.GenerationWithdrawn) -> None:
        self.manuscript.generation_cut_short(message.request_id, ran=message.engine_started)

    @on(ModePane.SeedChosen)
    def _seed_chosen(self, message: ModePane.SeedChosen) -> None:
        self.engine_state = replace(self.engine_state, last_seed=message.seed)

    @on(DraftPane.SuggestionAccepted)
    def _suggestion_accepted(self, message: DraftPane.SuggestionAccepted) -> None:
        self.manuscript.accepted(
            message.text,
            message.at_index,
            message.request_ids,
            message.parts,
            message.draft_text,
            rejected_ids=message.rejected_ids,
        )

    @on(DraftPane.SuggestionRejected)
    def _suggestion_rejected(self, message: DraftPane.SuggestionRejected) -> None:
        self.manuscript.rejected(message.request_ids, restorable=message.restorable)

    @on(DraftPane.SuggestionRestored)
    def _suggestion_restored(self, message: DraftPane.SuggestionRestored) -> None:
        self.sessions.restored(message.request_ids, message.taken_back)

    @on(ModePane.Edited)
    def _edited(self) -> None:
        self.manuscript.edited()

    # ---- saving ----------------------------------------------------------------------
    def on_app_focus(self) -> None:  # back from the editor that may have changed the draft file
        if self._screen_ready:
            self.manuscript.take_changed_file()

    @on(SaveFailed)
    def _save_failed(self, message: SaveFailed) -> None:
        if message.kind == "draft" and self._screen_ready:  # the unsaved dot comes back: the text is only here
            self.main.draft_saved(saved=False)

    @on(DraftPane.SaveRequested)
    def _save_requested(self) -> None:
        saving.save_requested(self, self.manuscript)

    # ---- sessions and export -----------------------------------------------------------
    def action_sessions(self) -> None:
        from scriptorium.app.tui.screens.sessions_screen import SessionsScreen

        self.manuscript.save_everything()
        current = self.sessions.of_mode(self.main.mode)
        self.push_screen(
            SessionsScreen(self.sessions, {current.id} if current else set(), self.language), self.show_session
        )

    async def show_session(self, session: AnySession | None) -> None:
        """Put `session` on screen (the draft editor or the chat), replacing what was there."""
        if session is None:  # the sessions screen closed without one
            return
        await self.manuscript.open(session, pinning.typed_in_editors(self.screen_stack))
        self.notify(self.models.session_opened(session.title, self.sessions.last_generation()))

    def action_edit_pinned(self, which: str) -> None:  # 'memory', 'note' or 'lore'
        pinning.edit_pinned(self, self.main, self.manuscript, which)

    def action_show_context(self) -> None:
        from scriptorium.app.tui import context_viewing

        context_viewing.show_context(self, self.main, self.action_edit_pinned)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "compare":  # its key is a priority one: on a dialog, the dialog's field keeps it
            return isinstance(self.screen, MainScreen)
        return super().check_action(action, parameters)

    def action_compare(self) -> None:
        # The loaded model comes first and sets how the others run; a llama-server's files are not here.
        from scriptorium.app.tui.screens.compare_screen import CompareScreen

        backend = self.engine_state.backend
        local = backend is not None and not backend.origin
        self.push_screen(
            CompareScreen(self.main.draft_text(), backend.options if local else None, self.language),
            self._comparison_chosen,
        )

    def _comparison_chosen(self, comparison: DraftComparison | None) -> None:
        if comparison is not None:
            self.main.draft.show_comparison(comparison)

    def action_export(self) -> None:
        from scriptorium.app.tui import exporting

        self.manuscript.save_everything()
        exporting.export_with_confirmation(self, self.sessions.of_mode(self.main.mode), self.language)

    # ---- keys: the sampler panel's (the live sampler state), help, the palette ---------------
    @on(SamplerPanel.Tuned)
    def _tuned(self, message: SamplerPanel.Tuned) -> None:
        state = self.engine_state
        if state.sampler.preset == "custom":  # the author's own values, for the preset cycle to come back to
            self._custom_sampler = state.sampler
        sampler, bias, lora_scale = message.applied(
            state.sampler, state.bias, state.lora_scale, self.config.all_presets(), self._custom_sampler
        )
        self.engine_state = replace(state, sampler=sampler, bias=bias, lora_scale=lora_scale)

    def on_notify(self, event: Notify) -> None:
        # Textual's own handler (App._on_notify) shows the toast; the app keeps what was said.
        self.notices.append(event.notification)

    def action_messages(self) -> None:
        from scriptorium.app.tui.screens.messages_screen import MessagesScreen

        self.push_screen(MessagesScreen(self.notices, self.language))

    def action_cycle_speculation(self) -> None:
        """Speculative decoding off -> prompt lookup -> the draft model (when one is set) -> off."""
        speculation = next_speculation(self.engine_state.speculation, self.settings.speculation)
        self.engine_state = replace(self.engine_state, speculation=speculation)
        _ = self.language.gettext
        said = _("Speculative decoding: {how}").format(how=speculation.describe())
        self.notify(said, title=_("Speculation"))

    def action_help(self) -> None:
        from scriptorium.app.tui.screens.help_screen import HelpScreen

        self.push_screen(HelpScreen(self.keys.rows(), self.language))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from system_commands.translated(super().get_system_commands(screen), self.language.gettext)
        if isinstance(screen, MainScreen):
            yield from self.keys.commands({"General": self, **screen.command_targets()}, self._run_from_palette)

    async def _run_from_palette(self, node: DOMNode, action: str) -> None:
        if not await self.run_action(action, node):
            self.notify(self.language.gettext("That is not available right now."), severity="warning")
