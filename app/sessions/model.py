"""The session data model: a draft or a chat, and every generation that fed it (whose
records are sessions/records.py).

Plain mutable dataclasses the TUI updates as the author works; `session_format` turns them
into the versioned JSON of docs/session-format.md and `session_store` writes them atomically.
Each field declares its member of that file with `member(...)` where its name and type do not
say it all (members.py): its key, the object it is grouped in, how it is read.
Text offsets are Python string indices (Unicode code points), never bytes.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from scriptorium.inference.core.errors import ScriptoriumError

from scriptorium.inference.core.settings import LogitBias, SamplerSettings
from scriptorium.inference.window.lore import LoreError, Lorebook
from scriptorium.inference.window.window import DEFAULT_NOTE_DEPTH, NOTE_DEPTH_RANGE

from scriptorium.app.sessions.lorebook_file import as_dict as lorebook_json
from scriptorium.app.sessions.lorebook_file import from_dict as lorebook_from_json
from scriptorium.app.sessions.members import FormatError, checked, member
from scriptorium.app.sessions.records import BiasRecord, Generation, LoraRef, ModelRef, now_iso
from scriptorium.app.sessions.suggestion import Suggestion, read_suggestion

ROLES: tuple[str, ...] = ("user", "assistant")


class SessionError(ScriptoriumError):
    """A session cannot be read, written or changed; the message is one line for the author."""


def slugify(title: str, limit: int = 40) -> str:
    """'Chapter 1: The Sea' -> 'chapter-1-the-sea'; letters of any script are kept."""
    text = unicodedata.normalize("NFKC", title).lower()
    slug = re.sub(r"[\W_]+", "-", text).strip("-")[:limit].strip("-")
    return slug or "untitled"


def draft_title(text: str, words: int = 6) -> str:
    """A new draft session's title when none is given: its first words."""
    # maxsplit: every save of an untitled draft asks, and a novel's words after these are not read.
    return " ".join(text.split(maxsplit=words)[:words]) or "Untitled draft"


CHAT_TITLE = "Chat"
"""A chat session's title until its first message gives it one (chat_title)."""


def chat_title(messages: list[dict[str, str]]) -> str | None:
    """ "Chat: " and the first words the author sent, or None before any: two chats both
    titled "Chat" could not be told apart in the sessions list."""
    first = next(
        (m.get("content", "") for m in messages if m.get("role") == "user" and m.get("content", "").strip()), ""
    )
    return f"{CHAT_TITLE}: {draft_title(first)}" if first else None


def author_titled(session: "DraftSession") -> bool:
    """Whether the author gave the draft session its title (renamed it), rather than the app:
    its first words (draft_title) or its file's name. Saving as another file renames only
    the app's titles: "Il porto di Lucia" became "porto"."""
    title = session.title
    if session.draft_path and title == Path(session.draft_path).stem:
        return False
    # The title's own words suffice to compare: every save of an untitled draft asks.
    count = len(title.split())
    return title != draft_title("") and not " ".join(session.text.split(maxsplit=count)[:count]).startswith(title)


def make_session_id(title: str, when: datetime | None = None) -> str:
    """'2025-03-14-0915-chapter-one': sorts by creation time and says what it is."""
    when = when or datetime.now().astimezone()
    return f"{when:%Y-%m-%d-%H%M}-{slugify(title)}"


@dataclass(kw_only=True)
class ModelSpan:
    """[start, end) of the draft holds text the model wrote in generation `generation`."""

    start: int
    end: int
    generation: str


@dataclass(kw_only=True)
class ChatTurn:
    role: Literal["user", "assistant"]
    content: str
    at: str = ""
    """When it was sent or written; '' in a file that does not say."""
    generation: str | None = None
    """For a model reply: the id of the generation that wrote it."""


def _note_depth(value: Any, where: str, _: dict[str, Any]) -> int:
    """A depth out of range falls back to the default: it only moves the note."""
    depth = checked(value, (int,), where)
    low, high = NOTE_DEPTH_RANGE
    return depth if low <= depth <= high else DEFAULT_NOTE_DEPTH


def _lorebook(value: Any, where: str, _: dict[str, Any]) -> Lorebook:
    """A lorebook that cannot be used (a key that does not compile) is a wrong field, named."""
    try:
        return lorebook_from_json(value)
    except LoreError as problem:
        raise FormatError(f"{where}: {problem}") from None


