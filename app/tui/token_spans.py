"""What the model thought of each token of text on screen, kept while that text is unchanged.

A generation's tokens (probability, top alternatives, the sampler that drew them) and a
scoring run's tokens both become TokenRecords. In the suggestion they sit at offsets in
the suggestion's text; once accepted they move into the draft as a Span, which follows
edits before it and is dropped when an edit touches it: a number shown for a token is
always the number for exactly the text on screen.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Iterable

from scriptorium.inference.core.probability import has_probability
from scriptorium.inference.window.lore import Fired
from scriptorium.inference.core.settings import SamplerSettings
from scriptorium.inference.core.text import piece_text
from scriptorium.inference.window.window import Window

from scriptorium.app.sessions.model import TextMemory

if TYPE_CHECKING:
    from scriptorium.inference.core.events import Candidate, Healing, TokenEvent, TokenScore

BUCKETS = (
    (0.5, "p50", "≥50%"),
    (0.2, "p20", "20–50%"),
    (0.05, "p5", "5–20%"),
    (0.01, "p1", "1–5%"),
    (0.0, "p0", "<1%"),
)
"""Probability bands, most expected first: (lower bound, style name, legend label)."""

GUESSED = "guessed"
"""The style name F8 adds to a token speculative decoding guessed and the model accepted
(TokenRecord.drafted): a mark over its band's colour, as llama.cpp's lookup example paints them."""


def bucket(p: float) -> str | None:
    """The style name of the band `p` falls in (low probabilities stand out most); None for a
    token the backend gave no probability (NO_PROBABILITY): no band, never the loudest."""
    if not has_probability(p):
        return None
    for low, name, _ in BUCKETS:
        if p >= low:
            return name
    return BUCKETS[-1][1]


def kept_lore(fired: Iterable[Fired]) -> tuple[str, ...]:
    """The names of the lorebook entries a prompt held."""
    return tuple(entry.name for entry in fired if entry.kept)


@dataclass(slots=True)
class TokenSource:
    """Where a token came from: sampled by a generation (its settings) or scored."""

    kind: str
    """'generated' or 'scored'."""
    settings: SamplerSettings | None = None
    seed: int | None = None
    """The seed the generation used, known once it finished."""
    lore: tuple[str, ...] = ()
    """The lorebook entries its prompt held (their names)."""

    @classmethod
    def generated(cls, settings: SamplerSettings, window: Window | None) -> "TokenSource":
        """A generation's tokens, from the prompt made for it (F4 says the lore it held)."""
        return cls("generated", settings, lore=kept_lore(window.lore) if window is not None else ())

    def describe(self) -> str:
        """One short line for the probabilities panel: how the token was chosen."""
        if self.kind == "scored":
            return "your text, scored"
        s = self.settings
        if s is None:
            return "generated"
        if s.temperature <= 0:
            text = "greedy"
        else:
            text = f"T {s.temperature:g} · top-k {s.top_k} · top-p {s.top_p:g}"
            if s.min_p:
                text += f" · min-p {s.min_p:g}"
        if s.repeat_penalty != 1.0:
            text += f" · rep {s.repeat_penalty:g}"
        acting = s.acting_samplers()
        extras = {
            "dry": f"DRY {s.dry_multiplier:g}",
            "xtc": f"XTC {s.xtc_probability:g}",
            "typ_p": f"typical {s.typical_p:g}",
            "top_n_sigma": f"top-n-σ {s.top_n_sigma:g}",
        }
        text += "".join(f" · {shown}" for name, shown in extras.items() if name in acting)
        if s.mirostat:
            text += f" · mirostat {s.mirostat}"
        seed = self.seed if self.seed is not None else s.seed
        lore = f" · lore: {', '.join(self.lore)}" if self.lore else ""
        return text + (f" · seed {seed}" if seed is not None else "") + lore


@dataclass(frozen=True, slots=True)
class TokenStep:
    """One of the tokens llama.cpp sampled or scored for a character the vocabulary spells
    in several (byte tokens: <0xC3> <0xA8> for 'è'), with what it computed at that step."""

    index: int
    id: int
    label: str
    """The token's own piece, '<0xC3>': it is no text on its own."""
    p: float
    top: tuple[Candidate, ...]

    def as_event(self) -> TokenEvent:
        from scriptorium.inference.core.events import TokenEvent  # not before the first frame: see TokenRecord.as_event

        return TokenEvent(
            index=self.index, id=self.id, text=self.label, p=self.p, top=self.top, elapsed_ms=0.0, kv_tokens=0
        )


