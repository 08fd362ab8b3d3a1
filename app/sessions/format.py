"""The session file format, version 2 (docs/session-format.md): session objects <-> JSON.
Version 1 files (no memory or author's note) still load.

Reading validates every field a session needs and raises FormatError naming the first wrong one; the store turns
that into a one-line SessionError and moves the file aside. Unknown keys are ignored, so a later minor addition
does not make a file unreadable.

Writing lays the file out as json.dumps(indent=1) does (one member a line, for diffs), except token records:
each is one compact line. A generation records every token with its alternatives, so they are most of a long
session's file; indent would put every field of every alternative on a line of its own and, worse, makes json
use its pure-Python encoder. A record on one line is encoded by json's C encoder, and can be encoded once and
kept: `encode()` takes a TokenLines (encoding.py) that remembers the lines of earlier saves, so a save encodes
only the tokens recorded since.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from scriptorium.inference.core.events import NO_PROBABILITY
from scriptorium.inference.window.window import DEFAULT_NOTE_DEPTH, NOTE_DEPTH_RANGE

from scriptorium.app.sessions.encoding import (
    CHAIN_DID,
    COMPACT_JSON,
    TokenLines,
    chain_did_entry,
    encode_token,
    token_json,
)
from scriptorium.app.sessions.lorebook_file import fired_from_json, read_session_lore, session_lore_json
from scriptorium.app.sessions.model import ROLES, AnySession, ChatSession, ChatTurn, DraftSession, FileStamp, ModelSpan
from scriptorium.app.sessions.records import (
    OUTCOMES,
    Alternative,
    BiasRecord,
    Generation,
    HealingRecord,
    LoraRef,
    ModelRef,
    TokenRecord,
)
from scriptorium.app.sessions.suggestion import read_suggestion

FORMAT = "scriptorium-session"
VERSION = 2
_MISSING = object()


class FormatError(ValueError):
    """The content is not a valid session; the message names the field."""


class NewerFormatError(FormatError):
    """Written by a newer scriptorium: valid for it, so never treated as corrupt."""


# ---------------------------------------------------------------- writing


def _model(model: ModelRef) -> dict[str, Any]:
    return {
        "path": model.path,
        "name": model.name,
        "size": model.size,
        "sha256": model.sha256,
        "quantization": model.quantization,
        "architecture": model.architecture,
        "parameters": model.parameters,
    }


def _lora(lora: LoraRef | None) -> dict[str, Any] | None:
    return (
        None
        if lora is None
        else {"path": lora.path, "name": lora.name, "size": lora.size, "sha256": lora.sha256, "scale": lora.scale}
    )


def _generation(g: Generation, tokens: list[Any] | None) -> dict[str, Any]:
    return {
        "id": g.id,
        "kind": g.kind,
        "started_at": g.started_at,
        "finished_at": g.finished_at,
        "model": _model(g.model),
        "lora": _lora(g.lora),
        "sampler": g.sampler,
        "seed": g.seed,
        "logit_bias": {
            "ban_byte_tokens": g.bias.ban_byte_tokens,
            "entries": [[token, bias] for token, bias in g.bias.entries],
            "summary": g.bias.summary,
        },
        "anchor": g.anchor,
        "text": g.text,
        "stop_reason": g.stop_reason,
        "prompt_tokens": g.prompt_tokens,
        "completion_tokens": g.completion_tokens,
        "outcome": g.outcome,
        "accepted_text": g.accepted_text,
        "decided_at": g.decided_at,
        "tokens": tokens,
        "arithmetic": g.arithmetic,
        **({"origin": g.origin} if g.origin else {}),
        **({"other_loras": [_lora(o) for o in g.other_loras]} if g.other_loras else {}),
        **({"lore": [fired.as_json() for fired in g.lore]} if g.lore else {}),
        **({"speculation": g.speculation} if g.speculation else {}),
        **({"healed": g.healed} if g.healed else {}),
        **({"fim_after": g.fim_after} if g.fim_after else {}),
    }


def to_dict(session: AnySession) -> dict[str, Any]:
    data = _head(session)
    data["generations"] = [
        _generation(g, None if g.tokens is None else [token_json(t) for t in g.tokens]) for g in session.generations
    ]
    return data


def _head(session: AnySession) -> dict[str, Any]:
    """Everything but the generations, in the file's order."""
    data: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "kind": session.kind,
        "id": session.id,
        "title": session.title,
        "created_at": session.created_at,
        "updated_at": session.updated_at,
        "window": {
            "memory": session.memory,
            "note": session.note,
            "note_depth": session.note_depth,
            **session_lore_json(session.lore, session.lore_path),
        },
    }
    if isinstance(session, DraftSession):
        stamp = session.draft_stamp
        data["draft"] = {
            "text": session.text,
            "path": session.draft_path,
            "file_stamp": None
            if stamp is None
            else {"size": stamp.size, "mtime_ns": stamp.mtime_ns, "sha256": stamp.sha256},
            "model_spans": [[span.start, span.end, span.generation] for span in session.spans],
            **({"suggestion": session.suggestion.as_dict()} if session.suggestion else {}),
        }
    else:
        data["chat"] = {
            "system_prompt": session.system_prompt,
            "unsent": session.unsent,
            "turns": [
                {"role": t.role, "content": t.content, "at": t.at, "generation": t.generation} for t in session.turns
            ],
        }
    return data


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
        # "tokens" holds the records themselves here: a non-empty list is written one record a line,
        # as one item joined with _block's own separator (UTF-8 already, kept by the cache).
        if name == "tokens" and value:
            return _block("[", [(cache.block(g.id, value, encode_token, _between(inner)),)], "]", inner)
        return (_laid_out(value, inner),)

    return _block(
        "{", ((_key(name), *laid_out(name, value)) for name, value in _generation(g, g.tokens).items()), "}", pad
    )


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


