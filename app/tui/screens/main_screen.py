"""The screen the author lives in: draft or chat in the middle, panels at the side.

It is given the model and the sampler by the app (EngineState, one bound reactive) and passes them on to the
panes and panels. It owns the generation worker through a part it composes (GenerationRunner,
generating_screen.py): panes post what they want run or stopped, and the worker's messages come back to the
screen first, which hands them on."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.dom import DOMNode
from textual.reactive import var
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import ContentSwitcher

from scriptorium.app.config.tui_settings import TuiSettings
from scriptorium.app.models.status import ModelStatus
from scriptorium.app.sessions.model import count_words
from scriptorium.app.sessions.opening import DraftFile
from scriptorium.app.tui.engine_state import EngineState
from scriptorium.app.tui.keys import KeyDisplay
from scriptorium.app.tui.generation_request import GenerationRequest
from scriptorium.app.tui.screens.generating_screen import GenerationRunner
from scriptorium.app.tui.token_spans import Span
from scriptorium.app.tui.widgets.chat_pane import ChatPane
from scriptorium.app.tui.widgets.draft_pane import DraftPane
from scriptorium.app.tui.widgets.key_footer import KeyFooter
from scriptorium.app.tui.widgets.mode_pane import ModePane
from scriptorium.app.tui.widgets.model_panel import ModelView
from scriptorium.app.tui.widgets.sampler_panel import SamplerView
from scriptorium.app.tui.widgets.sidebar import Sidebar
from scriptorium.app.tui.widgets.status_bar import StatusBar
from scriptorium.app.tui.widgets.showing import set_shown
from scriptorium.app.i18n.marker import N_

if TYPE_CHECKING:
    from scriptorium.inference.core.backend import Backend
    from scriptorium.inference.core.events import GenerationDone, TokenEvent

    from scriptorium.app.tui import generation


WORD_COUNT_DELAY = 0.3
"""Seconds of no typing before the status bar counts the draft's words again."""
SHOWN_IN_PANELS = frozenset(("backend", "model_status", "sampler", "bias", "lora_scale", "last_seed"))
"""The parts of the engine state the sampler and model panels draw (not speculation, which the palette says)."""


