"""A session record (a dataclass) <-> its object in the session file, derived from the
record's fields: each member's key, type and default is declared once, on its field, and
the writer, the reader and the test of docs/session-format.md all read it there.

A field says what its name and type cannot through `member(...)`:
- `key`: its name in the file, where that is not the field's (`Generation.bias` is "logit_bias");
- `group`: the nested object of the file it is written in (a session's "window", "draft", "chat");
- `optional`: written only when it holds something, so that a session without it is written
  as before it existed; absent, it reads as its default;
- `required`: a file must have it although the field has a default (a draft's text);
- `read` / `write`: for a value the annotation cannot describe (a list of pairs, a number
  kept in range, a list of which a bad item only loses itself).

Reading checks each member against the field's annotation and raises FormatError naming the
first wrong one ("generations[0].model.size has the wrong type (str)"). A missing member
reads as the field's default, as None where the field may be None, and is otherwise wrong.
Unknown keys are ignored, so that a later minor addition does not make a file unreadable.

Token records are not read or written here: they are most of a long session, and have a
fast path of their own (encoding.py), which `read` and `write` of `Generation.tokens` name.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Callable, Collection
from dataclasses import MISSING, Field, dataclass, field, fields, is_dataclass
from typing import Any, Literal, Union

Reader = Callable[[Any, str, dict[str, Any]], Any]
"""A member's own reader: (its value, its name for messages, the members of its object read so far)."""


class FormatError(ValueError):
    """The content is not a valid session; the message names the field."""


_MEMBER = "session member"
"""The key of a field's metadata that `member()` sets."""


def member(
    *,
    key: str | None = None,
    group: str | None = None,
    optional: bool = False,
    required: bool = False,
    read: Reader | None = None,
    write: Callable[[Any], Any] | None = None,
    **field_arguments: Any,
) -> Any:
    """A dataclass field (`default`, `default_factory`... as for dataclasses.field) with what
    the session file needs to know of it (see the module's docstring)."""
    declared = {"key": key, "group": group, "optional": optional, "required": required, "read": read, "write": write}
    return field(metadata={_MEMBER: declared}, **field_arguments)


@dataclass(frozen=True, slots=True)
class Member:
    """One field as the session file holds it."""

    name: str
    """The field's name."""
    key: str
    """The member's name in the file."""
    group: str | None
    optional: bool
    nullable: bool
    default: Any
    """The value of a missing member, or MISSING (then a missing member is wrong)."""
    factory: Callable[[], Any] | None
    """Makes the value of a missing member, for a field with a default_factory."""
    kinds: tuple[type, ...]
    """What a member's JSON value may be, checked before `convert`."""
    convert: Callable[[Any, str], Any] | None
    """JSON value -> field value, once `kinds` is checked (value, what it is named from in
    messages); None: the value is the field's as it is."""
    read: Reader | None
    to_json: Callable[[Any], Any] | None
    """Field value -> JSON value; None: the value is written as it is (a str, a number, a dict)."""
    nested: type | None
    """The record type of the member's value (or of its items): None for a plain value."""

    def absent(self) -> Any:
        return self.factory() if self.factory is not None else self.default


@functools.cache
def members(record: type) -> tuple[Member, ...]:
    """The members of a record type, in the file's order (the fields' order)."""
    hints = typing.get_type_hints(record)
    return tuple(_member(f, hints[f.name]) for f in fields(record) if f.init)


@functools.cache
def grouped(record: type, group: str | None = None) -> tuple[Member, ...]:
    """The members of a record type in `group` (None: those of its own object)."""
    return tuple(m for m in members(record) if m.group == group)


def keys(record: type, group: str | None = None) -> list[str]:
    """The keys of a record's members in `group`, from the declarations alone: also for a
    record with a fast path of its own (token_records.py), which `members` cannot read."""
    declared = [(f, f.metadata.get(_MEMBER, {})) for f in fields(record) if f.init]
    return [d.get("key") or f.name for f, d in declared if d.get("group") == group]


def _member(f: Field, annotation: Any) -> Member:
    declared = f.metadata.get(_MEMBER, {})
    nullable, annotation = _without_none(annotation)
    factory = None if f.default_factory is MISSING else f.default_factory
    if f.default is not MISSING:
        default: Any = f.default
    else:
        default = None if factory is not None or nullable else MISSING
    if declared.get("required"):
        default, factory = MISSING, None
    read, write = declared.get("read"), declared.get("write")
    if read is None:
        kinds, convert, nested = _converter(annotation)
    else:
        kinds, convert, nested = (object,), None, None
    return Member(
        name=f.name,
        key=declared.get("key") or f.name,
        group=declared.get("group"),
        optional=declared.get("optional", False),
        nullable=nullable,
        default=default,
        factory=factory,
        kinds=kinds,
        convert=convert,
        read=read,
        to_json=write if write is not None else _to_json(annotation, nested),
        nested=nested,
    )


