"""The tokens of a reopened draft's generated text, from its session's records.

The session keeps each generation's tokens (their probabilities and alternatives) and
which stretches of the draft each generation wrote. A stretch still holding the text it
was kept with gets its tokens back, so F8 colours it and ctrl+b branches in it as before
the draft was closed; a stretch whose tokens cannot be lined up with its text (the author
typed part of a token) stays plain text until F9 scores it.

No Textual: pure data to pure data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scriptorium.inference.core.text import piece_text

from scriptorium.app.sessions.model import DraftSession
from scriptorium.app.sessions.records import Generation, HealingRecord
from scriptorium.app.tui.token_spans import Span, TokenRecord, TokenSource, append_token, kept_lore

if TYPE_CHECKING:
    from scriptorium.inference.core.events import Healing


def spans_of(session: DraftSession | None) -> list[Span]:
    """The spans of `session`'s draft whose generation's tokens still spell their text."""
    if session is None:
        return []
    generations = {g.id: g for g in session.generations}
    spans = []
    for kept in session.spans:
        generation = generations.get(kept.generation)
        text = session.text[kept.start : kept.end]
        tokens = tokens_spelling(generation, text) if generation is not None else None
        if tokens:
            spans.append(Span(kept.start, text, tokens))
    return spans


def healing_of(record: HealingRecord | None) -> Healing | None:
    """A healed step as the panel draws it, from the session's record of it."""
    if record is None:
        return None
    from scriptorium.inference.core.events import Candidate, Healing  # as in tokens_spelling

    allowed = tuple(Candidate(*alternative) for alternative in record.allowed)
    return Healing(rest=record.rest, allowed_count=record.allowed_count, mass=record.mass, allowed=allowed)


def tokens_spelling(generation: Generation, text: str) -> list[TokenRecord] | None:
    """The generation's tokens from the first one that starts `text` (a word kept, then the
    next: the stretch can start anywhere in what it wrote), up to the one ending it."""
    records = generation.tokens or []
    if not records:
        return None
    # Imported here, with the first tokens to show: a draft without them opens without the
    # event classes, which take some 13 ms to build (tests/packaging/test_startup_imports.py).
    from scriptorium.inference.core.events import Candidate

    starts, offset = [], 0
    for record in records:
        starts.append(offset)
        offset += len(record.text)
    written = "".join(record.text for record in records)
    source = TokenSource("generated", generation.sampler_settings(), generation.seed, kept_lore(generation.lore))
    for first, start in enumerate(starts):
        if not written.startswith(text, start):
            continue
        tokens: list[TokenRecord] = []
        for index in range(first, len(records)):
            if starts[index] >= start + len(text):
                break
            record = records[index]
            top = tuple(Candidate(*alternative) for alternative in record.top)
            token = TokenRecord(
                starts[index] - start,
                record.text,
                record.id,
                record.p,
                top,
                source,
                index,
                chain_did=(record.kept, record.removed, record.pushed),
                healing=healing_of(record.healing),
                drafted=record.drafted,
            )
            # A byte token's own piece: its bytes, or in older files among its alternatives (where the model ranked it).
            label = (
                piece_text(record.piece)
                if record.piece
                else next((c.text for c in top if c.id == record.id), record.text)
            )
            append_token(tokens, token, label)
        return tokens
    return None
