"""The side panels, stacked; each can be hidden, and the whole column too."""

from __future__ import annotations

from typing import TYPE_CHECKING

import time

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.reactive import var

from scriptorium.inference.window.window import Window

from scriptorium.app.config.tui_settings import PANELS
from scriptorium.app.tui.widgets.kv_panel import KVPanel
from scriptorium.app.models.status import ModelStatus
from scriptorium.app.tui.widgets.model_panel import ModelPanel, ModelView
from scriptorium.app.tui.widgets.panel import Panel
from scriptorium.app.tui.widgets.probabilities_panel import ProbabilitiesPanel
from scriptorium.app.tui.widgets.sampler_panel import SamplerPanel, SamplerView
from scriptorium.app.tui.widgets.speed_panel import SpeedPanel
from scriptorium.app.tui.widgets.showing import set_shown
from scriptorium.app.i18n.language import Language
from scriptorium.app.i18n.marker import N_

if TYPE_CHECKING:
    from scriptorium.inference.core.events import GenerationDone, KVCacheUsage, PrefillDone, PrefillProgress, TokenEvent

NUMBERS_INTERVAL_S = 0.2
"""While tokens stream, the panels' numbers change at most this often (five times a
second: as often as a person reads them), whatever the text's frame rate. A frame that
redraws the panels costs three to four times one that redraws only the text, and on a
small machine that time is taken from llama.cpp's threads."""

NARROW_COLUMNS = 80
"""Below this many columns the panels give way to the text by themselves: at 60 they took half of it
(at 80 the draft keeps 44 columns beside them)."""

PANEL_TOGGLES = {
    "probabilities": (N_("Toggle probabilities"), N_("Show or hide the probabilities panel")),
    "speed": (N_("Toggle speed"), N_("Show or hide the speed panel")),
    "kv": (N_("Toggle KV cache"), N_("Show or hide the KV cache panel")),
    "sampler": (N_("Toggle sampler"), N_("Show or hide the sampler panel")),
    "model": (N_("Toggle model"), N_("Show or hide the model panel")),
}
"""Each panel's key (1-5): its name and tooltip, whole sentences, so that each is translated whole."""


