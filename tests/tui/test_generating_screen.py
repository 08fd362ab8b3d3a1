"""The main screen's generation runner on its own: one generation at a time, and what a
worker sends for a generation no longer running is not drawn (the Pilot tests drive real
generations through the screen)."""

from __future__ import annotations

from types import SimpleNamespace

from scriptorium.inference.core.settings import LogitBias, SamplerSettings

from scriptorium.app.config.tui_settings import TuiSettings
from scriptorium.app.tui.engine_state import EngineState
from scriptorium.app.tui.generation import PrefillProgressed
from scriptorium.app.tui.generation_request import new_request
from scriptorium.app.tui.screens.generating_screen import GenerationRunner
from scriptorium.app.tui.widgets.mode_pane import ModePane


class FakeSink:
    def __init__(self) -> None:
        self.ended: list[tuple[object, object]] = []

    async def stream_finished(self, done: object, error: object, *, retry_helps: bool = True) -> None:
        self.ended.append((done, error))


class FakeScreen:
    """What GenerationRunner asks of its screen (GeneratingScreen), recorded."""

    def __init__(self) -> None:
        self.engine_state = EngineState()
        self.notes: list[str] = []
        self.draft = SimpleNamespace(generating=False, streaming=False)
        self.chat = SimpleNamespace(generating=False, streaming=False)
        self.sidebar = SimpleNamespace(prefill_progress=lambda event: self.progress.append(event))
        self.progress: list[object] = []
        self.is_attached = True

    def notify(self, message: str, **kwargs: object) -> None:
        self.notes.append(message)


def request_message(sink: FakeSink) -> ModePane.GenerationRequested:
    request = new_request("draft", "Once", SamplerSettings(), LogitBias(), 5, None)
    return ModePane.GenerationRequested(request, sink)  # type: ignore[arg-type]


async def test_with_no_model_the_request_ends_at_once_and_says_why() -> None:
    screen, shown = FakeScreen(), []
    runner = GenerationRunner(screen, TuiSettings(), lambda: shown.append(True), lambda: "^g")  # type: ignore[arg-type]
    sink = FakeSink()
    await runner.requested(request_message(sink))
    assert screen.notes == ["No model is loaded."] and sink.ended == [(None, None)]
    assert not runner.is_generating and shown == [True]
    assert (screen.draft.generating, screen.draft.streaming) == (False, False)


def test_what_a_worker_sends_for_no_running_generation_is_not_drawn() -> None:
    screen = FakeScreen()
    runner = GenerationRunner(screen, TuiSettings(), lambda: None, lambda: "^g")  # type: ignore[arg-type]
    runner.prefill_progressed(PrefillProgressed(7, SimpleNamespace(done=1, total=2)))  # type: ignore[arg-type]
    assert screen.progress == [] and runner.last_generation is None
