"""Errors that reach the user as one line: the CLI prints them, the TUI notifies them."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


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


def read_named_file(path: "Path", what: str, error: type[ScriptoriumError] = ScriptoriumError, *,
                    binary: bool = False) -> "str | bytes":
    """The content of a file the author named (`what`: "draft", "prompt template", ...), as
    UTF-8 text or bytes; every way reading it fails is one line of `error` naming it."""
    try:
        return path.read_bytes() if binary else path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise error(f"{what} {path} is a folder, not a file") from None
    except UnicodeDecodeError:
        raise error(f"{what} {path} is not UTF-8 text") from None
    except OSError as failure:
        raise error(f"cannot read {what} {path}: {failure.strerror or failure}") from None
