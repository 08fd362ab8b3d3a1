"""A generation written with speculative decoding records it: what was drafted and accepted, and
on each accepted token that it was guessed; sessions from before load; the export sums it."""

from __future__ import annotations

import json
from dataclasses import replace

import yaml

from scriptorium.app.sessions import SessionStore
from scriptorium.app.sessions.export import render_markdown
from scriptorium.app.sessions.format import dumps, loads
from scriptorium.inference.core.events import (
    NO_PROBABILITY,
    Candidate,
    GenerationDone,
    KVCacheUsage,
    SpeculationCounts,
    TokenEvent,
    has_probability,
)
from scriptorium.inference.core.settings import LogitBias, preset

COUNTS = SpeculationCounts(guesser="lookup", drafted=12, accepted=9, passes=3)


def written(store: SessionStore, model_ref, counts: SpeculationCounts | None):  # type: ignore[no-untyped-def]
    session = store.create_draft(title="t", text="Start.")
    generation = session.start_generation(
        model=model_ref, lora=None, settings=preset("prose"), bias=LogitBias(), byte_token_ids=(), anchor=6
    )
    for index, (word, drafted) in enumerate(((" Il", False), (" cane", True))):
        top = (Candidate(100 + index, word, 0.5, False),)
        generation.add_token(
            TokenEvent(index, 100 + index, word, 0.5, top, 1.0, 7 + index, word.encode(), drafted=drafted)
        )
    kv = KVCacheUsage(tokens=8, n_ctx=512, bytes_allocated=None, bytes_used=None, bytes_per_token=None)
    done = GenerationDone("length", 6, 2, 0, 1.0, 2.0, 3.0, 4.0, 5.0, kv, text=" Il cane", speculation=counts)
    generation.finish(done)
    session.accept(generation, generation.text, len(session.text))
    return session


def test_speculation_survives_the_file_and_marks_the_guessed_tokens(store: SessionStore, model_ref) -> None:  # type: ignore[no-untyped-def]
    session = written(store, model_ref, COUNTS)
    data = json.loads(dumps(session))["generations"][0]
    assert data["speculation"] == COUNTS.as_dict()
    assert ["drafted" in token for token in data["tokens"]] == [False, True]
    again = loads(dumps(session)).generations[0]
    assert again.speculation == COUNTS.as_dict() and [t.drafted for t in again.tokens or ()] == [False, True]


def test_a_session_from_before_or_without_speculation_has_none(store: SessionStore, model_ref) -> None:  # type: ignore[no-untyped-def]
    plain = json.loads(dumps(written(store, model_ref, None)))["generations"][0]
    assert "speculation" not in plain
    data = json.loads(dumps(written(store, model_ref, COUNTS)))
    del data["generations"][0]["speculation"]
    for token in data["generations"][0]["tokens"]:
        token.pop("drafted", None)
    generation = loads(json.dumps(data)).generations[0]
    assert generation.speculation is None and not any(t.drafted for t in generation.tokens or ())


def test_the_export_sums_what_speculation_accepted(store: SessionStore, model_ref) -> None:  # type: ignore[no-untyped-def]
    head, _, _ = render_markdown(written(store, model_ref, COUNTS)).removeprefix("---\n").partition("\n---\n")
    meta = yaml.safe_load(head)
    assert meta["speculation"] == {"generations": 1, "guessers": ["lookup"], "drafted": 12, "accepted": 9}
    head, _, _ = render_markdown(written(store, model_ref, None)).removeprefix("---\n").partition("\n---\n")
    assert "speculation" not in yaml.safe_load(head)
    assert replace(COUNTS, passes=0).tokens_per_pass == 0.0


def test_a_servers_token_accepted_from_its_draft_is_recorded_with_no_probability(
    store: SessionStore, model_ref
) -> None:  # type: ignore[no-untyped-def]
    """A llama-server gives the tokens it accepted from its draft no probabilities: the file says
    `"p": null` (JSON has no NaN, and 1.0 would be a number the model never gave), and reads back as none."""
    session = store.create_draft(title="t", text="Start.")
    generation = session.start_generation(
        model=model_ref, lora=None, settings=preset("prose"), bias=LogitBias(), byte_token_ids=(), anchor=6
    )
    generation.add_token(TokenEvent(0, 100, " Il", NO_PROBABILITY, (), 1.0, 7, b" Il", drafted=True))
    data = json.loads(dumps(session))["generations"][0]["tokens"][0]
    assert data["p"] is None and data["drafted"] is True and data["top"] == []
    (again,) = loads(dumps(session)).generations[0].tokens or ()
    assert again.drafted and not has_probability(again.p)