@dataclass(frozen=True, slots=True)
class TokenRecord:
    start: int
    """Character offset relative to what holds it (the suggestion's text, or a span)."""
    text: str
    id: int
    p: float
    top: tuple[Candidate, ...]
    source: TokenSource
    index: int = 0
    steps: tuple[TokenStep, ...] = ()
    """The tokens of a character spelled in several, each as llama.cpp computed it (the
    record's own numbers are the character's: character_record); () for one token."""
    chain_did: tuple[tuple[Any, ...], tuple[Any, ...], tuple[Any, ...]] = ((), (), ())
    """What the sampler chain did at this token (TokenEvent's kept, removed, pushed)."""
    healing: Healing | None = None
    """What token healing allowed at this token (TokenEvent.healing), where it held it."""
    drafted: bool = False
    """Guessed by speculative decoding and accepted (TokenEvent.drafted): F8 marks it, F4 says it."""

    @property
    def end(self) -> int:
        return self.start + len(self.text)

    @property
    def own_steps(self) -> tuple[TokenStep, ...]:
        return self.steps or (TokenStep(self.index, self.id, self.text, self.p, self.top),)

    def moved(self, delta: int) -> "TokenRecord":
        return TokenRecord(
            self.start + delta,
            self.text,
            self.id,
            self.p,
            self.top,
            self.source,
            self.index,
            self.steps,
            self.chain_did,
            self.healing,
            self.drafted,
        )

    def as_event(self) -> TokenEvent:
        """The shape the probabilities panel draws."""
        # Imported here: the event classes take some 13 ms to build, and the first frame, which
        # draws no token yet, is not kept waiting for them (tests/packaging/test_startup_imports.py).
        from scriptorium.inference.core.events import TokenEvent

        kept, removed, pushed = self.chain_did
        return TokenEvent(
            index=self.index,
            id=self.id,
            text=self.text,
            p=self.p,
            top=self.top,
            elapsed_ms=0.0,
            kv_tokens=0,
            kept=kept,
            removed=removed,
            pushed=pushed,
            drafted=self.drafted,
            healing=self.healing,
        )

    def step_events(self) -> tuple[TokenEvent, ...]:
        """Each of a character's tokens as the panel draws it; () for a single token."""
        return tuple(step.as_event() for step in self.steps) if len(self.steps) > 1 else ()


def character_record(pending: TokenRecord | None, record: TokenRecord) -> TokenRecord | None:
    """`pending` with `record`, the next token of the same character (both start on it, in
    one generation or one scoring run), or None when `record` starts another. A character
    spelled in bytes has the chance of all of them (the product), each token kept as its
    step, and the alternatives where it starts: those a branch there replaces it with (the
    last byte's were what the model expected inside the character). It was guessed where all
    its tokens were."""
    if pending is None or pending.start != record.start or pending.source is not record.source:
        return None
    return replace(
        pending,
        text=pending.text + record.text,
        p=pending.p * record.p,
        steps=pending.own_steps + record.own_steps,
        drafted=pending.drafted and record.drafted,
    )


def chosen_records(record: TokenRecord, start: int, choice: str) -> list[TokenRecord]:
    """The token written instead of `record` at offset `start` when the author branches with
    `choice`: one of its alternatives keeps its numbers; the author's own word has none."""
    for candidate in record.top:
        if candidate.text == choice:
            return [TokenRecord(start, choice, candidate.id, candidate.p, record.top, record.source, record.index)]
    return []


def branch_choice(record: TokenRecord, choice: str, previous_char: str) -> tuple[str, list[TokenRecord]]:
    """What a branch at `record` in the draft writes for the author's `choice`, and its token,
    where `previous_char` precedes it ('' at the start). In the author's scored text the
    tokenizer read a space before the text that is not in the draft (SentencePiece's dummy
    prefix), so the alternatives to its first word carry one: after whitespace, or at the
    start, it would be a space the author never typed."""
    tokens = chosen_records(record, 0, choice)
    if record.source.kind == "scored" and choice[:1] == " " and (not previous_char or previous_char.isspace()):
        return choice[1:], [replace(t, text=t.text[1:]) for t in tokens]
    return choice, tokens


def add_records(records: list[TokenRecord], events: Iterable[TokenEvent], offset: int, source: TokenSource) -> None:
    """Append to `records` the streamed tokens whose text starts at `offset` of the
    suggestion. A token that leaves a character open (text '') waits as a record of no
    width for the one that completes it (character_record): the events of a character
    can come in two batches."""
    for event in events:
        record = TokenRecord(
            offset,
            event.text,
            event.id,
            event.p,
            event.top,
            source,
            event.index,
            chain_did=(event.kept, event.removed, event.pushed),
            healing=event.healing,
            drafted=event.drafted,
        )
        append_token(records, record, piece_text(event.piece) if event.piece else event.text)
        offset += len(event.text)


def close_records(records: list[TokenRecord], text: str) -> None:
    """The generation ended and `text` is what `records` wrote: the tokens still waiting
    for text at its end (a record of no width) get what was released at the end (text held
    back in case a stop string began there), or go (a character left open, dropped)."""
    if records and not records[-1].text:
        last = records.pop()
        if last.start < len(text):
            records.append(replace(last, text=text[last.start :]))


