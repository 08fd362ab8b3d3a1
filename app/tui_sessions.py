"""The app's sessions, model choice and export: a mixin of ScriptoriumApp, kept apart so
tui.py stays about the engine and the live sampler state.

Message handlers here are plain `on_*` methods: the messages (a suggestion accepted, a
generation's tokens, an edit) bubble up from the main screen after it has drawn them.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.binding import Binding
from textual.timer import Timer
from textual.widgets import TextArea
from textual.worker import get_current_worker

from scriptorium.inference.demo_model import DEMO_DISPLAY_NAME, DEMO_INSTALL_HINT
from scriptorium.inference.engine import LoadOptions

from . import model_startup, paths
from .config import Config
from .export import ExportError, export_session
from .generation import GenerationFinished, GenerationRequest, TokensGenerated
from .model_hash import file_sha256
from .model_loading import ModelLoaded
from .screens.confirm_screen import ConfirmScreen
from .screens.model_picker import ModelChoice, ModelPickerScreen, WelcomeScreen
from .screens.sessions_screen import SessionsScreen
from .session_keeper import AUTOSAVE_SECONDS, SessionKeeper
from .sessions import AnySession, ChatSession, DraftSession, SessionError
from .widgets.draft_pane import DraftPane
from .widgets.model_panel import ModelStatus

if TYPE_CHECKING:
    from .run_settings import RunSettings
    from .screens.main_screen import MainScreen, StreamSink

SESSION_BINDINGS = [
    Binding("f10,alt+m", "pick_model", "Models", show=False, id="app.models",
            tooltip="Choose a discovered model (and LoRA adapter) and switch to it"),
    Binding("f5", "sessions", "Sessions", show=False, id="app.sessions",
            tooltip="Open, rename or delete saved sessions"),
    Binding("f12", "export", "Export", show=False, id="app.export",
            tooltip="Export this session to Markdown, with how it was made in the front matter"),
]


class SessionsMixin:
    """Needs from the app: main, engine, sessions, config, run_config, settings, load_model, key_display."""

    main: "MainScreen"
    sessions: SessionKeeper
    config: Config
    run_config: "RunSettings | None"
    _autosave_timer: Timer | None = None
    _demo_running = False

    # ---- start ---------------------------------------------------------------------
    def resolve_model(self, source: model_startup.ModelSource) -> None:
        app: Any = self
        app.model_status = ModelStatus("loading", path=Path(source.reference or source.config.model.path or "model"))
        app.run_worker(lambda: model_startup.resolve(source, app.post_message), thread=True, group="model-resolve",
                       exit_on_error=False)

    def on_demo_progressed(self, message: model_startup.DemoProgressed) -> None:
        app: Any = self
        fraction = message.done / message.total if message.total else 1.0
        app.model_status = ModelStatus("loading", path=Path(f"{DEMO_DISPLAY_NAME}, first run: preparing"),
                                       progress=fraction)

    def on_model_resolved(self, message: model_startup.ModelResolved) -> None:
        app: Any = self
        self._demo_running = message.demo
        app.load_model(self.load_options_for(message.path, self.run_config.lora_path if self.run_config else None,
                                             self.run_config.lora_scale if self.run_config else 1.0))

    def on_no_model_found(self, message: model_startup.NoModelFound) -> None:
        app: Any = self
        app.model_status = ModelStatus("none")
        app.push_screen(WelcomeScreen(self.config, discovery=message.discovery, demo_hint=DEMO_INSTALL_HINT),
                        self._model_chosen)

    def on_model_not_resolved(self, message: model_startup.ModelNotResolved) -> None:
        app: Any = self
        app.model_status = ModelStatus("failed", error=message.error)
        app.notify(f"{message.error}\nYour text is safe; press {app.key_display('app.models')} to choose a model.",
                   title="Model not loaded", severity="error", timeout=15)

    def on_model_loaded(self, message: ModelLoaded) -> None:
        app: Any = self
        engine = message.engine
        if app.engine is not engine:
            return
        if self._demo_running and model_startup.model_choice.is_demo_model(engine.options.model_path):
            app.notify(f"Writing with {DEMO_DISPLAY_NAME}: a small demo model, good for trying scriptorium out. "
                       f"Press {app.key_display('app.models')} to choose your own GGUF model.",
                       title="Demo model", timeout=12)
        paths_to_hash = [engine.options.model_path] + ([engine.options.lora_path] if engine.adapter else [])
        self._hash_files([Path(p) for p in paths_to_hash if p is not None])

    @work(thread=True, group="hash", exit_on_error=False)
    def _hash_files(self, files: list[Path]) -> None:
        # Hashing a multi-GB model takes seconds the first time: never on the UI thread.
        app: Any = self
        for path in files:
            if get_current_worker().is_cancelled:
                return
            try:
                digest = file_sha256(path)
            except Exception:  # noqa: BLE001 - without a hash the record says null, which is honest
                continue
            app.call_from_thread(self.sessions.note_hash, str(path), digest)

    # ---- choosing a model ------------------------------------------------------------
    def load_options_for(self, model: Path, lora: Path | None, scale: float) -> LoadOptions:
        """Options for `model`: those of the model running now (context, threads...), else the
        command line and config's, else the defaults."""
        app: Any = self
        if app.engine is not None:
            # A SentencePiece .model belongs to the model it was named for, not to the next one.
            spm = app.engine.options.spm_path if Path(model) == Path(app.engine.options.model_path) else None
            return replace(app.engine.options, model_path=model, lora_path=lora, lora_scale=scale,
                           spm_path=spm).validated()
        if self.run_config is not None:
            options = replace(self.run_config.load_options(model), lora_path=lora, lora_scale=scale)
        else:
            options = LoadOptions(model_path=model, lora_path=lora, lora_scale=scale)
        if options.n_threads is None:
            # Decoding leaves a core to the interface; prefill (n_threads_batch) keeps them all.
            options = replace(options, n_threads=app.settings.generation_threads())
        return options.validated()

    def action_pick_model(self) -> None:
        app: Any = self
        scale = app.lora_scale if app.lora_scale is not None else 1.0
        app.push_screen(ModelPickerScreen(self.config, lora_scale=scale), self._model_chosen)

    def _model_chosen(self, choice: ModelChoice | None) -> None:
        if choice is None:
            return
        app: Any = self
        self._demo_running = model_startup.model_choice.is_demo_model(choice.model)
        if self._demo_running and not choice.model.is_file():
            # Listed but not assembled yet: assemble it first, with progress, in a worker.
            self.resolve_model(model_startup.ModelSource(model_startup.model_choice.DEMO_NAME, self.config))
            return
        try:
            options = self.load_options_for(choice.model, choice.lora, choice.lora_scale)
        except Exception as error:  # noqa: BLE001 - a bad value is a message
            app.notify(str(error), severity="error")
            return
        # Every generation records the model it ran on, so the session keeps the switch.
        app.load_model(options)

    # ---- recording -------------------------------------------------------------------
    def recording_started(self, request: GenerationRequest, sink: "StreamSink") -> None:
        """Called by the main screen as a generation starts."""
        app: Any = self
        draft = self.main.draft
        ghost = draft.editor.ghost
        anchor = len(draft.editor.text_before(ghost.anchor)) if request.kind == "draft" and ghost else None
        self.sessions.generation_started(request, app.engine, draft.editor.text, anchor, self.main.chat.messages)

    def on_tokens_generated(self, message: TokensGenerated) -> None:
        self.sessions.tokens(message.request_id, message.events)

    def on_generation_finished(self, message: GenerationFinished) -> None:
        self.sessions.generation_finished(message.request_id, message.event, self.main.chat.messages)
        self.schedule_autosave()

    def on_draft_pane_suggestion_accepted(self, message: DraftPane.SuggestionAccepted) -> None:
        editor = self.main.draft.editor
        at = len(editor.text_before(message.at))
        # An accepted suggestion is saved at once: it is the one thing a crash must never take.
        if self.sessions.accepted(message.text, at, message.request_ids, editor.text):
            self.main.draft.modified = False

    def on_draft_pane_suggestion_rejected(self, message: DraftPane.SuggestionRejected) -> None:
        self.sessions.rejected(message.request_ids)
        self.schedule_autosave()

    def on_text_area_changed(self, message: TextArea.Changed) -> None:
        if message.text_area is self.main.draft.editor:
            self.schedule_autosave()

    # ---- saving ----------------------------------------------------------------------
    def schedule_autosave(self) -> None:
        # Not reset by later keystrokes: saved at most AUTOSAVE_SECONDS after the first change.
        if self._autosave_timer is None:
            app: Any = self
            self._autosave_timer = app.set_timer(AUTOSAVE_SECONDS, self._autosave)

    def _autosave(self) -> None:
        self._autosave_timer = None
        self.save_everything()

    def save_everything(self, *, explicit: bool = False) -> bool:
        """Save the draft (session and file) and the chat; True when all of it was written.
        `explicit` (ctrl+s) replaces a draft file changed on disk after a warning."""
        pane = self.main.draft
        text = pane.editor.text
        saved = self.sessions.save_draft(text, overwrite_file=explicit and self.sessions.conflict)
        if saved:
            pane.modified = False
        return self.sessions.save_chat(self.main.chat.messages) and saved

    # ---- sessions and export -----------------------------------------------------------
    def action_sessions(self) -> None:
        app: Any = self
        self.save_everything()
        app.push_screen(SessionsScreen(self.sessions), self._open_session)

    async def _open_session(self, session_id: str | None) -> None:
        app: Any = self
        if session_id is None or session_id in self.sessions.open_ids() and self._is_current(session_id):
            return
        try:
            session = self.sessions.store.load(session_id)
        except SessionError as error:
            app.notify(str(error), title="Session not opened", severity="error", timeout=10)
            return
        await self.show_session(session)
        app.notify(f"Opened “{session.title}”.")

    def _is_current(self, session_id: str) -> bool:
        current = self.sessions.draft if self.main.mode == "draft" else self.sessions.chat
        return current is not None and current.id == session_id

    async def show_session(self, session: AnySession) -> None:
        """Put `session` on screen (the draft editor or the chat), replacing what was there."""
        main = self.main
        main.stop_generation()
        main.forget_generation()
        self.sessions.adopt(session)
        if isinstance(session, DraftSession):
            main.draft.editor.clear_ghost()
            main.draft.editor.load_text(session.text)
            main.draft.modified = False
            main.draft_state_changed()
            main.switch_mode("draft")
        elif isinstance(session, ChatSession):
            await main.chat.restore([{"role": t.role, "content": t.content} for t in session.turns])
            main.switch_mode("chat")

    def action_export(self) -> None:
        app: Any = self
        self.save_everything()
        session = self.sessions.draft if self.main.mode == "draft" else self.sessions.chat
        if session is None:
            app.notify("Nothing to export yet: write something first.", severity="warning")
            return
        if isinstance(session, DraftSession) and session.draft_path:
            draft = Path(session.draft_path)
            target = draft.with_name(f"{draft.stem}.export.md")
        else:
            target = paths.data_dir() / "exports" / f"{session.id}.md"
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                app.notify(f"cannot create {target.parent}: {error.strerror or error}", severity="error")
                return

        def write(overwrite: bool | None) -> None:
            if not overwrite:
                return
            try:
                path = export_session(session, target, force=True, mark_model=False)
            except ExportError as error:
                app.notify(str(error), title="Not exported", severity="error", timeout=10)
                return
            app.notify(f"Exported to {path}", title="Exported", timeout=10)

        if target.exists():
            app.push_screen(ConfirmScreen(f"{target} already exists. Overwrite it?"), write)
        else:
            write(True)
