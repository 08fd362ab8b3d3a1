"""The session file format, version 2 (docs/session-format.md): session objects <-> JSON.
Version 1 files (no memory or author's note) still load.

What each object of the file holds is declared once, on the fields of the session's
dataclasses (model.py, records.py): its key, its type, its default, the object it is
grouped in. members.py reads and writes them from there; this module puts the file
together (the format and version, the kind, the window and the draft or chat objects, the
generations last) and lays it out.

Reading validates every field a session needs and raises FormatError naming the first wrong
one; the store turns that into a one-line SessionError and moves the file aside. Unknown
keys are ignored, so a later minor addition does not make a file unreadable.

Writing lays the file out as json.dumps(indent=1) does (one member a line, for diffs), except
token records: each is one compact line. A generation records every token with its
alternatives, so they are most of a long session's file; indent would put every field of
every alternative on a line of its own and, worse, makes json use its pure-Python encoder.
A record on one line is encoded by json's C encoder (token_records.py, a fast path of its
own), and can be encoded once and kept: `encode()` takes a TokenLines (encoding.py) that
remembers the lines of earlier saves, so a save encodes only the tokens recorded since.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from scriptorium.app.sessions.encoding import COMPACT_JSON, TokenLines, encode_token
from scriptorium.app.sessions.members import FormatError, an_object, checked, read_members, written
from scriptorium.app.sessions.model import AnySession, ChatSession, DraftSession, Session
from scriptorium.app.sessions.records import Generation

FORMAT = "scriptorium-session"
VERSION = 2


class NewerFormatError(FormatError):
    """Written by a newer scriptorium: valid for it, so never treated as corrupt."""


# ---------------------------------------------------------------- writing


def to_dict(session: AnySession) -> dict[str, Any]:
    return {**_head(session), "generations": [written(g) for g in session.generations]}


def _head(session: AnySession) -> dict[str, Any]:
    """Everything but the generations, in the file's order: the members declared on the
    session's fields (model.py), the window's and the draft's or chat's in their objects."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "kind": session.kind,
        **written(session, but=("generations",)),
        "window": written(session, "window"),
        session.kind: written(session, session.kind),
    }


def _key(name: str) -> str:
    return json.dumps(name, ensure_ascii=False) + ": "


def _laid_out(value: Any, pad: str) -> str:
    """`value` as json.dumps(indent=1) lays it out, its lines moved to stand under a line
    indented by `pad`. Encoded JSON strings never hold a raw newline: every "\n" is a line
    break. (ensure_ascii=False, here and everywhere, keeps the author's text readable.)"""
    if not isinstance(value, (dict, list, tuple)):
        return COMPACT_JSON.encode(value)  # a scalar is laid out alike either way; the C encoder is quicker
    return json.dumps(value, ensure_ascii=False, indent=1).replace("\n", "\n" + pad)


def _block(opening: str, items: Iterable[Iterable[str | bytes]], closing: str, pad: str) -> Iterator[str | bytes]:
    """Items already laid out, one a line and one space deeper than `pad`, as indent=1 does.
    In pieces, joined once for the whole file: a string made at every level would copy
    the token records again at each."""
    separator = opening + "\n" + pad + " "
    empty = True
    for item in items:
        yield separator
        yield from item
        separator, empty = _between(pad), False
    yield opening + closing if empty else "\n" + pad + closing


def _between(pad: str) -> str:
    """What separates the items of a block at depth `pad`."""
    return ",\n" + pad + " "


def _generation_pieces(g: Generation, cache: TokenLines, pad: str) -> Iterator[str | bytes]:
    inner = pad + " "

    def laid_out(name: str, value: Any) -> Iterable[str | bytes]:
        # A non-empty list of token records is written one record a line, as one item joined
        # with _block's own separator (UTF-8 already, kept by the cache).
        if name == "tokens" and value:
            return _block("[", [(cache.block(g.id, value, encode_token, _between(inner)),)], "]", inner)
        return (_laid_out(value, inner),)

    # "tokens" holds the records themselves here, for the cache to encode.
    members = written(g, raw=("tokens",)).items()
    return _block("{", ((_key(name), *laid_out(name, value)) for name, value in members), "}", pad)


@dataclass(frozen=True, slots=True)
class Encoded:
    """A session's file content, UTF-8, split around the value of `updated_at`: the store
    tells from `before` and `after` whether anything else changed, and stamps the time it
    writes, without encoding the session a second time."""

    before: bytes
    updated_at: bytes
    after: bytes

    @property
    def data(self) -> bytes:
        return b"".join((self.before, self.updated_at, self.after))

    @property
    def text(self) -> str:
        return self.data.decode("utf-8")

    def fingerprint(self) -> bytes:
        """Of all the content but updated_at (the store sets it only as it writes, so it is no change)."""
        digest = hashlib.blake2b(self.before, digest_size=16)
        digest.update(self.after)
        return digest.digest()


