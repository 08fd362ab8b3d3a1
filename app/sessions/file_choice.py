"""When another program changed the draft file and the author changed the text here too,
whose text the file keeps is the author's choice, and the other text is kept either way.
No save replaces such a file unless told to (`overwrite_file`), and one told to sets the
file's own text aside first (draft_files.set_aside: said here, `SetAsides`); taking the
file's text instead keeps the author's in a copy of the session (`take_file_text`).
"Press ^s to replace it with your text" used to send one ctrl+s, a writer's reflex,
over the other program's words: no backup, nothing in the session."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from scriptorium.app.sessions import draft_files
from scriptorium.app.sessions.model import DraftSession, SessionError
from scriptorium.app.sessions.opening import DraftFile
from scriptorium.app.sessions.store import SessionStore


class SetAsides:
    """Says where the draft file's own text went when a save replaced it; `notify` shows one line."""

    def __init__(
        self, notify: Callable[..., object], draft_file: DraftFile, gettext: Callable[[str], str] = str
    ) -> None:
        """`gettext`: the app's language's (babel.cfg extracts the strings here)."""
        self._notify, self._draft_file, self._gettext = notify, draft_file, gettext
        self.last: Path | None = None
        """The copy last set aside."""

    def said(self, copy: Path) -> None:
        self.last = copy
        gettext = self._gettext
        said = gettext(
            "{name} had been changed by another program: that text is kept in {copy}, beside it. "
            "The file now holds your text."
        )
        self._notify(
            said.format(name=self._draft_file.display_name, copy=copy.name), title=gettext("Draft file"), timeout=20
        )


def take_file_text(session: DraftSession | None, store: SessionStore, editor_text: str) -> tuple[str, str]:
    """The author chose the draft file's text over `editor_text`, theirs: theirs is kept first in a copy of
    `session` (with which words the model wrote), then the session takes the file's text (the caller saves it).
    Returns (the file's text, the copy's title). Raises SessionError (one line): nothing changed then."""
    if session is None or not session.draft_path:
        raise SessionError("this draft has no file to take text from")
    path = Path(session.draft_path)
    if draft_files.read(path) is None:  # raises SessionError if it cannot be read
        raise SessionError(f"{path.name} is gone: there is no text on disk to take")
    session.set_text(editor_text)
    copy = store.create_copy(session, detached=True)
    return draft_files.take_file(session, editor_text), copy.title
