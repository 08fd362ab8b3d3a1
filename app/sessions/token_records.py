"""A sampled token as a session keeps it, and its fast path to and from the file.

A generation records every token with its alternatives: most of a long session's file, read
and written in bulk. So a token record is not read or written field by field from its
declaration, as the other records are (members.py), but by the two functions here, written
out for speed: `token_json` (the object the file holds, encoded on one line by json's C
encoder, encoding.py) and `read_token`. The fields' `member(key=...)` still name the file's
keys, for docs/session-format.md's test; tests/sessions/test_token_records.py checks that
these two functions write and read every field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scriptorium.inference.core.probability import NO_PROBABILITY, has_probability

from scriptorium.app.sessions.members import FormatError, a_list, an_object, checked, member

PROBABILITY_DIGITS = 6
"""Token probabilities are recorded to this many significant digits: more only bloat the
file. Significant, not decimal places: a token sampled at p 3e-7 (a bias, a high
temperature) would otherwise be recorded as impossible, p 0."""


def recorded_p(p: float) -> float:
    return float(f"{p:.{PROBABILITY_DIGITS}g}")


Alternative = tuple[int, str, float, bool]
"""One of a recorded token's alternatives: (id, text, p, banned), in the file's order. A
plain tuple of plain values, which Python's garbage collector stops tracking: a long
session holds hundreds of thousands of them (twelve a token), and the collector's full
passes, which can come while tokens stream, would otherwise walk them all."""


@dataclass(kw_only=True)
class TokenRecord:
    """One sampled token with its probability and the top alternatives (for issue 6)."""

    id: int
    text: str
    p: float
    """NO_PROBABILITY (null in the file) where the backend gave none: a speculating llama-server's
    token from a verifying pass (accepted from its draft, or sampled after the guesses)."""
    top: tuple[Alternative, ...] = ()
    piece: bytes = member(key="bytes", default=b"")
    """The token's own bytes where its text is not them (b"" elsewhere, and in older files):
    a byte token's text is '' or the character it completes, and its bytes join into it."""
    kept: tuple[tuple[int, float], ...] = ()
    """What the sampler chain kept: (id, probability after the chain), likeliest first
    (TokenEvent.kept); () where unknown (llama-server, older files)."""
    removed: tuple[tuple[int, str], ...] = ()
    """(id, sampler) for each of `top` a sampler took out."""
    pushed: tuple[tuple[int, str, float], ...] = ()
    """(id, sampler, change of its logit) for each of `top` the bias, the penalties or DRY moved."""
    drafted: bool = False
    """Guessed by speculative decoding and accepted (TokenEvent.drafted); its numbers are its own."""
    healing: "HealingRecord | None" = None
    """At a step token healing held (TokenEvent.healing): what it had to write again and
    what was allowed; None elsewhere and in older files."""

    @classmethod
    def from_event(cls, event: Any) -> "TokenRecord":
        """From an inference.core.events.TokenEvent."""
        top = tuple((c.id, c.text, recorded_p(c.p), c.banned) for c in event.top)
        healing = getattr(event, "healing", None)
        piece = b"" if event.text.encode("utf-8") == event.piece else event.piece
        kept = tuple((token, recorded_p(p)) for token, p in event.kept)
        return cls(
            id=event.id,
            text=event.text,
            p=recorded_p(event.p),
            top=top,
            piece=piece,
            kept=kept,
            removed=event.removed,
            pushed=event.pushed,
            drafted=getattr(event, "drafted", False),
            healing=HealingRecord.from_healing(healing) if healing is not None else None,
        )


@dataclass(kw_only=True)
class HealingRecord:
    """A healed step as the session keeps it (inference.core.events.Healing)."""

    rest: str
    """The text still to be written again at this step."""
    allowed_count: int = member(key="allowed_tokens")
    mass: float = member(key="allowed_mass")
    """The model's raw probability of the allowed tokens together (renormalises theirs)."""
    allowed: tuple[Alternative, ...]
    """The most probable allowed tokens, with the model's raw probability."""

    @classmethod
    def from_healing(cls, healing: Any) -> "HealingRecord":
        return cls(
            rest=healing.rest,
            allowed_count=healing.allowed_count,
            mass=recorded_p(healing.mass),
            allowed=tuple((c.id, c.text, recorded_p(c.p), c.banned) for c in healing.allowed),
        )


# ---------------------------------------------------------------- the file's form


CHAIN_DID = {"kept": ((int,), (float, int)), "removed": ((int,), (str,)), "pushed": ((int,), (str,), (float, int))}
"""A token record's optional lists of what the sampler chain did, and the types of an entry's
values: [id, p] kept, [id, sampler] removed, [id, sampler, change of its logit] pushed."""


def chain_did_entry(entry: Any, shape: tuple[tuple[type, ...], ...]) -> tuple[Any, ...] | None:
    """One entry of CHAIN_DID's lists as read from a file, or None when it is not of `shape`."""
    if not (
        isinstance(entry, list)
        and len(entry) == len(shape)
        and all(isinstance(v, t) and not isinstance(v, bool) for v, t in zip(entry, shape))
    ):
        return None
    return tuple(float(v) if float in t else v for v, t in zip(entry, shape))