def encode(session: AnySession, cache: TokenLines | None = None, *, updated_at: str | None = None) -> Encoded:
    """The file content of `session` (with `updated_at` in place of the session's own, if given).
    `cache` keeps the token lines for the next call on the same session; without one
    every token is encoded."""
    cache = TokenLines() if cache is None else cache
    head = _head(session)
    if updated_at is not None:
        head["updated_at"] = updated_at
    head_members = [(_key(name), _laid_out(value, " ")) for name, value in head.items()]
    generations = _block("[", (_generation_pieces(g, cache, "  ") for g in session.generations), "]", " ")
    # The top level as _block("{", members, "}\n", "") lays it out, cut around the value of
    # updated_at; after it, _block's opening is the comma that follows that value.
    at = list(head).index("updated_at")
    before = "{\n " + "".join("".join(member) + ",\n " for member in head_members[:at]) + _key("updated_at")
    after = _utf8_join(_block(",", [*head_members[at + 1 :], (_key("generations"), *generations)], "}\n", ""))
    cache.keep_only([g.id for g in session.generations if g.tokens])
    return Encoded(
        before=before.encode("utf-8"), updated_at=_laid_out(head["updated_at"], "").encode("utf-8"), after=after
    )


def _utf8_join(pieces: Iterable[str | bytes]) -> bytes:
    # The token blocks come as bytes: joined as they are, not decoded and encoded again.
    return b"".join(piece if isinstance(piece, bytes) else piece.encode("utf-8") for piece in pieces)


def dumps(session: AnySession, cache: TokenLines | None = None) -> str:
    return encode(session, cache).text


# ---------------------------------------------------------------- reading


def from_dict(data: Any) -> AnySession:
    d = an_object(data, "the file")
    if d.get("format") != FORMAT:
        raise FormatError(f"not a scriptorium session (format is {d.get('format')!r})")
    version = d.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise FormatError(f"version {version!r} is not a format version")
    if version > VERSION:
        raise NewerFormatError(f"written by a newer scriptorium (format version {version}, this one reads {VERSION})")
    # The top level's members are "session.id" in messages, and what they hold is named by
    # their keys, as the file lays them out ("generations[0].model").
    common = read_members(Session, d, "session", inside="")
    # A version 1 file has no window: no memory, note or lorebook.
    common.update(read_members(Session, _part(d, "window", dict, optional=True) or {}, "window", "window"))
    kind = _part(d, "kind", str)
    if kind not in ("draft", "chat"):
        raise FormatError(f"kind is '{kind}', not 'draft' or 'chat'")
    session_type = DraftSession if kind == "draft" else ChatSession
    return session_type(**common, **read_members(session_type, _part(d, kind, dict), kind, kind))


def _part(d: dict[str, Any], key: str, kind: type, *, optional: bool = False) -> Any:
    """A member of the top level that the session's fields do not declare: the kind, and the
    objects their members are grouped in."""
    if key not in d and not optional:
        raise FormatError(f"session.{key} is missing")
    value = d.get(key)
    return None if value is None and optional else checked(value, (kind,), f"session.{key}")


def loads(text: str) -> AnySession:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise FormatError(f"invalid JSON at line {error.lineno}, column {error.colno}") from None
    except RecursionError:
        # A session is a handful of levels deep; the parser's own limit stops `[[[[...`.
        raise FormatError("JSON nested too deeply to be a session") from None
    except ValueError:
        # The one other refusal of json.loads: an integer of more than 4,300 digits, which
        # Python will not convert (a guard against quadratic-time conversions). No session
        # holds such a number, so the file is damaged like any other.
        raise FormatError("an integer of thousands of digits, which no session holds") from None
    if _SURROGATE_ESCAPE.search(text):  # rare, so the whole check only then
        _refuse_lone_surrogates(data)
    return from_dict(data)


# JSON may spell a UTF-16 surrogate alone (`\ud800`), which is no character: such a string
# loaded, then every save and export of the session failed with a traceback.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _refuse_lone_surrogates(data: Any) -> None:
    for key, value in data.items() if isinstance(data, dict) else [("the file", data)]:
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise FormatError(f"{key} holds a lone UTF-16 surrogate, which is not text") from None
