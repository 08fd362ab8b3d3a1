"""Sessions on disk: one JSON file per session in paths.sessions_dir(), every write atomic.

A file that cannot be read or parsed is renamed `<name>.corrupt-<timestamp>` (its bytes
untouched), reported as a one-line SessionError, and the rest of the store keeps working.
A draft opened from a file is saved back to that file too, atomically, and never over
changes another program made to it since scriptorium last read or wrote it (draft_files.py).
"""

from __future__ import annotations

import functools
import os
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Callable

from scriptorium.inference.core.errors import read_regular_file

from scriptorium.app import atomic
from scriptorium.app import paths

from scriptorium.app.sessions import claims, draft_files, lookup, writes
from scriptorium.app.sessions import format as session_format
from scriptorium.app.sessions.encoding import SessionLines
from scriptorium.app.sessions.model import (
    CHAT_TITLE,
    AnySession,
    ChatSession,
    DraftSession,
    FileStamp,
    SessionError,
    SessionSummary,
    draft_title,
    make_session_id,
    now_iso,
)
from scriptorium.app.sessions.writes import After

SUFFIX = lookup.SUFFIX
CORRUPT_MARK = ".corrupt-"
STALE_TEMP_SECONDS = 3600
"""A temp file this old belongs to a process that died mid-write: nothing will finish it."""
SESSION_FILE_MODE = 0o600
SESSION_FILE_LIMIT = 2_000_000_000
"""The largest session file read: the author's text is a few MB, but every token of every
generation is recorded with its candidates."""


def _noting_the_saved_file(after: After, session: AnySession) -> After:
    return lambda error: after(draft_files.noting_the_saved_file(error, session))


def _sort_time(stamp: str) -> float:
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return 0.0


