"""The one door to llama_cpp: imported lazily, backend initialised once, llama.cpp's log
captured instead of printed.

llama-cpp-python's `verbose=False` silences llama.cpp by redirecting the process's stdout
and stderr file descriptors, which would blank a running TUI; capturing the log through
`llama_log_set` keeps the terminal intact and keeps llama.cpp's own error lines so a
failed load can say why.
"""

from __future__ import annotations

import collections
import ctypes
import threading
from types import ModuleType
from typing import Any

_LOG_LINES: collections.deque[str] = collections.deque(maxlen=4000)
_PROBLEM_LINES: collections.deque[tuple[int, str]] = collections.deque(maxlen=50)
"""(position in the log, line) of lines llama.cpp logged as a warning or an error."""
_log_total = 0
_state_lock = threading.Lock()
_library: ModuleType | None = None
_log_callback: Any = None  # kept referenced: llama.cpp holds the raw function pointer

# ggml.h (llama-cpp-python's own _logger.py still has the older numbering).
GGML_LOG_LEVEL_WARN = 3
GGML_LOG_LEVEL_ERROR = 4
GGML_LOG_LEVEL_CONT = 5


def llama() -> ModuleType:
    """`llama_cpp.llama_cpp` (the C bindings), ready to use."""
    global _library, _log_callback
    if _library is not None:
        return _library
    with _state_lock:
        if _library is None:
            from llama_cpp import llama_cpp as lib

            pending: list[str] = []
            line_level = [0]

            @lib.llama_log_callback
            def collect(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
                global _log_total
                if level != GGML_LOG_LEVEL_CONT and not pending:
                    line_level[0] = level
                pending.append(text.decode("utf-8", errors="replace"))
                if pending[-1].endswith("\n"):
                    line = "".join(pending).rstrip("\n")
                    _LOG_LINES.append(line)
                    if line_level[0] in (GGML_LOG_LEVEL_WARN, GGML_LOG_LEVEL_ERROR):
                        _PROBLEM_LINES.append((_log_total, line))
                    _log_total += 1
                    pending.clear()

            _log_callback = collect
            lib.llama_log_set(_log_callback, ctypes.c_void_p(0))
            lib.llama_backend_init()
            _library = lib
    return _library


def log_mark() -> int:
    """A position in the captured log, to read what came after it."""
    return _log_total


def log_since(mark: int) -> list[str]:
    """The captured lines logged after `mark` (as many as the bounded buffer still holds)."""
    count = min(_log_total - mark, len(_LOG_LINES))
    return list(_LOG_LINES)[-count:] if count > 0 else []


def last_error_since(mark: int) -> str | None:
    """llama.cpp's most telling line for a failure since `mark`: the last warning or
    error it logged (they name the missing tensor, the bad shape...), else the last
    line that says something failed."""
    for position, line in reversed(_PROBLEM_LINES):
        if position >= mark:
            return line.strip()
    for line in reversed(log_since(mark)):
        lowered = line.lower()
        if "error" in lowered or "failed" in lowered or "invalid" in lowered:
            return line.strip()
    return None


def token_piece(lib: ModuleType, vocab: Any, token_id: int, *, special: bool = False) -> bytes:
    """The bytes of one token. llama_token_to_piece returns minus the needed size when the
    buffer is short (llama-cpp-python's own 32-byte buffer silently truncates)."""
    size = 64
    while True:
        buffer = ctypes.create_string_buffer(size)
        written = lib.llama_token_to_piece(vocab, token_id, buffer, size, 0, special)
        if written >= 0:
            return buffer.raw[:written]
        size = -written