def _get(data: dict[str, Any], key: str, kinds: type | tuple[type, ...], where: str, default: Any = _MISSING) -> Any:
    if key not in data:
        if default is _MISSING:
            raise FormatError(f"{where}.{key} is missing")
        return default
    value = data[key]
    if value is None and default is None:
        return None
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    # bool is an int in Python; a count or offset that is true/false is still wrong.
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise FormatError(f"{where}.{key} has the wrong type ({type(value).__name__})")
    return float(value) if kinds == (float, int) else value


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise FormatError(f"{where} is not an object")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise FormatError(f"{where} is not a list")
    return value


def _read_model(data: Any, where: str) -> ModelRef:
    d = _object(data, where)
    return ModelRef(
        path=_get(d, "path", str, where),
        name=_get(d, "name", str, where),
        size=_get(d, "size", int, where),
        sha256=_get(d, "sha256", str, where, None),
        quantization=_get(d, "quantization", str, where, ""),
        architecture=_get(d, "architecture", str, where, ""),
        parameters=_get(d, "parameters", int, where, 0),
    )


def _read_lora(data: Any, where: str) -> LoraRef | None:
    if data is None:
        return None
    d = _object(data, where)
    return LoraRef(
        path=_get(d, "path", str, where),
        name=_get(d, "name", str, where),
        size=_get(d, "size", int, where),
        sha256=_get(d, "sha256", str, where, None),
        scale=_get(d, "scale", (float, int), where),
    )


def _read_bias(data: Any, where: str) -> BiasRecord:
    d = _object(data, where)
    entries = []
    for i, pair in enumerate(_list(_get(d, "entries", list, where, []), f"{where}.entries")):
        if not (
            isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], int) and isinstance(pair[1], (int, float))
        ):
            raise FormatError(f"{where}.entries[{i}] is not a [token_id, bias] pair")
        entries.append((pair[0], float(pair[1])))
    return BiasRecord(
        ban_byte_tokens=_get(d, "ban_byte_tokens", bool, where),
        entries=tuple(entries),
        summary=_get(d, "summary", str, where, ""),
    )


def _read_token(data: Any, where: str) -> TokenRecord:
    d = _object(data, where)
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
    for i, alt in enumerate(_list(data, where)):
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
        key: [chain_did_entry(e, shape) for e in _list(_get(d, key, list, where, []), f"{where}.{key}")]
        for key, shape in CHAIN_DID.items()
    }
    if bad := next((key for key, entries in read.items() if None in entries), None):
        raise FormatError(f"{where}.{bad} holds an entry that is not [id, p], [id, sampler] or [id, sampler, change]")
    return {key: tuple(entries) for key, entries in read.items()}


