"""The manuscript (app/tui/manuscript/) as a plain object: no App, no model. A page stands in
for the main screen (the `Page` protocol) and a list for the app's message queue, so each
test sees what the manuscript asks of the screen and what it says, and that it says it only
as messages up: a notification (Textual's `Notify`) or `SaveFailed`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest
from textual.message import Message
from textual.notifications import Notify

from scriptorium.inference.core.events import TokenEvent
from scriptorium.inference.core.settings import LogitBias, preset
from scriptorium.inference.window.window import Pinned

from scriptorium.app import atomic
from scriptorium.app.i18n.language import ENGLISH
from scriptorium.app.sessions import DraftSession, ModelRef, SessionStore
from scriptorium.app.sessions.draft_files import SET_ASIDE_MARK
from scriptorium.app.sessions.opening import DraftFile
from scriptorium.app.tui.generation import GenerationStarted
from scriptorium.app.tui.manuscript import Manuscript, SaveFailed
from scriptorium.app.tui.manuscript.session_keeper import AUTOSAVE_SECONDS

MINE = "Lucia scese al porto."
THEIRS = "Lucia scese al porto.\nUna riga scritta con un altro programma.\n"
TYPED = " Il mare era calmo."


class Editor:
    ghost = None  # no suggestion on screen

    def show_spans(self, spans: list[Any]) -> None:
        self.spans = spans


class DraftPane:
    def __init__(self, text: str) -> None:
        self.text, self.editor = text, Editor()
        self.pinned: Pinned | None = None
        self.lorebook: Any = None

    def show_text(self, text: str, spans: list[Any]) -> None:
        self.text = text


class ChatPane:
    pinned: Pinned | None = None


class Page:
    """The main screen, as far as the manuscript asks it."""

    language = ENGLISH
    mode = "draft"
    is_generating = False
    is_attached = True

    def __init__(self, text: str) -> None:
        self.draft, self.chat = DraftPane(text), ChatPane()
        self.saved: bool | None = None
        self.stopped = 0

    def draft_text(self) -> str:
        return self.draft.text

    def chat_messages(self) -> list[dict[str, str]]:
        return []

    def chat_unsent(self) -> str:
        return ""

    def draft_saved(self, saved: bool = True) -> None:
        self.saved = saved

    def draft_state_changed(self) -> None:
        pass

    def show_draft(self, text: str, spans: list[Any]) -> None:
        self.draft.text = text

    async def show_chat(self, messages: list[dict[str, str]], unsent: str = "", endings: Any = None) -> None:
        pass

    def stop_generation(self) -> None:
        self.stopped += 1

    def forget_generation(self) -> None:
        pass


class Timer:
    def __init__(self, delay: float, callback: Callable[[], object]) -> None:
        self.delay, self.callback, self.stopped = delay, callback, False

    def stop(self) -> None:
        self.stopped = True


class Timers:
    """The app's set_timer: the test makes a timer due by calling it back."""

    def __init__(self) -> None:
        self.set: list[Timer] = []

    def __call__(self, delay: float, callback: Callable[[], object]) -> Timer:
        self.set.append(Timer(delay, callback))
        return self.set[-1]


class Written:
    """A manuscript over a store in tmp_path, its page, the timers it set and the messages it posted."""

    def __init__(self, tmp_path: Path, draft: Path | None, text: str) -> None:
        self.store = SessionStore(tmp_path / "sessions")
        self.posted: list[Message] = []
        self.timers = Timers()
        self.manuscript = Manuscript(self.store, DraftFile(draft), self.posted.append, self.timers, ENGLISH)
        if draft is not None:
            self.manuscript.sessions.adopt(self.store.open_draft(draft))
        self.page = Page(text)
        self.manuscript.shown_on(self.page)

    def said(self) -> list[str]:
        return [m.notification.message for m in self.posted if isinstance(m, Notify)]

    def session(self) -> DraftSession:
        self.store.flush()
        session = self.manuscript.sessions.draft
        assert session is not None
        loaded = self.store.load(session.id)
        assert isinstance(loaded, DraftSession)
        return loaded


