"""What the model sees: memory, the draft window and the author's note, fitted in real tokens.

A model sees `n_ctx - max_tokens` tokens of prompt at most, and a small model only knows
the positions it was trained on. The prompt is built here, in one place, for the command
line, the draft pane, chat and scoring:

    memory (pinned first) + the draft window, with the author's note N paragraphs before its end

- The draft window is the text before the cursor (or the whole draft), its start moved
  forward until everything fits. The start is always a paragraph or sentence start, or a
  word start when a single sentence is longer than the room (never mid-word).
- Counting is done by the caller's `count` (the backend's tokenizer on the whole prompt,
  BOS included): a prompt that fits here fits in the engine, since the engine tokenizes
  the same text with the same tokenizer.
- Memory and note are never cut: when they alone do not fit, WindowError says so.
- Chat (`fit_chat`): the system prompt (with the memory) stays, the oldest turns leave.

Why the window starts on a boundary even though the cache is shifted: the engine's shift
(context.py, `LlamaContext.reuse_prefix`) follows the window, it does not choose it.
Cutting on a token count would let the window start mid-word ("ssimo giorno"), which a
model trained on whole texts never saw at a start; a boundary costs a few tokens of room
and, since the window then moves a sentence at a time, it moves less often. The cache
reuse finds the new window inside the old one wherever it starts.

Pure: no llama.cpp, no Textual.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Callable, Sequence

from .errors import ScriptoriumError

DEFAULT_NOTE_DEPTH = 3
"""Paragraphs between the author's note and the end of the window (as Kobold's default)."""
NOTE_DEPTH_RANGE = (0, 100)

PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
SENTENCE_END = re.compile(r"[.!?…][\"'»”’)\]]*\s+")
WORD_START = re.compile(r"\s+")


class WindowError(ScriptoriumError):
    """Memory and the author's note alone do not fit in the room for the prompt."""


Count = Callable[[str], int]
"""Tokens of a whole prompt as the backend counts them (BOS included when it adds one)."""


@dataclass(frozen=True, slots=True)
class Pinned:
    """What the author pins into every prompt of a session."""

    memory: str = ""
    note: str = ""
    note_depth: int = DEFAULT_NOTE_DEPTH


@dataclass(frozen=True, slots=True)
class Window:
    """The prompt for a continuation, and what of the draft it holds."""

    prompt: str
    start: int
    """Where the window starts in the draft (a character offset): text before it is outside."""
    end: int
    """Where it ends (the cursor, or the end of the draft)."""
    note_at: int | None
    """Where in the draft the author's note goes before (None: no note)."""
    budget: int
    """Tokens the prompt may use: n_ctx - max_tokens."""
    prompt_tokens: int
    memory_tokens: int
    note_tokens: int
    draft_tokens: int
    """The rest of the prompt: the draft window, with the template's text and a BOS."""
    dropped: "DroppedTokens" = field(repr=False, compare=False)

    @property
    def dropped_tokens(self) -> int:
        """Tokens of the draft before the window: the model does not see them. Counted
        at the first read (see DroppedTokens): read it between requests, as any count."""
        return self.dropped.value()

    def as_json(self, n_ctx: int) -> dict[str, int]:
        return {"n_ctx": n_ctx, "memory_tokens": self.memory_tokens, "note_tokens": self.note_tokens,
                "draft_tokens": self.draft_tokens, "dropped_tokens": self.dropped_tokens}


class DroppedTokens:
    """The tokens of the draft before a window, counted when first read and then kept.

    Counting them tokenizes everything before the window, which on a book-length draft
    is the whole book: the draft pane builds a window at every pause in typing (for its
    marker) and at every continuation, and shows none of this number; the command line
    shows it once. So it is a real count, asked for only by whoever shows it. It uses the
    backend the window was fitted with: a child-process backend answers one request at a
    time, so it is read between requests, never while a generation streams."""

    __slots__ = ("_count", "_draft", "_start", "_empty", "_value")

    def __init__(self, count: Count, draft: str, start: int, empty: int) -> None:
        self._count: Count | None = count
        self._draft, self._start, self._empty = draft, start, empty
        self._value: int | None = 0 if start == 0 else None

    def value(self) -> int:
        if self._value is None:
            assert self._count is not None
            self._value = self._count(self._draft[:self._start]) - self._empty
            self._count, self._draft = None, ""  # nothing held once counted: not the backend, not the draft
        return self._value


