"""Draft mode: where the model's window starts in the draft, marked as the author types,
and which lorebook entries the prompt would hold there. A layer of the draft pane
(draft_pane.py tells the layers apart)."""

from __future__ import annotations

from typing import Callable

from textual import work
from textual.timer import Timer
from textual.widgets.text_area import Location

from scriptorium import prompts
from scriptorium.app.config import prompt_templates
from scriptorium.inference.core.backend import Backend
from scriptorium.inference.core.errors import EngineCrashed, ScriptoriumError
from scriptorium.inference.window.lore import Fired
from scriptorium.inference.window.window import Fim, Window, WindowError, fim_suffix

from scriptorium.app import paths
from scriptorium.app.config.tui_settings import TuiSettings
from scriptorium.app.tui.keys import KeyDisplay
from scriptorium.app.tui.widgets.draft_candidates import DraftCandidates
from scriptorium.app.tui.widgets.draft_anchors import end_anchor

WINDOW_MARK_DELAY = 0.4
"""Seconds of no typing before the window marker moves."""


class DraftWindowMark(DraftCandidates):
    """The window marker: the draft dimmed before where the model's window starts."""

    def __init__(self, settings: TuiSettings, key_display: KeyDisplay, **kwargs: object) -> None:
        super().__init__(settings, key_display, **kwargs)
        self._window_timer: Timer | None = None
        self._said_too_long = ""
        self.last_lore: tuple[Fired, ...] = ()
        """The lorebook entries the last prompt made for the draft held and dropped (the lorebook screen lists them)."""

    def watch_backend(self) -> None:
        self._mark_window_soon()

    def watch_pinned(self) -> None:
        self._mark_window_soon()

    def watch_lorebook(self) -> None:
        self._mark_window_soon()

    def insert_fim(self, backend: Backend, from_cursor: bool, location: Location) -> Fim | None:
        """An insert (from the cursor, text after it) on a model with fill-in-the-middle
        tokens: its prompt carries the text after the cursor (window.Fim). None otherwise."""
        texts = backend.fim_texts
        if not from_cursor or texts is None:
            return None
        document = self.editor.document
        after = document.get_text_range(location, document.end)
        return Fim(texts, fim_suffix(after, 0)) if after.strip() else None

    def _mark_window_soon(self) -> None:
        """Move the window marker once typing pauses: counting a long draft's tokens on
        every key would slow typing down."""
        if self._window_timer is not None:
            self._window_timer.stop()
        self._window_timer = self.set_timer(WINDOW_MARK_DELAY, self._mark_window)

    def _mark_window(self) -> None:
        self._window_timer = None
        backend = self.backend
        if backend is None or self.generating or self.scoring or not self.is_mounted:
            return  # counting asks the engine, which is busy: the marker moves once it is not
        build, text = self.next_window(backend)
        self._measure_window(build, backend, text)

    def next_window(self, backend: Backend) -> tuple[Callable[[str], Window], str]:
        """What makes the window of the next continuation (from the end, or on from the
        suggestion), and the text it is made of: the marker's, and the context viewer's."""
        editor = self.editor
        ghost = editor.ghost
        anchor = ghost.anchor if ghost is not None else end_anchor(editor.document)
        try:
            template = prompt_templates.load(prompts.CONTINUE, paths.prompts_dir())
        except prompt_templates.PromptError:
            template = None  # said when a continuation asks for it
        fim = self.insert_fim(backend, ghost.from_cursor, ghost.anchor) if ghost is not None else None
        return self.window_builder(backend, template, fim), editor.text_before(anchor) + (ghost.text if ghost else "")

    @work(thread=True, exclusive=True, group="window-mark", exit_on_error=False)
    def _measure_window(self, build: Callable[[str], Window], backend: Backend, text: str) -> None:
        # Off the UI thread: counting asks the engine's process, or a server that may hang,
        # and the author is typing.
        too_long, lore, after = "", self.last_lore, 0
        try:
            window = build(text)
            start, lore, after = window.start, window.lore, window.fim_suffix_chars
        except EngineCrashed as error:
            self.found_dead(backend, error)
            return
        except WindowError as error:
            start, too_long = 0, str(error)
        except ScriptoriumError:
            start = 0  # said when a continuation asks for the window
        self.app.call_from_thread(self._window_measured, text, start, too_long, lore, after)

    def _window_measured(
        self, text: str, start: int, too_long: str, lore: tuple[Fired, ...] = (), after: int = 0
    ) -> None:
        editor, ghost = self.editor, self.editor.ghost
        anchor = ghost.anchor if ghost is not None else end_anchor(editor.document)
        if editor.text_before(anchor) + (ghost.text if ghost else "") == text:  # else a newer one is coming
            editor.show_window(*editor.window_in_text(start, after))
            # With a suggestion showing, the window measured is the next continuation's, from
            # its end: the lore the last prompt held (the lorebook screen's) stays until the
            # suggestion is taken or thrown away, whose measure then says what fires.
            if ghost is None:
                self.lore_seen(lore)
        # Memory and note that leave no room are said as soon as they are (once, not at
        # every pause in typing): the author has just been told they are in every prompt.
        if too_long != self._said_too_long:
            self._said_too_long = too_long
            if too_long:
                self.notify(too_long, title=self.language.gettext("Window"), severity="warning", timeout=12)

    def lore_seen(self, lore: tuple[Fired, ...]) -> None:
        """The lore of the newest prompt made for the draft. Entries dropped for room are
        said when they change (not at every pause in typing): the author learns what the
        model will not see, and can raise the budget or a priority (alt+l)."""
        dropped = [fired for fired in lore if not fired.kept]
        if dropped and {f.name for f in dropped} != {f.name for f in self.last_lore if not f.kept}:
            number = self.language.number
            names = ", ".join(f"{fired.name} ({number(fired.tokens, ',')} tok)" for fired in dropped)
            _ = self.language.gettext
            self.notify(
                _("Left out for room: {names}. A larger lore budget or a higher priority lets them in.").format(
                    names=names
                ),
                title=_("Lorebook"),
                severity="warning",
                timeout=8,
            )
        self.last_lore = lore
