"""Where a draft session's lorebook lives: in the session itself, or in a lorebook file
shared by several drafts (`lore_path`), which is read when asked for and written when the
author changes an entry, so that every draft using it sees the change."""

from __future__ import annotations

from pathlib import Path

from scriptorium.inference.window.lore import Lorebook

from scriptorium.app.sessions.lorebook_file import read_lorebook, write_lorebook
from scriptorium.app.sessions.model import DraftSession


def lorebook_of(session: DraftSession | None) -> Lorebook:
    """The session's lorebook (none: empty). LoreError for a shared file that cannot be read."""
    if session is None:
        return Lorebook()
    if session.lore_path:
        return read_lorebook(session.lore_path)
    return session.lore


def keep_lorebook(session: DraftSession, lorebook: Lorebook) -> None:
    """Keep `lorebook` where the session keeps its entries (WriteError for a file that cannot be written)."""
    if session.lore_path:
        write_lorebook(session.lore_path, lorebook)
    else:
        session.lore = lorebook


def use_file(session: DraftSession, path: str) -> Lorebook:
    """Make the session use the lorebook file at `path`: read if it exists, else made
    from the session's own entries. LoreError or WriteError leave the session as it was."""
    target = Path(path).expanduser().absolute()
    if target.exists():
        lorebook = read_lorebook(target)
    else:
        lorebook = session.lore
        write_lorebook(target, lorebook)
    session.lore_path, session.lore = str(target), Lorebook()
    return lorebook


def use_own_entries(session: DraftSession, lorebook: Lorebook) -> None:
    """Stop using the shared file: the session keeps a copy of its entries as its own."""
    session.lore_path, session.lore = None, lorebook
