"""The session file as written: JSON that reads back into an equal session, laid out as
json.dumps(indent=1) lays it out, except each token record, compact on a line of its own."""

from __future__ import annotations

import json
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scriptorium.app.sessions import format as session_format
from scriptorium.app.sessions import (
    BiasRecord,
    ChatSession,
    ChatTurn,
    DraftSession,
    FileStamp,
    Generation,
    LoraRef,
    ModelRef,
    ModelSpan,
    TokenRecord,
)
from scriptorium.app.sessions.records import OUTCOMES
from scriptorium.app.sessions.suggestion import KeptVersion, Suggestion, read_suggestion

PROPERTY = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

TEXTS = st.one_of(
    st.text(max_size=16),
    st.sampled_from(
        [
            "",
            'quote " and \\ backslash',
            "two\nlines\r\n",
            "nul \x00 and \x1f",
            "è già 🙂 \u2028 \ufeff",
            '}, {"id": 1}',
        ]
    ),
)
FLOATS = st.floats(allow_nan=False)
INTS = st.integers(-(2**40), 2**40)


def _token_records() -> st.SearchStrategy:
    alternative = st.tuples(INTS, TEXTS, FLOATS, st.booleans())  # (id, text, p, banned)
    record = st.builds(
        TokenRecord,
        id=INTS,
        text=TEXTS,
        p=FLOATS,
        top=st.lists(alternative, max_size=4).map(tuple),
        piece=st.binary(max_size=4),
    )
    return st.one_of(st.none(), st.just([]), st.lists(record, max_size=6))


@st.composite
def _generations(draw: st.DrawFn, json_values: st.SearchStrategy) -> list[Generation]:
    objects = st.dictionaries(st.text(max_size=8), json_values, max_size=4)
    optional = st.one_of(st.none(), TEXTS)
    model = st.builds(
        ModelRef,
        path=TEXTS,
        name=TEXTS,
        size=INTS,
        sha256=optional,
        quantization=TEXTS,
        architecture=TEXTS,
        parameters=INTS,
    )
    a_lora = st.builds(LoraRef, path=TEXTS, name=TEXTS, size=INTS, sha256=optional, scale=FLOATS)
    lora = st.one_of(st.none(), a_lora)
    bias = st.builds(
        BiasRecord,
        ban_byte_tokens=st.booleans(),
        summary=TEXTS,
        entries=st.lists(st.tuples(INTS, FLOATS), max_size=3).map(tuple),
    )
    generations = []
    for number in range(1, draw(st.integers(0, 4)) + 1):
        generations.append(
            Generation(
                id=f"g{number}",
                kind=draw(st.sampled_from(["continue", "chat"])),
                started_at=draw(TEXTS),
                model=draw(model),
                lora=draw(lora),
                other_loras=tuple(draw(st.lists(a_lora, max_size=2))),
                sampler=draw(objects),
                bias=draw(bias),
                seed=draw(st.one_of(st.none(), INTS)),
                anchor=draw(st.one_of(st.none(), INTS)),
                finished_at=draw(optional),
                text=draw(TEXTS),
                stop_reason=draw(optional),
                prompt_tokens=draw(st.one_of(st.none(), INTS)),
                completion_tokens=draw(st.one_of(st.none(), INTS)),
                outcome=draw(st.sampled_from(OUTCOMES)),
                accepted_text=draw(optional),
                decided_at=draw(optional),
                tokens=draw(_token_records()),
                arithmetic=draw(st.one_of(st.none(), objects)),
            )
        )
    return generations


