"""Encoded token records kept between saves, so that a save encodes only the tokens
recorded since the previous save of that session.

Kept as each generation's block of lines, already joined and in UTF-8: the file is then
one join of those blocks. Kept as lines, every save joined and transcoded the whole file
again: for a 200-generation, 22 MB session, 37 ms of the interface's thread against 20
(bench/session_save.py).

A generation records every sampled token with its alternatives: most of a session file,
and the part that grows. Tokens are only ever appended (Generation.add_token), so what
was encoded at one save is still right at the next, as long as it can be checked: an
entry keeps the very list it encoded (checked with `is`, never by id() alone, which a
new list may reuse) and the records it encoded, and it is used only if the list is the
same object and still starts with those records. Anything else is encoded afresh.

Nothing here is locked: SessionStore calls it only while holding its own lock.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Collection
from typing import Any

from scriptorium.app.sessions.token_records import TokenRecord, token_json

KEPT_SESSIONS = 4
"""Sessions whose lines are kept: the app works in one at a time, and a session switched
away from would otherwise hold its lines (as large as its file) until the app closes."""


COMPACT_JSON = json.JSONEncoder(ensure_ascii=False)
"""No indent, so json uses its C encoder: many times faster than the Python one indent needs."""


def encode_token(token: TokenRecord) -> str:
    """One token record as one line of the file."""
    return COMPACT_JSON.encode(token_json(token))


class _Entry:
    __slots__ = ("tokens", "records", "separator", "block")

    def __init__(self, tokens: list[Any], separator: bytes) -> None:
        self.tokens = tokens
        """The list object encoded, kept so that `is` can tell it from a new one."""
        self.records: list[Any] = []
        """The records encoded, in order: a shallow copy, to see that none was replaced."""
        self.separator = separator
        self.block = b""
        """The records' lines joined by `separator`, UTF-8."""

    def holds_prefix_of(self, tokens: list[Any], separator: bytes) -> bool:
        done = len(self.records)
        # Equal records encode alike, so == (identity first, then the fields) is the right test.
        return (
            tokens is self.tokens
            and separator == self.separator
            and len(tokens) >= done
            and tokens[:done] == self.records
        )

    def catch_up(self, encode: Callable[[Any], str]) -> None:
        new = self.tokens[len(self.records) :]
        if not new:
            return
        # Only a generation still being written grows here, by the tokens of one save's interval.
        added = self.separator.decode("utf-8").join(map(encode, new)).encode("utf-8")
        self.block = self.block + self.separator + added if self.records else added
        self.records.extend(new)


class TokenLines:
    """One session's encoded token records: per generation id, one block of lines."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}

    def block(self, generation_id: str, tokens: list[Any], encode: Callable[[Any], str], separator: str) -> bytes:
        """`separator.join(map(encode, tokens))` in UTF-8, calling `encode` only for records not encoded before."""
        wanted = separator.encode("utf-8")
        entry = self._entries.get(generation_id)
        if entry is None or not entry.holds_prefix_of(tokens, wanted):
            entry = self._entries[generation_id] = _Entry(tokens, wanted)
        entry.catch_up(encode)
        return entry.block

    def keep_only(self, generation_ids: Collection[str]) -> None:
        """Drop the entries of generations no longer in the session (or without tokens)."""
        for gone in self._entries.keys() - set(generation_ids):
            del self._entries[gone]

    def __len__(self) -> int:
        return len(self._entries)


class SessionLines:
    """TokenLines per session id, for the few sessions saved or loaded most recently."""

    def __init__(self, kept: int = KEPT_SESSIONS) -> None:
        self._kept = kept
        self._sessions: OrderedDict[str, TokenLines] = OrderedDict()

    def for_session(self, session_id: str) -> TokenLines:
        lines = self._sessions.pop(session_id, None)
        self._sessions[session_id] = lines = TokenLines() if lines is None else lines
        while len(self._sessions) > self._kept:
            self._sessions.popitem(last=False)
        return lines

    def forget(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._sessions
