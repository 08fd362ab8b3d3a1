"""The manuscript's record of the work (manuscript.py owns it): what the author writes and what the model
proposes, kept in a session (app/sessions/) and saved often enough that nothing accepted is ever lost.

Everything here runs on the UI thread (but the report of a write made in the background, which only notifies):
the store is only called between edits, so a session is never encoded while it changes; autosaves hand the
encoded file to the store's writing thread, so a long session's write (tens of megabytes, fsynced) takes neither
the keys nor a streaming model's CPU. Saves are cheap when nothing changed (the store compares a fingerprint), so
autosave can run at every pause in the typing, and at once after every accepted suggestion.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from scriptorium.inference.window.window import Pinned

from scriptorium.app.sessions import (
    AnySession,
    ChatSession,
    DraftAndSessionError,
    DraftConflictError,
    DraftFileError,
    DraftSession,
    Generation,
    LoraRef,
    ModelRef,
    SessionError,
    SessionStore,
    claims,
)
from scriptorium.app.sessions.file_choice import SetAsides
from scriptorium.app.sessions.model import CHAT_TITLE, author_titled, chat_title, draft_title
from scriptorium.app.sessions.file_hashes import FileHashes
from scriptorium.app.sessions.gone_draft import GoneDraftFiles, is_gone, left_gone, make_parent
from scriptorium.app.sessions.opening import DraftFile, claimed_or_copy
from scriptorium.app.sessions.save_problems import SaveProblems
from scriptorium.app.i18n.language import ENGLISH, Language

if TYPE_CHECKING:
    from scriptorium.inference.core.backend import Backend
    from scriptorium.inference.core.events import GenerationDone, TokenEvent
    from scriptorium.inference.window.lore import Fired

    from scriptorium.app.tui.generation_request import GenerationRequest

AUTOSAVE_SECONDS = 0.5
"""Typing is saved this long after the last keystroke: any pause saves it."""
AUTOSAVE_LONGEST_SECONDS = 2.0
"""...and never later than this after the first unsaved keystroke: an author who never
pauses is saved too."""
TITLE_WORDS = 6


@dataclass(slots=True)
class _Live:
    """A generation being recorded, with its text so far (the record's own text is set at the end)."""

    session: AnySession
    generation: Generation
    parts: list[str] = field(default_factory=list)

    def text(self) -> str:
        return self.generation.text if self.generation.finished_at else "".join(self.parts)


class SessionKeeper:
    """Records the author's work into sessions and saves them. `notify` shows one line."""

    def __init__(
        self,
        store: SessionStore,
        draft_file: DraftFile,
        notify: Callable[..., object],
        save_key: Callable[[], str] = lambda: "ctrl+s",
        unsaved: Callable[[str], object] = lambda kind: None,
        language: Language = ENGLISH,
    ) -> None:
        """`unsaved(kind)` is told, on the writing thread, that a background save of the
        'draft' or 'chat' session failed after the save had been reported as under way;
        `language`: the interface's, which what the author is told is written in."""
        self.store = store
        self._language = language
        self._unsaved = unsaved
        self.conflict = False
        """The draft file changed on disk and here: no save replaces it unless told to (file_choice.py)."""
        self.set_asides = SetAsides(notify, draft_file, language.gettext)
        self._save_key = save_key
        self.draft_file = draft_file
        self.draft: DraftSession | None = None
        self.chat: ChatSession | None = None
        self._notify = notify
        self._live: dict[int, _Live] = {}
        self._thrown: dict[int, _Live] = {}
        """The generations of the suggestion last thrown away, while it may come back."""
        self.hashes = FileHashes()
        self.problems = SaveProblems(notify, language.gettext)
        self.gone_files = GoneDraftFiles(notify, language.gettext)
        self._unsaved_since: float | None = None

    # ---- when to save --------------------------------------------------------------------
    def autosave_delay(self, now: float) -> float:
        """Seconds from `now` (a monotonic time) until the changes just made are saved: AUTOSAVE_SECONDS after the last
        change, and no later than AUTOSAVE_LONGEST_SECONDS after the first unsaved one."""
        if self._unsaved_since is None:
            self._unsaved_since = now
        return max(min(AUTOSAVE_SECONDS, self._unsaved_since + AUTOSAVE_LONGEST_SECONDS - now), 0.0)

    # ---- which sessions --------------------------------------------------------------
    def adopt(self, session: AnySession | None) -> None:
        """Make `session` the current draft or chat session (a copy if another scriptorium has it open: claims.py)."""
        if session is not None:
            session = claimed_or_copy(self.store, session, self._notify, self._language.gettext)
            replaced = self.draft if isinstance(session, DraftSession) else self.chat
            if replaced is not None and replaced.id != session.id:
                claims.release(self.store.directory, replaced.id)
                # What its generations still send is saved with it no more, nor with another session.
                self._live = {rid: live for rid, live in self._live.items() if live.session is not replaced}
        if isinstance(session, DraftSession):
            self.draft = session
            self.draft_file.path = Path(session.draft_path) if session.draft_path else None
            self.draft_file.session_title = session.title
        elif isinstance(session, ChatSession):
            self.chat = session

    def of_mode(self, mode: str) -> AnySession | None:
        """The draft or the chat session, for the mode on screen ('draft' or 'chat')."""
        return self.draft if mode == "draft" else self.chat

    def pinned(self, mode: str) -> Pinned:
        """The memory and author's note of the draft or chat session (none yet: empty)."""
        session = self.of_mode(mode)
        return Pinned(session.memory, session.note, session.note_depth) if session is not None else Pinned()

    def set_pinned(self, mode: str, pinned: Pinned, draft_text: str) -> None:
        """Keep new memory and note in the draft or chat session (made now if there is none)."""
        session = self._draft_session(draft_text) if mode == "draft" else self._chat_session()
        session.memory, session.note, session.note_depth = pinned.memory, pinned.note, pinned.note_depth

    def _draft_session(self, text: str) -> DraftSession:
        # An unnamed, empty draft gets no session file until there is something in it.
        if self.draft is None:
            path = self.draft_file.path
            self.adopt(self.store.open_draft(path) if path else self.store.create_draft(text=text))
        return self.draft

    def _chat_session(self) -> ChatSession:
        if self.chat is None:
            self.adopt(self.store.create_chat())
        return self.chat

    def last_generation(self) -> Generation | None:
        """The newest generation in the sessions open now: the model, adapter and scale it ran on."""
        generations = [g for session in (self.draft, self.chat) if session for g in session.generations]
        return max(generations, key=lambda g: g.started_at) if generations else None

    # ---- recording generations -----------------------------------------------------------
    def generation_started(
        self,
        request: "GenerationRequest",
        engine: "Backend",
        draft_text: str,
        anchor: int | None,
        chat_messages: list[dict[str, str]],
    ) -> None:
        try:
            if request.kind == "chat":
                session: AnySession = self._chat_session()
                # The system prompt is not a turn: the session keeps it apart, for the export.
                session.system_prompt = "".join(m["content"] for m in chat_messages if m["role"] == "system")
                self._sync_chat([m for m in chat_messages if m["role"] != "system"])
                anchor = len(session.turns) - 1
            else:
                session = self._draft_session(draft_text)
                session.set_text(draft_text)
        except SessionError as error:
            self.problems.failed(str(error))
            return
        facts = engine.facts
        model = ModelRef.from_facts(facts, self.hashes.of(facts.path))
        lora = None
        if engine.adapter is not None:
            scale = request.lora_scale if request.lora_scale is not None else engine.lora_scale
            lora = LoraRef.from_facts(engine.adapter, scale, self.hashes.of(engine.adapter.path))
        # A llama-server started with several --lora applies the others too, at its own scales.
        others = tuple(
            LoraRef.from_facts(adapter, scale, None) for adapter, scale in getattr(engine, "other_adapters", ())
        )
        generation = session.start_generation(
            model=model,
            lora=lora,
            other_loras=others,
            settings=request.settings,
            bias=request.bias,
            byte_token_ids=tuple(engine.byte_token_ids),
            anchor=anchor,
            arithmetic=engine.arithmetic.as_dict() if engine.arithmetic else None,
            origin=engine.origin,
        )
        if not engine.origin:  # a server's files are hashed nowhere
            self.hashes.wait_for(model, lora)
        self._live[request.id] = _Live(session, generation)

    def tokens(self, request_id: int, events: tuple[TokenEvent, ...]) -> None:
        live = self._live.get(request_id)
        if live is not None:
            for event in events:
                live.generation.add_token(event)
                live.parts.append(event.text)

    def generation_finished(
        self,
        request_id: int,
        done: GenerationDone,
        chat_messages: list[dict[str, str]],
        lore: tuple[Fired, ...] = (),
        fim_after: int = 0,
    ) -> None:
        live = self._live.get(request_id)
        if live is None:
            return
        generation = live.generation
        generation.finish(done)
        generation.lore = lore
        generation.fim_after = fim_after
        if generation.accepted_text is not None and generation.outcome != "rejected":
            # Accepted while it still streamed: only now is the whole text known.
            generation.outcome = "accepted" if generation.accepted_text == generation.text else "partly_accepted"
        if isinstance(live.session, ChatSession):
            self._sync_chat(chat_messages, reply=generation)
            del self._live[request_id]
        else:
            self._forget_if_all_accepted(request_id)

    def generation_failed(self, request_id: int, *, ran: bool = True) -> None:
        """The engine or the server failed midway: recorded now, as far as it got (its text can still be accepted), not
        later as if a stop key had ended it. One that never `ran` (its prompt could not be made, or it was
        stopped first) leaves no record."""
        live = self._live.get(request_id)
        if live is not None and not ran:
            del self._live[request_id]
            live.session.generations.remove(live.generation)
        elif live is not None and live.generation.finished_at is None:
            live.generation.interrupt(live.text(), "error")

    def interrupt_live(self) -> None:
        """The app is closing while generations still stream: record each as the author saw it, stopped ("cancelled", as
        a stop key records it) with the text it had, not as an unfinished record that reads as if the process had
        died."""
        for live in self._live.values():
            generation = live.generation
            if generation.finished_at is None:
                generation.interrupt(live.text())

    def accepted(
        self,
        kept: str,
        at: int,
        request_ids: tuple[int, ...],
        parts: tuple[tuple[int | None, int, int], ...],
        editor_text: str,
        *,
        rejected_ids: tuple[int, ...] = (),
    ) -> bool:
        """`kept` was inserted at offset `at` of the editor (whose text is now `editor_text`): record which
        generation wrote which part (`parts`: request id, or None for the author's own word, start, end in `kept`),
        and the generations `rejected_ids` (the versions not kept) rejected, then save at once (on the store's
        writing thread, started now): what was accepted is the one thing a crash must never take, and the
        versions not kept are decided in the same save. True when saved, or being saved."""
        self.rejected(rejected_ids)
        session = self.draft
        if session is None:
            return self.save_draft(editor_text, in_background=True)
        session.set_text(editor_text[:at] + editor_text[at + len(kept) :])
        for request_id, start, end in parts:
            live = self._live.get(request_id) if request_id is not None else None
            if live is not None:
                session.accept(live.generation, kept[start:end], at + start)
            else:
                session.apply_edit(at + start, at + start, kept[start:end])  # the author's
        session.set_text(editor_text)
        for rid in request_ids:
            self._forget_if_all_accepted(rid)
        return self.save_draft(editor_text, in_background=True)

    def _forget_if_all_accepted(self, request_id: int) -> None:
        # A finished generation whose whole text the author kept has nothing left to
        # record; kept live, it would stay for as long as the app runs.
        live = self._live.get(request_id)
        if live is not None and live.generation.finished_at and live.generation.accepted_text == live.generation.text:
            del self._live[request_id]

    def rejected(self, request_ids: tuple[int, ...], *, restorable: bool = False) -> None:
        """The suggestion these generations wrote was thrown away; `restorable`: the author may bring it back
        (`restored`), which only the last one thrown away can be."""
        thrown = {}
        for rid in request_ids:
            live = self._live.pop(rid, None)
            if live is not None:
                if live.generation.accepted_text is None:
                    live.generation.reject()
                thrown[rid] = live
        if restorable:
            self._thrown = thrown

    def generation_id(self, request_id: int | None) -> str | None:
        """The id of the generation request `request_id` records (None: the author's own word, or none)."""
        return live.generation.id if request_id is not None and (live := self._live.get(request_id)) else None

    def waits_again(self, request_id: int, generation: Generation) -> None:
        """`generation`, of the suggestion put back on reopening the draft, is undecided again, as `request_id`."""
        if self.draft is not None:
            self._live[request_id] = _Live(self.draft, generation)

    def restored(self, request_ids: tuple[int, ...], taken_back: tuple[tuple[int | None, int, int], ...] = ()) -> None:
        """The suggestion last thrown away is back: its generations wait for the author again.
        `taken_back`: an undo took back the word just kept ((request id, start, end) of it)."""
        for rid, start, end in taken_back:
            live = self._live.get(rid) if rid is not None else None
            if live is not None:
                live.generation.take_back(end - start)
        for rid in request_ids:
            live = self._thrown.pop(rid, None)
            if live is not None:
                if live.generation.outcome == "rejected":
                    live.generation.undecide()
                self._live[rid] = live

    def _sync_chat(self, messages: list[dict[str, str]], reply: Generation | None = None) -> None:
        session = self._chat_session()
        session.match_conversation(messages, reply)
        if session.title == CHAT_TITLE:  # the app's own title, never one the author gave
            session.title = chat_title(messages) or CHAT_TITLE

    # ---- saving ----------------------------------------------------------------------
    def save_draft(
        self, text: str, *, overwrite_file: bool = False, in_background: bool = False, asked: bool = False
    ) -> bool:
        """Save the draft session (and its file); True when everything was written. `in_background`: the session file is
        written on the store's own thread (True when asked for; a failure is shown when it happens). `asked`: by
        the author (ctrl+s)."""
        if self.draft is None and not text and self.draft_file.path is None:
            self._unsaved_since = None
            return True
        try:
            session = self._draft_session(text)
            wanted = str(self.draft_file.path.expanduser().absolute()) if self.draft_file.path else None
            if wanted != session.draft_path:
                # "Save as": the file is new to this session, so the store must not assume it knows it.
                if self.draft_file.path is not None and not author_titled(session):
                    session.title = self.draft_file.path.stem
                session.draft_path, session.draft_stamp = wanted, None
            # An untitled draft is titled by its first words: the words as they stand, not as
            # they stood at the first autosave, which could fall in the middle of one ("casa s").
            titled_by_the_app = session.draft_path is None and not author_titled(session)
            session.set_text(text)
            if titled_by_the_app:
                session.title = draft_title(text)
                self.draft_file.session_title = session.title
            gone, leave = is_gone(session), left_gone(session, text, asked)
            if session.draft_path and not leave:
                make_parent(Path(session.draft_path))
            self._save(session, overwrite_draft=overwrite_file, in_background=in_background, draft_file=not leave)
        except DraftFileError as error:
            # Raised once the session was written, or (in the background) as it is being written:
            # its own failure, if it fails, is said by itself.
            _ = self._language.gettext
            session_saved = _(" (the session is being saved)") if in_background else _(" (the session was saved)")
            # Said once, whether an autosave ("being saved") or a save that waited ("was saved") met it first.
            if isinstance(error, DraftConflictError):
                self.conflict = True
                said = _("{error}{saved}. Press {key} to choose whose text it keeps (nothing is lost either way).")
                self.problems.failed(
                    said.format(error=_(error.SAID).format(name=error.name), saved=session_saved, key=self._save_key()),
                    about="draft file",
                    failure=str(error),
                )
            else:
                self.problems.failed(f"{error}{session_saved}", about="draft file", failure=str(error))
            return False
        except SessionError as error:
            both = isinstance(error, DraftAndSessionError)
            self.problems.failed(str(error), about="draft", also="draft file" if both else "")
            return False
        self.problems.saved("draft file")
        if gone:
            self.gone_files.said(session, written=not leave, save_key=self._save_key())
        self.conflict = False
        self._unsaved_since = None
        return True

    def save_chat(self, messages: list[dict[str, str]], unsent: str = "", *, in_background: bool = False) -> bool:
        """Save the conversation, and what the author typed in the chat box and did not send."""
        if self.chat is None and not messages and not unsent:
            return True
        try:
            self._sync_chat(messages)
            self._chat_session().unsent = unsent
            self._save(self._chat_session(), in_background=in_background)
        except SessionError as error:
            self.problems.failed(str(error), about="chat")
            return False
        return True

    def _save(
        self, session: AnySession, *, overwrite_draft: bool = False, in_background: bool, draft_file: bool = True
    ) -> None:
        about = session.kind
        if not in_background:
            try:
                self.store.save(
                    session, overwrite_draft=overwrite_draft, draft_file=draft_file, set_aside=self.set_asides.said
                )
            except DraftFileError:
                self.problems.saved(about)  # the store wrote the session before it said the draft file failed
                raise
            except SessionError as error:
                if isinstance(session, DraftSession) and not isinstance(error, DraftAndSessionError):
                    self.problems.saved("draft file")  # written: only the session failed
                raise
            return self.problems.saved(about)

        def written(error: BaseException | None) -> None:
            # On the store's writing thread (notify is thread-safe).
            if error is None:
                self.problems.saved(about)
            else:
                said = self._language.gettext("session not saved: {error}")
                self.problems.failed(
                    str(error) if isinstance(error, SessionError) else said.format(error=error), about=about
                )
                self._unsaved(about)

        self.store.save(
            session,
            overwrite_draft=overwrite_draft,
            in_background=True,
            after=written,
            draft_file=draft_file,
            set_aside=self.set_asides.said,
        )

    def close(self) -> None:
        """The app is closing: wait for the sessions being written, then let other scriptoriums have them."""
        self.store.flush()
        for session_id in self.open_ids():
            claims.release(self.store.directory, session_id)

    def report_damaged(self) -> None:
        """Tell the author about session files found damaged (the store moved them aside)."""
        for problem in self.store.take_problems():
            title = self._language.gettext("Damaged session")
            self._notify(str(problem), title=title, severity="warning", timeout=15)

    # ---- managing sessions (the sessions screen) ----------------------------------------
    def open_ids(self) -> set[str]:
        return {session.id for session in (self.draft, self.chat) if session is not None}

    def only_on_screen(self) -> bool:
        """The draft's or chat's session failed to save (not just its draft file): its text is only on screen."""
        return bool(self.problems.unsaved().keys() & {"draft", "chat"})

    def rename(self, session_id: str, title: str) -> None:
        """Rename a session; an open one is renamed in memory too, or the next autosave would undo it."""
        for session in (self.draft, self.chat):
            if session is not None and session.id == session_id:
                if not title.strip():
                    raise SessionError(self._language.gettext("a session title cannot be empty"))
                session.title = title.strip()
                if session is self.draft:
                    self.draft_file.session_title = session.title
                self.store.save(session)
                return
        self.store.rename(session_id, title)

    def why_not_deletable(self, session_id: str) -> str | None:  # None: it can be deleted
        if session_id not in self.open_ids():
            return None
        return self._language.gettext("this session is open: open another one first, then delete it")

    def delete(self, session_id: str) -> Path:
        if reason := self.why_not_deletable(session_id):
            raise SessionError(reason)
        return self.store.delete(session_id)
