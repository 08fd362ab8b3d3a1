"""Pipes for a child process of ours (the engine's worker, compare's, the chat-template
renderer): descriptors that never land on stdin, stdout or stderr."""

from __future__ import annotations

import fcntl
import os


def pipe_above_standard_streams() -> tuple[int, int]:
    """os.pipe(), never on descriptors 0-2. With the parent's stdin, stdout or stderr
    closed (`scriptorium continue FILE <&-`), os.pipe() takes that lowest free number; the
    child's own stdin/stdout/stderr then land on it, and the worker read its requests
    from /dev/null and left at once: "the model's engine stopped without a message"."""
    read, write = os.pipe()
    return _above_standard_streams(read), _above_standard_streams(write)


def _above_standard_streams(fd: int) -> int:
    if fd > 2:
        return fd
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    os.close(fd)
    return moved
