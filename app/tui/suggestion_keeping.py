"""The suggestion on screen, kept in the draft's session at every save and put back when the
draft is opened again: an author who quit mid-thought finds it where they left it, its
tokens (F4, branching) and its generations (accepting it records them) with it.

The session keeps it by its generations' ids (sessions/suggestion.py); the screen knows
them by request ids, which live only as long as the app: reopened, each generation gets a
new one.
"""

from __future__ import annotations

from typing import Callable

from scriptorium.app.sessions.keeper import SessionKeeper
from scriptorium.app.sessions.suggestion import Suggestion
from scriptorium.app.tui.branches import Ghost, Writers, written_parts
from scriptorium.app.tui.generation import new_request_id
from scriptorium.app.tui.screens.main_screen import MainScreen
from scriptorium.app.tui.session_tokens import tokens_spelling
from scriptorium.app.tui.token_spans import TokenRecord


def keep(main: MainScreen, sessions: SessionKeeper) -> None:
    """Record in the draft's session the suggestion on screen (or that there is none)."""
    session, editor = sessions.draft, main.draft.editor
    if session is None:
        return
    ghost = editor.ghost
    if ghost is None or not ghost.text:
        session.suggestion = None
        return
    writers = [(sessions.generation_id(request_id), start) for request_id, start in ghost.writers]
    session.suggestion = Suggestion.in_draft(editor.text, editor.document.get_index_from_location(ghost.anchor),
                                             ghost.text, writers, from_cursor=ghost.from_cursor, replaces=ghost.replaces)


def put_back(main: MainScreen, sessions: SessionKeeper, notify: Callable[..., object]) -> None:
    """Show again the suggestion the draft's session was saved with, if the draft around it is as it was."""
    session, editor = sessions.draft, main.draft.editor
    if session is None or session.suggestion is None:
        return
    suggestion, session.suggestion = session.suggestion, None
    if not suggestion.fits(editor.text):
        notify("The suggestion left undecided when this draft was last closed was dropped: "
               "the draft around it changed since.", title="Sessions", timeout=10)
        return
    generations = {g.id: g for g in session.generations}
    request_ids: dict[str, int] = {}
    writers: Writers = []
    for generation_id, start in suggestion.writers:
        if generation_id in generations and generation_id not in request_ids:
            request_ids[generation_id] = new_request_id()
            sessions.waits_again(request_ids[generation_id], generations[generation_id])
        writers.append((request_ids.get(generation_id or ""), start))
    ids_back = {request_id: generation_id for generation_id, request_id in request_ids.items()}
    tokens: list[TokenRecord] = []
    for request_id, start, end in written_parts(writers, len(suggestion.text)):
        spelled = tokens_spelling(generations[ids_back[request_id]], suggestion.text[start:end]) if request_id else None
        tokens += [record.moved(start) for record in spelled or ()]
    anchor = editor.document.get_location_from_index(suggestion.anchor)
    editor.restore_ghost(Ghost(anchor=anchor, from_cursor=suggestion.from_cursor, text=suggestion.text, streaming=False,
                               request_ids=list(request_ids.values()), writers=writers, tokens=tokens,
                               replaces=suggestion.replaces))
