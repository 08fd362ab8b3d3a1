"""What the model sees: memory, the draft window and the author's note, fitted in real tokens.

A model sees `n_ctx - max_tokens` tokens of prompt at most (half the context at least:
`prompt_budget`), and a small model only knows the positions it was trained on. The prompt
is built here, in one place, for the command line, the draft pane, chat and scoring:

    memory (pinned first) + lore that fired + the draft window, with the author's note N paragraphs before its end

- The draft window is the text before the cursor (or the whole draft), its start moved
  forward until everything fits. The start is always a paragraph or sentence start, or a
  word start when a single sentence is longer than the room (never mid-word). It ends
  at the cursor when the backend heals the token the cursor cut (healing.py: the spaces
  ending the text are backed up over and written again like any cut token); without
  healing, before the spaces and tabs that end it (`prompt_end`).
- Counting is done by the caller's `count` (the backend's tokenizer on the whole prompt,
  BOS included): a prompt that fits here fits in the engine, since the engine tokenizes
  the same text with the same tokenizer.
- Only the end of the draft is counted: N tokens hold at most N times the vocabulary's
  longest piece in characters (`_too_far_back`), so a book-length draft is not tokenized
  at every pause in typing. The tokens before the window are counted only when read.
- Memory and note are never cut: when they alone do not fit, WindowError says so. Lore
  (lore_window.py) is fitted in what they leave, and counted apart as the memory is.
- Chat is fitted in chat_window.py: the system prompt (with the memory) stays, the oldest
  turns leave.

Why the window starts on a boundary though the cache is shifted: the engine's shift
(`LlamaContext.reuse_prefix`) follows the window. A cut on a token count could start it
mid-word ("ssimo giorno"), which a model trained on whole texts never saw; a boundary costs
a few tokens of room, and the cache reuse finds the new window wherever it starts.

Pure: no llama.cpp, no Textual.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..core.errors import ScriptoriumError
from ..vocab.tokenizer import UnencodableTextError
from .lore import Fired, Lorebook
from .lore_window import choose_lore
from .window_layout import (
    Parts,
    draft_spans,
    in_text,
    note_break,
    pinned_spans,
    placed,
    prompt_parts,
    with_after_cursor,
)

DEFAULT_NOTE_DEPTH = 3
"""Paragraphs between the author's note and the end of the window (as Kobold's default)."""
NOTE_DEPTH_RANGE = (0, 100)

PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
SENTENCE_END = re.compile(r"[.!?…।॥؟۔][\"'»”’)\]]*\s+|[。！？｡][」』”’）)\]]*\s*")  # Hindi, Arabic, Urdu; CJK: no space
WORD_START = re.compile(r"\s+")
LINE_BREAK = re.compile(r"\n\s*")

MARGIN_TOKENS = 16
"""Slack in the window search's reach: see `_too_far_back`."""
GUESS_CHARS_PER_TOKEN = 4
"""The search's first guess at how many characters a token of prose holds (European
languages take 3 to 5): only where it starts looking; each probe then measures."""
LONGEST_PIECE_UNKNOWN = 128
"""The longest piece assumed when the backend cannot say (a llama-server). Only the
search's cost depends on it, never the window: a probe at the bound that still fits
sends the search further back (`_too_far_back`). 128 is above the longest pieces seen
(Gemma 3: 31, a run of newlines; SmolLM2: 81, a newline and 80 spaces)."""


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
    """Where it ends: the cursor, or the end of the draft, before the spaces and tabs
    that end the text there (`prompt_end`)."""
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
    draft_spans: tuple[tuple[int, int, int], ...] = ()
    """(offset in the prompt, offset in the draft, length) of the draft's own text: the
    window before the note, and after it."""
    spaces_left_out: int = 0
    """The spaces and tabs between `end` and the cursor (or the draft's end): not in the prompt."""
    lore_tokens: int = 0
    lore: tuple[Fired, ...] = ()
    """The lore entries that fired, in priority order: those kept, and those dropped for room."""
    parts: Parts = ()
    """Where memory, lore, the template's words, the draft and the note are in `prompt` (prompt_parts)."""
    fim_suffix_chars: int = 0
    """Fill in the middle: how many characters of the text after the cursor the prompt
    carries (`Fim`); 0 for a plain continuation."""

    def draft_offset(self, prompt_offset: int) -> int | None:
        """Where a character of the prompt is in the draft; None in the memory, the note or
        the template's own words (scoring scores the prompt, and colours only the draft)."""
        return in_text(self.draft_spans, prompt_offset)

    @property
    def dropped_tokens(self) -> int:
        """Tokens of the draft before the window: the model does not see them. Counted
        at the first read (see DroppedTokens): read it between requests, as any count."""
        return self.dropped.value()

    def as_json(self, n_ctx: int) -> dict[str, int]:
        return {
            "n_ctx": n_ctx,
            "memory_tokens": self.memory_tokens,
            "note_tokens": self.note_tokens,
            "draft_tokens": self.draft_tokens,
            "dropped_tokens": self.dropped_tokens,
            "trailing_spaces_left_out": self.spaces_left_out,
            "lore_tokens": self.lore_tokens,
            "fim_suffix_chars": self.fim_suffix_chars,
        }


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
            self._value = self._count(self._draft[: self._start]) - self._empty
            self._count, self._draft = None, ""  # nothing held once counted: not the backend, not the draft
        return self._value