@dataclass(kw_only=True)
class Session:
    """What drafts and chats share: identity, times and the generations."""

    id: str
    title: str
    created_at: str
    updated_at: str
    generations: list[Generation] = field(default_factory=list)
    """Written after the rest of the file, and laid out by format.py (their token records are most of it)."""
    memory: str = member(default="", group="window")
    """Pinned at the top of every prompt: synopsis, characters, style (inference/window/window.py)."""
    note: str = member(default="", group="window")
    """The author's note, put `note_depth` paragraphs before the end of the window."""
    note_depth: int = member(default=DEFAULT_NOTE_DEPTH, group="window", read=_note_depth)
    lore: Lorebook = member(default=Lorebook(), group="window", optional=True, read=_lorebook, write=lorebook_json)
    """The session's own lorebook entries (inference/window/lore.py); empty when `lore_path` names a shared one."""
    lore_path: str | None = member(default=None, group="window", key="lore_file", optional=True)
    """A lorebook file shared by several drafts, read when the session opens (None: its own entries)."""

    kind = "session"

    def generation(self, generation_id: str) -> Generation:
        for generation in self.generations:
            if generation.id == generation_id:
                return generation
        raise SessionError(f"session {self.id} has no generation {generation_id}")

    def start_generation(
        self,
        *,
        model: ModelRef,
        lora: LoraRef | None,
        settings: SamplerSettings,
        bias: LogitBias,
        byte_token_ids: tuple[int, ...] = (),
        anchor: int | None = None,
        arithmetic: dict[str, Any] | None = None,
        origin: str = "",
        other_loras: tuple[LoraRef, ...] = (),
    ) -> Generation:
        """Record a generation about to run; call .finish(done) on it when it ends."""
        number = 1 + max((int(g.id[1:]) for g in self.generations if g.id[1:].isdigit()), default=0)
        generation = Generation(
            id=f"g{number}",
            kind="chat" if isinstance(self, ChatSession) else "continue",
            started_at=now_iso(),
            model=model,
            lora=lora,
            sampler=settings.as_dict(),
            bias=BiasRecord.from_bias(bias, byte_token_ids),
            seed=settings.seed,
            anchor=anchor,
            arithmetic=arithmetic,
            origin=origin,
            other_loras=other_loras,
        )
        self.generations.append(generation)
        return generation

    def latest_model(self) -> ModelRef | None:
        return self.generations[-1].model if self.generations else None


@dataclass(kw_only=True)
class FileStamp:
    """A file's size and mtime plus the hash of the text scriptorium knows it holds."""

    size: int
    mtime_ns: int
    sha256: str


CJK_CHARACTERS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
"""Kana and CJK ideographs: scripts written without spaces between words."""
CJK_PUNCTUATION = "\u3000-\u303f\uff00-\uffef"
FIRST_CJK = "\u3000"
"""The lowest code point of either range: a text below it holds neither."""


@functools.cache
def _cjk_word() -> re.Pattern[str]:
    """A word of a text with Chinese or Japanese in it; compiled at its first such text, since
    the scripts' ranges make a large class to compile (some 3 ms of the app's start)."""
    return re.compile(f"[{CJK_CHARACTERS}]|[^\\s{CJK_PUNCTUATION}{CJK_CHARACTERS}]+")


def count_words(text: str) -> int:
    """Words as word processors count them: runs without spaces, and each Chinese or Japanese
    character (their punctuation none), since those scripts write no spaces: a Japanese
    chapter counted one 'word' a paragraph. The draft's status bar and the sessions list
    both count with this."""
    if not text or max(text) < FIRST_CJK:
        return len(text.split())  # the same runs the pattern finds (\s is str.isspace), at C speed
    return len(_cjk_word().findall(text))


T = TypeVar("T")


class TextMemory(Generic[T]):
    """What went with the last few texts an edit left (their model passages), by the text's
    digest: undo then redo brings a text back whole, and what went with it comes back too
    (a diff would credit the model's passages to the author). A few dozen undo steps."""

    LIMIT = 32

    def __init__(self) -> None:
        self._kept: OrderedDict[bytes, T] = OrderedDict()

    @staticmethod
    def _digest(text: str) -> bytes:
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()

    def keep(self, text: str, value: T) -> None:
        self._kept[self._digest(text)] = value
        while len(self._kept) > self.LIMIT:
            self._kept.popitem(last=False)

    def get(self, text: str) -> T | None:
        return self._kept.get(self._digest(text)) if self._kept else None