def prompt_budget(n_ctx: int, max_tokens: int) -> int:
    """Tokens a prompt may take: what max_tokens leaves of the context. When max_tokens
    alone fills it, a quarter of the context stays for the prompt, and generation stops
    when the context is full."""
    return max(n_ctx - max_tokens, n_ctx // 4, 1)


def check_note_depth(depth: int, key: str = "note depth") -> int:
    low, high = NOTE_DEPTH_RANGE
    if isinstance(depth, bool) or not isinstance(depth, int) or not low <= depth <= high:
        raise WindowError(f"{key} must be a whole number from {low} to {high}, not {depth!r}")
    return depth


def memory_block(memory: str) -> str:
    """The memory as it opens the prompt: its own paragraph, or nothing."""
    memory = memory.strip()
    return memory + "\n\n" if memory else ""


def note_block(note: str) -> str:
    note = note.strip()
    return note + "\n\n" if note else ""


def boundaries(text: str) -> tuple[list[int], list[int]]:
    """(paragraph and sentence starts, word starts) in `text`, each ascending, 0 first."""
    sentences = {0}
    sentences.update(m.end() for m in PARAGRAPH.finditer(text))
    sentences.update(m.end() for m in SENTENCE_END.finditer(text))
    words = {0}
    words.update(m.end() for m in WORD_START.finditer(text))
    n = len(text)
    return sorted(s for s in sentences if s < n or s == 0), sorted(w for w in words if w < n or w == 0)


def paragraph_starts(text: str) -> list[int]:
    starts = [0]
    starts.extend(m.end() for m in PARAGRAPH.finditer(text) if m.end() < len(text))
    return starts


def note_position(text: str, start: int, depth: int) -> int:
    """Where the note goes: before the `depth`-th paragraph from the end of text[start:]
    (depth 0: after all of it), never before `start`."""
    if depth == 0:
        return len(text)
    starts = [p for p in paragraph_starts(text) if p >= start] or [start]
    if starts[0] != start:
        starts.insert(0, start)
    return starts[max(0, len(starts) - depth)]


def assemble(draft: str, start: int, end: int, memory: str, note: str, depth: int,
             wrap: Callable[[str], str]) -> tuple[str, int | None]:
    text = draft[:end]
    block = note_block(note)
    at = note_position(text, start, depth) if block else None
    if at is None:
        window = text[start:]
    elif at >= len(text) and text and not text.endswith("\n"):
        window = text[start:] + "\n\n" + block  # depth 0: the note closes the window
    else:
        window = text[start:at] + block + text[at:]
    return memory_block(memory) + wrap(window), at


def build_window(draft: str, *, budget: int, count: Count, end: int | None = None, memory: str = "",
                 note: str = "", note_depth: int = DEFAULT_NOTE_DEPTH,
                 wrap: Callable[[str], str] | None = None) -> Window:
    """The largest window of `draft[:end]` that fits in `budget` tokens with memory and note.

    `wrap` turns the window (note inside) into the draft part of the prompt (the continue
    template). WindowError when memory and note alone do not fit."""
    end = len(draft) if end is None else max(0, min(end, len(draft)))
    wrap = wrap or _as_is
    check_note_depth(note_depth)
    empty = count("")
    fixed = count(memory_block(memory) + note_block(note) + wrap(""))
    if fixed > budget:
        raise WindowError(
            f"the memory and the author's note take {fixed:,} tokens, more than the {budget:,} the context "
            "leaves for the prompt (context size minus max tokens): shorten them, or give the model a larger context")
    text = draft[:end]

    def size(start: int) -> int:
        return count(assemble(draft, start, end, memory, note, note_depth, wrap)[0])

    start = 0
    if size(0) > budget:
        sentences, words = boundaries(text)
        start = _earliest_fitting(sentences, size, budget)
        if start is None:
            start = _earliest_fitting(words, size, budget)
        if start is None:
            start = len(text)  # not even the last word: the draft part is empty
    prompt, at = assemble(draft, start, end, memory, note, note_depth, wrap)
    prompt_tokens = count(prompt)
    memory_tokens = count(memory_block(memory)) - empty if memory.strip() else 0
    note_tokens = count(note_block(note)) - empty if note.strip() else 0
    return Window(prompt=prompt, start=start, end=end, note_at=at, budget=budget, prompt_tokens=prompt_tokens,
                  memory_tokens=memory_tokens, note_tokens=note_tokens,
                  draft_tokens=prompt_tokens - memory_tokens - note_tokens,
                  dropped=DroppedTokens(count, draft, start, empty))


def _as_is(text: str) -> str:
    return text


def _earliest_fitting(candidates: Sequence[int], size: Callable[[int], int], budget: int) -> int | None:
    """The first candidate start whose prompt fits. The size falls as the start moves on
    (tokenization is not exactly additive, so the found one is checked, then the next)."""
    lo = bisect_left(range(len(candidates)), True, key=lambda i: size(candidates[i]) <= budget)
    for i in range(lo, len(candidates)):
        if size(candidates[i]) <= budget:
            return candidates[i]
    return None


@dataclass(frozen=True, slots=True)
class ChatWindow:
    messages: list[dict[str, str]]
    """The conversation as sent: system prompt (with memory) and the most recent turns."""
    prompt: str
    prompt_tokens: int
    dropped_turns: int


def with_memory(messages: list[dict[str, str]], memory: str) -> list[dict[str, str]]:
    """The memory joins the system prompt (a system message of its own when there is none)."""
    memory = memory.strip()
    if not memory:
        return list(messages)
    if messages and messages[0].get("role") == "system":
        first = dict(messages[0], content=messages[0]["content"].rstrip() + "\n\n" + memory)
        return [first, *messages[1:]]
    return [{"role": "system", "content": memory}, *messages]


def fit_chat(messages: list[dict[str, str]], *, budget: int, count: Count,
             render: Callable[[list[dict[str, str]]], str], memory: str = "") -> ChatWindow:
    """Drop the oldest turns until the rendered conversation fits `budget`; system
    messages and the memory stay, and so does the last turn (WindowError if even that
    does not fit)."""
    messages = with_memory(messages, memory)
    system = [m for m in messages if m.get("role") == "system"]
    turns = [m for m in messages if m.get("role") != "system"]
    dropped = 0
    while True:
        kept = system + turns[dropped:]
        prompt = render(kept)
        tokens = count(prompt)
        if tokens <= budget:
            return ChatWindow(kept, prompt, tokens, dropped)
        if dropped >= len(turns) - 1:
            raise WindowError(
                f"the system prompt, memory and the last message take {tokens:,} tokens, more than the {budget:,} "
                "the context leaves for the prompt: shorten them, or give the model a larger context")
        dropped += 1
        # A conversation resumes with the author's turn, not with a reply to nothing.
        while dropped < len(turns) - 1 and turns[dropped].get("role") == "assistant":
            dropped += 1