def prompt_budget(n_ctx: int, max_tokens: int) -> int:
    """Tokens a prompt may take: what max_tokens leaves of the context, but never less
    than half of it; generation then stops when the context is full. A continuation in
    the author's style needs their text before it: with a 256-token training window and
    the default 200 tokens to write, the model would otherwise see 56 tokens of draft."""
    return max(n_ctx - max_tokens, n_ctx // 2, 1)


def prompt_end(text: str, end: int | None = None) -> int:
    """Where the prompt continuing text[:end] ends without token healing (off, or a backend
    that cannot heal; healing.py backs up over the spaces as over any cut token): before
    the spaces and tabs that end it (never before a newline). A SentencePiece model reads "pronto. " as "▁pronto . ▁", a
    lone "▁" it almost never saw in training: it then writes "▁balenu" (a second space)
    and drifts. Without them it writes the space itself, or the newline or punctuation it
    wants there (as KoboldCpp's "trim trailing whitespace"); the editor's suggestion takes
    the place of the spaces left out, and `continue` prints what reads after them."""
    end = len(text) if end is None else end
    while end > 0 and text[end - 1] in " \t":
        end -= 1
    return end


FIM_SUFFIX_CHARS = 600
"""At most this much of the text after the cursor goes into an insert's prompt: enough for
the sentences the insert must lead into, and counted with the fixed part of the prompt
(memory and note), so a longer one would only take room from the text before the cursor."""


@dataclass(frozen=True, slots=True)
class Fim:
    """Fill in the middle: the model's prefix, suffix and middle tokens' texts, and the text
    after the cursor. The prompt is memory, lore, then prefix + the window + suffix + the
    text after the cursor + middle, and the model writes what goes between."""

    texts: tuple[str, str, str]
    after: str

    @classmethod
    def at(cls, texts: tuple[str, str, str], draft: str, cursor: int) -> "Fim":
        return cls(texts, fim_suffix(draft, cursor))

    def wrap(self, inner: Callable[[str], str]) -> Callable[[str], str]:
        prefix, suffix, middle = self.texts
        return lambda window: prefix + inner(window) + suffix + self.after + middle


def fim_suffix(draft: str, cursor: int) -> str:
    """The text after the cursor an insert's prompt carries: to the end of its paragraph,
    at most FIM_SUFFIX_CHARS, cut after the last sentence (or word) that fits whole."""
    after = draft[cursor:]
    paragraph = PARAGRAPH.search(after)
    after = after[: paragraph.start()] if paragraph else after
    if len(after) <= FIM_SUFFIX_CHARS:
        return after.rstrip()
    head = after[:FIM_SUFFIX_CHARS]
    ends = [m.end() for m in SENTENCE_END.finditer(head)] or [m.start() for m in WORD_START.finditer(head)]
    return head[: ends[-1]].rstrip() if ends else head


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


def note_position(text: str, start: int, depth: int, end: int | None = None) -> int:
    """Where the note goes: before the `depth`-th paragraph from the end of text[start:end]
    (depth 0: after all of it), never before `start`.

    Only text[start:end] is read, so placing the note costs what the window does, not
    what the draft does. A paragraph break is all whitespace, so none crosses `start`
    unless `start` is inside a run of whitespace: from the run's beginning the scan finds
    the breaks a scan of the whole text finds."""
    end = len(text) if end is None else end
    if depth == 0:
        return end
    scan = start
    if start < end and text[start].isspace():
        while scan > 0 and text[scan - 1].isspace():
            scan -= 1
    starts = [m.end() for m in PARAGRAPH.finditer(text, scan, end) if start < m.end() < end]
    if not starts:  # paragraphs one line each, with no blank line between them, as many write
        starts = [m.end() for m in LINE_BREAK.finditer(text, scan, end) if start < m.end() < end]
    starts.insert(0, start)
    return starts[max(0, len(starts) - depth)]


def assemble(
    draft: str, start: int, end: int, memory: str, note: str, depth: int, wrap: Callable[[str], str], lore: str = ""
) -> tuple[str, int | None]:
    block = note_block(note)
    at = note_position(draft, start, depth, end) if block else None
    if at is None:
        window = draft[start:end]
    elif at >= end:
        window = draft[start:end] + note_break(draft[end - 1 : end], note, depth) + block
    else:
        window = draft[start:at] + block + draft[at:end]
    return memory_block(memory) + lore + wrap(window), at


def build_window(
    draft: str,
    *,
    budget: int,
    count: Count,
    end: int | None = None,
    memory: str = "",
    note: str = "",
    note_depth: int = DEFAULT_NOTE_DEPTH,
    wrap: Callable[[str], str] | None = None,
    longest_piece: int | None = None,
    lorebook: Lorebook | None = None,
    heals: bool = False,
    fim: Fim | None = None,
) -> Window:
    """The largest window of `draft[:end]` that fits in `budget` tokens with memory and note.

    `wrap` turns the window (note inside) into the draft part of the prompt (the continue
    template); it may add text, never leave the window's out. `longest_piece`: the
    backend's `longest_piece_chars` (None: unknown). Only text near the end is ever
    counted, however long the draft (`_too_far_back`). WindowError when memory and note
    alone do not fit. `lorebook`: the entries the end of the draft or the note fire go
    between the memory and the draft, in what memory and note leave (lore_window.py).
    `heals`: the generation heals the cut token (healing.py), so the prompt ends at `end`,
    its trailing spaces kept; else before them (`prompt_end`). `fim`: an insert with the
    model's fill-in-the-middle tokens, carrying the text after the cursor (`Fim`)."""
    asked_end = len(draft) if end is None else max(0, min(end, len(draft)))
    end = asked_end if heals else prompt_end(draft, asked_end)
    wrap = wrap or _as_is
    if fim is not None:
        wrap = fim.wrap(wrap)
    check_note_depth(note_depth)
    empty = count("")
    block = memory_block(memory)
    lead = len(block) + max(0, wrap("\0").find("\0"))  # the window follows the memory and the template's words
    try:
        fixed = count(block + note_block(note) + wrap(""))
    except UnencodableTextError as error:
        raise placed(
            error,
            [("memory", memory, pinned_spans(0, memory)), ("author's note", note, pinned_spans(len(block), note))],
        ) from None
    if fixed > budget:
        raise WindowError(
            f"{_fixed_parts(memory, note, wrap)} {fixed:,} tokens, more than the {budget:,} the context leaves "
            "for the prompt (context size minus max tokens, at least half the context): shorten them, or give the model a larger context"
        )
    lore = choose_lore(lorebook, draft, asked_end, note, budget - fixed, count)
    if lore.block:
        lead += len(lore.block)
        fixed = count(block + lore.block + note_block(note) + wrap(""))
    sizes: dict[int, int] = {}

    def size(start: int) -> int:
        if start not in sizes:
            prompt, at = assemble(draft, start, end, memory, note, note_depth, wrap, lore.block)
            try:
                sizes[start] = count(prompt)
            except UnencodableTextError as error:  # memory and note passed above: the draft's
                raise placed(
                    error, [("draft", draft, draft_spans(lead, start, end, at, len(note_block(note))))]
                ) from None
        return sizes[start]

    start: int | None = 0
    floor = _too_far_back(draft, end, budget, fixed, size, longest_piece or LONGEST_PIECE_UNKNOWN)
    if floor or size(0) > budget:
        # Past `floor` only: no start before it fits. A short draft (floor 0) is searched whole.
        sentences, words = _starts_after(draft, floor, end) if floor else boundaries(draft[:end])
        start = _earliest_fitting(sentences, size, budget)
        if start is None or _cut_sentence_too_long(draft, sentences, start, floor, count, budget - fixed + empty):
            start = _earliest_fitting(words, size, budget) or start
        if start is None:  # a text without spaces (Thai, Chinese, Japanese): from a character, not empty
            start = _character_start(draft, _earliest_fitting(range(floor + 1, end), size, budget) or end, end)
    prompt, at = assemble(draft, start, end, memory, note, note_depth, wrap, lore.block)
    prompt_tokens = size(start)
    memory_tokens = count(memory_block(memory)) - empty if memory.strip() else 0
    note_tokens = count(note_block(note)) - empty if note.strip() else 0
    lore_tokens = count(lore.block) - empty if lore.block else 0
    spans = draft_spans(lead, start, end, at, len(note_block(note)))
    # The note's characters in the prompt: its block, after a paragraph break of its own where it closes the window.
    note_chars = 0
    if at is not None:
        note_chars = len(note_block(note)) + (
            len(note_break(draft[end - 1 : end], note, note_depth)) if at >= end else 0
        )
    return Window(
        prompt=prompt,
        start=start,
        end=end,
        note_at=at,
        budget=budget,
        prompt_tokens=prompt_tokens,
        memory_tokens=memory_tokens,
        note_tokens=note_tokens,
        draft_tokens=prompt_tokens - memory_tokens - note_tokens - lore_tokens,
        dropped=DroppedTokens(count, draft, start, empty),
        draft_spans=spans,
        spaces_left_out=asked_end - end,
        lore_tokens=lore_tokens,
        lore=lore.fired,
        parts=_fim_parts(prompt_parts(len(prompt), len(block), len(lore.block), spans, note_chars), prompt, fim),
        fim_suffix_chars=len(fim.after) if fim is not None else 0,
    )


def _fim_parts(parts: Parts, prompt: str, fim: Fim | None) -> Parts:
    """An insert's text after the cursor, just before the middle token that ends the prompt
    (Fim.wrap), named as its own part: the context viewer shows what the model is given of it."""
    if fim is None or not fim.after:
        return parts
    middle = fim.texts[2]
    return with_after_cursor(parts, len(prompt) - len(middle) - len(fim.after), len(fim.after))


def _as_is(text: str) -> str:
    return text


def _fixed_parts(memory: str, note: str, wrap: Callable[[str], str]) -> str:
    """What of the prompt is there whatever the window, and its verb: 'the memory and the
    prompt template take', 'the prompt template alone takes'."""
    parts = [
        name
        for name, text in (
            ("the memory", memory.strip()),
            ("the author's note", note.strip()),
            ("the prompt template", wrap("").strip()),
        )
        if text
    ]
    if len(parts) < 2:
        return (parts or ["the prompt's fixed text"])[0] + " alone takes"
    return ", ".join(parts[:-1]) + " and " + parts[-1] + " take"


def _too_far_back(draft: str, end: int, budget: int, fixed: int, size: Callable[[int], int], longest: int) -> int:
    """A word start of draft[:end] whose window does not fit, so that none before it does
    (0: the draft is short enough to search whole), found counting only windows near `end`.

    The bound. A token stands for at most `longest` characters (the vocabulary's longest
    piece), so N tokens hold at most N × longest characters, and a prompt that fits holds
    at most budget × longest. The window is inside its prompt whole (memory, note and
    template only add to it), so a window that starts more than budget × longest
    characters before `end` cannot fit: that is known without counting it. No probe reaches
    further back than (budget + MARGIN_TOKENS) × longest characters: a probe starts at a
    word start, up to a word after the reach, and the margin keeps it past budget × longest
    unless that word is over MARGIN_TOKENS × longest characters long.

    The search. The first probe guesses prose density; a probe that fits moves the next
    back by what its own count says the room still holds (an eighth more); the first that
    does not fit is the answer, since an earlier start holds its window and so no fewer
    tokens (what the bisection after it assumes too).

    Where the bound can fail: it needs every character to be in some token's piece. A
    tokenizer that normalizes can make characters vanish: the author's SentencePiece model
    (remove_extra_whitespaces turns a run of spaces into one ▁; NFKC composes e + ◌́ into é),
    llama.cpp's UGM and WPM vocabularies. Then a probe at the bound can fit, and the search
    goes on back past the bound, doubling its reach: that probe's own count proved that
    much text fits, so the window is still the largest, and the search costs a few times
    what the window itself costs, which the engine tokenizes anyway. A `longest` too small
    (LONGEST_PIECE_UNKNOWN for a server's vocabulary) errs the same way, never otherwise."""
    bound = (budget + MARGIN_TOKENS) * max(1, longest)
    room = max(1, budget - fixed)
    reach = min(bound, (budget + MARGIN_TOKENS) * GUESS_CHARS_PER_TOKEN)
    while reach < end:
        cut = _word_start_from(draft, end - reach, end)
        estimate = 0  # no word starts within the reach: one long word
        if cut < end:
            tokens = size(cut)
            if tokens > budget:
                return cut
            estimate = (end - cut) * (room + room // 8 + MARGIN_TOKENS) // max(1, tokens - fixed)
        if reach >= bound:
            reach *= 2  # characters vanish here: no density to trust, and no overshooting far
        else:
            reach = min(bound, max(estimate, reach + reach // 4 + 1))
    return 0


def _word_start_from(text: str, pos: int, end: int) -> int:
    """The first word start of text[:end] at or after `pos` (`end` when there is none)."""
    if pos <= 0:
        return 0
    match = WORD_START.search(text, pos - 1, end)  # from the whitespace run `pos` may be in or after
    return match.end() if match is not None and match.end() < end else end


def _starts_after(text: str, floor: int, end: int) -> tuple[list[int], list[int]]:
    """`boundaries(text[:end])` after `floor`, reading text[floor:end] only. `floor` is a
    word start, so text[floor] is no whitespace: no boundary match (punctuation, then
    only whitespace) spans it, and a scan from it finds what a scan from 0 finds after it."""
    sentences = {m.end() for pattern in (PARAGRAPH, SENTENCE_END) for m in pattern.finditer(text, floor, end)}
    words = {m.end() for m in WORD_START.finditer(text, floor, end)}
    return sorted(s for s in sentences if floor < s < end), sorted(w for w in words if floor < w < end)


def _character_start(text: str, pos: int, end: int) -> int:  # after a mark or joined emoji it stands in
    while pos < end and (unicodedata.combining(text[pos]) or text[pos - 1] == "\u200d" or text[pos] in "\u200d\ufe0f"):
        pos += 1
    return pos


def _cut_sentence_too_long(
    draft: str, sentences: Sequence[int], start: int, floor: int, count: Count, room: int
) -> bool:
    """The sentence that ends where the window starts could never be in it whole: longer
    than the room alone (counted with the BOS, as `room` is). Starting at the next
    sentence would leave its words out for nothing (a short sentence typed after a long one
    took the window from 46 tokens of draft to 6); a word start keeps those that fit."""
    i = sentences.index(start)
    before = sentences[i - 1] if i else floor
    return count(draft[before:start]) > room


def _earliest_fitting(candidates: Sequence[int], size: Callable[[int], int], budget: int) -> int | None:
    """The first candidate start whose prompt fits. The size falls as the start moves on
    (tokenization is not exactly additive, so the found one is checked, then the next)."""
    lo = bisect_left(range(len(candidates)), True, key=lambda i: size(candidates[i]) <= budget)
    for i in range(lo, len(candidates)):
        if size(candidates[i]) <= budget:
            return candidates[i]
    return None