class SessionStore:
    """Create, save, load, list, rename and delete sessions. Safe to call from several threads."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = Path(directory) if directory is not None else paths.sessions_dir()
        self.problems: list[SessionError] = []
        """Files found damaged and moved aside while listing or resuming; see take_problems()."""
        self._written: dict[str, bytes] = {}
        self._lines = SessionLines()
        """Token records encoded at earlier saves (encoding.py); used only under the lock."""
        self._lock = threading.RLock()
        self._writes = writes.SHARED

    # ------------------------------------------------------------ creating

    def create_draft(
        self, title: str = "", text: str = "", draft_path: str | os.PathLike[str] | None = None
    ) -> DraftSession:
        """A new draft session, already on disk under a fresh id (titled by its first words if untitled)."""
        now = now_iso()
        session = DraftSession(
            id="",
            title=title.strip() or draft_title(text),
            created_at=now,
            updated_at=now,
            text=text,
            draft_path=str(Path(draft_path).expanduser().absolute()) if draft_path else None,
        )
        return self._reserve(session)

    def create_chat(self, title: str = "", system_prompt: str = "") -> ChatSession:
        """A new chat session, already on disk under a fresh id."""
        now = now_iso()
        session = ChatSession(
            id="", title=title.strip() or CHAT_TITLE, created_at=now, updated_at=now, system_prompt=system_prompt
        )
        return self._reserve(session)

    def create_copy(self, session: AnySession, *, detached: bool = False) -> AnySession:
        """A new session, on disk under a fresh id, holding all `session` holds (a copy to
        work on while another scriptorium has `session` open; see claims.py); `detached`:
        saved to no draft file."""
        copy = session_format.loads(session_format.encode(session).data.decode("utf-8"))
        copy.title = f"{session.title} (copy)"
        if detached and isinstance(copy, DraftSession):
            copy.draft_path, copy.draft_stamp = None, None
        return self._reserve(copy)

    def _reserve(self, session: AnySession) -> AnySession:
        base = make_session_id(session.title)
        with self._lock:
            self._ensure_directory()
            for attempt in range(1, 1000):
                session.id = base if attempt == 1 else f"{base}-{attempt}"
                encoded = session_format.encode(session)  # a new session: no tokens, no cache to fill
                try:
                    self._write_session(session.id, encoded, encoded.fingerprint(), overwrite=False)
                    return session
                except atomic.FileExistsRefused:
                    continue
        raise SessionError(f"could not find a free session name for '{base}' in {self.directory}")

    def open_draft(self, path: str | os.PathLike[str], notes: list[str] | None = None) -> DraftSession:
        """The session for a draft file (its latest one, or a new one); the file may not exist yet.

        If another program changed the file since scriptorium last wrote it, the file's text
        wins and model passages follow the change. If the session holds newer text than the
        file (a crash between the two writes), the session wins and the next save writes it.
        If both changed, the session's text is kept in a copy, said in a line added to `notes`.
        """
        path = Path(path).expanduser().absolute()
        text = draft_files.read(path, notes)
        session = self.find_for_draft(path)
        if session is None:
            session = self.create_draft(title=path.stem, text=text or "", draft_path=path)
        if (note := self._take_file_text(session, path, text)) and notes is not None:
            notes.append(note)
        return session

    def take_draft_file(self, session: AnySession) -> str | None:
        """For a draft saved to a file, take the file's text as `open_draft` does (a session opened from the list
        must not show, then save over the file, older text); the line to tell the author, if any. Raises
        SessionError (one line) when the file cannot be read; the session keeps its own copy then."""
        if isinstance(session, DraftSession) and session.draft_path:
            path = Path(session.draft_path)
            notes: list[str] = []
            text = draft_files.read(path, notes)
            notes.extend(filter(None, [self._take_file_text(session, path, text)]))
            return " ".join(notes) or None
        return None

    def _take_file_text(self, session: DraftSession, path: Path, text: str | None) -> str | None:
        """The draft file's `text` wins when another program changed the file since the
        session's stamp; the session's own wins when it is newer (a crash between the two writes)."""
        if text is None:
            return None
        note, file_sha256 = None, draft_files.text_sha256(text)
        if text != session.text:
            stamp = session.draft_stamp
            if stamp is None or file_sha256 != stamp.sha256:
                if stamp is not None and draft_files.text_sha256(session.text) != stamp.sha256:
                    # The author wrote on after the file changed (a conflict): the file's text alone dropped it.
                    copy = self.create_copy(session, detached=True)  # or opening it would do this again
                    note = (
                        f"{path.name} was changed by another program while your text here could not be written "
                        f"to it: the file's text is shown, and yours is kept in the session “{copy.title}”."
                    )
                session.set_text(text)
        stat = path.stat()
        session.draft_stamp = FileStamp(size=stat.st_size, mtime_ns=stat.st_mtime_ns, sha256=file_sha256)
        return note

    def find_for_draft(self, path: str | os.PathLike[str]) -> DraftSession | None:
        """The most recently saved session of the draft file `path`, if any: by the path it
        was opened with, or by the file it is (a symlink to it, or the link's target)."""
        wanted = str(Path(path).expanduser().absolute())
        real = os.path.realpath(wanted)
        for candidate in self._files_newest_first():
            try:
                session = self._read(candidate)
            except SessionError as error:
                self.problems.append(error)
                continue
            if (
                isinstance(session, DraftSession)
                and session.draft_path
                and (session.draft_path == wanted or os.path.realpath(session.draft_path) == real)
            ):
                self._remember(session)
                return session
        return None

    # ------------------------------------------------------------ saving

    def save(
        self,
        session: AnySession,
        *,
        overwrite_draft: bool = False,
        in_background: bool = False,
        after: After | None = None,
        draft_file: bool = True,
        set_aside: Callable[[Path], object] = lambda copy: None,
    ) -> bool:
        """Write the session (and its draft file, unless not `draft_file`) if anything changed; True if the
        session file was written.

        Call it after every accepted suggestion (before going on) and a few seconds after
        typing stops. Raises SessionError; DraftConflictError when the draft file changed on
        disk (the session itself is saved; overwrite_draft=True replaces the file anyway, once
        its text is copied beside it: `set_aside(the copy's path)` is told, here).

        The session is encoded here, and its file written on the store's writing thread
        (writes.py), after the writes asked for before. `in_background`: return True at
        once, `after(the write's error or None)` being called on that thread once it ran;
        the draft file is still written here, so its conflicts are raised here too.
        """
        with self._lock:
            draft_problem: SessionError | None = None
            if isinstance(session, DraftSession) and session.draft_path and draft_file:
                try:
                    if (copy := draft_files.save(session, overwrite_draft)) is not None:
                        set_aside(copy)
                except SessionError as error:
                    draft_problem = error
            # Encoded once, stamped with the time it would be written: compared, then written as is.
            stamp = now_iso()
            encoded = self._encode(session, updated_at=stamp)
        write = functools.partial(self._write_if_changed, session, encoded, stamp)
        if in_background:
            if after is not None and draft_problem is None:
                after = _noting_the_saved_file(after, session)
            self._writes.submit(str(self.path_for(session.id)), write, after)
            written = True
        else:
            try:
                written = self._writes.run(str(self.path_for(session.id)), write)
            except SessionError as session_problem:
                if draft_problem is None:
                    raise draft_files.noting_the_saved_file(session_problem, session) from None
                # Raised alone, the session's failure hid the draft file's: the author took the file for saved.
                raise draft_files.DraftAndSessionError(draft_problem, session_problem) from None
        if draft_problem is not None:
            raise draft_problem
        return written

    def flush(self) -> None:
        """Wait for the session files being written in the background."""
        self._writes.flush()

    def _write_if_changed(self, session: AnySession, encoded: session_format.Encoded, stamp: str) -> bool:
        # On the writing thread: the fingerprint of a long session's file is work too.
        fingerprint = encoded.fingerprint()
        with self._lock:
            if self._written.get(session.id) == fingerprint and self.path_for(session.id).exists():
                return False
        self._ensure_directory()
        self._write_session(session.id, encoded, fingerprint, overwrite=True)
        session.updated_at = stamp
        return True

    def _encode(self, session: AnySession, updated_at: str | None = None) -> session_format.Encoded:
        """Encoding only the tokens recorded since the session was last saved or loaded."""
        return session_format.encode(session, self._lines.for_session(session.id), updated_at=updated_at)

    def _write_session(
        self, session_id: str, encoded: session_format.Encoded, fingerprint: bytes, *, overwrite: bool
    ) -> None:
        try:
            atomic.write_bytes(self.path_for(session_id), encoded.data, overwrite=overwrite, mode=SESSION_FILE_MODE)
        except atomic.FileExistsRefused:
            raise
        except atomic.WriteError as error:
            raise SessionError(f"session not saved: {error}") from None
        self._written[session_id] = fingerprint

    def _ensure_directory(self) -> None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise SessionError(
                f"cannot create the sessions folder {self.directory}: {error.strerror or error}"
            ) from None

    # ------------------------------------------------------------ loading

    def path_for(self, session_id: str) -> Path:
        return self.directory / f"{session_id}{SUFFIX}"

    def resolve(self, ref: str | os.PathLike[str]) -> Path:
        """A session file from an id, a unique id prefix or a path to a session file."""
        return lookup.session_file(os.fspath(ref), self.directory, self._session_files)

    def load(self, ref: str | os.PathLike[str]) -> AnySession:
        """Read a session by id, id prefix or path. A damaged file in the store is moved aside."""
        return self._remember(self._read(self.resolve(ref)))

    def _remember(self, session: AnySession) -> AnySession:
        """Note what is on disk, so save() skips writing a session that has not changed (and
        keep its token lines, so its first save encodes only what is new)."""
        with self._lock:
            self._written[session.id] = self._encode(session).fingerprint()
        return session

    def _read(self, path: Path) -> AnySession:
        self._writes.flush()  # a file still being written is read as it will be
        inside = path.resolve().parent == self.directory.resolve()
        try:
            # Only a regular file (`export /dev/zero` filled the memory), bounded far above the
            # author's own files: a long session's token records make it large.
            session = session_format.loads(read_regular_file(path, SESSION_FILE_LIMIT).decode("utf-8"))
        except session_format.NewerFormatError as error:
            raise SessionError(f"cannot open session {path.name}: {error}") from None
        except (OSError, UnicodeDecodeError, session_format.FormatError) as error:
            reason = (
                (error.strerror or str(error))
                if isinstance(error, OSError)
                else ("not UTF-8 text" if isinstance(error, UnicodeDecodeError) else str(error))
            )
            if not inside:
                raise SessionError(f"cannot read session {path}: {reason}") from None
            raise SessionError(f"session {path.name} is damaged ({reason}); {self._move_aside(path)}") from None
        if inside:
            session.id = path.stem  # the file name is the id, even if someone renamed the file by hand
        return session

    def _move_aside(self, path: Path) -> str:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        target = path.with_name(f"{path.name}{CORRUPT_MARK}{stamp}")
        counter = 1
        while target.exists():
            counter += 1
            target = path.with_name(f"{path.name}{CORRUPT_MARK}{stamp}-{counter}")
        try:
            os.rename(path, target)
        except OSError as error:
            return f"could not move it aside: {error.strerror or error}"
        return f"moved aside to {target.name}"

    def _session_files(self) -> list[Path]:
        self._writes.flush()  # a session whose first write waits its turn is listed too
        try:
            entries = list(self.directory.iterdir())
        except OSError:
            return []
        files = []
        now = time.time()
        for entry in entries:
            if atomic.is_temp_file(entry):
                self._sweep(entry, now)
            elif entry.suffix == SUFFIX and entry.is_file():
                files.append(entry)
        return files

    @staticmethod
    def _sweep(temp: Path, now: float) -> None:
        try:
            if now - temp.stat().st_mtime > STALE_TEMP_SECONDS:
                temp.unlink()
        except OSError:
            pass

    def _files_newest_first(self) -> list[Path]:
        def mtime(path: Path) -> float:
            try:
                return path.stat().st_mtime
            except OSError:
                return 0.0

        return sorted(self._session_files(), key=mtime, reverse=True)

    # ------------------------------------------------------------ listing and managing

    def list(self) -> list[SessionSummary]:
        """Every readable session, most recently updated first; damaged ones go to self.problems."""
        summaries = []
        for path in self._session_files():
            try:
                session = self._read(path)
                size = path.stat().st_size
            except SessionError as error:
                self.problems.append(error)
                continue
            except OSError:
                continue  # deleted while listing
            model = session.latest_model()
            summaries.append(
                SessionSummary(
                    id=session.id,
                    title=session.title,
                    kind=session.kind,
                    created_at=session.created_at,
                    updated_at=session.updated_at,
                    model=model.name if model else None,
                    words=session.word_count(),
                    generations=len(session.generations),
                    path=path,
                    file_size=size,
                )
            )
        summaries.sort(key=lambda s: (_sort_time(s.updated_at), s.id), reverse=True)
        return summaries

    def latest(self) -> AnySession | None:
        """The session saved most recently (for --resume), skipping damaged files; None if none."""
        for path in self._files_newest_first():
            try:
                return self._remember(self._read(path))
            except SessionError as error:
                self.problems.append(error)
        return None

    def take_problems(self) -> list[SessionError]:
        """The damaged-file messages collected so far, once each."""
        with self._lock:
            problems, self.problems = self.problems, []
        return problems

    def rename(self, ref: str, title: str) -> AnySession:
        """Give a session a new title (its id and file name stay)."""
        title = title.strip()
        if not title:
            raise SessionError("a session title cannot be empty")
        session = self.load(ref)
        session.title = title
        self.save(session)
        return session

    def delete(self, ref: str) -> Path:
        """Delete a session file of this store (never the draft file it was opened from)."""
        path = self.resolve(ref)
        if path.resolve().parent != self.directory.resolve():
            raise SessionError(f"{path} is not in the sessions folder {self.directory}; not deleted")
        self._writes.flush()  # or a write waiting its turn would bring the file back
        try:
            path.unlink()
        except OSError as error:
            raise SessionError(f"cannot delete session {path.stem}: {error.strerror or error}") from None
        with self._lock:
            self._written.pop(path.stem, None)
            self._lines.forget(path.stem)
        claims.lock_path(path.parent, path.stem).unlink(missing_ok=True)
        atomic.fsync_directory(path.parent)
        return path
