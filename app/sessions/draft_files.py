"""The author's own draft file: read as UTF-8, and written back atomically, never over
changes another program made to it since scriptorium last read or wrote it (the
session's FileStamp of the file remembers what that was).

Inside scriptorium a draft's lines end in "\n" and it has no byte order mark: the
editor counts its offsets that way, the model was trained on "\n", and an editor
keeps only one kind of line break (every str.splitlines break becomes it). The file
keeps its own: its BOM and line breaks (CRLF, CR) are put back on each save, read from
the file as it is then. The stamp's hash is of the text in that inside form.

Text that exists only on disk is never destroyed: a save told to replace a file whose text
scriptorium never read or wrote (another program changed it) first copies the file, byte
for byte, beside it as `NAME.disk-YYYYMMDD-HHMMSS` (`set_aside`), and says where.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from pathlib import Path
from stat import S_ISREG

from scriptorium.inference.core.errors import NotARegularFile, read_regular_file
from scriptorium.inference.core.text import OTHER_LINE_BREAKS, editor_line_breaks

from scriptorium.app import atomic

from scriptorium.app.i18n.marker import N_
from scriptorium.app.sessions.model import DraftSession, FileStamp, SessionError


class DraftFileError(SessionError):
    """The draft file could not be written. Raised before the session is written (the store
    says whether it was): the message says nothing of it."""


class DraftConflictError(DraftFileError):
    """The draft file changed on disk since scriptorium last read or wrote it."""

    SAID = N_("{name} changed on disk since scriptorium last saved it; the draft file was not overwritten")
    """Marked: the app says it in its language (`name` kept for it), the command line as it is."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(self.SAID.format(name=name))


class DraftAndSessionError(SessionError):
    """Neither the draft file nor its session was written (a full disk): both failures, in one line."""

    def __init__(self, draft_problem: SessionError, session_problem: SessionError) -> None:
        draft_part = str(draft_problem).removeprefix("the draft file was not saved: ")
        session_part = str(session_problem).removeprefix("session not saved: ")
        super().__init__(f"neither the draft file nor the session was saved: {draft_part}; {session_part}")


def noting_the_saved_file(error: BaseException | None, session: object) -> BaseException | None:
    """The session's write failed (`error`) after its draft file was saved: said with the
    failure, or the author, told "Not saved", takes the text for lost."""
    if isinstance(error, SessionError) and isinstance(session, DraftSession) and session.draft_path:
        return SessionError(f"{error} ({Path(session.draft_path).name} was saved)")
    return error


BOM = "\ufeff"
_BREAK = re.compile(f"\r\n|[\n{OTHER_LINE_BREAKS}]")
"""Every line break str.splitlines (so the editor) knows."""
_NEWLINE = re.compile("\r\n|[\n\r]")
_NAMES = {
    "\r\n": "CRLF",
    "\n": "LF",
    "\r": "CR",
    "\x0b": "vertical tab",
    "\x0c": "form feed",
    "\x1c": "U+001C",
    "\x1d": "U+001D",
    "\x1e": "U+001E",
    "\x85": "U+0085 (NEL)",
    "\u2028": "U+2028 line separator",
    "\u2029": "U+2029 paragraph separator",
}
_FORMAT_PROBE = 65537
"""Bytes read to find a file's BOM and line break: 64 KiB, and one more for a CR's LF."""


def inside_form(text: str) -> str:
    """`text` as scriptorium keeps it: no BOM, every line break "\n"."""
    return editor_line_breaks(text.removeprefix(BOM))


def end_of_writing(text: str) -> int:
    """Where a continuation "from the end" of `text` attaches: its end, before the single
    newline a text file ends with by convention (editors add it; it is the file's, not the
    author's). Two newlines are the author's: a new paragraph, continued after them. The
    app's editor and `scriptorium continue` both follow this, so the model reads the same
    text in both."""
    return len(text) - 1 if text.endswith("\n") and not text.endswith("\n\n") else len(text)


