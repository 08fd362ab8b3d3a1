"""F12: export the session on screen to Markdown, asking before replacing a file.

A draft with a file exports beside it (`novel.export.md`); anything else goes to the data
folder's exports/. What is written is sessions/export.py's; this is only the asking."""

from __future__ import annotations

from pathlib import Path

from textual.app import App

from scriptorium.app import paths
from scriptorium.app.sessions import AnySession, DraftSession
from scriptorium.app.tui.screens.confirm_screen import ConfirmScreen
from scriptorium.app.i18n.language import ENGLISH, Language


def export_target(session: AnySession) -> Path:
    if isinstance(session, DraftSession) and session.draft_path:
        draft = Path(session.draft_path)
        return draft.with_name(f"{draft.stem}.export.md")
    return paths.data_dir() / "exports" / f"{session.id}.md"


def export_with_confirmation(app: App[None], session: AnySession | None, language: Language = ENGLISH) -> None:
    """Export `session`, telling the author where it went (or why not) in a notification."""
    # Imported on the first export: its YAML and package metadata would slow the start by ~20 ms.
    from scriptorium.app.sessions.export import ExportError, export_session

    _ = language.gettext
    if session is None:
        app.notify(_("Nothing to export yet: write something first."), severity="warning")
        return
    target = export_target(session)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        app.notify(
            _("cannot create {folder}: {error}").format(folder=target.parent, error=error.strerror or error),
            severity="error",
        )
        return

    def write(overwrite: bool | None) -> None:
        if not overwrite:
            return
        try:
            path = export_session(session, target, force=True, mark_model=False)
        except ExportError as error:
            app.notify(str(error), title=_("Not exported"), severity="error", timeout=10)
            return
        app.notify(_("Exported to {path}").format(path=path), title=_("Exported"), timeout=10)

    if target.exists():
        app.push_screen(
            ConfirmScreen(_("{path} already exists. Overwrite it?").format(path=target), language=language), write
        )
    else:
        write(True)