@pytest.fixture
def porto(tmp_path: Path) -> Path:
    draft = tmp_path / "porto.md"
    draft.write_text(MINE, encoding="utf-8")
    return draft


def test_a_save_writes_the_file_and_the_session_and_tells_the_page(tmp_path: Path, porto: Path) -> None:
    """The owner's first promise, kept without an App: what the page holds is on disk, and the
    page learns it is saved (its unsaved dot goes)."""
    written = Written(tmp_path, porto, MINE + TYPED)
    assert written.manuscript.save_everything()
    assert porto.read_text(encoding="utf-8") == MINE + TYPED
    assert written.session().text == MINE + TYPED
    assert written.page.saved is True
    written.manuscript.sessions.close()


def test_a_file_another_program_changed_is_shown_when_nothing_changed_here(tmp_path: Path, porto: Path) -> None:
    """The other program's text is taken, not saved over, and the author is told by a message
    posted up (the manuscript has no app to call)."""
    written = Written(tmp_path, porto, MINE)
    porto.write_text(THEIRS, encoding="utf-8")
    assert written.manuscript.save_everything()
    assert written.page.draft.text == THEIRS
    assert porto.read_text(encoding="utf-8") == THEIRS
    assert any("porto.md was changed by another program" in line for line in written.said())
    written.manuscript.sessions.close()


def test_a_file_changed_here_and_on_disk_is_replaced_only_when_asked_and_kept_beside(
    tmp_path: Path, porto: Path
) -> None:
    """Issue 37: one ctrl+s replaced the other program's words. No save does so unasked, an
    autosave neither; asked (keep mine), the file's text is set aside beside it first."""
    written = Written(tmp_path, porto, MINE + TYPED)
    porto.write_text(THEIRS, encoding="utf-8")
    assert not written.manuscript.save_everything()
    written.manuscript.save_everything(in_background=True)
    assert written.manuscript.sessions.conflict
    assert porto.read_text(encoding="utf-8") == THEIRS
    assert written.manuscript.save_everything(explicit=True, replace_file=True)
    assert porto.read_text(encoding="utf-8") == MINE + TYPED
    (aside,) = porto.parent.glob(f"porto.md{SET_ASIDE_MARK}*")
    assert aside.read_text(encoding="utf-8") == THEIRS
    written.manuscript.sessions.close()


def test_taking_the_files_text_keeps_the_authors_in_a_copy_of_the_session(tmp_path: Path, porto: Path) -> None:
    """The other choice of the conflict: the page shows the file's text, and the author's words
    are not lost either, in a session of their own."""
    written = Written(tmp_path, porto, MINE + TYPED)
    porto.write_text(THEIRS, encoding="utf-8")
    assert not written.manuscript.save_everything()
    assert written.manuscript.take_file_text()
    assert written.page.draft.text == THEIRS and written.page.stopped == 1
    copies = [s for s in written.store.list() if s.id != written.session().id]
    assert [written.store.load(copy.id).text for copy in copies] == [MINE + TYPED]
    assert any("yours is kept in the session" in line for line in written.said())
    written.manuscript.sessions.close()


def test_the_autosave_waits_for_a_pause_and_is_made_at_once_when_a_generation_starts(
    tmp_path: Path, porto: Path
) -> None:
    """Typing schedules a save after a pause; a generation starting makes it at once, since due
    mid-stream it would take llama.cpp's CPU."""
    written = Written(tmp_path, porto, MINE + TYPED)
    written.manuscript.edited()
    (timer,) = written.timers.set
    assert timer.delay == pytest.approx(AUTOSAVE_SECONDS) and written.manuscript.autosave.pending
    assert porto.read_text(encoding="utf-8") == MINE  # not yet
    started = GenerationStarted(request=None, draft_text=MINE + TYPED, anchor=None, chat_messages=[])  # type: ignore[arg-type]
    written.manuscript.generation_started(started, None)
    assert timer.stopped and not written.manuscript.autosave.pending
    assert porto.read_text(encoding="utf-8") == MINE + TYPED
    written.manuscript.sessions.close()