def _read_spans(value: Any, where: str, draft: dict[str, Any]) -> list[ModelSpan]:
    """The model's passages of a draft whose `text` was read before them. A bad span only
    loses a highlight, never the text: it is dropped rather than the file refused."""
    text_length = len(draft["text"])
    spans: list[ModelSpan] = []
    for item in checked(value, (list,), where):
        if (
            isinstance(item, list)
            and len(item) == 3
            and all(isinstance(v, int) and not isinstance(v, bool) for v in item[:2])
            and isinstance(item[2], str)
        ):
            start, end, generation = item
            if 0 <= start < end <= text_length and (not spans or spans[-1].end <= start):
                spans.append(ModelSpan(start=start, end=end, generation=generation))
    return spans


def _spans_json(spans: list[ModelSpan]) -> list[list[Any]]:
    return [[span.start, span.end, span.generation] for span in spans]


@dataclass(kw_only=True)
class DraftSession(Session):
    """A draft the author writes and the model continues."""

    text: str = member(default="", group="draft", required=True)
    """The whole draft (Markdown). A session file without it is damaged, not an empty draft."""
    draft_path: str | None = member(default=None, group="draft", key="path")
    """The file the draft was opened from; saved alongside the session."""
    draft_stamp: FileStamp | None = member(default=None, group="draft", key="file_stamp")
    """How the draft file looked after scriptorium last read or wrote it (conflict check)."""
    spans: list[ModelSpan] = member(
        default_factory=list, group="draft", key="model_spans", read=_read_spans, write=_spans_json
    )
    """Passages of `text` written by the model, in order, never overlapping."""
    suggestion: Suggestion | None = member(
        default=None,
        group="draft",
        optional=True,
        read=lambda value, where, _: read_suggestion(value),
        write=Suggestion.as_dict,
    )
    """The suggestion left undecided beside the draft when it was saved (sessions/suggestion.py):
    one not valid is dropped on reading, losing only itself."""
    _replaced: TextMemory[list[ModelSpan]] = field(default_factory=TextMemory, init=False, repr=False, compare=False)
    """The passages of texts an edit replaced."""

    kind = "draft"

    def word_count(self) -> int:
        return count_words(self.text)

    def set_text(self, new_text: str) -> None:
        """Take the editor's current text; model passages follow the edit.

        The change is read as one replaced region (common prefix and suffix kept), which is
        exact for typing, pasting and deleting; text typed inside a model passage is the author's.
        """
        if new_text == self.text:
            return
        if self.spans:
            self._replaced.keep(self.text, list(self.spans))
        again = self._replaced.get(new_text)
        if again is not None:
            self.text, self.spans = new_text, list(again)
            return
        start = _common_prefix_length(self.text, new_text)
        limit = min(len(self.text), len(new_text)) - start
        tail = _common_suffix_length(self.text, new_text, limit)
        self.apply_edit(start, len(self.text) - tail, new_text[start : len(new_text) - tail])

    def apply_edit(self, start: int, end: int, replacement: str) -> None:
        """Replace text[start:end] with `replacement`, keeping model passages where they belong."""
        if not 0 <= start <= end <= len(self.text):
            raise SessionError(f"edit {start}..{end} is outside the draft (length {len(self.text)})")
        self.text = self.text[:start] + replacement + self.text[end:]
        delta = len(replacement) - (end - start)
        moved: list[ModelSpan] = []
        for span in self.spans:
            if span.end <= start:
                moved.append(span)
            elif span.start >= end:
                moved.append(ModelSpan(start=span.start + delta, end=span.end + delta, generation=span.generation))
            else:
                if span.start < start:
                    moved.append(ModelSpan(start=span.start, end=start, generation=span.generation))
                if span.end > end:
                    moved.append(ModelSpan(start=end + delta, end=span.end + delta, generation=span.generation))
        self.spans = _merged(moved)

    def accept(self, generation: Generation, kept: str, at: int) -> None:
        """Insert `kept` (all or part of the suggestion) at offset `at`, mark it as the model's,
        and record the outcome. Call set_text() with the editor's text first so offsets agree;
        calling it again afterwards with the same insertion in the editor changes nothing."""
        if not kept:
            return
        self.apply_edit(at, at, kept)
        self.spans = _merged(
            sorted(
                [*self.spans, ModelSpan(start=at, end=at + len(kept), generation=generation.id)], key=lambda s: s.start
            )
        )
        generation.record_kept(kept)


