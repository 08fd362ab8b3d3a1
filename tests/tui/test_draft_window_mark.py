"""The draft pane's window marker on its own: the pause it waits for, and the lore it says
was left out (the Pilot tests in test_window_tui.py and test_lore_tui.py drive it)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Callable

from scriptorium.inference.window.lore import Fired

from scriptorium.app.i18n.language import ENGLISH
from scriptorium.app.tui.engine_state import EngineState
from scriptorium.app.tui.widgets.draft_window_mark import WINDOW_MARK_DELAY, WindowMark


class FakeTimer:
    def __init__(self, callback: Callable[[], None]) -> None:
        self.callback = callback
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True


class FakePane:
    """What WindowMark asks of the draft pane (WindowMarkPane), recorded."""

    def __init__(self) -> None:
        self.language = ENGLISH
        self.engine_state = EngineState()
        self.generating = False
        self.scoring = False
        self.is_mounted = True
        self.timers: list[tuple[float, FakeTimer]] = []
        self.notes: list[tuple[str, str]] = []
        self.workers: list[object] = []
        self.editor = SimpleNamespace()

    def set_timer(self, delay: float, callback: Callable[[], None]) -> FakeTimer:
        timer = FakeTimer(callback)
        self.timers.append((delay, timer))
        return timer

    def run_worker(self, work: object, **kwargs: object) -> None:
        self.workers.append(work)

    def notify(self, message: str, *, title: str = "", **kwargs: object) -> None:
        self.notes.append((title, message))


def test_each_key_puts_the_count_off_until_typing_pauses() -> None:
    pane = FakePane()
    mark = WindowMark(pane)
    assert not mark.waiting
    mark.soon()
    mark.soon()
    (delay, first), (_, second) = pane.timers
    assert delay == WINDOW_MARK_DELAY and first.stopped and not second.stopped and mark.waiting
    second.callback()  # no model loaded: nothing to count with
    assert not mark.waiting and pane.workers == []


def test_nothing_is_counted_while_the_engine_is_busy() -> None:
    pane = FakePane()
    pane.engine_state, pane.scoring = EngineState(backend=object()), True  # type: ignore[arg-type]
    mark = WindowMark(pane)
    mark.soon()
    pane.timers[-1][1].callback()
    assert pane.workers == []


def test_lore_left_out_for_room_is_said_once_until_it_changes() -> None:
    pane = FakePane()
    mark = WindowMark(pane)
    kept, dropped = Fired("Lucia", "Lucia", 10), Fired("Marco", "Marco", 1200, kept=False)
    mark.lore_seen((kept, dropped))
    mark.lore_seen((kept, dropped))
    assert pane.notes == [
        (
            "Lorebook",
            "Left out for room: Marco (1,200 tok). A larger lore budget or a higher priority lets them in.",
        )
    ]
    assert mark.last_lore == (kept, dropped)
    mark.lore_seen((kept,))
    assert mark.last_lore == (kept,) and len(pane.notes) == 1
