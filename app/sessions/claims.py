"""Which sessions this process has open in the app, so that two scriptoriums never write
the same session file.

Every save writes the whole session, so two apps on one session (`--resume` in a second
terminal, the same draft opened twice) took turns replacing each other's file: the
text and generations of whichever saved first were lost, and an unnamed draft has no
other copy. An app claims each session it shows; a session another process claimed is
not written by this one (the keeper works on a copy instead).

A claim is an advisory lock (flock) on `.<id>.lock` beside the session file: the system
drops it when the process ends, kill -9 included, so nothing stale is left to clean up.
The lock files stay (deleting one another process may be about to lock is a race); they
are empty, hidden, and go with their session. Claims are per process, whatever store
asks: only another process is "another scriptorium". Without flock (Windows) every claim
succeeds, as before.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

_held: dict[Path, int] = {}
"""Lock file -> the descriptor holding its lock, for this process."""
_lock = threading.Lock()


def lock_path(directory: Path, session_id: str) -> Path:
    return directory / f".{session_id}.lock"


def claim(directory: Path, session_id: str) -> bool:
    """Claim the session for this process: False only if another process holds it. A lock
    that cannot be taken for another reason (a read-only folder) does not stop the author:
    saving says what is wrong then."""
    if fcntl is None:
        return True
    path = lock_path(directory, session_id)
    with _lock:
        if path in _held:
            return True
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        except OSError:
            os.close(fd)
            return True
        _held[path] = fd
        return True


def release(directory: Path, session_id: str) -> None:
    with _lock:
        fd = _held.pop(lock_path(directory, session_id), None)
    if fd is not None:
        os.close(fd)  # closing the descriptor drops its lock
