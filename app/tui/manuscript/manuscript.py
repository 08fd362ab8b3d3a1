"""The author's writing as it is kept: the draft file, the sessions that record the draft and the chat
(session_keeper.py), and the autosave, in one owner. The app and its screens ask it to save, to leave the
draft, to open another session, to record what the model wrote; it never calls back into the app. What it
needs it is given: the store and the draft file when made, the screen the texts are on (a `Page`) once
that screen is up. What it has to say goes up as Textual messages: a notification, or `SaveFailed`.

These decisions were free functions, each handed the app, the screen, the sessions and the app's own
`save_everything`, which they called back (leaving the draft climbed back into the app twice). The
dialogs that ask the author (saving.py, draft_conflict.py, pinning.py) now ask this owner instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Protocol

from textual.message import Message
from textual.notifications import Notification, Notify, SeverityLevel

from scriptorium.inference.core.errors import ScriptoriumError
from scriptorium.inference.window.lore import Lorebook
from scriptorium.inference.window.window import Pinned

from scriptorium.app.i18n.language import Language
from scriptorium.app.sessions import AnySession, ChatSession, DraftSession, SessionError, SessionStore, session_lore
from scriptorium.app.sessions import draft_files, file_choice
from scriptorium.app.sessions.opening import DraftFile
from scriptorium.app.tui import session_tokens
from scriptorium.app.tui.manuscript import suggestion
from scriptorium.app.tui.manuscript.autosave import Autosave, Timers
from scriptorium.app.tui.manuscript.session_keeper import SessionKeeper

if TYPE_CHECKING:
    from scriptorium.inference.core.backend import Backend

    from scriptorium.app.tui.generation import GenerationFinished, GenerationStarted
    from scriptorium.app.tui.token_spans import Span
    from scriptorium.app.tui.widgets.chat_pane import ChatPane
    from scriptorium.app.tui.widgets.draft_pane import DraftPane


@dataclass
class SaveFailed(Message):
    """A save made in the background failed: the 'draft' or 'chat' is not saved after all."""

    kind: str


class Page(Protocol):
    """What the manuscript asks of the screen the writing is on (the main screen): the texts it saves, and
    the panes it shows what it keeps in (the memory, the note, the lorebook, a draft's text)."""

    language: Language

    @property
    def draft(self) -> DraftPane: ...

    @property
    def chat(self) -> ChatPane: ...

    @property
    def mode(self) -> str: ...

    @property
    def is_generating(self) -> bool: ...

    @property
    def is_attached(self) -> bool: ...

    def draft_text(self) -> str: ...

    def chat_messages(self) -> list[dict[str, str]]: ...

    def chat_unsent(self) -> str: ...

    def draft_saved(self, saved: bool = True) -> None: ...

    def draft_state_changed(self) -> None: ...

    def show_draft(self, text: str, spans: list[Span]) -> None: ...

    async def show_chat(
        self, messages: list[dict[str, str]], unsent: str = "", endings: list[str] | None = None
    ) -> None: ...

    def stop_generation(self) -> None: ...

    def forget_generation(self) -> None: ...


class Manuscript:
    """Owns the draft file, the session keeper and the autosave. `post` sends a message up to the app (from
    any thread: a background save's failure comes from the store's writing thread); `set_timer` schedules
    the autosave; `save_key` names the key that saves, for the lines that say to press it."""

    def __init__(
        self,
        store: SessionStore,
        draft_file: DraftFile,
        post: Callable[[Message], object],
        set_timer: Timers,
        language: Language,
        *,
        save_key: Callable[[], str] = lambda: "ctrl+s",
        notification_timeout: float = 5.0,
    ) -> None:
        self._post = post
        self.language = language
        self._notification_timeout = notification_timeout
        self.draft_file = draft_file
        self.sessions = SessionKeeper(
            store, draft_file, self.say, save_key, lambda kind: post(SaveFailed(kind)), language
        )
        self.autosave = Autosave(set_timer, self.sessions.autosave_delay, self._autosave)
        self.page: Page | None = None
        """The screen the writing is on, once it is up: nothing is saved from a screen not there yet."""

    def say(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """A notification for the author, posted to the app as Textual's own `notify` posts it."""
        timeout = self._notification_timeout if timeout is None else timeout
        self._post(Notify(Notification(message, title, severity, timeout, markup=markup)))

    def _page(self) -> Page:
        if self.page is None:
            raise RuntimeError("the manuscript is not shown on a screen yet")
        return self.page

    # ---- the screen it is shown on -------------------------------------------------------
    def shown_on(self, page: Page) -> None:
        """`page` is up: show it the session opened at start (memory, note, lorebook, the model's passages of
        the draft, the suggestion left undecided), and save from it from now on."""
        self.page = page
        self.show_pinned()
        page.draft.editor.show_spans(session_tokens.spans_of(self.sessions.draft))
        self._put_back_suggestion()

    async def open(self, session: AnySession, typed: Iterable[Pinned] = ()) -> None:
        """Put `session` on screen (the draft editor or the chat), replacing what was there, which is left
        and saved first (`leave_and_save`)."""
        page = self._page()
        self.leave_and_save(typed)  # a generation still streaming is kept, stopped, in the session going away
        page.forget_generation()
        self.sessions.adopt(session)
        self.show_pinned()
        if isinstance(session, DraftSession):
            page.show_draft(session.text, session_tokens.spans_of(session))
            self._put_back_suggestion()
        elif isinstance(session, ChatSession):
            await page.show_chat(session.turn_messages(), session.unsent, session.turn_endings())

    def _put_back_suggestion(self) -> None:
        if (dropped := suggestion.put_back(self._page().draft.editor, self.sessions, self.language)) is not None:
            self.say(dropped, title=self.language.gettext("Sessions"), timeout=10)

    # ---- saving ----------------------------------------------------------------------------
    def save_everything(
        self, *, explicit: bool = False, in_background: bool = False, replace_file: bool = False
    ) -> bool:
        """Save the draft (session, file) and chat; True if all was written (or is being: `in_background`).
        `explicit`: the author asked (ctrl+s), so a problem said before is said again. `replace_file`: over
        whatever the draft file holds (set aside first, if another program changed it: no other save
        replaces such a file, and ctrl+s asks whose text it keeps; sessions/file_choice.py)."""
        page = self._page()
        self.take_changed_file()  # before its text is saved over it
        self.sessions.problems.repeat_next(asked=explicit)
        suggestion.keep(page.draft.editor, self.sessions)
        if saved := self.sessions.save_draft(
            page.draft_text(), overwrite_file=replace_file, in_background=in_background, asked=explicit
        ):
            page.draft_saved()
        return self.sessions.save_chat(page.chat_messages(), page.chat_unsent(), in_background=in_background) and saved

    def _autosave(self) -> None:
        if self.page is not None and self.page.is_attached:
            self.save_everything(in_background=True)  # a long session's write would hold the keys

    def save_as(self, path: Path, *, replace: bool) -> bool:
        """Name the draft `path` and save it there (`replace`: over a file the author agreed to replace; any
        other file there is a conflict, never overwritten). Not saved, the draft stays unnamed: kept, a name
        that cannot be written (its folder is a file, or read-only) was tried at every save, and ctrl+s
        never asked for another."""
        page = self._page()
        self.draft_file.path = path
        page.draft_state_changed()
        if self.save_everything(explicit=True, replace_file=replace):
            return True
        self.draft_file.path = None
        page.draft_state_changed()
        return False

    def leave(self, typed: Iterable[Pinned] = ()) -> None:
        """The draft is about to be saved and left (the app quits, another session opens): a generation still
        streaming is recorded as stopped, with the text drawn so far; a memory or note being edited (`typed`,
        what its open editors hold) is kept, as the draft is: it is the author's text (Esc is the way to
        leave it unchanged); and a draft file another program changed is taken as when nothing streams.
        Left to the save, it was a conflict: quitting asked whether to replace the other program's text,
        though the author had changed nothing."""
        page = self._page()
        page.stop_generation()
        self.sessions.interrupt_live()
        for pinned in typed:
            if pinned != self.sessions.pinned(page.mode):
                self.sessions.set_pinned(page.mode, pinned, page.draft_text())
        self.take_changed_file(leaving=True)

    def leave_and_save(self, typed: Iterable[Pinned] = ()) -> bool:
        """`leave`, then `save_everything`: True when the author's text is saved."""
        self.leave(typed)
        return self.save_everything()

    # ---- the draft file, when another program changes it -----------------------------------
    def take_changed_file(self, *, leaving: bool = False) -> bool:
        """Another program changed the draft file, and the author has changed nothing here since
        scriptorium last read or wrote it: the file's text is shown, as a polished editor
        reloads, and said (else quitting asked whether to replace it with the older text on
        screen); True when it was. The undo history goes with the old text: undone, its autosave would
        silently write it over the other program's. With changes of their own, a save asks (session_keeper.py);
        a generation writing into the draft keeps its suggestion until it ends, unless the
        draft is being left (`leaving`): the suggestion goes with it then anyway."""
        page, session = self._page(), self.sessions.draft
        if session is None or (page.is_generating and not leaving):
            return False
        if (text := draft_files.take_changed_file(session, page.draft_text())) is None:
            return False
        page.draft.show_text(text, session_tokens.spans_of(session))  # the model's passages the change kept
        page.draft_state_changed()
        _ = self.language.gettext
        self.say(
            _(
                "{name} was changed by another program: its text is shown (you had changed "
                "nothing here since it was saved)."
            ).format(name=Path(session.draft_path or "").name),
            title=_("Draft file"),
            timeout=12,
        )
        return True

    def take_file_text(self) -> bool:
        """The author chose the draft file's text over their own (draft_conflict.py): the file's is shown, the
        author's kept in a copy of the session. False (and said) when it could not be."""
        page = self._page()
        page.stop_generation()  # its suggestion is recorded with the author's text, in the copy
        _ = self.language.gettext
        try:
            text, copy_title = file_choice.take_file_text(self.sessions.draft, self.sessions.store, page.draft_text())
        except SessionError as error:
            self.say(str(error), title=_("Not taken"), severity="error", timeout=15)
            return False
        self.sessions.save_draft(text)  # the file already holds it: this stamps the file and saves the session
        page.draft.show_text(text, session_tokens.spans_of(self.sessions.draft))
        page.draft_state_changed()
        self.say(
            _("{name}'s text is shown; yours is kept in the session “{title}” (F5 lists it).").format(
                name=self.draft_file.display_name, title=copy_title
            ),
            title=_("Draft file"),
            timeout=20,
        )
        return True

    # ---- what is pinned into every prompt ---------------------------------------------------
    def keep_pinned(self, mode: str, pinned: Pinned) -> None:
        """New memory and note for the draft or chat session ('draft' or 'chat'): kept, shown, saved."""
        self.sessions.set_pinned(mode, pinned, self._page().draft_text())
        self.show_pinned()
        self.save_everything()

    def show_pinned(self) -> None:
        """Give each pane its session's memory and note, and the draft its lorebook."""
        page = self._page()
        page.draft.pinned = self.sessions.pinned("draft")
        page.chat.pinned = self.sessions.pinned("chat")
        page.draft.lorebook = self._lorebook()

    def _lorebook(self) -> Lorebook:
        """The draft session's lorebook; a shared file that cannot be read is said, and the
        draft goes on without lore until it can."""
        try:
            return session_lore.lorebook_of(self.sessions.draft)
        except ScriptoriumError as error:
            _ = self.language.gettext
            self.say(
                _("{error}; the draft is continued without its lore until the file is fixed.").format(error=error),
                title=_("Lorebook"),
                severity="error",
                timeout=15,
            )
            return Lorebook()

    def draft_session(self) -> DraftSession:
        """The draft's session, made now if an empty, unnamed draft has none yet (keeping what is pinned as it
        is makes one)."""
        if self.sessions.draft is None:
            self.sessions.set_pinned("draft", self.sessions.pinned("draft"), self._page().draft_text())
        assert self.sessions.draft is not None
        return self.sessions.draft

    # ---- what the model writes, and what the author does with it -----------------------------
    def generation_started(self, message: GenerationStarted, backend: Backend | None) -> None:
        if backend is not None:
            self.sessions.generation_started(
                message.request, backend, message.draft_text, message.anchor, message.chat_messages
            )
        self.autosave.save_now_if_pending()  # due mid-stream, it would take llama.cpp's CPU: saved as it starts

    def generation_finished(self, message: GenerationFinished) -> None:
        self.sessions.generation_finished(
            message.request_id, message.event, self._page().chat_messages(), message.lore, message.fim_after
        )
        # Now, while nothing streams: after the pause it would land in the next generation, taking llama.cpp's CPU.
        self.autosave.schedule(at_once=True)

    def generation_cut_short(self, request_id: int, *, ran: bool) -> None:
        """A generation failed or was withdrawn: recorded as far as it ran, and saved at once."""
        self.sessions.generation_failed(request_id, ran=ran)
        self.autosave.schedule(at_once=True)

    def accepted(
        self,
        text: str,
        at_index: int,
        request_ids: tuple[int, ...],
        parts: tuple[tuple[int | None, int, int], ...],
        draft_text: str,
        *,
        rejected_ids: tuple[int, ...] = (),
    ) -> None:
        """A suggestion (or part of it) was accepted: recorded and saved at once (SessionKeeper.accepted)."""
        suggestion.keep(self._page().draft.editor, self.sessions)  # what is left of it, if a word was kept
        if self.sessions.accepted(text, at_index, request_ids, parts, draft_text, rejected_ids=rejected_ids):
            self._page().draft_saved()

    def rejected(self, request_ids: tuple[int, ...], *, restorable: bool) -> None:
        self.sessions.rejected(request_ids, restorable=restorable)
        self.autosave.schedule()

    def edited(self) -> None:
        """The author changed the draft or the chat: saved once the typing pauses."""
        self.autosave.schedule()
