"""A draft file another program moved away or deleted while scriptorium had it open
(renamed in a file manager, `git mv`, `rm`).

It is written again at its old path when there is something to keep there: text typed
since it was last saved, or a save the author asked for (ctrl+s). Otherwise it is left
gone: quitting without typing wrote it again, and the author found a stray copy beside
the file they had moved. Either way it is said, in the app and again in the terminal
after the app closes, where the notification of the save that quits would vanish with
the screen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from scriptorium.app.sessions.draft_files import text_sha256
from scriptorium.app.sessions.model import DraftSession, SessionError


def make_parent(path: Path) -> None:
    # A draft named on the command line may live in a folder that does not exist yet.
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise SessionError(f"draft not saved: cannot create {path.parent}: {error.strerror or error}") from None


def is_gone(session: DraftSession) -> bool:
    """The draft file scriptorium read or wrote is no longer at its path."""
    return bool(session.draft_path and session.draft_stamp and not Path(session.draft_path).exists())


def left_gone(session: DraftSession, text: str, asked: bool) -> bool:
    """Not to be written again: gone, `text` is what scriptorium last saved there, and the
    author did not ask for this save."""
    stamp = session.draft_stamp
    return not asked and stamp is not None and is_gone(session) and text_sha256(text) == stamp.sha256


class GoneDraftFiles:
    """What became of draft files found gone, said once each in the app (`notify`) and
    kept for the terminal after the app closes (`after_exit`)."""

    def __init__(self, notify: Callable[..., object], gettext: Callable[[str], str] = str) -> None:
        """`gettext`: the app's language's (babel.cfg extracts the strings here); the lines kept
        for the terminal are the app's, in its language."""
        self._notify = notify
        self._gettext = gettext
        self._last: dict[str, str] = {}
        """Per draft file: the last line said of it."""

    def said(self, session: DraftSession, *, written: bool, save_key: str) -> None:
        path = session.draft_path or ""
        gettext = self._gettext
        if written:
            line = gettext(
                "{path} was deleted or moved by another program since scriptorium last saved it: "
                "it was written there again."
            ).format(path=path)
            hint = ""
        else:
            line = gettext(
                "{path} was deleted or moved by another program, and nothing was typed here since it was "
                "saved: it was not written there again (its text stays in the session “{title}”)."
            ).format(path=path, title=session.title)
            hint = " " + gettext("Typing or {key} writes it there.").format(key=save_key)
        if written or self._last.get(path) != line:  # written, it is there again: a new move is said anew
            self._last[path] = line
            self._notify(line + hint, title=gettext("Draft file"), severity="warning", timeout=15)

    def after_exit(self) -> list[str]:
        """What the terminal is told once the app has closed."""
        return list(self._last.values())
