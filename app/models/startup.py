"""Which model the app starts with: --model, else the config, else the demo model, else
the welcome screen. Resolution can block (the demo model is assembled on first use, a
name is looked up by scanning folders), so it runs in a worker that only posts messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from textual.message import Message

from scriptorium.inference.core.errors import ScriptoriumError

from scriptorium.app.config.schema import Config

if TYPE_CHECKING:
    from scriptorium.inference.gguf.discovery import Discovery


@dataclass(frozen=True, slots=True)
class ModelSource:
    """What the command line and the config say about the model; resolved in the app."""

    reference: str | None
    """--model (a path or a name), else the config's, or None for the demo model."""
    config: Config
    named: bool = False
    """The command line named the model or its adapter: a session reopened at start keeps to it."""


@dataclass
class DemoProgressed(Message):
    """The demo model is being assembled into the cache (first run only)."""

    done: int
    total: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, DemoProgressed)


@dataclass
class ModelResolved(Message):
    """The model file to load is known."""

    path: Path
    demo: bool


@dataclass
class NoModelFound(Message):
    """Nothing given, nothing configured, no demo: the welcome screen's case."""

    discovery: Discovery


@dataclass
class ModelNotResolved(Message):
    """The configured or given model cannot be used; `error` is one line."""

    reference: str
    error: str


def resolve(source: ModelSource, post: Callable[[Message], object]) -> None:
    """Resolve `source` to a file, posting the outcome (blocking: call it in a worker)."""
    # Imported here, in the worker: model choice brings discovery and the GGUF reader (some
    # 10 ms to import), which the first frame does not need (tests/packaging/test_startup_imports.py).
    from scriptorium.app.models import choice as model_choice

    reference = source.reference if source.reference is not None else source.config.model.path
    try:
        path = model_choice.resolve_model(
            source.reference, source.config, lambda done, total: post(DemoProgressed(done, total))
        )
    except model_choice.NoModelError as error:
        post(NoModelFound(error.discovery))
    except ScriptoriumError as error:
        post(ModelNotResolved(reference or "demo", str(error)))
    except Exception as error:  # noqa: BLE001 - the editor must stay usable whatever happens here
        post(ModelNotResolved(reference or "demo", f"choosing the model crashed ({type(error).__name__}: {error})"))
    else:
        post(ModelResolved(path, model_choice.is_demo_model(path)))