@st.composite
def _sessions(draw: st.DrawFn, json_values: st.SearchStrategy) -> DraftSession | ChatSession:
    common = dict(
        id=draw(TEXTS),
        title=draw(TEXTS),
        created_at=draw(TEXTS),
        updated_at=draw(TEXTS),
        generations=draw(_generations(json_values)),
        memory=draw(TEXTS),
        note=draw(TEXTS),
        note_depth=draw(st.integers(0, 100)),
    )
    if draw(st.booleans()):
        text = draw(TEXTS)
        stamp = draw(st.one_of(st.none(), st.builds(FileStamp, size=INTS, mtime_ns=INTS, sha256=TEXTS)))
        spans = [ModelSpan(start=0, end=len(text), generation="g1")] if text and draw(st.booleans()) else []
        writers = st.lists(st.tuples(st.one_of(st.none(), TEXTS), INTS), max_size=3)
        versions = st.lists(st.builds(KeptVersion, text=TEXTS, label=TEXTS, writers=writers), min_size=2, max_size=3)
        suggestion = st.builds(
            Suggestion,
            anchor=INTS,
            text=st.text(min_size=1, max_size=8),
            writers=writers,
            from_cursor=st.booleans(),
            replaces=INTS,
            before=TEXTS,
            after=TEXTS,
            versions=st.one_of(st.just([]), versions),
        ).map(lambda suggestion: replace(suggestion, version=1 if suggestion.versions else 0))
        return DraftSession(
            **common,
            text=text,
            draft_path=draw(st.one_of(st.none(), TEXTS)),
            draft_stamp=stamp,
            spans=spans,
            suggestion=draw(st.one_of(st.none(), suggestion)),
        )
    turns = st.builds(
        ChatTurn,
        role=st.sampled_from(["user", "assistant"]),
        content=TEXTS,
        at=TEXTS,
        generation=st.one_of(st.none(), TEXTS),
    )
    return ChatSession(**common, system_prompt=draw(TEXTS), turns=draw(st.lists(turns, max_size=3)))


def _expected_layout(session: DraftSession | ChatSession) -> str:
    """json.dumps(indent=1) of the session, each token record then put back compact on its line.
    The records are numbered first: inside a "tokens" list, the line of number i is record i."""
    data = session_format.to_dict(session)
    records = [generation["tokens"] or [] for generation in data["generations"]]
    for generation in data["generations"]:
        if generation["tokens"]:
            generation["tokens"] = list(range(len(generation["tokens"])))
    lines, generation_index, inside = [], -1, False
    for line in json.dumps(data, ensure_ascii=False, indent=1).split("\n"):
        if line.startswith('   "tokens": '):  # one a generation, at its members' depth
            generation_index, inside = generation_index + 1, line.endswith("[")
        elif inside and line.startswith("    "):
            number = int(line.strip().rstrip(","))
            line = (
                "    "
                + json.dumps(records[generation_index][number], ensure_ascii=False)
                + line[len(line.rstrip(",")) :]
            )
        else:
            inside = False
        lines.append(line)
    return "\n".join(lines) + "\n"


def test_any_session_reads_back_equal_and_is_laid_out_as_documented(json_values: st.SearchStrategy) -> None:
    @PROPERTY
    @given(session=_sessions(json_values))
    def round_trip(session: DraftSession | ChatSession) -> None:
        text = session_format.dumps(session)
        assert json.loads(text) == session_format.to_dict(session)
        assert session_format.loads(text) == session
        assert text == _expected_layout(session)

    round_trip()


def test_each_token_record_is_one_compact_line(rich_draft: DraftSession) -> None:
    text = session_format.dumps(rich_draft)
    assert text == _expected_layout(rich_draft)
    assert (
        '\n    {"id": 100, "text": "", "p": 0.5, "top": [[100, "", 0.5, false], [16001, "<0x01>", 0.0123457, true]]},\n'
        in text
    )
    assert '\n   "tokens": null,\n' in text  # a generation without records: as indent=1 writes it


def test_the_split_content_is_the_whole_file(chat: ChatSession) -> None:
    encoded = session_format.encode(chat, updated_at="2030-01-01T00:00:00+00:00")
    assert encoded.updated_at == b'"2030-01-01T00:00:00+00:00"'
    assert json.loads(encoded.text)["updated_at"] == "2030-01-01T00:00:00+00:00"
    assert session_format.encode(chat).text == session_format.dumps(chat)
    assert session_format.encode(chat).fingerprint() == encoded.fingerprint()  # the stamp is left out


def test_a_sampled_tokens_small_probability_is_recorded_as_it_was() -> None:
    import pytest

    from scriptorium.app.sessions.records import TokenRecord
    from scriptorium.inference.core.events import Candidate, TokenEvent

    # A bias or a high temperature can draw a token the model gave 3.2e-7: recorded to six
    # decimal places it would read 0, "impossible", in the session and to any reader of it.
    event = TokenEvent(
        index=0,
        id=5,
        text=" raro",
        p=3.2e-7,
        elapsed_ms=1.0,
        kv_tokens=3,
        top=(Candidate(9, " casa", 0.61234567, False), Candidate(5, " raro", 3.2e-7, False)),
    )
    record = TokenRecord.from_event(event)
    assert record.p == pytest.approx(3.2e-7, rel=1e-6) and record.top[1][2] == pytest.approx(3.2e-7, rel=1e-6)
    assert record.top[0][2] == 0.612346  # six significant digits, as before for p above 0.1


