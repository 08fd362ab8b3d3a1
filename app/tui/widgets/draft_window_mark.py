"""Draft mode: where the model's window starts in the draft, marked as the author types,
and which lorebook entries the prompt would hold there. A part of the draft pane
(draft_pane.py), which tells it when the draft, the backend or what is pinned changed."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Callable, Protocol

from scriptorium import prompts
from scriptorium.app.config import prompt_templates
from scriptorium.inference.core.errors import EngineCrashed, ScriptoriumError
from scriptorium.inference.window.lore import Fired
from scriptorium.inference.window.window import Window, WindowError

from scriptorium.app import paths
from scriptorium.app.tui.widgets.draft_anchors import end_anchor, insert_fim

if TYPE_CHECKING:
    from textual.app import App
    from textual.timer import Timer

    from scriptorium.inference.core.backend import Backend

    from scriptorium.app.i18n.language import Language
    from scriptorium.app.tui.engine_state import EngineState
    from scriptorium.app.tui.widgets.draft_editor import DraftEditor

WINDOW_MARK_DELAY = 0.4
"""Seconds of no typing before the window marker moves."""


class WindowMarkPane(Protocol):
    """What the window marker needs of the draft pane it is part of."""

    editor: DraftEditor
    language: Language
    engine_state: EngineState
    generating: bool

    @property
    def scoring(self) -> bool: ...

    @property
    def is_mounted(self) -> bool: ...

    @property
    def app(self) -> App[object]: ...

    def set_timer(self, delay: float, callback: Callable[[], None]) -> Timer: ...

    def run_worker(
        self, work: Callable[[], None], *, thread: bool, group: str, exclusive: bool, exit_on_error: bool
    ) -> object: ...

    def notify(self, message: str, *, title: str = ..., severity: str = ..., timeout: float | None = ...) -> None: ...

    def window_builder(self, backend: Backend, template: str | None, fim: object = ...) -> Callable[[str], Window]: ...

    def found_dead(self, backend: Backend, error: EngineCrashed) -> None: ...


class WindowMark:
    """The window marker: the draft dimmed before where the model's window starts."""

    def __init__(self, pane: WindowMarkPane) -> None:
        self.pane = pane
        self._timer: Timer | None = None
        self._said_too_long = ""
        self.last_lore: tuple[Fired, ...] = ()
        """The lorebook entries the last prompt made for the draft held and dropped (the lorebook screen lists them)."""

    @property
    def waiting(self) -> bool:
        """Typing paused less than WINDOW_MARK_DELAY ago: the marker is yet to be measured."""
        return self._timer is not None

    def soon(self) -> None:
        """Move the window marker once typing pauses: counting a long draft's tokens on
        every key would slow typing down."""
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.pane.set_timer(WINDOW_MARK_DELAY, self._mark)

    def _mark(self) -> None:
        self._timer = None
        pane = self.pane
        backend = pane.engine_state.backend
        if backend is None or pane.generating or pane.scoring or not pane.is_mounted:
            return  # counting asks the engine, which is busy: the marker moves once it is not
        build, text = self.next_window(backend)
        # Off the UI thread: counting asks the engine's process, or a server that may hang,
        # and the author is typing.
        pane.run_worker(
            partial(self._measure, build, backend, text),
            thread=True,
            group="window-mark",
            exclusive=True,
            exit_on_error=False,
        )

    def next_window(self, backend: Backend) -> tuple[Callable[[str], Window], str]:
        """What makes the window of the next continuation (from the end, or on from the
        suggestion), and the text it is made of: the marker's, and the context viewer's."""
        editor = self.pane.editor
        ghost = editor.ghost
        anchor = ghost.anchor if ghost is not None else end_anchor(editor.document)
        try:
            template = prompt_templates.load(prompts.CONTINUE, paths.prompts_dir())
        except prompt_templates.PromptError:
            template = None  # said when a continuation asks for it
        fim = insert_fim(backend, editor.document, ghost.from_cursor, ghost.anchor) if ghost is not None else None
        return self.pane.window_builder(backend, template, fim), editor.text_before(anchor) + (
            ghost.text if ghost else ""
        )

    def _measure(self, build: Callable[[str], Window], backend: Backend, text: str) -> None:
        # In the worker thread.
        too_long, lore, after = "", self.last_lore, 0
        try:
            window = build(text)
            start, lore, after = window.start, window.lore, window.fim_suffix_chars
        except EngineCrashed as error:
            self.pane.found_dead(backend, error)
            return
        except WindowError as error:
            start, too_long = 0, str(error)
        except ScriptoriumError:
            start = 0  # said when a continuation asks for the window
        self.pane.app.call_from_thread(self._measured, text, start, too_long, lore, after)

    def _measured(self, text: str, start: int, too_long: str, lore: tuple[Fired, ...] = (), after: int = 0) -> None:
        editor = self.pane.editor
        ghost = editor.ghost
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
                self.pane.notify(too_long, title=self.pane.language.gettext("Window"), severity="warning", timeout=12)

    def lore_seen(self, lore: tuple[Fired, ...]) -> None:
        """The lore of the newest prompt made for the draft. Entries dropped for room are
        said when they change (not at every pause in typing): the author learns what the
        model will not see, and can raise the budget or a priority (alt+l)."""
        dropped = [fired for fired in lore if not fired.kept]
        if dropped and {f.name for f in dropped} != {f.name for f in self.last_lore if not f.kept}:
            language = self.pane.language
            number = language.number
            names = ", ".join(f"{fired.name} ({number(fired.tokens, ',')} tok)" for fired in dropped)
            _ = language.gettext
            self.pane.notify(
                _("Left out for room: {names}. A larger lore budget or a higher priority lets them in.").format(
                    names=names
                ),
                title=_("Lorebook"),
                severity="warning",
                timeout=8,
            )
        self.last_lore = lore