def append_token(records: list[TokenRecord], record: TokenRecord, label: str) -> None:
    """Append `record`, whose own piece is `label`, to `records`: joined to the character
    before when it completes it (character_record)."""
    if label != record.text:  # a byte token: its text is the character it completes, or ''
        record = replace(record, steps=(TokenStep(record.index, record.id, label, record.p, record.top),))
    joined = character_record(records[-1] if records else None, record)
    if joined is not None:
        records[-1] = joined
    else:
        records.append(record)


def scored_end(score: TokenScore | TokenRecord, text: str) -> int:
    """Where the last token scored before a stop ends in `text` (no next token says it):
    after its own text where `text` holds it there, else after the one character it
    starts in: a byte token's text is its label ('<0xE2>'), not the characters it is part of."""
    for piece in (score.text, score.text.lstrip()):
        if piece and text.startswith(piece, score.start):
            return score.start + len(piece)
    return min(score.start + 1, len(text))


def record_from_score(score: TokenScore, source: TokenSource) -> TokenRecord:
    """A scored token, its text still its own piece: once the next token's start says where
    it ends, `covering` gives it the characters of the text it covers."""
    return TokenRecord(score.start, score.text, score.id, score.p, score.top, source, score.index)


def covering(record: TokenRecord, text: str, end: int) -> TokenRecord:
    """`record` covering text[record.start:end] (up to where the next token starts)."""
    return replace(record, text=text[record.start : end])


def split_records(records: list[TokenRecord], at: int) -> tuple[list[TokenRecord], list[TokenRecord]]:
    """Records starting before `at`, and the rest moved to start at `at` (accepting or
    typing the start of a suggestion)."""
    before = [r for r in records if r.start < at]
    after = [r.moved(-at) for r in records if r.start >= at]
    return before, after


def record_at(records: list[TokenRecord], offset: int) -> int | None:
    """Index of the record covering `offset`, or None."""
    starts = [r.start for r in records]
    i = bisect_right(starts, offset) - 1
    if i >= 0 and records[i].start <= offset < records[i].end:
        return i
    return None


@dataclass(slots=True)
class Span:
    """A stretch of the draft whose tokens are known; `tokens` start relative to `start`."""

    start: int
    text: str
    tokens: list[TokenRecord] = field(default_factory=list)

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def _copies(spans: list[Span]) -> list[Span]:
    return [Span(s.start, s.text, list(s.tokens)) for s in spans]  # edited() moves spans in place


class SpanTracker:
    """The spans of one document, in order, kept right while it is edited."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self._left: TextMemory[list[Span]] = TextMemory()
        """The spans of texts undo or redo left (`remember`)."""

    def __len__(self) -> int:
        return len(self.spans)

    def clear(self) -> None:
        self.spans = []

    def add(self, span: Span) -> None:
        if not span.text:
            return
        # A new span replaces whatever claimed the same characters before.
        self.spans = [s for s in self.spans if s.end <= span.start or s.start >= span.end]
        starts = [s.start for s in self.spans]
        self.spans.insert(bisect_right(starts, span.start), span)

    def remove_kind(self, kind: str) -> None:
        self.spans = [s for s in self.spans if not (s.tokens and s.tokens[0].source.kind == kind)]

    def count_kind(self, kind: str) -> int:
        return sum(1 for s in self.spans if s.tokens and s.tokens[0].source.kind == kind)

    def edited(self, top: int, bottom: int, inserted: int) -> bool:
        """Characters top..bottom were replaced by `inserted` characters. Spans after the
        edit move; spans it touches are dropped. True when a span was dropped."""
        delta = inserted - (bottom - top)
        kept: list[Span] = []
        dropped = False
        for span in self.spans:
            if bottom <= span.start and not (top == bottom == span.end):
                if delta:
                    span.start += delta
                kept.append(span)
            elif top >= span.end:
                kept.append(span)
            else:
                dropped = True
        self.spans = kept
        return dropped

    def remember(self, text: str) -> None:
        """Keep the spans of `text`, which an undo or redo is about to leave."""
        if self.spans:
            self._left.keep(text, _copies(self.spans))

    def validate(self, text: str) -> None:
        """After undo or redo, which replay edits the tracker did not see: a text they bring
        back gets its spans back (redo after undo would lose what the model wrote); else
        spans whose characters are no longer theirs are dropped."""
        again = self._left.get(text)
        if again is not None:
            self.spans = _copies(again)
            return
        self.spans = [s for s in self.spans if text[s.start : s.end] == s.text]

    def token_at(self, offset: int) -> tuple[Span, int] | None:
        """The span and token index under `offset`, or None."""
        starts = [s.start for s in self.spans]
        i = bisect_right(starts, offset) - 1
        if i < 0:
            return None
        span = self.spans[i]
        if not span.start <= offset < span.end:
            return None
        index = record_at(span.tokens, offset - span.start)
        return None if index is None else (span, index)
