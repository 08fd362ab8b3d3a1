"""A lorebook as the author keeps it: a TOML file shared by several drafts
(docs/lorebook-format.md), and the same fields inside a session file.

One declaration of the fields (`_ENTRY_FIELDS`) serves both: `from_dict` reads a parsed
TOML table or a session's JSON object, `as_dict` writes one. A hand-written file is read
strictly (a misspelt field is named, not ignored: `key = ` for `keys = ` would leave an
entry that never fires); a session file leaves unknown fields alone, as the session format
does, so a later addition does not make it unreadable.

TOML is written here, not by a library (the standard library only reads it): the text of
an entry goes in a multi-line literal string, as the author would write it by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scriptorium.inference.core.errors import read_named_text
from scriptorium.inference.window.lore import DEFAULT_BUDGET, DEFAULT_SCAN_DEPTH, Fired, LoreEntry, LoreError, Lorebook

from scriptorium.app import atomic
from scriptorium.app.toml_reading import toml_parser

# name in the file: (type, default); "keys" and "text" are read below, being required.
_ENTRY_FIELDS: dict[str, tuple[type, Any]] = {
    "secondary": (list, ()),
    "priority": (int, 0),
    "enabled": (bool, True),
    "always": (bool, False),
    "case_sensitive": (bool, False),
}
_BOOK_FIELDS = {"scan_depth": DEFAULT_SCAN_DEPTH, "budget": DEFAULT_BUDGET}


def read_lorebook(path: str | Path) -> Lorebook:
    """The lorebook in a TOML file the author names; LoreError (one line, naming the file
    and the field) for one that cannot be used."""
    text = read_named_text(Path(path), "lorebook", LoreError)
    tomllib = toml_parser()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise LoreError(f"lorebook {path} is not valid TOML: {error}") from None
    try:
        return from_dict(data, strict=True)
    except LoreError as error:
        raise LoreError(f"lorebook {path}: {error}") from None


def write_lorebook(path: str | Path, lorebook: Lorebook) -> Path:
    return atomic.write_text(path, to_toml(lorebook))


def from_dict(data: object, *, strict: bool = False) -> Lorebook:
    if not isinstance(data, dict):
        raise LoreError("a lorebook must be a table of fields")
    if strict:
        _no_unknown(data, {*_BOOK_FIELDS, "entry"}, "the lorebook")
    entries = data.get("entry", [])
    if not isinstance(entries, list):
        raise LoreError("entry must be a list of entries ([[entry]] in TOML)")
    return Lorebook(
        tuple(_entry(e, i, strict) for i, e in enumerate(entries, 1)),
        **{name: data.get(name, default) for name, default in _BOOK_FIELDS.items()},
    )


def _entry(data: object, number: int, strict: bool) -> LoreEntry:
    where = f"entry {number}"
    if not isinstance(data, dict):
        raise LoreError(f"{where} must be a table of fields")
    keys = _strings(data.get("keys", []), f"{where}: keys")
    name = data.get("name", keys[0] if keys else "")
    if not isinstance(name, str) or not name.strip():
        raise LoreError(f"{where}: name must be some text (or give it keys: the first names it)")
    where = f"entry {number} ({name})"
    if strict:
        _no_unknown(data, {"name", "keys", "text", *_ENTRY_FIELDS}, where)
    text = data.get("text")
    if not isinstance(text, str):
        raise LoreError(f"{where}: text must be some text")
    values: dict[str, Any] = {}
    for field, (kind, default) in _ENTRY_FIELDS.items():
        value = data.get(field, default)
        if kind is list:
            value = _strings(value, f"{where}: {field}")
        elif not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise LoreError(
                f"{where}: {field} must be {'true or false' if kind is bool else 'a whole number'}, not {value!r}"
            )
        values[field] = value
    if not keys and not values["always"]:
        raise LoreError(f"{where}: keys must name at least one word, unless always = true")
    return LoreEntry(name=name, keys=keys, text=text, **values)


def _strings(value: object, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise LoreError(f"{where} must be a list of words or phrases")
    return tuple(v for v in value if v.strip())


def _no_unknown(data: dict[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(set(data) - known)
    if unknown:
        raise LoreError(f"{where} has no field {unknown[0]!r} (its fields: {', '.join(sorted(known))})")


def as_dict(lorebook: Lorebook) -> dict[str, Any]:
    return {
        "scan_depth": lorebook.scan_depth,
        "budget": lorebook.budget,
        "entry": [
            {
                "name": e.name,
                "keys": list(e.keys),
                "text": e.text,
                "secondary": list(e.secondary),
                "priority": e.priority,
                "enabled": e.enabled,
                "always": e.always,
                "case_sensitive": e.case_sensitive,
            }
            for e in lorebook.entries
        ],
    }


def to_toml(lorebook: Lorebook) -> str:
    data = as_dict(lorebook)
    lines = [
        "# A scriptorium lorebook (docs/lorebook-format.md)",
        f"scan_depth = {data['scan_depth']}",
        f"budget = {data['budget']}",
    ]
    for entry in data["entry"]:
        lines += ["", "[[entry]]"]
        lines += [f"{name} = {_toml_value(value)}" for name, value in entry.items()]
    return "\n".join(lines) + "\n"


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_string(v, multiline=False) for v in value) + "]"
    return _toml_string(str(value), multiline=True)


def _toml_string(text: str, *, multiline: bool) -> str:
    """A multi-line literal string when the text can be one (no ''' inside, no control
    character but tab and newline), as written by hand; else a basic string, escaped."""
    plain = (
        "'''" not in text and not text.endswith("'") and all(c in "\t\n" or (c >= " " and c != "\x7f") for c in text)
    )
    if multiline and plain and "\n" in text:
        return "'''\n" + text + "'''"  # TOML drops a newline right after the opening quotes
    if plain and "'" not in text and "\n" not in text:
        return "'" + text + "'"
    # JSON's escapes are TOML's, but for DEL, which TOML wants escaped and JSON leaves.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


# ---------------------------------------------------------------- in a session file


def fired_from_json(items: object) -> tuple[Fired, ...]:
    """A generation's record of the lore that fired. A record that is not one only loses
    itself (it says what the prompt held; the text is elsewhere), never the session."""
    fired = []
    for item in items if isinstance(items, list) else ():
        if (
            isinstance(item, dict)
            and isinstance(item.get("name"), str)
            and isinstance(item.get("key"), str)
            and type(item.get("tokens")) is int
            and isinstance(item.get("kept"), bool)
        ):
            fired.append(Fired(item["name"], item["key"], item["tokens"], item["kept"]))
    return tuple(fired)