def _without_none(annotation: Any) -> tuple[bool, Any]:
    """(whether None is allowed, the annotation without it)."""
    if typing.get_origin(annotation) in (Union, types.UnionType):
        others = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(others) == 1:
            return len(others) < len(typing.get_args(annotation)), others[0]
    return False, annotation


def _converter(annotation: Any) -> tuple[tuple[type, ...], Callable[[Any, str], Any] | None, type | None]:
    """(the JSON types a value may have, value -> field value, the record type within) for an annotation."""
    origin = typing.get_origin(annotation)
    if annotation is float:
        return (float, int), lambda value, where: float(value), None
    if annotation in (str, int, bool):
        return (annotation,), None, None
    if annotation is dict or origin is dict:
        return (dict,), None, None
    if origin is Literal:
        return _choice(typing.get_args(annotation))
    if is_dataclass(annotation):
        return (dict,), lambda value, where: read(annotation, value, where), annotation
    if origin in (list, tuple):
        item = typing.get_args(annotation)[0]
        if is_dataclass(item):
            make = list if origin is list else tuple

            def items(value: list[Any], where: str) -> Any:
                return make(read(item, an_object(v, f"{where}[{i}]"), f"{where}[{i}]") for i, v in enumerate(value))

            return (list,), items, item
    raise TypeError(f"{annotation} needs a reader of its own: member(read=..., write=...)")


def _to_json(annotation: Any, nested: type | None) -> Callable[[Any], Any] | None:
    """Field value -> JSON value, for a field without a writer of its own."""
    if nested is not None:
        if typing.get_origin(annotation) in (list, tuple):
            return lambda items: [written(item) for item in items]
        return written
    if typing.get_origin(annotation) in (list, tuple):
        return _lists  # a tuple of tuples (pairs): JSON's lists of lists
    return None


def _lists(value: Any) -> Any:
    return [_lists(item) for item in value] if isinstance(value, (list, tuple)) else value


def _choice(choices: tuple[Any, ...]) -> tuple[tuple[type, ...], Callable[[Any, str], Any], None]:
    said = f"'{choices[0]}' or '{choices[1]}'" if len(choices) == 2 else f"one of {', '.join(choices)}"

    def check(value: Any, where: str) -> Any:
        if value not in choices:
            raise FormatError(f"{where} is '{value}', not {said}")
        return value

    return tuple({type(choice) for choice in choices}), check, None


# ---------------------------------------------------------------- reading


def checked(value: Any, kinds: tuple[type, ...], where: str) -> Any:
    """`value` if it is one of `kinds`, else FormatError naming `where`. A bool is never a
    number (it is one in Python): a count or an offset that is true or false is wrong."""
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise FormatError(f"{where} has the wrong type ({type(value).__name__})")
    return value


def an_object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise FormatError(f"{where} is not an object")
    return value


def a_list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise FormatError(f"{where} is not a list")
    return value


def read(record: type, data: dict[str, Any], where: str) -> Any:
    """The record of type `record` that the object `data` holds (`where`: its name in messages)."""
    return record(**read_members(record, data, where))


def read_members(
    record: type, data: dict[str, Any], where: str, group: str | None = None, *, inside: str | None = None
) -> dict[str, Any]:
    """The fields of `record` whose members are in `group`, read from the object `data`, which
    messages call `where` ("generations[0].model.size is missing"). What the members hold is
    named from `inside` (default: `where`; "": from the member's own key)."""
    inside = where if inside is None else inside
    values: dict[str, Any] = {}
    for m in grouped(record, group):
        value = data.get(m.key, MISSING)
        if value is MISSING:
            if m.default is MISSING:
                raise FormatError(f"{where}.{m.key} is missing")
            value = m.absent()
        elif value is None and m.nullable:
            pass
        elif m.read is not None:
            value = m.read(value, f"{where}.{m.key}", values)
        else:
            checked(value, m.kinds, f"{where}.{m.key}")
            if m.convert is not None:
                value = m.convert(value, f"{inside}.{m.key}" if inside else m.key)
        values[m.name] = value
    return values


# ---------------------------------------------------------------- writing


def written(
    record: Any, group: str | None = None, *, but: Collection[str] = (), raw: Collection[str] = ()
) -> dict[str, Any]:
    """The members of `record` in `group`, as the file holds them, in the file's order. `but`:
    keys left out, for the caller to write; `raw`: keys whose value is given as the field
    holds it, for the caller to lay out."""
    data: dict[str, Any] = {}
    for name, key, to_json, optional in _writing(type(record), group):
        if but and key in but:
            continue
        value = getattr(record, name)
        if optional is not None and (not value or value == optional.absent()):
            continue  # absent where it holds nothing
        if to_json is None or value is None or (raw and key in raw):
            data[key] = value
        else:
            data[key] = to_json(value)
    return data


@functools.cache
def _writing(
    record: type, group: str | None
) -> tuple[tuple[str, str, Callable[[Any], Any] | None, Member | None], ...]:
    """What `written` needs of each member, as plain tuples: a session is written every few
    seconds while the author types, and its generations with it."""
    return tuple((m.name, m.key, m.to_json, m if m.optional else None) for m in grouped(record, group))
