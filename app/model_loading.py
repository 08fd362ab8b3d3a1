"""Loading a model off the UI thread: the messages it posts and the loop it runs.

llama.cpp reports its own progress while it reads the weights; the UI shows it and
stays usable, so the author can keep writing while a 7B model loads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from textual.message import Message

from scriptorium.inference.engine import LoadOptions
from scriptorium.inference.errors import ScriptoriumError

if TYPE_CHECKING:
    from scriptorium.inference.backend import Backend, BackendLoader


@dataclass
class ModelLoadMessage(Message):
    load_id: int
    """Which load this is about: a newer request makes an older one's messages moot."""


@dataclass
class ModelLoadProgressed(ModelLoadMessage):
    """llama.cpp read more of the model file."""

    progress: float

    def can_replace(self, message: Message) -> bool:
        # Only the latest fraction matters: a queue of them merges into one.
        return isinstance(message, ModelLoadProgressed) and message.load_id == self.load_id


@dataclass
class ModelLoaded(ModelLoadMessage):
    """The model is ready to generate."""

    engine: "Backend"


@dataclass
class ModelLoadFailed(ModelLoadMessage):
    """The file was missing, not a model, or refused by llama.cpp; `error` is one line."""

    options: LoadOptions
    error: str


def load_engine(
    loader: "BackendLoader",
    old: "Backend | None",
    options: LoadOptions,
    load_id: int,
    post: Callable[[Message], object],
) -> None:
    """Close `old` (waiting for its generation to end), then load `options`."""
    if old is not None:
        old.close()
    try:
        engine = loader(options, lambda progress: post(ModelLoadProgressed(load_id, progress)))
    except ScriptoriumError as error:
        post(ModelLoadFailed(load_id, options, str(error)))
    except Exception as error:  # noqa: BLE001 - never a traceback over the author's draft
        post(ModelLoadFailed(load_id, options, f"loading crashed ({type(error).__name__}: {error})"))
    else:
        post(ModelLoaded(load_id, engine))