@dataclass(kw_only=True)
class ChatSession(Session):
    """A conversation: the author's turns and the model's replies."""

    system_prompt: str = member(default="", group="chat")
    unsent: str = member(default="", group="chat")
    """What the author typed in the chat box and had not sent when the app closed: put back there."""
    turns: list[ChatTurn] = member(default_factory=list, group="chat")

    kind = "chat"

    def word_count(self) -> int:
        return sum(count_words(turn.content) for turn in self.turns)

    def add_user_turn(self, content: str) -> ChatTurn:
        turn = ChatTurn(role="user", content=content, at=now_iso())
        self.turns.append(turn)
        return turn

    def record_reply(self, generation: Generation, content: str | None = None) -> ChatTurn:
        """Append the model's reply: `content` if the author trimmed it, or if it was branched
        (the earlier reply up to the branch point, then this generation's text); else the
        whole text."""
        content = generation.text if content is None else content
        turn = ChatTurn(role="assistant", content=content, at=now_iso(), generation=generation.id)
        self.turns.append(turn)
        generation.accepted_text = None
        branched = bool(generation.text) and content.endswith(generation.text)
        generation.record_kept(generation.text if branched else content)
        return turn

    def retract_reply(self, generation: Generation) -> None:
        """Drop a reply the author discarded (e.g. to regenerate it) and mark it rejected."""
        self.turns = [turn for turn in self.turns if turn.generation != generation.id]
        generation.reject()

    def match_conversation(self, messages: list[dict[str, str]], reply: Generation | None = None) -> None:
        """Make the turns match the conversation on screen (`reply`: the generation that
        wrote its last reply, when it is not recorded yet)."""
        same = 0
        for turn, message in zip(self.turns, messages):
            if (turn.role, turn.content) != (message["role"], message["content"]):
                break
            same += 1
        for turn in reversed(self.turns[same:]):
            generation = next((g for g in self.generations if g.id == turn.generation), None)
            if generation is not None:
                self.retract_reply(generation)
            else:
                self.turns.remove(turn)
        for message in messages[same:]:
            if message["role"] == "user":
                self.add_user_turn(message["content"])
                continue
            # A reply on screen is this generation's text, or another version of the last
            # reply (re-rolled, or branched: the text before the branch point, then the
            # generation's), whose generation the session already holds.
            candidates = ([reply] if reply is not None else []) + list(reversed(self.generations))
            writer = next((g for g in candidates if _wrote(g, message["content"])), None)
            if writer is not None:
                self.record_reply(writer, message["content"])

    def turn_messages(self) -> list[dict[str, str]]:
        """The turns as the chat shows them: {'role', 'content'} dicts, no system prompt."""
        return [{"role": turn.role, "content": turn.content} for turn in self.turns]

    def turn_endings(self) -> list[str]:
        """For each turn, how its reply ended when not as the model chose ('stopped',
        'failed'; Generation.ending), else '': a reopened chat marks them as the live one did."""
        by_id = {g.id: g for g in self.generations}
        return [by_id[turn.generation].ending if turn.generation in by_id else "" for turn in self.turns]

    def messages(self) -> list[dict[str, str]]:
        """The conversation as engine.chat_prompt() takes it."""
        head = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        return head + self.turn_messages()


AnySession = DraftSession | ChatSession


def _merged(spans: list[ModelSpan]) -> list[ModelSpan]:
    result: list[ModelSpan] = []
    for span in spans:
        if span.end <= span.start:
            continue
        if result and result[-1].generation == span.generation and result[-1].end == span.start:
            result[-1] = ModelSpan(start=result[-1].start, end=span.end, generation=span.generation)
        else:
            result.append(span)
    return result


def _common_prefix_length(a: str, b: str) -> int:
    # Binary search over slice comparisons: C-speed even for a novel-length draft.
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix_length(a: str, b: str, limit: int) -> int:
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle :] == b[len(b) - middle :]:
            low = middle
        else:
            high = middle - 1
    return low


@dataclass(frozen=True, kw_only=True)
class SessionSummary:
    """One line of the sessions list."""

    id: str
    title: str
    kind: str
    created_at: str
    updated_at: str
    model: str | None
    """Name of the model of the latest generation, if any."""
    words: int
    generations: int
    path: Path
    file_size: int

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "title": self.title,
            "kind": self.kind,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "model": self.model,
            "words": self.words,
            "generations": self.generations,
            "path": str(self.path),
            "file_size": self.file_size,
        }


def _wrote(generation: Generation, content: str) -> bool:
    return content == generation.text or bool(generation.text) and content.endswith(generation.text)
