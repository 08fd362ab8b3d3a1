"""Errors that reach the user as one line: the CLI prints them, the TUI notifies them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, TypeVar

if TYPE_CHECKING:
    from pathlib import Path

_Content = TypeVar("_Content", str, bytes)


class ScriptoriumError(Exception):
    """Base of every error whose message is written for the user."""


class ModelFileError(ScriptoriumError):
    """A model or adapter file that llama.cpp must not be handed (missing, not GGUF, wrong kind)."""


class ModelLoadError(ScriptoriumError):
    """llama.cpp refused a file that looked valid."""


class GenerationError(ScriptoriumError):
    """llama.cpp failed while evaluating a batch."""


class EngineCrashed(ScriptoriumError):
    """The process running the model ended (an abort, a segfault, a kill); the message
    quotes llama.cpp's last words. The backend that raised it is of no further use."""


def read_named_text(path: "Path", what: str, error: type[ScriptoriumError] = ScriptoriumError) -> str:
    """The UTF-8 text of a file the author named (`what`: "draft", "prompt template", ...);
    every way reading it fails is one line of `error` naming it."""
    return _read_named(path.read_text, what, path, error, encoding="utf-8")


def read_named_bytes(path: "Path", what: str, error: type[ScriptoriumError] = ScriptoriumError) -> bytes:
    """The bytes of a file the author named, failing as read_named_text does."""
    return _read_named(path.read_bytes, what, path, error)


def _read_named(read: Callable[..., _Content], what: str, path: "Path", error: type[ScriptoriumError],
                **options: str) -> _Content:
    try:
        return read(**options)
    except FileNotFoundError:
        raise error(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise error(f"{what} {path} is a folder, not a file") from None
    except UnicodeDecodeError:
        raise error(f"{what} {path} is not UTF-8 text") from None
    except OSError as failure:
        raise error(f"cannot read {what} {path}: {failure.strerror or failure}") from None
