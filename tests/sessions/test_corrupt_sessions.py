"""Damaged session files: a one-line message, the file moved aside untouched, the rest still listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scriptorium.app.sessions import format as session_format
from scriptorium.app.sessions import ChatSession, DraftSession, SessionError, SessionStore

DAMAGED = {
    "truncated": b'{"format": "scriptorium-session", "version": 1, "kind": "dr',
    "garbage": b"\x00\xff\xfe not even text",
    "empty": b"",
    "wrong_format": json.dumps({"format": "something-else", "version": 1}).encode(),
    "list": b"[1, 2, 3]",
    "deep": b"[" * 200_000,  # the JSON parser gives up with a RecursionError
    # Past Python's 4,300-digit limit int() raises ValueError, not a JSONDecodeError.
    "huge_int": b"1" + b"0" * 5000,
}


def _broken_copies(store: SessionStore, session: DraftSession) -> dict[str, Path]:
    """Variants of a real session file with one field wrong each."""
    good = session_format.to_dict(session)
    variants: dict[str, object] = {
        "no_text": {**good, "draft": {k: v for k, v in good["draft"].items() if k != "text"}},
        "text_is_number": {**good, "draft": {**good["draft"], "text": 42}},
        "bad_outcome": {**good, "generations": [{**good["generations"][0], "outcome": "maybe"}]},
        "model_missing": {**good, "generations": [{k: v for k, v in good["generations"][0].items() if k != "model"}]},
        "size_is_bool": {
            **good,
            "generations": [{**good["generations"][0], "model": {**good["generations"][0]["model"], "size": True}}],
        },
        # Escaped as `\ud800` by json.dumps: it loaded, then every save and export failed with a traceback.
        "lone_surrogate": {**good, "draft": {**good["draft"], "text": "La casa \ud800 era"}},
    }
    files = {}
    for name, data in variants.items():
        files[name] = store.directory / f"{name}.json"
        files[name].write_text(json.dumps(data), encoding="utf-8")
    for name, raw in DAMAGED.items():
        files[name] = store.directory / f"{name}.json"
        files[name].write_bytes(raw)
    return files


def test_damaged_files_are_moved_aside_and_listing_goes_on(
    store: SessionStore, rich_draft: DraftSession, chat: ChatSession
) -> None:
    store.save(rich_draft)
    store.save(chat)
    files = _broken_copies(store, rich_draft)
    originals = {name: path.read_bytes() for name, path in files.items()}
    listed = store.list()
    assert sorted(s.id for s in listed) == sorted([rich_draft.id, chat.id])
    problems = store.take_problems()
    assert len(problems) == len(files) and store.take_problems() == []
    for problem in problems:
        message = str(problem)
        assert "\n" not in message and "is damaged" in message and "moved aside to" in message
    for name, path in files.items():
        assert not path.exists()
        [aside] = list(store.directory.glob(f"{name}.json.corrupt-*"))
        assert aside.read_bytes() == originals[name]  # untouched
    assert sorted(s.id for s in store.list()) == sorted([rich_draft.id, chat.id])  # aside files are not sessions
    assert store.take_problems() == []


@pytest.mark.parametrize("damage", sorted(DAMAGED))
def test_load_names_the_problem(store: SessionStore, damage: str) -> None:
    store.directory.mkdir(parents=True)
    (store.directory / "broken.json").write_bytes(DAMAGED[damage])
    with pytest.raises(
        SessionError, match=r"^session broken.json is damaged \(.+\); moved aside to broken.json.corrupt-"
    ):
        store.load("broken")


def test_resume_skips_a_damaged_latest(store: SessionStore, rich_draft: DraftSession) -> None:
    store.save(rich_draft)
    (store.directory / "zzz-newest.json").write_text("{not json", encoding="utf-8")
    assert store.latest() == rich_draft
    [problem] = store.take_problems()
    assert "invalid JSON at line 1" in str(problem)


def test_unreadable_file_is_reported_and_moved(
    store: SessionStore, rich_draft: DraftSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.save(rich_draft)
    path = store.path_for(rich_draft.id)
    from scriptorium.app.sessions import store as store_module

    real_read = store_module.read_regular_file

    def read_bytes(file: Path, limit: int) -> bytes:  # root reads past any mode bits: refused here
        if file.name == path.name:
            raise PermissionError(13, "Permission denied")
        return real_read(file, limit)

    monkeypatch.setattr(store_module, "read_regular_file", read_bytes)
    with pytest.raises(SessionError, match=r"is damaged \(Permission denied\); moved aside"):
        store.load(rich_draft.id)
    assert list(store.directory.glob("*.corrupt-*"))


def test_newer_format_is_reported_but_left_in_place(store: SessionStore, rich_draft: DraftSession) -> None:
    data = session_format.to_dict(rich_draft)
    data["version"] = session_format.VERSION + 1
    path = store.path_for(rich_draft.id)
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SessionError, match=f"newer scriptorium .format version {session_format.VERSION + 1}"):
        store.load(rich_draft.id)
    assert path.exists() and not list(store.directory.glob("*.corrupt-*"))


def test_a_file_outside_the_store_is_never_moved(tmp_path: Path, store: SessionStore) -> None:
    outside = tmp_path / "mine.json"
    outside.write_text("{oops", encoding="utf-8")
    with pytest.raises(SessionError, match="cannot read session .*mine.json: invalid JSON"):
        store.load(outside)
    assert outside.read_text(encoding="utf-8") == "{oops"


def test_text_escaped_as_surrogate_pairs_still_loads(store: SessionStore, rich_draft: DraftSession) -> None:
    """An emoji escaped as a pair (json.dumps' default) is text: it loads and saves."""
    rich_draft.set_text("Il polpo \U0001f419 nuota.")
    store.directory.mkdir(parents=True, exist_ok=True)
    path = store.directory / "escaped.json"
    path.write_text(json.dumps(session_format.to_dict(rich_draft)), encoding="utf-8")
    assert "\\ud83d\\udc19" in path.read_text(encoding="utf-8")
    loaded = store.load("escaped")
    assert loaded.text == "Il polpo \U0001f419 nuota."
    loaded.set_text(loaded.text + " Fine.")
    assert store.save(loaded)