def _read_generation(data: Any, where: str) -> Generation:
    d = _object(data, where)
    kind = _get(d, "kind", str, where)
    outcome = _get(d, "outcome", str, where, "pending")
    if kind not in ("continue", "chat"):
        raise FormatError(f"{where}.kind is '{kind}', not 'continue' or 'chat'")
    if outcome not in OUTCOMES:
        raise FormatError(f"{where}.outcome is '{outcome}', not one of {', '.join(OUTCOMES)}")
    tokens = _get(d, "tokens", list, where, None)
    return Generation(
        id=_get(d, "id", str, where),
        kind=kind,
        started_at=_get(d, "started_at", str, where),
        finished_at=_get(d, "finished_at", str, where, None),
        model=_read_model(_get(d, "model", dict, where), f"{where}.model"),
        lora=_read_lora(_get(d, "lora", dict, where, None), f"{where}.lora"),
        other_loras=tuple(
            _read_lora(_object(o, f"{where}.other_loras[{i}]"), f"{where}.other_loras[{i}]")
            for i, o in enumerate(_get(d, "other_loras", list, where, []))
        ),
        sampler=_get(d, "sampler", dict, where),
        seed=_get(d, "seed", int, where, None),
        bias=_read_bias(_get(d, "logit_bias", dict, where), f"{where}.logit_bias"),
        anchor=_get(d, "anchor", int, where, None),
        text=_get(d, "text", str, where, ""),
        stop_reason=_get(d, "stop_reason", str, where, None),
        prompt_tokens=_get(d, "prompt_tokens", int, where, None),
        completion_tokens=_get(d, "completion_tokens", int, where, None),
        outcome=outcome,
        accepted_text=_get(d, "accepted_text", str, where, None),
        decided_at=_get(d, "decided_at", str, where, None),
        tokens=None if tokens is None else [_read_token(t, f"{where}.tokens[{i}]") for i, t in enumerate(tokens)],
        arithmetic=_get(d, "arithmetic", dict, where, None),
        origin=_get(d, "origin", str, where, ""),
        lore=fired_from_json(d.get("lore")),
        speculation=_get(d, "speculation", dict, where, None),
        healed=_get(d, "healed", str, where, ""),
        fim_after=_get(d, "fim_after", int, where, 0),
    )


def _read_spans(data: list[Any], text_length: int) -> list[ModelSpan]:
    # A bad span only loses a highlight, never the text: drop it rather than refuse the file.
    spans: list[ModelSpan] = []
    for item in data:
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


def _read_window(data: dict[str, Any] | None) -> dict[str, Any]:
    """Memory, note and depth (version 2); a version 1 file has none. A depth out of
    range falls back to the default: it only moves the note."""
    if data is None:
        return {}
    depth = _get(data, "note_depth", int, "window", DEFAULT_NOTE_DEPTH)
    low, high = NOTE_DEPTH_RANGE
    return {
        "memory": _get(data, "memory", str, "window", ""),
        "note": _get(data, "note", str, "window", ""),
        "note_depth": depth if low <= depth <= high else DEFAULT_NOTE_DEPTH,
        **read_session_lore(data, FormatError),
    }


def from_dict(data: Any) -> AnySession:
    d = _object(data, "the file")
    if d.get("format") != FORMAT:
        raise FormatError(f"not a scriptorium session (format is {d.get('format')!r})")
    version = d.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise FormatError(f"version {version!r} is not a format version")
    if version > VERSION:
        raise NewerFormatError(f"written by a newer scriptorium (format version {version}, this one reads {VERSION})")
    where = "session"
    common = dict(
        id=_get(d, "id", str, where),
        title=_get(d, "title", str, where),
        created_at=_get(d, "created_at", str, where),
        updated_at=_get(d, "updated_at", str, where),
        generations=[
            _read_generation(g, f"generations[{i}]") for i, g in enumerate(_get(d, "generations", list, where, []))
        ],
        **_read_window(_get(d, "window", dict, where, None)),
    )
    kind = _get(d, "kind", str, where)
    if kind == "draft":
        draft = _get(d, "draft", dict, where)
        text = _get(draft, "text", str, "draft")
        stamp_data = _get(draft, "file_stamp", dict, "draft", None)
        stamp = (
            None
            if stamp_data is None
            else FileStamp(
                size=_get(stamp_data, "size", int, "draft.file_stamp"),
                mtime_ns=_get(stamp_data, "mtime_ns", int, "draft.file_stamp"),
                sha256=_get(stamp_data, "sha256", str, "draft.file_stamp"),
            )
        )
        return DraftSession(
            **common,
            text=text,
            draft_path=_get(draft, "path", str, "draft", None),
            draft_stamp=stamp,
            spans=_read_spans(_get(draft, "model_spans", list, "draft", []), len(text)),
            suggestion=read_suggestion(draft.get("suggestion")),
        )
    if kind == "chat":
        chat = _get(d, "chat", dict, where)
        turns = []
        for i, t in enumerate(_get(chat, "turns", list, "chat", [])):
            t = _object(t, f"chat.turns[{i}]")
            role = _get(t, "role", str, f"chat.turns[{i}]")
            if role not in ROLES:
                raise FormatError(f"chat.turns[{i}].role is '{role}', not 'user' or 'assistant'")
            turns.append(
                ChatTurn(
                    role=role,
                    content=_get(t, "content", str, f"chat.turns[{i}]"),
                    at=_get(t, "at", str, f"chat.turns[{i}]", ""),
                    generation=_get(t, "generation", str, f"chat.turns[{i}]", None),
                )
            )
        prompt, unsent = (_get(chat, key, str, "chat", "") for key in ("system_prompt", "unsent"))
        return ChatSession(**common, system_prompt=prompt, turns=turns, unsent=unsent)
    raise FormatError(f"kind is '{kind}', not 'draft' or 'chat'")


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
