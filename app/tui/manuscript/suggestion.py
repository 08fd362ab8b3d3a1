"""The suggestion on screen, kept in the draft's session at every save and put back when the
draft is opened again: an author who quit mid-thought finds it where they left it, with its
versions, its tokens (F4, branching) and its generations (accepting it records them).

The session keeps it by its generations' ids (sessions/suggestion.py); the screen knows
them by request ids, which live only as long as the app: reopened, each generation gets a
new one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scriptorium.app.i18n.language import Language
from scriptorium.app.tui.manuscript.session_keeper import SessionKeeper
from scriptorium.app.sessions.records import Generation
from scriptorium.app.sessions.suggestion import KeptVersion, Suggestion
from scriptorium.app.sessions.suggestion import Writers as KeptWriters
from scriptorium.app.tui.branches import Ghost, Version, Writers, written_parts
from scriptorium.app.tui.generation_request import new_request_id
from scriptorium.app.tui.session_tokens import tokens_spelling
from scriptorium.app.tui.token_spans import TokenRecord

if TYPE_CHECKING:
    from scriptorium.app.tui.widgets.draft_editor import DraftEditor


def keep(editor: DraftEditor, sessions: SessionKeeper) -> None:
    """Record in the draft's session the suggestion on screen (or that there is none)."""
    session = sessions.draft
    if session is None:
        return
    ghost = editor.ghost
    if ghost is None or not ghost.text:
        session.suggestion = None
        return

    def kept(writers: Writers) -> KeptWriters:
        return [(sessions.generation_id(request_id), start) for request_id, start in writers]

    # The slot of the version on screen is refreshed only when the author moves away from it.
    versions = [
        KeptVersion(text=ghost.text, label=v.label, writers=kept(ghost.writers))
        if i == ghost.version
        else KeptVersion(text=v.text, label=v.label, writers=kept(v.writers))
        for i, v in enumerate(ghost.versions)
    ]
    session.suggestion = Suggestion.in_draft(
        editor.text,
        editor.document.get_index_from_location(ghost.anchor),
        ghost.text,
        kept(ghost.writers),
        from_cursor=ghost.from_cursor,
        replaces=ghost.replaces,
        versions=versions,
        version=ghost.version,
    )


class _Reopened:
    """The generations of a suggestion put back, each under a new request id, undecided again."""

    def __init__(self, sessions: SessionKeeper, generations: list[Generation]) -> None:
        self._sessions = sessions
        self._generations = {g.id: g for g in generations}
        self._request_ids: dict[str, int] = {}
        self._by_request_id: dict[int, Generation] = {}

    def writers(self, kept: KeptWriters) -> Writers:
        return [(self._request_id(generation_id), start) for generation_id, start in kept]

    def _request_id(self, generation_id: str | None) -> int | None:
        generation = self._generations.get(generation_id or "")
        if generation is None:
            return None  # the author's own word, or a generation the session no longer holds
        if generation.id not in self._request_ids:
            request_id = self._request_ids[generation.id] = new_request_id()
            self._by_request_id[request_id] = generation
            self._sessions.waits_again(request_id, generation)
        return self._request_ids[generation.id]

    def tokens(self, text: str, writers: Writers) -> list[TokenRecord]:
        """What the model thought of each token of `text`, from the records of the generations that wrote it."""
        tokens: list[TokenRecord] = []
        for request_id, start, end in written_parts(writers, len(text)):
            generation = self._by_request_id.get(request_id) if request_id is not None else None
            spelled = tokens_spelling(generation, text[start:end]) if generation is not None else None
            tokens += [record.moved(start) for record in spelled or ()]
        return tokens


def put_back(editor: DraftEditor, sessions: SessionKeeper, language: Language) -> str | None:
    """Show again the suggestion the draft's session was saved with, if the draft around it is as it was;
    if it is not, the suggestion is dropped, and what to tell the author is returned."""
    session = sessions.draft
    if session is None or session.suggestion is None:
        return None
    suggestion, session.suggestion = session.suggestion, None
    if not suggestion.fits(editor.text):
        return language.gettext(
            "The suggestion left undecided when this draft was last closed was dropped: "
            "the draft around it changed since."
        )
    reopened = _Reopened(sessions, session.generations)
    versions = []
    for kept in suggestion.versions:
        writers = reopened.writers(kept.writers)
        request_ids = list(dict.fromkeys(rid for rid, _ in writers if rid is not None))
        versions.append(Version(kept.text, reopened.tokens(kept.text, writers), kept.label, request_ids, writers))
    writers = reopened.writers(suggestion.writers)
    request_ids = list(dict.fromkeys(rid for rid, _ in writers if rid is not None))
    anchor = editor.document.get_location_from_index(suggestion.anchor)
    editor.restore_ghost(
        Ghost(
            anchor=anchor,
            from_cursor=suggestion.from_cursor,
            text=suggestion.text,
            streaming=False,
            request_ids=request_ids,
            writers=writers,
            tokens=reopened.tokens(suggestion.text, writers),
            replaces=suggestion.replaces,
            versions=versions,
            version=suggestion.version,
        )
    )
    return None