class Sidebar(VerticalScroll):
    """Probabilities, sampler, KV cache, speed and model, live while tokens stream."""

    BINDINGS = [
        *(
            Binding(
                str(number),
                f"screen.toggle_panel('{name}')",
                PANEL_TOGGLES[name][0],
                show=False,
                id=f"panels.{name}",
                tooltip=PANEL_TOGGLES[name][1],
            )
            for number, name in enumerate(PANELS, 1)
        ),
        Binding(
            "escape",
            "screen.leave_panels",
            N_("Back"),
            id="panels.leave",
            tooltip=N_("Return to the draft or the chat input"),
        ),
    ]

    sampler_view: var[SamplerView | None] = var(None)
    model_view: var[ModelView] = var(lambda: ModelView(ModelStatus("none")))

    def __init__(self, top_n: int, visible: tuple[str, ...], language: Language, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._language = language
        self._top_n = top_n
        self._visible = visible
        self._pending: tuple[TokenEvent, KVCacheUsage] | None = None
        """The newest token not drawn yet (the panels drew one less than NUMBERS_INTERVAL_S ago)."""
        self._numbers_at = -NUMBERS_INTERVAL_S
        self._measured_model: object | None = None
        """Which model the speed figures are of (see model_replaced)."""
        self._stream_outlived = False
        """The model a stream still running writes with was replaced (a load began): what it
        sends until it stops is the old model's, not the one the panels now stand for."""
        self._wanted = True
        """The author's choice (F3, Ctrl+T, 1-5), which a narrow terminal overrides only while it lasts."""
        self._narrow: bool | None = None

    def show(self, wanted: bool) -> None:
        """Show or hide the panels as the author asks, even on a narrow terminal."""
        self._wanted = wanted
        set_shown(self, wanted)

    def fit(self, screen_width: int) -> bool:
        """Hide the panels on a narrow terminal and bring them back when it is wide again,
        unless the author hid them meanwhile; True when this hid them."""
        narrow = screen_width < NARROW_COLUMNS
        if narrow == self._narrow:
            return False
        self._narrow = narrow
        hid = self.display and narrow
        set_shown(self, self._wanted and not narrow)
        return hid

    def compose(self) -> ComposeResult:
        language = self._language
        self.probabilities = ProbabilitiesPanel(language, self._top_n)
        self.sampler = SamplerPanel(language).data_bind(view=Sidebar.sampler_view)
        self.kv = KVPanel(language)
        self.speed = SpeedPanel(language)
        self.model = ModelPanel(language).data_bind(view=Sidebar.model_view)
        for panel in self.panels():
            set_shown(panel, panel.PANEL_NAME in self._visible)
        # Two columns side by side on a wide terminal, one stack on a narrow one (CSS).
        with Vertical(classes="sidebar-column", id="sidebar-stream"):
            yield self.probabilities
            yield self.speed
        with Vertical(classes="sidebar-column", id="sidebar-state"):
            yield self.kv
            yield self.sampler
            yield self.model

    def panels(self) -> tuple[Panel, ...]:
        """In screen order: the live ones first, so a small terminal shows them."""
        return (self.probabilities, self.speed, self.kv, self.sampler, self.model)

    def panel(self, name: str) -> Panel:
        return next(panel for panel in self.panels() if panel.PANEL_NAME == name)

    def toggle(self, name: str) -> bool:
        """Show or hide a panel; returns whether it is now shown."""
        panel = self.panel(name)
        set_shown(panel, not panel.display)
        return bool(panel.display)

    def show_model_state(self, state: str, start_hint: str, answering: bool = True) -> None:
        """What the panels say before anything was generated, true to the model's state
        ('none', 'loading', 'ready', 'failed'); `start_hint` says how to begin; not
        `answering`: its llama-server did not answer the last request."""
        self.kv.loading, self.kv.last_known = state == "loading", not answering
        self.kv.refresh()
        if state in ("none", "failed"):
            # No model is there (a load failed after the old one was closed): figures measured
            # of the last one are no model's now. A failed load that kept it stays "ready".
            self._measured_model = None
            self.speed.forget()
        _ = self._language.gettext
        if state == "ready":
            self.probabilities.set_idle(start_hint, _("then the candidates show here"))
        elif state == "loading":
            self.probabilities.set_idle(_("the model is loading…"))
        else:
            self.probabilities.set_idle(_("no model loaded"))

    def mode_switched(self) -> None:
        """Another mode shows: the last generation's numbers were the other mode's."""
        self.probabilities.reset()
        self.probabilities.stream_ended()
        self.speed.reset()
        self.kv.forget_request()

    def model_replaced(self, model: object | None) -> None:
        """Another model (or none) took the last one's place: the token shown, and one still
        to draw, were that model's numbers, not this one's. `model` says which is loaded (None
        while none is): the speed figures go when it is another one; the same model loaded
        again (after its engine crashed) is still the model they measured."""
        self._pending, self._stream_outlived = None, True
        self.probabilities.reset()
        self.probabilities.stream_ended()
        if model is not None and model != self._measured_model:
            self._measured_model = model
            self.speed.forget()

    # ---- the stream ----------------------------------------------------------------
    def generation_started(self) -> None:
        self._pending, self._numbers_at, self._stream_outlived = None, -NUMBERS_INTERVAL_S, False
        self.probabilities.reset()
        self.speed.reset()

    def prefill_progress(self, progress: PrefillProgress) -> None:
        if not self._stream_outlived:
            self.speed.show_progress(progress)

    def prefill_done(self, prefill: PrefillDone, window: Window | None) -> None:
        """The prompt is in the cache: `window`, how it was split (None for a chat prompt)."""
        if self._stream_outlived:
            return
        self.speed.show_prefill(prefill)
        self.kv.show_usage(prefill.kv_cache)
        self.kv.show_reuse(prefill.reused_tokens, prefill.prompt_tokens, prefill.cache_reuse)
        self.kv.show_window(window)

    def token(self, event: TokenEvent, kv_cache: KVCacheUsage) -> None:
        """The newest token: drawn now, or with the next one if the panels drew one very
        recently (the first at once; the last when the stream ends)."""
        if self._stream_outlived:
            return
        self._pending = (event, kv_cache)
        now = time.monotonic()
        # Frames come at a steady interval, give or take the event loop's jitter: a
        # tenth of the interval early still counts.
        if now - self._numbers_at >= NUMBERS_INTERVAL_S * 0.9:
            self._numbers_at = now
            self._draw_pending()

    def first_token_shown(self, waited_ms: float) -> None:
        """The first token is on screen, `waited_ms` after the author's key."""
        if not self._stream_outlived:
            self.speed.show_waited(waited_ms)

    def _draw_pending(self) -> None:
        if self._pending is not None:
            event, kv_cache = self._pending
            self._pending = None
            self.probabilities.show_token(event)
            self.speed.show_token(event)
            self.kv.show_usage(kv_cache)

    def stream_ended(self, *, failed: bool = False, ran: bool = True) -> None:
        """The generation ended, failed or was dropped: its last token is drawn. One that
        never reached the model (`ran` False: its prompt refused) failed in nothing measured.
        One whose model was replaced measured a model that is gone (or runs on, stopped
        midway): nothing of it is shown."""
        if self._stream_outlived:
            self.probabilities.stream_ended()
            self.speed.forget()
            return
        self._draw_pending()
        self.probabilities.stream_ended()
        if not ran:
            self.speed.show_not_run()
        elif failed:
            self.speed.show_failed()

    def finished(self, done: GenerationDone) -> None:
        if self._stream_outlived:
            return
        self.speed.show_done(done)
        self.kv.show_usage(done.kv_cache)