class MainScreen(Screen[None], inherit_bindings=False):
    """Draft and chat modes, the side panels and the footer."""

    BINDINGS = [
        Binding(
            "tab",
            "app.focus_next",
            N_("Next"),
            show=False,
            id="focus.next",
            tooltip=N_("Move the focus to the next widget (the editor takes Tab for a suggestion)"),
        ),
        Binding(
            "shift+tab",
            "app.focus_previous",
            N_("Previous"),
            show=False,
            id="focus.previous",
            tooltip=N_("Move the focus to the previous widget"),
        ),
    ]

    engine_state: var[EngineState] = var(EngineState)
    """The app's (bound): this screen and its panes read it, and never set it."""
    sampler_view: var[SamplerView | None] = var(None)
    model_view: var[ModelView] = var(lambda: ModelView(ModelStatus("none")))

    def __init__(self, draft_file: DraftFile, draft_text: str, settings: TuiSettings, key_display: KeyDisplay) -> None:
        super().__init__()
        self._draft_file = draft_file
        self._draft_text = draft_text
        self._settings = settings
        self.language = settings.language
        """The interface's words and numbers, for the dialogs and notices the screen's helpers show."""
        self._key_display = key_display
        self._words_timer: Timer | None = None
        self._styled_at_mount = True
        self.generations = GenerationRunner(self, settings, self._show_settings, self._ask_key)

    def compose(self) -> ComposeResult:
        settings, keys = self._settings, self._key_display
        self.status = StatusBar(settings.language, id="status")
        self.draft = DraftPane(self._draft_file, self._draft_text, settings, keys, id="draft").data_bind(
            MainScreen.engine_state
        )
        self.chat = ChatPane(settings, keys, id="chat").data_bind(MainScreen.engine_state)
        self.sidebar = Sidebar(settings.top_n, settings.panels, settings.language, id="sidebar").data_bind(
            MainScreen.sampler_view, MainScreen.model_view
        )
        self.sidebar.show(settings.sidebar)
        yield self.status
        with Horizontal(id="workspace"):
            with ContentSwitcher(initial=settings.mode, id="modes"):
                yield self.draft
                yield self.chat
            yield self.sidebar
        # The palette goes before Tune: ctrl+p is the key every Textual app shares, and ^t
        # is the only way to the sampler panel a writer finds in the bar.
        yield KeyFooter(
            keep={"quit", "help", "screen.switch_mode"},
            lesser=("command_palette", "screen.focus_sampler"),
            compact=True,
            translate=settings.language.gettext,
        )

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        # Textual restyles a screen each time it becomes the one shown, for one that comes back
        # (from under a dialog, after a theme change). The first time is as the app pushes it,
        # moments after every widget was styled as it mounted: styling them all again cost
        # about 15 ms of CPU before the first frame (bench/startup.py, side by side).
        if self._styled_at_mount:
            self._styled_at_mount = False
            event.refresh_styles = False

    def on_mount(self) -> None:
        self.status.update_state(mode=self.mode, draft_name=self._draft_file.shown_name(self.language.gettext))
        self._count_words()
        self.watch(self.draft, "modified", self.draft_state_changed, init=False)
        self._show_settings()
        self._show_model_state()
        self.focus_mode()

    # ---- what the panels show, derived from what the app gives ---------------------------
    def watch_engine_state(self, old: EngineState, state: EngineState) -> None:
        # The work each part's change asks for, once however many parts changed together.
        changed = state.changed_from(old)
        if changed & SHOWN_IN_PANELS:
            self._show_settings()
        if not self.is_mounted:
            return
        if "backend" in changed:
            self._backend_replaced(state.backend)
        if "model_status" in changed:
            self.status.model = state.model_status
            self._show_model_state()

    def _show_settings(self) -> None:
        state, active = self.engine_state, self.generations.active
        backend, running = state.backend, active.request if active is not None else None
        pending = running is not None and (running.settings, running.bias, running.lora_scale) != (
            replace(state.sampler, stop=running.settings.stop),
            state.bias,
            state.lora_scale,
        )
        load_hint = self._key_display("app.load_model")
        self.sampler_view = SamplerView(
            state.sampler,
            state.bias,
            backend.byte_token_ids if backend else None,
            state.lora_scale,
            pending,
            state.last_seed,
            load_hint,
        )
        self.model_view = ModelView(state.model_status, state.lora_scale, load_hint)

    def _show_model_state(self) -> None:
        """What the panels say before a first token, true to the model's state, with the key that starts one."""
        _ = self.language.gettext
        start = (
            _("press {key} to continue the draft") if self.mode == "draft" else _("press {key} to send a message")
        ).format(key=self._ask_key())
        status = self.engine_state.model_status
        self.sidebar.show_model_state(status.state, start, answering=not status.not_answering)

    def _ask_key(self) -> str:
        return self._key_display("draft.continue") if self.mode == "draft" else "⏎"

    def _backend_replaced(self, backend: Backend | None) -> None:
        # None while another loads or after a failure: the last model's cache is gone with it.
        self.sidebar.kv.show_model(backend.kv_usage() if backend is not None else None)
        unknown = frozenset(backend.facts.unknown_token_ids) if backend is not None else frozenset()
        self.sidebar.probabilities.unknown_ids = self.draft.suggestion.unknown_ids = unknown
        # Which server, which file: a reload of the same one (after a crash) keeps its speed figures.
        self.sidebar.model_replaced((backend.origin, backend.options.model_path) if backend is not None else None)
        if backend is not None:
            self.draft.model_replaced(backend.options)

    def another_model_loading(self) -> None:
        """Stop what runs on the model about to be closed for another."""
        # Stopped, not forgotten: its end reaches the suggestion, which stays finished, not "writing…".
        self.stop_generation()
        self.draft.stop_scoring(N_("another model is loading"), colours_kept=False)  # they go if another loads

    # ---- the generation (GenerationRunner's) ------------------------------------------------
    @property
    def is_generating(self) -> bool:
        return self.generations.is_generating

    async def wait_until_idle(self) -> None:
        """Return once no generation is running (tests and the benchmark use it)."""
        await self.generations.wait_until_idle()

    @property
    def last_generation(self) -> tuple[GenerationRequest, list[TokenEvent], GenerationDone] | None:
        """The latest finished generation: request, token events, summary (inspection starts there)."""
        return self.generations.last_generation

    def stop_generation(self) -> None:
        """Ask the worker to stop; GenerationFinished ('cancelled') follows."""
        self.generations.stop()

    def forget_generation(self) -> None:
        """Detach the running generation: what it still sends is not drawn (accepted, rejected, re-rolled)."""
        self.generations.forget()

    @on(ModePane.GenerationRequested)
    async def _generation_requested(self, message: ModePane.GenerationRequested) -> None:
        await self.generations.requested(message)

    @on(ModePane.StopRequested)
    async def _stop_requested(self, message: ModePane.StopRequested) -> None:
        await self.generations.stop_requested(message)

    # The worker's messages are handled by name, not with @on(class): tui/generation.py loads
    # with the first generation, after the first frame, which does not need its dataclasses.
    def on_prompt_prepared(self, message: generation.PromptPrepared) -> None:
        self.generations.prompt_prepared(message)

    def on_prefill_progressed(self, message: generation.PrefillProgressed) -> None:
        self.generations.prefill_progressed(message)

    def on_prefill_finished(self, message: generation.PrefillFinished) -> None:
        self.generations.prefill_finished(message)

    def on_context_was_trimmed(self, message: generation.ContextWasTrimmed) -> None:
        self.generations.context_trimmed(message)

    async def on_tokens_generated(self, message: generation.TokensGenerated) -> None:
        await self.generations.tokens_generated(message)

    async def on_generation_finished(self, message: generation.GenerationFinished) -> None:
        await self.generations.finished(message)

    async def on_generation_failed(self, message: generation.GenerationFailed) -> None:
        await self.generations.failed(message)

    async def on_generation_withdrawn(self, message: generation.GenerationWithdrawn) -> None:
        await self.generations.withdrawn(message)

    # ---- modes and panels ----------------------------------------------------------
    @property
    def mode(self) -> str:
        return self.query_one(ContentSwitcher).current or "draft"

    def action_switch_mode(self) -> None:
        self.switch_mode()

    def switch_mode(self, mode: str | None = None) -> None:
        switcher = self.query_one(ContentSwitcher)
        switcher.current = mode or ("chat" if self.mode == "draft" else "draft")
        if self.generations.active is None:  # a generation running keeps its numbers live, whichever mode shows
            self.sidebar.mode_switched()
        self.status.update_state(mode=self.mode)
        self._show_model_state()
        self.focus_mode()

    def focus_mode(self) -> None:
        if self.mode == "draft":
            self.draft.editor.focus()
        else:
            self.chat.input.focus()

    def on_resize(self) -> None:
        if self.sidebar.fit(self.size.width):  # the panels gave way: their keys go to the text
            self.focus_mode()

    def action_toggle_sidebar(self) -> None:
        self.sidebar.show(not self.sidebar.display)
        if not self.sidebar.display:
            self.focus_mode()

    def action_focus_sampler(self) -> None:
        self.sidebar.show(True)
        sampler = self.sidebar.sampler
        set_shown(sampler, True)
        # At once, not on the next idle as focus() does: the keys after Ctrl+T are for the sampler.
        self.set_focus(sampler, scroll_visible=False)
        sampler.scroll_visible(animate=False)

    def action_toggle_panel(self, name: str) -> None:
        self.sidebar.show(True)
        panel = self.sidebar.panel(name)
        had_focus = panel.has_focus
        if self.sidebar.toggle(name):
            panel.scroll_visible(animate=False)
        elif had_focus:
            # Keep the focus among the panels, so their keys keep working.
            self.sidebar.focus()

    def action_leave_panels(self) -> None:
        self.focus_mode()

    def command_targets(self) -> dict[str, DOMNode]:
        """Where the palette runs each section's actions (app/tui/keys.py): the hidden mode's would act unseen."""
        shown_pane = {"Draft": self.draft, "Find": self.draft.find_bar} if self.mode == "draft" else {"Chat": self.chat}
        return {"Focus": self, **shown_pane, "Panels": self.sidebar, "Sampler panel": self.sidebar.sampler}

    # ---- the draft and the chat, for the app's sessions -----------------------------------
    def draft_text(self) -> str:
        return self.draft.text

    def chat_messages(self) -> list[dict[str, str]]:
        return self.chat.kept_messages()

    def chat_unsent(self) -> str:
        """The message typed in the chat box and not sent yet: the author's words too."""
        return self.chat.input.value

    def draft_saved(self, saved: bool = True) -> None:
        self.draft.modified = not saved

    def draft_state_changed(self) -> None:
        self.status.update_state(
            draft_name=self._draft_file.shown_name(self.language.gettext), modified=self.draft.modified
        )

    def show_draft(self, text: str, spans: list[Span]) -> None:
        self.draft.show_text(text, spans)
        self.draft_state_changed()
        self._count_words()
        self.switch_mode("draft")

    @on(ModePane.Edited)
    def _count_words_soon(self) -> None:
        """The draft's word count in the status bar, once typing pauses: counting a long
        draft on every key would slow typing down."""
        if self._words_timer is not None:
            self._words_timer.stop()
        self._words_timer = self.set_timer(WORD_COUNT_DELAY, self._count_words)

    def _count_words(self) -> None:
        self._words_timer = None
        self.status.update_state(words=count_words(self.draft.text))

    async def show_chat(
        self, messages: list[dict[str, str]], unsent: str = "", endings: list[str] | None = None
    ) -> None:
        await self.chat.restore(messages, unsent, endings)
        self.switch_mode("chat")

    # ---- what the panes ask to show ---------------------------------------------------
    @on(ModePane.TokenShown)
    def _token_shown(self, message: ModePane.TokenShown) -> None:
        self.sidebar.probabilities.show_token(message.event, message.note, message.steps)
        if message.asked:  # F4 on accepted or scored text: the panel shows it, unless hidden
            self._say_where_token_shows(message.event.text)

    def _say_where_token_shows(self, token: str) -> None:
        panels = self.sidebar
        _ = self.language.gettext
        if panels.display and panels.probabilities.display:
            said = _("The probabilities panel shows {token} and what else the model considered there.")
            self.notify(said.format(token=repr(token)), timeout=3)
        elif not panels.display:
            self.notify(
                _(
                    "The probabilities panel would show {token}, but the panels are hidden: "
                    "{key} shows them (they need 80 columns)."
                ).format(token=repr(token), key=self._key_display("app.sidebar")),
                severity="warning",
            )
        else:
            self.notify(
                _("The probabilities panel would show {token}, but it is hidden: {key}, then 1, shows it.").format(
                    token=repr(token), key=self._key_display("app.tune")
                ),
                severity="warning",
            )

    @on(ModePane.ActivityShown)
    def _activity_shown(self, message: ModePane.ActivityShown) -> None:
        self.status.update_state(activity=message.text)

    @on(ModePane.CacheShown)
    def _cache_shown(self, message: ModePane.CacheShown) -> None:
        kv = self.sidebar.kv
        kv.forget_request()  # a generation's reuse and window are not what the cache holds now
        kv.show_window(message.window)
        kv.show_usage(message.usage)