def token_json(token: TokenRecord) -> dict[str, Any]:
    """A token record as the file holds it; `bytes` only where its text is not its bytes."""
    bytes_ = {"bytes": list(token.piece)} if token.piece else {}
    # null where the backend gave none (a speculating llama-server's token from a verifying pass): JSON has no NaN.
    p = token.p if has_probability(token.p) else None
    record = {"id": token.id, "text": token.text, **bytes_, "p": p, "top": [list(alt) for alt in token.top]}
    for key in CHAIN_DID:  # only where it was recorded (not remotely, nor in older files)
        if entries := getattr(token, key):
            record[key] = [list(entry) for entry in entries]
    if token.drafted:  # only where speculative decoding guessed it
        record["drafted"] = True
    if (healing := token.healing) is not None:
        record["healing"] = {
            "rest": healing.rest,
            "allowed_tokens": healing.allowed_count,
            "allowed_mass": healing.mass,
            "allowed": [list(alt) for alt in healing.allowed],
        }
    return record


_MISSING = object()


def _get(data: dict[str, Any], key: str, kinds: type | tuple[type, ...], where: str, default: Any = _MISSING) -> Any:
    """data[key], checked to be of `kinds`; `default` where it is missing (none: it must be there)."""
    if key not in data:
        if default is _MISSING:
            raise FormatError(f"{where}.{key} is missing")
        return default
    value = data[key]
    if value is None and default is None:
        return None
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    checked(value, kinds, f"{where}.{key}")
    return float(value) if kinds == (float, int) else value


def read_token(data: Any, where: str) -> TokenRecord:
    """The token record a file's object holds; FormatError names the first wrong member."""
    d = an_object(data, where)
    top = _read_alternatives(_get(d, "top", list, where, []), f"{where}.top")
    piece = _get(d, "bytes", list, where, [])
    if not all(isinstance(b, int) and not isinstance(b, bool) and 0 <= b <= 255 for b in piece):
        raise FormatError(f"{where}.bytes is not a list of byte values")
    return TokenRecord(
        id=_get(d, "id", int, where),
        text=_get(d, "text", str, where),
        p=_read_p(d, where),
        top=tuple(top),
        piece=bytes(piece),
        drafted=_get(d, "drafted", bool, where, False),
        **_read_chain_did(d, where),
        healing=_read_healing(_get(d, "healing", dict, where, None), f"{where}.healing"),
    )


def _read_p(d: dict[str, Any], where: str) -> float:
    """A token's `p`: null where the backend gave none (a speculating llama-server's token from a verifying pass)."""
    if "p" in d and d["p"] is None:
        return NO_PROBABILITY
    return _get(d, "p", (float, int), where)


def _read_alternatives(data: Any, where: str) -> tuple[Alternative, ...]:
    top = []
    for i, alt in enumerate(a_list(data, where)):
        if not (
            isinstance(alt, list)
            and len(alt) == 4
            and isinstance(alt[0], int)
            and isinstance(alt[1], str)
            and isinstance(alt[2], (int, float))
            and isinstance(alt[3], bool)
        ):
            raise FormatError(f"{where}[{i}] is not an [id, text, p, banned] entry")
        top.append((alt[0], alt[1], float(alt[2]), alt[3]))
    return tuple(top)


def _read_healing(d: dict[str, Any] | None, where: str) -> HealingRecord | None:
    """A token record's `healing` (a step token healing held), where present."""
    if d is None:
        return None
    return HealingRecord(
        rest=_get(d, "rest", str, where),
        allowed_count=_get(d, "allowed_tokens", int, where),
        mass=float(_get(d, "allowed_mass", (float, int), where)),
        allowed=_read_alternatives(_get(d, "allowed", list, where, []), f"{where}.allowed"),
    )


def _read_chain_did(d: dict[str, Any], where: str) -> dict[str, Any]:
    """A token record's `kept`, `removed` and `pushed` (what the sampler chain did), where present."""
    read = {
        key: [chain_did_entry(e, shape) for e in a_list(_get(d, key, list, where, []), f"{where}.{key}")]
        for key, shape in CHAIN_DID.items()
    }
    if bad := next((key for key, entries in read.items() if None in entries), None):
        raise FormatError(f"{where}.{bad} holds an entry that is not [id, p], [id, sampler] or [id, sampler, change]")
    return {key: tuple(entries) for key, entries in read.items()}


def read_tokens(value: Any, where: str, _: dict[str, Any]) -> list[TokenRecord]:
    """`Generation.tokens` as a file holds it: a list of token records (null is None, read before)."""
    return [read_token(token, f"{where}[{i}]") for i, token in enumerate(checked(value, (list,), where))]


def tokens_json(tokens: list[TokenRecord]) -> list[dict[str, Any]]:
    return [token_json(token) for token in tokens]
