"""Property-based fuzzing of the session reader (see tests/test_fuzz_parsers.py for the
other readers): whatever a session file holds, the store returns a session or raises a
one-line SessionError and moves the damaged file aside, in time."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scriptorium.app.sessions import format as session_format
from scriptorium.app.sessions import ChatSession, DraftSession, SessionError, SessionStore

FUZZ = settings(
    max_examples=200,
    deadline=timedelta(seconds=3),
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every place in a JSON document where a value sits, as a key/index path."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, prefix + (index,))
    return found


def _replaced(document: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(document, dict):
        return {**document, head: _replaced(document[head], rest, new)}
    return [_replaced(item, rest, new) if index == head else item for index, item in enumerate(document)]


def _check(store: SessionStore, data: bytes) -> None:
    path = store.directory / "fuzzed.json"
    path.write_bytes(data)
    try:
        session = store.load("fuzzed")
    except SessionError as error:
        assert "\n" not in str(error)
        assert not path.exists() or "newer scriptorium" in str(error)  # moved aside, or left for a newer version
    else:
        assert isinstance(session, (DraftSession, ChatSession))
        session_format.loads(session_format.dumps(session))  # what was read can be written and read again
    for aside in store.directory.glob("fuzzed.json*"):
        aside.unlink()


def test_the_session_reader_fails_only_in_its_own_words(
    store: SessionStore, rich_draft: DraftSession, chat: ChatSession, json_values: st.SearchStrategy
) -> None:
    store.directory.mkdir(parents=True, exist_ok=True)
    seeds = [session_format.to_dict(rich_draft), session_format.to_dict(chat)]
    places = [(seed, path) for seed in seeds for path in _paths(seed)]

    @FUZZ
    @given(place=st.sampled_from(places), value=json_values)
    def one_field_changed(place: tuple[Any, tuple], value: Any) -> None:
        seed, path = place
        _check(store, json.dumps(_replaced(seed, path, value)).encode())

    @FUZZ
    @given(
        seed=st.sampled_from(seeds),
        cut=st.integers(0, 4000),
        edits=st.lists(st.tuples(st.integers(0, 4000), st.integers(0, 255)), max_size=6),
    )
    def bytes_damaged(seed: Any, cut: int, edits: list[tuple[int, int]]) -> None:
        data = bytearray(json.dumps(seed, ensure_ascii=False).encode())
        for offset, value in edits:
            if offset < len(data):
                data[offset] = value
        _check(store, bytes(data[:cut]))

    @FUZZ
    @given(depth=st.integers(1, 300_000), opener=st.sampled_from(["[", '{"a":']))
    def nested(depth: int, opener: str) -> None:
        _check(store, (opener * depth).encode())

    one_field_changed()
    bytes_damaged()
    nested()
