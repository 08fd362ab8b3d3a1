"""Token lines kept between saves: a save encodes only the records added since the last
one, and re-encodes whatever the cache cannot vouch for."""

from __future__ import annotations

from typing import Callable

import pytest

from scriptorium.app.sessions import format as session_format
from scriptorium.app.sessions import DraftSession, Generation, SessionStore, TokenRecord
from scriptorium.app.sessions.encoding import SessionLines, TokenLines

LONG = 300
AddTokens = Callable[[Generation, int], None]


@pytest.fixture
def encoded(monkeypatch: pytest.MonkeyPatch) -> list[TokenRecord]:
    """Every record encoded from here on, in order."""
    seen: list[TokenRecord] = []
    encode = session_format.encode_token

    def counting(token: TokenRecord) -> str:
        seen.append(token)
        return encode(token)

    monkeypatch.setattr(session_format, "encode_token", counting)
    return seen


@pytest.fixture
def long_draft(store: SessionStore, generate: Callable[..., Generation]) -> DraftSession:
    session = store.create_draft(title="Long", text="It began.")
    generate(session, " ".join(f"w{i}" for i in range(LONG)), anchor=len(session.text), with_tokens=True)
    generate(session, "Short one.", with_tokens=False)
    return session


def _on_disk(store: SessionStore, session: DraftSession) -> str:
    return store.path_for(session.id).read_text(encoding="utf-8")


def test_a_second_save_encodes_only_the_new_tokens(
    store: SessionStore, long_draft: DraftSession, encoded: list[TokenRecord], add_tokens: AddTokens
) -> None:
    generation = long_draft.generations[0]
    assert store.save(long_draft)
    assert len(encoded) == LONG
    encoded.clear()
    add_tokens(generation, 3)
    assert store.save(long_draft)
    assert encoded == generation.tokens[-3:]
    assert _on_disk(store, long_draft) == session_format.dumps(long_draft)  # what a save without the cache writes
    encoded.clear()
    assert not store.save(long_draft)  # nothing changed: nothing encoded, nothing written
    assert encoded == []


def test_a_loaded_session_encodes_only_what_is_added_after_loading(
    store: SessionStore, long_draft: DraftSession, encoded: list[TokenRecord], add_tokens: AddTokens
) -> None:
    store.save(long_draft)
    other = SessionStore(store.directory)
    loaded = other.load(long_draft.id)
    encoded.clear()
    add_tokens(loaded.generations[0], 2)
    assert other.save(loaded)
    assert encoded == loaded.generations[0].tokens[-2:]


def test_a_replaced_token_list_or_record_is_encoded_again(
    store: SessionStore, long_draft: DraftSession, encoded: list[TokenRecord]
) -> None:
    generation = long_draft.generations[0]
    store.save(long_draft)
    encoded.clear()
    generation.tokens = list(generation.tokens or ())  # equal content, another list: the cache cannot vouch for it
    store.save(long_draft)
    assert len(encoded) == LONG

    encoded.clear()
    tokens = generation.tokens
    tokens[5] = TokenRecord(id=7, text=" changed", p=0.5)  # the same list, a record replaced in place
    assert store.save(long_draft)
    assert len(encoded) == LONG
    assert '{"id": 7, "text": " changed", "p": 0.5, "top": []}' in _on_disk(store, long_draft)

    encoded.clear()
    del tokens[-10:]  # shorter than what was encoded
    assert store.save(long_draft)
    assert len(encoded) == LONG - 10
    assert _on_disk(store, long_draft) == session_format.dumps(long_draft)


def test_generations_gone_from_the_session_leave_the_cache(long_draft: DraftSession) -> None:
    cache = TokenLines()
    session_format.encode(long_draft, cache)
    assert len(cache) == 1  # the generation without tokens has no entry
    long_draft.generations.pop(0)
    session_format.encode(long_draft, cache)
    assert len(cache) == 0


def test_only_the_sessions_used_last_keep_their_lines() -> None:
    sessions = SessionLines(kept=2)
    first = sessions.for_session("a")
    sessions.for_session("b")
    assert sessions.for_session("a") is first
    sessions.for_session("c")  # "b" was used longest ago
    assert "a" in sessions and "c" in sessions and "b" not in sessions
    sessions.forget("a")
    assert "a" not in sessions


def test_deleting_a_session_forgets_its_lines(
    store: SessionStore, long_draft: DraftSession, encoded: list[TokenRecord]
) -> None:
    store.save(long_draft)
    store.delete(long_draft.id)
    encoded.clear()
    store.save(long_draft)
    assert len(encoded) == LONG
