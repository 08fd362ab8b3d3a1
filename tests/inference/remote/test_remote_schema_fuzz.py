"""Property-based fuzzing of llama-server's answers (remote_schema.py): whatever a server
sends, the schema accepts it or refuses it in one line naming the field; and whatever it
accepts, the backend reads without a Python error (connection facts, a whole generation
streamed). The answers are drawn near each route's declared shape, each field well-formed
or of any other JSON type, so both sides of every check are reached.

Bounded: a small number of examples, the same ones every run (derandomize)."""

from __future__ import annotations

from typing import Any, Iterator

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scriptorium.inference.remote import remote
from scriptorium.inference.core.errors import ScriptoriumError
from scriptorium.inference.core.events import GenerationDone, KVCacheUsage
from scriptorium.inference.remote.remote_schema import (
    ROUTES,
    AnswerMismatch,
    Anything,
    Either,
    Flag,
    ListOf,
    Number,
    Record,
    Text,
    Unless,
    Whole,
    checked_answer,
)
from scriptorium.inference.remote.remote_stream import run_remote_generation
from scriptorium.inference.core.settings import PRESETS, LogitBias

FUZZ = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**12), 10**12) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def near(shape: Any) -> st.SearchStrategy[Any]:
    """Values of `shape` mostly, with any JSON value now and then in each place."""
    if isinstance(shape, Whole):
        fits = st.integers(shape.minimum, shape.maximum if shape.maximum is not None else 10**9)
    elif isinstance(shape, Number):
        fits = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-(10**6), 10**6)
    elif isinstance(shape, Text):
        fits = st.text(max_size=12)
    elif isinstance(shape, Flag):
        fits = st.booleans()
    elif isinstance(shape, Anything):
        return ANY_JSON
    elif isinstance(shape, ListOf):
        fits = st.lists(near(shape.item), max_size=4)
    elif isinstance(shape, Unless):
        return near(shape.shape)
    elif isinstance(shape, Either):
        fits = st.one_of([near(option) for option in shape.shapes])
    else:
        assert isinstance(shape, Record)
        fits = st.fixed_dictionaries({}, optional={key: near(field) | st.none() for key, field in shape.fields.items()})
    return st.one_of(fits, fits, fits, ANY_JSON)


def _accepted(route: str, answer: Any) -> Any:
    try:
        return checked_answer(route, answer)
    except AnswerMismatch as mismatch:
        assert "\n" not in str(mismatch)
        return None


@FUZZ
@given(route=st.sampled_from(sorted(ROUTES)), answer=ANY_JSON)
def test_any_answer_is_accepted_or_refused_in_one_line(route: str, answer: Any) -> None:
    _accepted(route, answer)


@FUZZ
@given(
    props=near(ROUTES["/props"]),
    models=near(ROUTES["/v1/models"]),
    adapters=near(ROUTES["/lora-adapters"]),
    slots=near(ROUTES["/slots"]),
)
def test_what_the_schema_accepts_at_connection_is_read_without_error(
    props: Any, models: Any, adapters: Any, slots: Any
) -> None:
    props, models = _accepted("/props", props), _accepted("/v1/models", models)
    adapters, slots = _accepted("/lora-adapters", adapters), _accepted("/slots", slots)
    if props is not None:
        remote._served(props)
        remote._one_slot(props, slots)
        remote._model_identity(props)
        meta = remote._model_meta(models)
        facts = remote._facts(props, meta, (), False)
        if adapters:
            remote._adapter_facts(adapters[0], facts)
    remote._slot_tokens(slots)
    remote._adapter_names(adapters)


class _Client:
    url = "http://fuzz"

    def __init__(self, chunks: list[Any]) -> None:
        self.chunks = chunks

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return {"tokens": [1, 5, 6]}

    def stream(self, path: str, body: dict[str, Any], should_stop: Any) -> Iterator[Any]:
        yield from self.chunks


class _Backend:
    n_ctx, n_vocab, byte_token_ids, server_fields, build, kv_tokens, bos_text = 64, 300, (), frozenset(), "b", None, ""

    def __init__(self, chunks: list[Any]) -> None:
        self.client = _Client(chunks)

    def check_unchanged(self) -> None:
        pass

    def lora_request(self) -> list[Any]:
        return []

    def kv_usage(self) -> KVCacheUsage:
        return KVCacheUsage(
            tokens=self.kv_tokens, n_ctx=self.n_ctx, bytes_allocated=None, bytes_used=None, bytes_per_token=None
        )


@FUZZ
@given(chunks=st.lists(near(ROUTES["/completion"]), max_size=4))
def test_a_stream_the_schema_accepts_is_read_without_error(chunks: list[Any]) -> None:
    accepted = []
    for chunk in chunks:
        if (checked := _accepted("/completion", chunk)) is None:
            break  # the client raises there: what came before is what the generation read
        accepted.append(checked)
    try:
        events = list(
            run_remote_generation(
                _Backend(accepted), "La", PRESETS["greedy"], LogitBias(), top_n=3, should_stop=None, special=False
            )
        )
    except ScriptoriumError:
        return  # a stream that ends early is said in one line
    assert isinstance(events[-1], GenerationDone)
