"""Loading a model off the UI thread: the messages it posts and the loop it runs.

llama.cpp reports its own progress while it reads the weights; the UI shows it and
stays usable, so the author can keep writing while a 7B model loads.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from textual.message import Message

from scriptorium.inference.core.errors import ScriptoriumError
from scriptorium.inference.core.load_options import LoadOptions

from scriptorium.app.models.hashing import file_sha256

if TYPE_CHECKING:
    from scriptorium.inference.core.backend import Backend, BackendLoader


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

    backend: "Backend"


@dataclass
class ModelFileHashed(Message):
    """A model or adapter file's SHA-256, for the session's record (computed after the load:
    a multi-GB file takes seconds the first time)."""

    path: str
    sha256: str


@dataclass
class BackendCrashed(Message):
    """The process running `backend` died during a request (an abort or a segfault in
    llama.cpp, an out-of-memory kill); `error` quotes its last words. Posted by the
    request's worker after its own failure message, or, by a request the author did not
    make (counting the window), with `said` False: its last words are then the app's to say,
    once however many requests found the engine dead."""

    backend: "Backend"
    error: str
    said: bool = True


@dataclass
class ModelFilesChecked(ModelLoadMessage):
    """The files to load passed the checks of their headers: the model running may now be
    stopped and closed for them."""

    options: LoadOptions


@dataclass
class BackendUnreachable(Message):
    """Nothing answered at the address of the llama-server behind `backend` (stopped, or the
    network down): it stays the model, asked again by the next request."""

    backend: "Backend"


@dataclass
class ModelLoadFailed(ModelLoadMessage):
    """The file was missing, not a model, or refused by llama.cpp; `error` is one line."""

    options: LoadOptions
    error: str
    server: bool = False
    """A llama-server could not be used: the remedy is to connect again, not another file."""


def check_files(options: LoadOptions, load_id: int, post: Callable[[Message], object]) -> None:
    """Check the files `options` name by their headers (missing, not a model, truncated, an
    adapter for another model), without llama.cpp and without reading the weights: posts
    ModelFilesChecked, or ModelLoadFailed with the reason in one line.

    Run before the model in use is touched: a mistyped path must leave it writing, its
    generation streaming and its scoring running, where reloading it (a 7B) takes a while."""
    from scriptorium.inference.gguf.gguf_file import read_adapter_facts, read_model_facts

    try:
        facts = read_model_facts(options.model_path)
        if options.lora_path is not None:
            read_adapter_facts(options.lora_path, facts.architecture, facts.path)
    except ScriptoriumError as error:
        post(ModelLoadFailed(load_id, options, str(error)))
    except Exception as error:  # noqa: BLE001 - never a traceback over the author's draft
        post(ModelLoadFailed(load_id, options, f"checking the files crashed ({type(error).__name__}: {error})"))
    else:
        post(ModelFilesChecked(load_id, options))


def load_backend(
    loader: "BackendLoader",
    old: "Backend | None",
    options: LoadOptions,
    load_id: int,
    post: Callable[[Message], object],
    should_stop: Callable[[], bool] = lambda: False,
) -> None:
    """Close `old` (waiting for its generation to end), then load `options`; once loaded,
    hash its files unless `should_stop` (another load began) says to give up."""
    if old is not None:
        old.close()
    try:
        backend = loader(options, lambda progress: post(ModelLoadProgressed(load_id, progress)))
    except ScriptoriumError as error:
        from scriptorium.inference.remote.remote_http import ServerError

        post(ModelLoadFailed(load_id, options, str(error), server=isinstance(error, ServerError)))
    except Exception as error:  # noqa: BLE001 - never a traceback over the author's draft
        post(ModelLoadFailed(load_id, options, f"loading crashed ({type(error).__name__}: {error})"))
    else:
        post(ModelLoaded(load_id, backend))
        files = [options.model_path] + (
            [options.lora_path] if backend.adapter is not None and options.lora_path else []
        )
        if backend.origin:  # a server's files are on its machine: one here by the same name may be another
            files = []
        for path in files:
            if should_stop():
                return
            try:
                post(ModelFileHashed(str(path), file_sha256(Path(path))))
            except Exception:  # noqa: BLE001 - without a hash the record says null, which is honest
                continue