def file_form(text: str, newline: str, bom: bool) -> str:
    """`text` as the file holds it: its line breaks `newline`, after a BOM if it had one."""
    text = inside_form(text)  # idempotent: text from an older session may still hold "\r\n"
    return (BOM if bom else "") + (text.replace("\n", newline) if newline != "\n" else text)


def _file_newline(text: str) -> str:
    first = _NEWLINE.search(text)
    return first.group(0) if first else "\n"


def _breaks_note(path: Path, text: str) -> str | None:
    newline = _file_newline(text)
    others = sorted({m.group(0) for m in _BREAK.finditer(text)} - {newline}, key=list(_NAMES).index)
    if not others:
        return None
    kinds = ", ".join(_NAMES[o] for o in others)
    return f"{path.name}: saving writes each of its line breaks ({kinds}) as {_NAMES[newline]}, the one kind the editor keeps."


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read(path: Path, notes: list[str] | None = None) -> str | None:
    """The draft file's text in the inside form; None if there is no such file. What saving
    would change (mixed line breaks) is said in a line added to `notes`. Raises SessionError (one line)."""
    try:
        data = read_regular_file(path)
    except FileNotFoundError:
        return None
    except (IsADirectoryError, NotARegularFile):
        # Read as a file, a pipe waits for a writer and /dev/zero never ends: no screen, ever.
        kind = "a folder" if path.is_dir() else "not a regular file (a pipe, device or socket)"
        raise SessionError(f"draft {path} is {kind}; scriptorium opens only files") from None
    except OSError as error:
        raise SessionError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SessionError(f"{path} is not UTF-8 text; scriptorium opens only UTF-8 drafts") from None
    if notes is not None and (note := _breaks_note(path, text)):
        notes.append(note)
    return inside_form(text)


def take_changed_file(session: DraftSession, editor_text: str) -> str | None:
    """The draft file's text, now the session's (its model passages following the change,
    as they follow the author's edits), when another program changed the file and
    `editor_text` holds nothing new since scriptorium last read or wrote it: a polished
    editor's reload. None otherwise: the file is as scriptorium left it, gone or unreadable,
    or the author changed the text here too (a save then asks whose text wins)."""
    stamp = session.draft_stamp
    if not session.draft_path or stamp is None or text_sha256(editor_text) != stamp.sha256:
        return None
    path = Path(session.draft_path)
    try:
        # Before the read: a change landing between the two is then seen at the next check,
        # where a stat taken after it would stamp the new file with the old text's hash.
        stat = path.stat()
        if (stat.st_size, stat.st_mtime_ns) == (stamp.size, stamp.mtime_ns) or not S_ISREG(stat.st_mode):
            return None
        text = read(path)
    except (OSError, SessionError):
        return None
    if text is None:
        return None
    _take(session, editor_text, text, stat)
    return text if text != editor_text else None


def take_file(session: DraftSession, editor_text: str) -> str:
    """The draft file's text, now the session's, whatever the author changed here: the
    author chose the file's text over theirs (which the caller keeps elsewhere first).
    Raises SessionError (one line) when the file is gone or cannot be read."""
    path = Path(session.draft_path or "")
    try:
        stat = path.stat()
    except OSError as error:
        raise SessionError(f"cannot read {path}: {error.strerror or error}") from None
    text = read(path)
    if text is None:
        raise SessionError(f"{path.name} is gone: there is no text on disk to take")
    _take(session, editor_text, text, stat)
    return text


def _take(session: DraftSession, editor_text: str, text: str, stat: os.stat_result) -> None:
    # The editor's text first: the model's passages then follow the change to the file's.
    session.set_text(editor_text)
    session.set_text(text)
    session.draft_stamp = FileStamp(size=stat.st_size, mtime_ns=stat.st_mtime_ns, sha256=text_sha256(text))


