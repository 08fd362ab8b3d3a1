"""Speculative decoding inside the per-token loop, lossless and with every token's numbers.

A guesser (lookup.py) proposes the next few tokens; the model evaluates the last sampled
token and the guesses in ONE llama_decode with the logits of every position; then the loop
samples each position exactly as it samples after a plain decode (same chain, same state,
same probabilities read from that position's own logits) and goes on to the next row while
the sample equals the guess. The first sample that differs is the correction: it is what
plain decoding would have drawn there, so the chain's state (its random numbers, the
penalties' history) never needs rolling back. The rejected positions are then removed from
the KV cache (llama.cpp's common_sampler_sample_and_accept_n + llama_memory_seq_rm).

What can differ from plain decoding is the arithmetic: a position evaluated in a batch of
several sums its products in another order than one evaluated alone, so probabilities agree
to float rounding only and a near-tie can fall the other way (docs/guide/speculative.md).

Guessing costs a wider pass, so `DraftPacing` drafts less while guesses are rejected and
pauses drafting, a little longer each time, while whole passes are: free prose, which
rarely echoes itself, then runs at plain decoding's speed. A paused guesser is only told the
tokens written; a draft model evaluates them when it is next asked, in one batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from time import perf_counter
from typing import TYPE_CHECKING, Callable, Protocol, Sequence

from ..core.errors import GenerationError
from ..core.events import SpeculationCounts
from ..core.speculation import Speculation
from .lookup import PromptLookup

if TYPE_CHECKING:
    from .context import LlamaContext

PAUSE_LIMIT = 512
"""The longest pause (in tokens) after passes whose guesses were all rejected: one wasted
pass in this many tokens costs well under 1 %."""
PAUSE_GROWTH = 2
"""How much longer each pause is than the last, in a row of wholly rejected passes, when a
rejected guess costs only the wider pass (prompt lookup): 2, 4, 8... tokens."""
COSTLY_PAUSE_GROWTH = 16
"""The same for a guesser whose asking costs decodes of its own (a draft model): 16, 256...
tokens. Each ask evaluates what was written since the last one and reads the draft's own
output matrix, guess or no guess: on Gemma 3 270M's 6-layer draft (whose 262k-token output
matrix is the model's own) 12 to 25 ms an ask and about 1 ms a token caught up, against 29 ms
a decoded token (one thread), so a wasted ask costs about one of the model's decodes and a
pause of a few tokens after it costs more than the 3 % the issue allows. Pausing 4, 16, 64...
tokens, a draft that guessed nothing cost 7-8 % of 128 tokens' decoding (four asks); a kept
guess shortens the pauses again, so a draft that mostly agrees seldom waits out even one."""


@dataclass
class PacingRecord:
    """How a costly guesser's passes went, kept from one generation to the next (the engine keeps
    one for its draft model). Without it each generation began as if the draft had never been
    asked: a draft that guessed nothing was asked twice in every 128 tokens (after 1 and 18),
    30 ms an ask for Gemma 3 270M's 6-layer draft against 22 ms a decoded token, and free prose
    read 0.94x of plain decoding (2026-12-05). With it a generation still asks once at its start,
    where a new kind of text shows itself, and a draft that missed there before pauses long at
    once: one ask a generation."""

    misses: int = 0
    """Wholly rejected passes in a row, less the guesses kept since."""
    length: int = 0
    """The draft length the last pass earned (0: none yet, the longest)."""


class Guesser(Protocol):
    """Proposes the next tokens of a text it is told token by token. A guesser whose asking costs
    decodes of its own (a draft model) also has a `pacing_record` (PacingRecord)."""

    def append(self, token: int) -> None: ...

    def propose(self, limit: int) -> list[int]: ...


class DraftPacing:
    """How many tokens to draft next, from how the last passes went.

    A pass whose guesses were all kept lets the next one draft twice as many; one partly kept,
    one more than it kept. A pass with nothing kept pauses drafting for `growth`, growth², ...
    tokens (up to PAUSE_LIMIT), the pause growing with each such pass in a row and shrinking
    with each kept guess. Misses past the first that pauses PAUSE_LIMIT are not counted: they
    would lengthen no pause, only the run of kept guesses it takes to shorten the pauses again.

    `carried`: the record of earlier generations to begin from, kept up to date; a generation
    still drafts at its first token (a pause does not carry over)."""

    def __init__(self, most: int, growth: int = PAUSE_GROWTH, carried: PacingRecord | None = None):
        self._most = most
        self._growth = growth
        self._most_misses = next(n for n in range(1, PAUSE_LIMIT + 1) if growth**n >= PAUSE_LIMIT)
        record = self._record = carried if carried is not None else PacingRecord()
        # Settled once here, not at every token: `most` may have changed since the record was kept.
        record.misses = min(record.misses, self._most_misses)
        record.length = min(most, record.length or most)
        self._pause = 0

    def length(self) -> int:
        """The draft length for the next token: 0 while paused (each call counts a token)."""
        if self._pause:
            self._pause -= 1
            return 0
        return self._record.length

    def record(self, drafted: int, kept: int) -> None:
        record = self._record
        if kept == drafted:
            record.length = min(self._most, 2 * record.length)
        else:
            record.length = max(1, min(self._most, kept + 1))
        if kept:
            record.misses = max(0, record.misses - kept)
        else:
            record.misses = min(self._most_misses, record.misses + 1)
            self._pause = min(PAUSE_LIMIT, self._growth**record.misses)


class Speculator:
    """Stands in for the loop's one-token decoder: after each sampled token it evaluates the
    token alone, or with a draft in one verifying pass whose rows then give the next logits
    until a guess is rejected. Keeps the cache as plain decoding would leave it between passes;
    `close` drops the guesses a stopped generation never checked."""

    def __init__(self, context: "LlamaContext", guesser: Guesser, speculation: Speculation):
        self._context = context
        self._guesser = guesser
        carried: PacingRecord | None = getattr(guesser, "pacing_record", None)
        self._costly = carried is not None
        """Whether asking the guesser costs decodes of its own (a draft model), even when it guesses
        nothing: its pauses grow faster, and how its passes went carries over to the next generation."""
        self._pacing = DraftPacing(
            speculation.draft_max, COSTLY_PAUSE_GROWTH if self._costly else PAUSE_GROWTH, carried
        )
        self._verify = context.rows_decoder(speculation.draft_max + 1)
        self._decode_one = context.one_token_decoder()
        self._last_logits = context.last_logits()
        self._n_ctx = context.n_ctx
        self._guesser_name = speculation.guesser
        self._draft: list[int] = []
        self._next = 0
        """The row whose logits come next: the draft's guess there is what its sample is checked against."""
        self._in_pass = False
        self._matched = False
        """Whether the last token `accepts` was asked about was the guess at its position."""
        self._held = context.n_cached
        """What plain decoding would hold in the cache: the pass's accepted prefix."""
        self.drafted = self.accepted = self.passes = 0
        self.alone_seconds: float | None = None
        """How long the last `advance` took to decode its token alone, None where it ran a pass
        or took a pass's row: the thread tuner times one-token decodes only (thread_choice.py)."""

    def logits(self) -> int:
        """The address of the logits to sample the next token from."""
        return self._verify.row(self._next) if self._in_pass else self._last_logits()

    def accepts(self, token: int) -> bool:
        """Whether `token`, just sampled (and kept: not an end of generation), is the draft's
        guess at its position: an accepted draft token, counted. Asked once per token, before
        `advance`."""
        self._matched = self._in_pass and self._next < len(self._draft) and self._draft[self._next] == token
        self.accepted += self._matched
        return self._matched

    def advance(self, token: int, wanted: int) -> int:
        """After `token` was sampled (and `accepts` asked), make the logits of the next position
        ready; `wanted`: how many more tokens may follow it. Returns the tokens plain decoding
        would now cache."""
        self._guesser.append(token)
        self.alone_seconds = None
        if self._in_pass:
            if self._matched:
                self._next += 1
                self._held += 1
                return self._held
            self._end_pass()
        # The pass gives one token per row: its last row's too, so one guess fewer than wanted.
        limit = min(self._pacing.length(), wanted - 1, self._n_ctx - self._held - 1, self._verify.size - 1)
        draft = self._guesser.propose(limit) if limit > 0 else []
        if not draft and limit > 0 and self._costly:
            self._pacing.record(1, 0)  # a draft model unsure of anything still ran: as a rejected guess
        if draft:
            self._verify([token, *draft])
            self._draft, self._next, self._in_pass = draft, 0, True
            self.drafted += len(draft)
            self.passes += 1
        else:
            started = perf_counter()
            self._decode_one(token)
            self.alone_seconds = perf_counter() - started
        self._held += 1
        return self._held

    def _end_pass(self) -> None:
        self._pacing.record(len(self._draft), self._next)
        self._in_pass = False
        self._drop_rejected()

    def _drop_rejected(self) -> None:
        if self._context.n_cached > self._held and self._context.trim(self._held) != self._held:
            raise GenerationError("llama.cpp could not remove the rejected guesses from the KV cache")

    def counts(self) -> SpeculationCounts:
        return SpeculationCounts(
            guesser=self._guesser_name, drafted=self.drafted, accepted=self.accepted, passes=self.passes
        )

    def close(self) -> None:
        """The generation ended: the cache keeps what plain decoding would have cached."""
        try:
            if self._in_pass:
                self._in_pass = False
                self._drop_rejected()
        finally:
            self._verify.close()


GuesserFactory = Callable[[Sequence[int]], Guesser]
"""Makes the guesser for a generation from its prompt's tokens."""


def start(
    context: "LlamaContext", history: Sequence[int], speculation: Speculation, guesser_for: GuesserFactory | None = None
) -> Speculator | None:
    """The speculator for a generation after the prompt `history` (guessing with prompt lookup
    unless `guesser_for` makes another guesser), or None where speculation is off or this
    model's memory cannot drop rejected guesses (a recurrent model: plain decoding)."""
    if not speculation.on or not context.can_drop_tail():
        return None
    guesser = guesser_for(history) if guesser_for is not None else PromptLookup(history)
    return Speculator(context, guesser, speculation)
