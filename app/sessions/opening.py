"""What the app opens at start: the draft file it was given, or the last session (--resume)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from scriptorium.app.i18n.marker import N_
from scriptorium.app.sessions import AnySession, DraftSession, SessionError, SessionStore, claims

UNTITLED = N_("untitled")
"""An unnamed, untitled draft's name on screen (translated where the app shows it)."""


@dataclass(slots=True)
class DraftFile:
    """Where the draft lives on disk (None: an unnamed draft, kept only in its session)."""

    path: Path | None
    session_title: str = ""
    """The draft session's title: an unnamed draft's name on screen (after --resume it read
    "untitled" over a session the author had titled)."""

    @property
    def display_name(self) -> str:
        return self.shown_name()

    def shown_name(self, gettext: Callable[[str], str] = str) -> str:
        """The name on screen, in the app's language (`gettext`): only 'untitled' is a word to translate."""
        return self.path.name if self.path else (self.session_title or gettext(UNTITLED))


def open_draft_at_start(
    store: SessionStore, draft: Path | None, resume: bool, gettext: Callable[[str], str] = str
) -> tuple[AnySession | None, list[str]]:
    """The session to start with: the draft file's, the latest one (--resume), or none yet,
    and notes for the author in the app's language (`gettext`). Raises SessionError (one
    line) for a draft file that cannot be opened."""
    notes: list[str] = []
    if draft is not None:
        if draft.is_dir():
            raise SessionError(f"draft {draft} is a folder, not a file")
        return store.open_draft(draft, notes), notes
    if not resume:
        return None, notes
    latest = store.latest()
    if latest is None:
        notes.append(gettext("There is no session to resume yet: this is a new one."))
        return None, notes
    if isinstance(latest, DraftSession) and latest.draft_path:
        try:
            return store.open_draft(latest.draft_path, notes), notes
        except SessionError as error:
            notes.append(gettext("{error}; the session's own copy of the text is shown.").format(error=error))
    return latest, notes


def claimed_or_copy(
    store: SessionStore, session: AnySession, notify: Callable[..., object], gettext: Callable[[str], str] = str
) -> AnySession:
    """`session`, claimed for this app; if another scriptorium has it open, a new copy of
    it, claimed instead, and the author told (claims.py) in the app's language (`gettext`;
    babel.cfg extracts the strings here)."""
    if claims.claim(store.directory, session.id):
        return session
    title = gettext("Session open elsewhere")
    try:
        copy = store.create_copy(session)
    except SessionError as error:
        said = gettext("“{title}” is open in another scriptorium, and no copy of it could be made: {error}")
        notify(said.format(title=session.title, error=error), title=title, severity="error", timeout=15)
        return session
    claims.claim(store.directory, copy.id)
    said = gettext(
        "“{title}” is open in another scriptorium: this one works on a copy, “{copy}”, "
        "so that neither saves over the other."
    )
    notify(said.format(title=session.title, copy=copy.title), title=title, severity="warning", timeout=15)
    return copy