def test_an_autosave_due_when_the_page_is_gone_saves_nothing(tmp_path: Path, porto: Path) -> None:
    """A timer that fires while the app closes must not read a screen no longer there."""
    written = Written(tmp_path, porto, MINE + TYPED)
    written.manuscript.edited()
    written.page.is_attached = False
    written.timers.set[0].callback()
    assert porto.read_text(encoding="utf-8") == MINE
    written.manuscript.sessions.close()


def test_a_background_save_that_fails_is_posted_up_as_save_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The failure comes from the store's writing thread: it reaches the app as a message (whose
    handler brings the unsaved dot back), and the author is told why."""

    def full(path: Any, data: bytes, **kwargs: Any) -> Path:
        raise atomic.WriteError(f"cannot write {Path(path).name}: No space left on device")

    written = Written(tmp_path, None, MINE)
    assert written.manuscript.save_everything()  # the session is made, and written at once
    monkeypatch.setattr(atomic, "write_bytes", full)
    written.page.draft.text = MINE + TYPED
    assert written.manuscript.save_everything(in_background=True)  # under way
    written.store.flush()
    assert [m.kind for m in written.posted if isinstance(m, SaveFailed)] == ["draft"]
    assert any("No space left on device" in line for line in written.said())
    written.manuscript.sessions.close()


def test_a_name_that_cannot_be_written_leaves_the_draft_unnamed(tmp_path: Path) -> None:
    """Kept, such a name was tried again at every save, and ctrl+s never asked for another."""
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    written = Written(tmp_path, None, MINE)
    assert not written.manuscript.save_as(tmp_path / "a-file" / "porto.md", replace=False)
    assert written.manuscript.draft_file.path is None
    assert written.manuscript.save_as(tmp_path / "porto.md", replace=False)
    assert (tmp_path / "porto.md").read_text(encoding="utf-8") == MINE
    written.manuscript.sessions.close()


def test_leaving_stops_a_streaming_generation_and_keeps_a_memory_being_typed(tmp_path: Path, porto: Path) -> None:
    """Quitting or opening another session mid-generation records it as stopped with the text
    drawn so far, and the memory typed in an open editor is the author's text too."""
    written = Written(tmp_path, porto, MINE)
    sessions = written.manuscript.sessions
    assert sessions.draft is not None
    model = ModelRef(path="/models/tiny.gguf", name="tiny", size=1, sha256="ab" * 32)
    generation = sessions.draft.start_generation(
        model=model, lora=None, settings=preset("prose"), bias=LogitBias(), byte_token_ids=(), anchor=len(MINE)
    )
    sessions.waits_again(7, generation)
    sessions.tokens(7, (TokenEvent(index=0, id=5, text=" Il", p=0.5, top=(), elapsed_ms=1.0, kv_tokens=3),))
    assert written.manuscript.leave_and_save([Pinned("Lucia ha paura del mare.")])
    assert written.page.stopped == 1
    (kept,) = written.session().generations
    assert (kept.stop_reason, kept.text) == ("cancelled", " Il")
    assert written.session().memory == "Lucia ha paura del mare."
    written.manuscript.sessions.close()


async def test_opening_another_session_saves_the_one_left_and_shows_the_new_one(tmp_path: Path, porto: Path) -> None:
    """The sessions screen's choice: what was on screen is saved into its own session first,
    then the page shows the other draft and its memory."""
    written = Written(tmp_path, porto, MINE + TYPED)
    other = written.store.create_draft(text="Un altro racconto.")
    other.memory = "Un racconto di mare."
    written.store.save(other)

    await written.manuscript.open(other)
    assert porto.read_text(encoding="utf-8") == MINE + TYPED
    assert written.page.draft.text == "Un altro racconto."
    assert written.page.draft.pinned == Pinned("Un racconto di mare.")
    written.manuscript.sessions.close()
