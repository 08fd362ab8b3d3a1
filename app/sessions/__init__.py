"""Sessions: the public face of session_model, session_format and session_store.

store = SessionStore()                      # paths.sessions_dir()
session = store.open_draft("novel.md")      # or store.create_draft(), store.create_chat(), store.latest()
session.set_text(editor_text)               # after typing; model passages follow edits
generation = session.start_generation(model=..., lora=..., settings=..., bias=..., byte_token_ids=...)
generation.finish(done)                     # GenerationDone
session.accept(generation, kept_text, at)   # or generation.reject()
store.save(session)                         # atomic; also writes the draft file
"""

from __future__ import annotations

from scriptorium.app.sessions.format import FORMAT, VERSION
from scriptorium.app.sessions.model import (
    AnySession,
    ChatSession,
    ChatTurn,
    DraftSession,
    FileStamp,
    ModelSpan,
    Session,
    SessionError,
    SessionSummary,
    make_session_id,
    slugify,
)
from scriptorium.app.sessions.records import (
    BiasRecord,
    Generation,
    LoraRef,
    ModelRef,
    TokenRecord,
    now_iso,
)
from scriptorium.app.sessions.draft_files import DraftAndSessionError, DraftConflictError, DraftFileError
from scriptorium.app.sessions.store import SessionStore

__all__ = [
    "FORMAT",
    "VERSION",
    "AnySession",
    "BiasRecord",
    "ChatSession",
    "ChatTurn",
    "DraftAndSessionError",
    "DraftConflictError",
    "DraftFileError",
    "DraftSession",
    "FileStamp",
    "Generation",
    "LoraRef",
    "ModelRef",
    "ModelSpan",
    "Session",
    "SessionError",
    "SessionStore",
    "SessionSummary",
    "TokenRecord",
    "make_session_id",
    "now_iso",
    "slugify",
]
