"""Errors that reach the user as one line: the CLI prints them, the TUI notifies them."""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

MAX_FILE_BYTES = 64_000_000
"""The most scriptorium reads of a file the author names (a draft, the memory, a config, a
prompt template, a SentencePiece model): a novel is a few MB, a tokenizer a few more, and
a file past this is a mistake (a disk image, a log) that would only fill the memory."""


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


class ServerError(ScriptoriumError):
    """The server is down, refused, timed out, is not llama-server, or rejected the request.
    Declared here rather than beside the HTTP client (remote_http.py) so that the app can
    catch it without loading the remote path, which a local model never needs."""


class ServerUnreachable(ServerError):
    """Nothing answered at the server's address (not running, or not reachable): the same
    request may well be answered once it runs again."""


class NotARegularFile(OSError):
    """A pipe, a device or a socket where a file was named: read, a FIFO waits for a writer
    and /dev/zero or /dev/urandom never end, so none is read at all."""


def read_regular_file(path: "Path", limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the file at `path`: every read of a file the author names goes through
    here, so that none blocks or fills the memory. OSError when it cannot be read, with a
    strerror that says why: IsADirectoryError for a folder, NotARegularFile, or EFBIG past
    `limit` bytes, naming the limit. Opened without blocking (a FIFO's open waits for a
    writer) and looked at before a byte is read."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder", str(path))
        if not stat.S_ISREG(mode):
            raise NotARegularFile(errno.EINVAL, "not a regular file (a pipe, a device or a socket)", str(path))
        chunks, size = [], 0
        while size <= limit and (chunk := os.read(fd, min(limit + 1 - size, 1 << 20))):
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:
        raise OSError(errno.EFBIG, f"larger than {limit / 1e6:g} MB, the most scriptorium reads of a file", str(path))
    return b"".join(chunks)


def read_named_text(path: "Path", what: str, error: type[ScriptoriumError] = ScriptoriumError) -> str:
    """The UTF-8 text of a file the author named (`what`: "draft", "prompt template", ...);
    every way reading it fails is one line of `error` naming it."""
    try:
        text = read_named_bytes(path, what, error).decode("utf-8")
    except UnicodeDecodeError:
        raise error(f"{what} {path} is not UTF-8 text") from None
    return universal_newlines(text)


def universal_newlines(text: str) -> str:
    """`text` with "\r\n" and "\r" as "\n", as a file opened in text mode reads it."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_named_bytes(path: "Path", what: str, error: type[ScriptoriumError] = ScriptoriumError) -> bytes:
    """The bytes of a file the author named, failing as read_named_text does."""
    try:
        return read_regular_file(path)
    except FileNotFoundError:
        raise error(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise error(f"{what} {path} is a folder, not a file") from None
    except OSError as failure:
        raise error(f"cannot read {what} {path}: {failure.strerror or failure}") from None