def save(session: DraftSession, overwrite: bool) -> Path | None:
    """Write the session's text to its draft file and stamp it. Raises DraftConflictError
    if the file changed on disk meanwhile (unless `overwrite`), DraftFileError otherwise.
    Returns the copy the file's own text was set aside in (`overwrite` past a change made
    elsewhere), None when there was nothing of another program's to keep."""
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
    changed_elsewhere = False
    if stat is not None:
        unchanged = stamp is not None and (stat.st_size, stat.st_mtime_ns) == (stamp.size, stamp.mtime_ns)
        on_disk = stamp.sha256 if unchanged and stamp else _file_sha256(path)
        if on_disk == digest:
            if not unchanged:
                session.draft_stamp = FileStamp(size=stat.st_size, mtime_ns=stat.st_mtime_ns, sha256=digest)
            return None
        changed_elsewhere = stamp is None or on_disk != stamp.sha256
        if changed_elsewhere and not overwrite:
            raise DraftConflictError(path.name)
    if stat is not None and _read_only(path, stat.st_mode):
        # An atomic write replaces the file by renaming over it, which a read-only file does
        # not stop: the protection the author set (as editors honour it) would be ignored.
        raise DraftFileError(f"{path.name} is read-only, so the draft file was not saved; make it writable to save it")
    # One ctrl+s replaced another program's text, kept nowhere: it is copied aside first.
    kept = set_aside(path) if changed_elsewhere else None
    newline, bom = _format_on_disk(path) if stat is not None else ("\n", False)
    try:
        atomic.write_text(path, file_form(session.text, newline, bom))
        stat = path.stat()
    except (atomic.WriteError, OSError) as error:
        raise DraftFileError(f"the draft file was not saved: {error}") from None
    session.draft_stamp = FileStamp(size=stat.st_size, mtime_ns=stat.st_mtime_ns, sha256=digest)
    return kept


SET_ASIDE_MARK = ".disk-"
"""Between the draft file's name and the time in the name of a copy set aside: `porto.md.disk-20261203-134500`.
After the whole name, so a folder's `*.md` (a book built from its chapters) never takes the copy in."""


def set_aside(path: Path) -> Path:
    """Copy the file at `path`, its bytes as they are (whatever their encoding), to a new
    file beside it named for now; return the copy's path. Written atomically and never
    over another file. Raises DraftFileError (one line): the file is then not to be replaced."""
    try:
        data, mode = path.read_bytes(), path.stat().st_mode & 0o777  # no more readable than the file
    except OSError as error:
        raise DraftFileError(
            f"the draft file was not saved: its text on disk could not be kept first ({error.strerror or error})"
        ) from None
    stem = f"{path.name}{SET_ASIDE_MARK}{time.strftime('%Y%m%d-%H%M%S')}"
    for attempt in range(1, 100):
        copy = path.with_name(stem if attempt == 1 else f"{stem}-{attempt}")
        try:
            return atomic.write_bytes(copy, data, overwrite=False, mode=mode)
        except atomic.FileExistsRefused:
            continue
        except atomic.WriteError as error:
            raise DraftFileError(
                f"the draft file was not saved: its text on disk could not be kept first ({error})"
            ) from None
    raise DraftFileError(
        f"the draft file was not saved: no free name beside it for a copy of its text on disk ({stem})"
    )


def _read_only(path: Path, mode: int) -> bool:
    # No write bit for anyone counts for root too, whom os.access always lets write.
    return not mode & 0o222 or not os.access(path, os.W_OK)


def _file_sha256(path: Path) -> str | None:
    try:
        return text_sha256(inside_form(read_regular_file(path).decode("utf-8")))
    except (OSError, UnicodeDecodeError):
        return None


def _format_on_disk(path: Path) -> tuple[str, bool]:
    """The file's line break and whether it opens with a BOM: what a save keeps."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_FORMAT_PROBE)
    except OSError:
        return "\n", False
    text = head.decode("utf-8", errors="replace")
    return _file_newline(text), text.startswith(BOM)
