"""docs/session-format.md against the declarations of the session's fields (members.py) and
against the writer: every key a session file holds is documented in its table (or, for an
object's members, in its row), and every key documented is declared and written. A new
field then cannot land in the format without its line in the document, nor outlive its
removal there."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from scriptorium.app.sessions import ChatSession, DraftSession, Generation, LoraRef, TokenRecord
from scriptorium.app.sessions import format as session_format
from scriptorium.app.sessions.members import keys, members
from scriptorium.app.sessions.model import Session
from scriptorium.app.sessions.token_records import HealingRecord
from scriptorium.app.sessions.suggestion import KeptVersion, Suggestion
from scriptorium.inference.window.lore import Fired, LoreEntry, Lorebook

DOC = Path(__file__).resolve().parents[2] / "docs" / "session-format.md"

TABLES = {
    "top level": "## Top level",
    "window": "## `window`",
    "draft": "## `draft`",
    "chat": "## `chat`",
    "generation": "## A generation",
}
"""Which heading's table documents which object of the file."""


def documented_rows(section: str) -> dict[str, str]:
    """key -> its row's text, from the first table after the section's heading."""
    text = DOC.read_text(encoding="utf-8")
    start = next(i for i, line in enumerate(text.splitlines()) if line.startswith(TABLES[section]))
    rows: dict[str, str] = {}
    seen_table = False
    for line in text.splitlines()[start + 1 :]:
        if line.startswith("|"):
            seen_table = True
            first, _, rest = line.strip("|").partition("|")
            for key in re.findall(r"`([a-z_]+)`", first):
                rows[key] = rest
        elif seen_table:
            break
    return rows


def full_draft(rich_draft: DraftSession, lora_ref: LoraRef, token: TokenRecord) -> DraftSession:
    """rich_draft with every optional member set: a suggestion with versions, a lorebook,
    and a generation on a server with adapters, lore, token records saying what the chain did."""
    g = rich_draft.generations[0]
    rich_draft.generations[0] = replace(
        g,
        tokens=[token],
        origin="llama-server b1 at http://127.0.0.1:8080",
        other_loras=(lora_ref,),
        lore=(Fired(name="Lucia", key="Lucia", tokens=4),),
        arithmetic={"flash_attn": False, "type_k": "f16", "type_v": "f16", "n_threads": 1, "n_threads_batch": 2},
        speculation={"guesser": "lookup", "drafted": 4, "accepted": 3, "passes": 1},
        healed=" mo",
        fim_after=40,
    )
    lore = Lorebook(entries=(LoreEntry(name="Lucia", keys=("Lucia",), text="Lucia is a sailor."),))
    suggestion = Suggestion(
        anchor=0, text="x", before="", after="", versions=[KeptVersion(text="x"), KeptVersion(text="y")], version=0
    )
    return replace(rich_draft, lore=lore, suggestion=suggestion)


def keys_written(data: dict[str, Any]) -> dict[str, set[str]]:
    return {
        "top level": set(data),
        "window": set(data["window"]),
        "draft": set(data.get("draft", {})),
        "chat": set(data.get("chat", {})),
        "generation": set().union(*(set(g) for g in data["generations"])),
    }


@pytest.fixture
def written(
    rich_draft: DraftSession, chat: ChatSession, lora_ref: LoraRef, token_with_every_field: TokenRecord
) -> dict[str, set[str]]:
    draft = full_draft(rich_draft, lora_ref, token_with_every_field)
    shared_lore = replace(draft, lore=Lorebook(), lore_path="/home/ana/lore.toml")
    chat = replace(chat, unsent="Un'altra?")
    found: dict[str, set[str]] = {section: set() for section in TABLES}
    for session in (draft, shared_lore, chat):
        for section, written_keys in keys_written(session_format.to_dict(session)).items():
            found[section] |= written_keys
    return found


@pytest.mark.parametrize("section", list(TABLES))
def test_every_key_written_is_documented_and_every_key_documented_is_written(
    section: str, written: dict[str, set[str]]
) -> None:
    documented = set(documented_rows(section))
    assert written[section] - documented == set(), f"written but not in the {section} table of {DOC.name}"
    assert documented - written[section] == set(), f"documented in the {section} table but never written"


def test_the_members_of_each_object_are_named_in_its_row(
    rich_draft: DraftSession, lora_ref: LoraRef, token_with_every_field: TokenRecord
) -> None:
    data = session_format.to_dict(full_draft(rich_draft, lora_ref, token_with_every_field))
    generation = data["generations"][0]
    objects = {
        ("window", "lore"): data["window"]["lore"],
        ("draft", "file_stamp"): data["draft"]["file_stamp"] or {"size": 0, "mtime_ns": 0, "sha256": ""},
        ("draft", "suggestion"): data["draft"]["suggestion"],
        ("generation", "model"): generation["model"],
        ("generation", "lora"): generation["other_loras"][0],
        ("generation", "logit_bias"): generation["logit_bias"],
        ("generation", "arithmetic"): generation["arithmetic"],
        ("generation", "tokens"): generation["tokens"][0],
        ("generation", "lore"): generation["lore"][0],
        ("generation", "speculation"): generation["speculation"],
    }
    for (section, key), value in objects.items():
        row = documented_rows(section)[key]
        missing = [member for member in value if f"`{member}`" not in row and f'"{member}"' not in row]
        assert not missing, f"{section}.{key}: members written but not named in its row: {missing}"


DECLARED = {
    "top level": {"format", "version", "kind", *keys(Session), "window", "draft", "chat"},
    "window": set(keys(Session, "window")),
    "draft": set(keys(DraftSession, "draft")),
    "chat": set(keys(ChatSession, "chat")),
    "generation": set(keys(Generation)),
}
"""The keys each table documents, from the fields' declarations (format.py adds the format,
version and kind, and the objects the members are grouped in)."""


@pytest.mark.parametrize("section", list(TABLES))
def test_every_member_declared_is_documented_and_every_key_documented_is_declared(section: str) -> None:
    documented = set(documented_rows(section))
    assert DECLARED[section] - documented == set(), f"declared but not in the {section} table of {DOC.name}"
    assert documented - DECLARED[section] == set(), f"documented in the {section} table but declared nowhere"


SAME_AS = {"other_loras": "lora"}
"""A row that says its objects are as another row's ("each an object as `lora`'s")."""


def test_the_members_of_each_declared_record_are_named_in_its_row() -> None:
    """A member holding records (a generation's model, a chat's turns) names their members in its row;
    token records, read and written by their own fast path, too."""
    rows = {
        (section, record, group): documented_rows(section)
        for section, record, group in (
            ("window", Session, "window"),
            ("draft", DraftSession, "draft"),
            ("chat", ChatSession, "chat"),
            ("generation", Generation, None),
        )
    }
    named = [
        (rows_of[SAME_AS.get(m.key, m.key)], m.nested)
        for (_, record, group), rows_of in rows.items()
        for m in members(record)
        if m.group == group and m.nested is not None
    ]
    tokens = documented_rows("generation")["tokens"]
    named += [(tokens, TokenRecord), (tokens, HealingRecord)]
    assert len(named) >= 6
    for row, nested in named:
        missing = [key for key in keys(nested) if f"`{key}`" not in row and f'"{key}"' not in row]
        assert not missing, f"{nested.__name__}: members declared but not named in its row: {missing}"