def test_a_character_in_byte_tokens_is_recorded_with_the_bytes_a_reader_joins() -> None:
    """With the byte ban lifted, "è" is <0xC3> <0xA8>: the file kept a token of text "" and
    one of text "è", and nothing said which bytes made the character."""
    from scriptorium.app.sessions.records import TokenRecord
    from scriptorium.inference.core.events import TokenEvent

    def event(token_id: int, text: str, piece: bytes) -> TokenEvent:
        return TokenEvent(index=0, id=token_id, text=text, p=0.5, top=(), elapsed_ms=1.0, kv_tokens=3, piece=piece)

    records = [
        TokenRecord.from_event(event(16195, "", b"\xc3")),
        TokenRecord.from_event(event(16168, "è", b"\xa8")),
        TokenRecord.from_event(event(9, " casa", " casa".encode())),
    ]
    lines = [json.loads(session_format.encode_token(record)) for record in records]
    assert [line.get("bytes") for line in lines] == [[0xC3], [0xA8], None]  # a token whose text is its bytes: none
    assert bytes(lines[0]["bytes"] + lines[1]["bytes"]).decode("utf-8") == "è"


def test_a_session_without_a_suggestion_or_with_a_damaged_one_loads_without_it(rich_draft: DraftSession) -> None:
    """Sessions written before the suggestion was kept have none; a damaged one loses only the suggestion."""
    data = session_format.to_dict(rich_draft)
    assert "suggestion" not in data["draft"]
    for damaged in ({"anchor": "3", "text": "x"}, {"text": "x"}, {"anchor": 1, "text": ""}, [1, 2], "x"):
        data["draft"]["suggestion"] = damaged
        assert session_format.from_dict(data).suggestion is None
    assert read_suggestion({"anchor": 1, "text": "x", "writers": [["g1", 0], "bad", [1, 0]]}).writers == [("g1", 0)]
    # Versions that do not add up: the one on screen still comes back, alone.
    alone = read_suggestion({"anchor": 1, "text": "x", "versions": [{"text": "x"}], "version": 4})
    assert alone is not None and alone.text == "x" and alone.versions == [] and alone.version == 0


def test_a_suggestion_fits_only_where_the_draft_around_it_is_as_it_was() -> None:
    suggestion = Suggestion.in_draft("The sea was calm. Then", 17, " The waves", [("g1", 0)])
    assert suggestion.fits("The sea was calm. Then")
    assert not suggestion.fits("Preface. The sea was calm. Then")  # put back by offset: text before it moved it
    assert not suggestion.fits("The sea was grey. Then") and not suggestion.fits("The sea was calm. Now")
    assert not suggestion.fits("The sea")


def test_a_healed_step_and_the_healed_text_read_back_and_older_files_load_without_them(
    rich_draft: DraftSession,
) -> None:
    from scriptorium.app.sessions.records import TokenRecord
    from scriptorium.inference.core.events import Candidate, Healing, TokenEvent

    healing = Healing(rest=" mo", allowed_count=41, mass=0.0123456789, allowed=(Candidate(9, " molo", 0.0121, False),))
    event = TokenEvent(
        index=0,
        id=9,
        text="lo",
        p=0.0121,
        elapsed_ms=1.0,
        kv_tokens=3,
        piece=b" molo",
        top=(Candidate(7, "zzo", 0.24, False),),
        healing=healing,
    )
    generation = rich_draft.generations[0]
    generation.tokens = [TokenRecord.from_event(event)]
    generation.healed = " mo"
    line = json.loads(session_format.encode_token(generation.tokens[0]))
    assert line["healing"] == {
        "rest": " mo",
        "allowed_tokens": 41,
        "allowed_mass": 0.0123457,
        "allowed": [[9, " molo", 0.0121, False]],
    }
    again = session_format.loads(session_format.dumps(rich_draft))
    assert again == rich_draft and again.generations[0].healed == " mo"
    # A file from before healing: no `healed`, no `healing`, no `heal` among the settings.
    data = json.loads(session_format.dumps(rich_draft))
    del data["generations"][0]["healed"]
    del data["generations"][0]["tokens"][0]["healing"]
    data["generations"][0]["sampler"].pop("heal", None)
    older = session_format.loads(json.dumps(data))
    assert older.generations[0].healed == "" and older.generations[0].tokens[0].healing is None
    assert older.generations[0].sampler_values()["heal"] is False  # its prompts were not healed
