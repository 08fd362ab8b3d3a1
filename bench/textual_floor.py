"""The least a Textual app can do to show tokens as they stream: the floor under the app.

One Static widget on the screen; a thread worker consumes the same backend the app uses
and posts the text gathered since its last post once per frame, as the app's worker does;
the widget shows the whole text so far. No panels, no editor, no footer. Whatever this
costs the decode is what drawing streamed text with Textual costs at that frame rate, on
this machine, before any of the app's own work: the app cannot do better than this.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import closing
from dataclasses import dataclass
from typing import Any

from textual import work
from textual.app import App, ComposeResult
from textual.message import Message
from textual.widgets import Static

from scriptorium.inference.core.events import GenerationDone, TokenEvent
from scriptorium.inference.core.settings import LogitBias


class FloorApp(App[None]):
    """Streams one generation into one Static; `done` is its GenerationDone."""

    @dataclass
    class Text(Message):
        text: str

    @dataclass
    class Done(Message):
        event: GenerationDone

    def __init__(self, backend: Any, prompt: str, settings: Any, top_n: int, frame_interval: float) -> None:
        super().__init__()
        self._backend, self._prompt, self._settings = backend, prompt, settings
        self._top_n, self._frame_interval = top_n, frame_interval
        self._shown = ""
        self.done: asyncio.Future[GenerationDone] = asyncio.get_running_loop().create_future()

    def compose(self) -> ComposeResult:
        yield Static(id="text", markup=False)

    def on_mount(self) -> None:
        self._stream()

    @work(thread=True)
    def _stream(self) -> None:
        gathered: list[str] = []
        last_post = -self._frame_interval
        with closing(self._backend.generate(self._prompt, self._settings, LogitBias(), top_n=self._top_n)) as events:
            for event in events:
                if isinstance(event, TokenEvent):
                    gathered.append(event.text)
                    if time.monotonic() - last_post >= self._frame_interval:
                        self.post_message(self.Text("".join(gathered)))
                        gathered.clear()
                        last_post = time.monotonic()
                elif isinstance(event, GenerationDone):
                    self.post_message(self.Text("".join(gathered)))
                    self.post_message(self.Done(event))

    def on_floor_app_text(self, message: Text) -> None:
        self._shown += message.text
        self.query_one(Static).update(self._shown)

    def on_floor_app_done(self, message: Done) -> None:
        self.done.set_result(message.event)
