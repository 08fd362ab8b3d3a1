"""The author's own draft file: read as UTF-8, and written back atomically, never over
changes another program made to it since scriptorium last read or wrote it (the
session's FileStamp of the file remembers what that was)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from stat import S_ISREG

from scriptorium.app import atomic

from scriptorium.app.sessions.model import DraftSession, FileStamp, SessionError


class DraftFileError(SessionError):
    """The draft file could not be written. Raised before the session is written (the store
    says whether it was): the message says nothing of it."""


class DraftConflictError(DraftFileError):
    """The draft file changed on disk since scriptorium last read or wrote it."""


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read(path: Path) -> str | None:
    """The draft file's text; None if there is no such file. Raises SessionError (one line)."""
    try:
        if not S_ISREG(path.stat().st_mode):
            # Read as a file, a pipe waits for a writer and /dev/zero never ends: no screen, ever.
            kind = "a folder" if path.is_dir() else "not a regular file (a pipe, device or socket)"
            raise SessionError(f"draft {path} is {kind}; scriptorium opens only files")
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise SessionError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SessionError(f"{path} is not UTF-8 text; scriptorium opens only UTF-8 drafts") from None


def save(session: DraftSession, overwrite: bool) -> None:
    """Write the session's text to its draft file and stamp it. Raises DraftConflictError
    if the file changed on disk meanwhile (unless `overwrite`), DraftFileError otherwise."""
    path = Path(session.draft_path or "")
    digest = text_sha256(session.text)
    stamp = session.draft_stamp
    try:
        stat = path.stat()
    except FileNotFoundError:
        stat = None
    except OSError as error:
        raise DraftFileError(f"cannot reach draft file {path}: {error.strerror or error}") from None
    if stat is not None and not S_ISREG(stat.st_mode):  # hashing a pipe's "content" would wait for ever
        raise DraftFileError(f"the draft file was not saved: {path} is not a regular file")
    if stat is not None and not overwrite:
        unchanged = stamp is not None and (stat.st_size, stat.st_mtime_ns) == (stamp.size, stamp.mtime_ns)
        on_disk = stamp.sha256 if unchanged and stamp else _file_sha256(path)
        if on_disk == digest:
            if not unchanged:
                session.draft_stamp = FileStamp(size=stat.st_size, mtime_ns=stat.st_mtime_ns, sha256=digest)
            return
        if stamp is None or on_disk != stamp.sha256:
            raise DraftConflictError(
                f"{path.name} changed on disk since scriptorium last saved it; the draft file was not overwritten")
    if stat is not None and _read_only(path, stat.st_mode):
        # An atomic write replaces the file by renaming over it, which a read-only file does
        # not stop: the protection the author set (as editors honour it) would be ignored.
        raise DraftFileError(f"{path.name} is read-only, so the draft file was not saved; make it writable to save it")
    try:
        atomic.write_text(path, session.text)
        stat = path.stat()
    except (atomic.WriteError, OSError) as error:
        raise DraftFileError(f"the draft file was not saved: {error}") from None
    session.draft_stamp = FileStamp(size=stat.st_size, mtime_ns=stat.st_mtime_ns, sha256=digest)


def _read_only(path: Path, mode: int) -> bool:
    # No write bit for anyone counts for root too, whom os.access always lets write.
    return not mode & 0o222 or not os.access(path, os.W_OK)


def _file_sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None
