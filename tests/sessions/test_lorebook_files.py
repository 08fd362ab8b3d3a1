"""Lorebooks on disk: the shared TOML file (docs/lorebook-format.md), a session's own
entries and the lore each suggestion fired (docs/session-format.md), and the export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scriptorium.app import paths
from scriptorium.app.sessions import DraftSession, SessionStore
from scriptorium.app.sessions import format as session_format
from scriptorium.app.sessions.export import render_markdown
from scriptorium.app.sessions.lorebook_file import read_lorebook, to_toml, write_lorebook
from scriptorium.inference.window.lore import Fired, LoreEntry, LoreError, Lorebook

BOOK = Lorebook(
    (
        LoreEntry("Lucia", ("Lucia", "la ragazza"), "Lucia ha sedici anni.\nVive con la nonna.", priority=10),
        LoreEntry("La torre", ("/torr[ei]/",), "Dice: '''crollò''' nel 1902.", secondary=("vecchia",), enabled=False),
        LoreEntry(
            "Stile", (), 'Frasi brevi; "virgolette", \\ e \x7f e \x01 e tab\t.', always=True, case_sensitive=True
        ),
        LoreEntry("Rosa's", ("Rosa's",), "Finisce con un apice'"),
    ),
    scan_depth=40,
    budget=30,
)


def test_a_lorebook_file_round_trips(tmp_path: Path) -> None:
    path = write_lorebook(tmp_path / "lore.toml", BOOK)
    assert read_lorebook(path) == BOOK
    written = path.read_text(encoding="utf-8")
    # Written as an author would: a text with a line break as a multi-line literal string.
    assert "text = '''\nLucia ha sedici anni.\nVive con la nonna.'''\n" in written
    assert "keys = ['Lucia', 'la ragazza']" in written


def test_a_hand_written_lorebook_reads_with_defaults(tmp_path: Path) -> None:
    path = tmp_path / "lore.toml"
    path.write_text('[[entry]]\nkeys = ["Lucia"]\ntext = "Lucia ha sedici anni."\n', encoding="utf-8")
    book = read_lorebook(path)
    assert book == Lorebook((LoreEntry("Lucia", ("Lucia",), "Lucia ha sedici anni."),))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[[entry]\n", "is not valid TOML"),
        ('[[entry]]\nkey = ["Lucia"]\ntext = "x"\n', "entry 1: name must be some text"),  # no keys, no name
        ('[[entry]]\nkeys = ["Lucia"]\nkey = "x"\ntext = "x"\n', "entry 1 (Lucia) has no field 'key'"),
        (
            '[[entry]]\nkeys = ["Lucia"]\ntext = "x"\npriority = "alta"\n',
            "entry 1 (Lucia): priority must be a whole number, not 'alta'",
        ),
        (
            '[[entry]]\nkeys = ["/Luci(a/"]\ntext = "x"\n',
            "the key /Luci(a/ of lore entry '/Luci(a/' is not a valid regular expression: missing ), unterminated subpattern",
        ),
        ("scan_depth = 0\n", "lorebook scan_depth must be a whole number from 1"),
        ("depth = 3\n", "the lorebook has no field 'depth'"),
    ],
)
def test_a_lorebook_that_cannot_be_used_is_one_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "lore.toml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(LoreError) as caught:
        read_lorebook(path)
    assert "\n" not in str(caught.value) and str(caught.value).startswith(f"lorebook {path}")
    assert message in str(caught.value)


def test_a_missing_lorebook_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(LoreError, match="^lorebook not found: "):
        read_lorebook(tmp_path / "none.toml")


def test_a_session_with_entries_and_fired_lore_round_trips(store: SessionStore, rich_draft: DraftSession) -> None:
    rich_draft.lore, rich_draft.lore_path = BOOK, "/home/a/lore.toml"
    g1 = rich_draft.generations[0]
    g1.lore = (Fired("Lucia", "la ragazza", 12), Fired("Stile", "always", 9, kept=False))
    store.save(rich_draft)
    loaded = SessionStore().load(rich_draft.id)
    assert loaded == rich_draft and loaded.lore == BOOK and loaded.generations[0].lore == g1.lore
    data = json.loads((paths.sessions_dir() / f"{rich_draft.id}.json").read_text(encoding="utf-8"))
    assert data["window"]["lore_file"] == "/home/a/lore.toml" and data["window"]["lore"]["budget"] == 30
    assert data["generations"][0]["lore"][1] == {"name": "Stile", "key": "always", "tokens": 9, "kept": False}
    assert "lore" not in data["generations"][1]


def test_a_session_without_lore_is_written_as_before_and_older_ones_load(rich_draft: DraftSession) -> None:
    data = session_format.to_dict(rich_draft)
    assert set(data["window"]) == {"memory", "note", "note_depth"}
    assert all("lore" not in g for g in data["generations"])
    older = session_format.from_dict(json.loads(json.dumps(data)))
    assert older.lore == Lorebook() and older.lore_path is None and older.generations[0].lore == ()


def test_a_session_lorebook_that_cannot_be_used_is_named_and_a_bad_record_only_lost(rich_draft: DraftSession) -> None:
    data = session_format.to_dict(rich_draft)
    data["window"]["lore"] = {"entry": [{"keys": ["/(/"], "text": "x"}]}
    with pytest.raises(session_format.FormatError, match=r"^window.lore: the key /\(/ of lore entry"):
        session_format.from_dict(data)
    data["window"]["lore"] = {"entry": []}
    data["generations"][0]["lore"] = [{"name": "Lucia"}, {"name": "Marco", "key": "Marco", "tokens": 3, "kept": True}]
    assert session_format.from_dict(data).generations[0].lore == (Fired("Marco", "Marco", 3),)


def test_the_export_says_which_lore_each_suggestion_fired(rich_draft: DraftSession) -> None:
    assert "lore:" not in render_markdown(rich_draft)
    rich_draft.generations[0].lore = (Fired("Lucia", "Lucia", 12), Fired("Marco", "Marco", 30, kept=False))
    front = render_markdown(rich_draft).split("---\n")[1]
    assert "lore:\n- generation: g1\n  entries:\n  - Lucia\n  dropped:\n  - Marco\n" in front


def test_to_toml_escapes_what_a_literal_string_cannot_hold() -> None:
    text = to_toml(Lorebook((LoreEntry("x", ("x",), "a\x01b"),)))
    assert 'text = "a\\u0001b"' in text
