"""What llama-server's answers must look like, declared once per route and checked as each
answer arrives (ServerClient._json), before any of it is used.

The backend reads numbers from the server into arithmetic, `bytes()`, `int()` and list
indexes: a server of another make, a proxy or a broken build that answers with the wrong
types (`n_vocab: "lots"`, a token of `null`, a byte of 999) failed deep inside with a
Python error, after printing part of a generation. Here such an answer is refused in one
line naming the route and the field, and the value that is not what it should be.

Only what the backend reads is declared: other fields (and other routes' fields) are left
alone, since newer builds add them. A field sent as `null` is taken as absent (the server's
JSON writes an infinite speed as null), unless the backend cannot do without it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Protocol

SHOWN_CHARS = 40
"""The most of a refused value the message quotes."""


MISSING = object()
"""The value of a required field the answer does not have."""


class AnswerMismatch(ValueError):
    """An answer with a field of the wrong shape: `where` names it (`a.b[0].c`)."""

    def __init__(self, where: str, value: Any, expected: str) -> None:
        self.where, self.value, self.expected = where or "the answer", value, expected
        said = "missing" if value is MISSING else f"= {_shown(value)}, not {expected}"
        super().__init__(f"{self.where} {said}")


class Shape(Protocol):
    def checked(self, value: Any, where: str) -> Any:
        """`value` as the backend reads it; AnswerMismatch when it does not fit."""
        ...


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except ValueError:  # NaN is not JSON: say it as the server wrote it
        text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Whole:
    """An integer (never a bool, nor 512.7) from `minimum` to `maximum`."""

    minimum: int = 0
    maximum: int | None = None

    def checked(self, value: Any, where: str) -> int:
        if not _is_whole(value) or value < self.minimum or (self.maximum is not None and value > self.maximum):
            span = (
                f"from {self.minimum} to {self.maximum}" if self.maximum is not None else f"of {self.minimum} or more"
            )
            raise AnswerMismatch(where, value, f"a whole number {span}")
        return value


@dataclass(frozen=True)
class Number:
    """A finite number (NaN and the infinities, which JSON lacks, are refused) within bounds."""

    minimum: float = -math.inf
    maximum: float = math.inf
    meaning: str = "a finite number"

    def checked(self, value: Any, where: str) -> float:
        if (
            not (_is_whole(value) or isinstance(value, float))
            or not math.isfinite(value)
            or not self.minimum <= value <= self.maximum
        ):
            raise AnswerMismatch(where, value, self.meaning)
        return value


@dataclass(frozen=True)
class Text:
    def checked(self, value: Any, where: str) -> str:
        if not isinstance(value, str):
            raise AnswerMismatch(where, value, "text")
        return value


@dataclass(frozen=True)
class Flag:
    def checked(self, value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            raise AnswerMismatch(where, value, "true or false")
        return value


@dataclass(frozen=True)
class Anything:
    """A field the backend only shows (through str()) or compares: any JSON value will do."""

    def checked(self, value: Any, where: str) -> Any:
        return value


@dataclass(frozen=True)
class ListOf:
    item: Shape
    meaning: str = "a list"

    def checked(self, value: Any, where: str) -> list[Any]:
        if not isinstance(value, list):
            raise AnswerMismatch(where, value, self.meaning)
        return [self.item.checked(element, f"{where}[{index}]") for index, element in enumerate(value)]


@dataclass(frozen=True)
class Either:
    """The first of `shapes` that fits (a /tokenize token is an id, or an id with its piece)."""

    shapes: tuple[Shape, ...]
    meaning: str

    def checked(self, value: Any, where: str) -> Any:
        for shape in self.shapes:
            try:
                return shape.checked(value, where)
            except AnswerMismatch:
                continue
        raise AnswerMismatch(where, value, self.meaning)


@dataclass(frozen=True)
class Record:
    """A JSON object: the declared fields checked, a null one dropped (taken as absent)
    unless `required`, which must be there; the others kept as they are."""

    fields: dict[str, Shape] = field(default_factory=dict)
    required: frozenset[str] = frozenset()

    def checked(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise AnswerMismatch(where, value, "an object")
        out: dict[str, Any] = {}
        for key, item in value.items():
            shape = self.fields.get(key)
            if shape is None:
                out[key] = item
            elif item is not None or key in self.required:
                out[key] = shape.checked(item, f"{where}.{key}" if where else key)
        missing = sorted(self.required - out.keys())
        if missing:
            raise AnswerMismatch(f"{where}.{missing[0]}" if where else missing[0], MISSING, "there")
        return out


@dataclass(frozen=True)
class Unless:
    """`shape`, unless the answer is an object whose `key` is `value`: a llama-server of
    another role (a router of several models, whose context is 0) is refused by the
    backend with its own message, which names the remedy."""

    key: str
    value: Any
    shape: Shape

    def checked(self, value: Any, where: str) -> Any:
        if isinstance(value, dict) and value.get(self.key) == self.value:
            return value
        return self.shape.checked(value, where)


BYTES = ListOf(Whole(0, 255), "a list of byte values")
"""A token's bytes (a piece that is not UTF-8 text comes as a list of byte values)."""
LOG_PROBABILITY = Number(maximum=0.01, meaning="a log-probability (a finite number, 0 or less)")
"""Log-probabilities are at most 0: a hair above is float rounding, anything more a broken server."""
DURATION = Number(minimum=0.0, meaning="a finite number of 0 or more")
TOKEN_ID = Whole(0)
CANDIDATE = Record({"id": TOKEN_ID, "bytes": BYTES, "logprob": LOG_PROBABILITY}, frozenset({"id"}))
GENERATED = Record(
    {"id": TOKEN_ID, "bytes": BYTES, "logprob": LOG_PROBABILITY, "top_logprobs": ListOf(CANDIDATE)}, frozenset({"id"})
)

ROUTES: dict[str, Shape] = {
    "/health": Anything(),
    "/props": Unless(
        "role",
        "router",
        Record(
            {
                "default_generation_settings": Record({"n_ctx": Whole(1), "params": Record()}),
                "total_slots": Whole(1),
                "endpoint_slots": Flag(),
            }
        ),
    ),
    "/v1/models": Record(
        {
            "data": ListOf(
                Record(
                    {
                        "meta": Record(
                            {
                                "n_vocab": Whole(1),
                                "n_params": Whole(0),
                                "size": Whole(0),
                                "n_ctx_train": Whole(0),
                                "n_embd": Whole(0),
                            }
                        )
                    }
                )
            )
        }
    ),
    "/lora-adapters": ListOf(Record({"id": Whole(0), "scale": Number()}, frozenset({"id"}))),
    "/slots": ListOf(Record({"n_prompt_tokens": Whole(0)})),
    "/tokenize": Record(
        {
            "tokens": ListOf(
                Either(
                    (
                        TOKEN_ID,
                        Record(
                            {"id": TOKEN_ID, "piece": Either((Text(), BYTES), "text or a list of byte values")},
                            frozenset({"id"}),
                        ),
                    ),
                    "a token id (a whole number of 0 or more), or an object with one",
                )
            )
        }
    ),
    "/detokenize": Record({"content": Text()}),
    "/apply-template": Record({"prompt": Text()}),
    "/completion": Record(
        {
            "completion_probabilities": ListOf(GENERATED),
            # A token streamed without probabilities (a verifying pass's): its id and its text.
            "tokens": ListOf(TOKEN_ID),
            "content": Text(),
            "tokens_predicted": Whole(0),
            "stop": Flag(),
            "prompt_progress": Record({"processed": Whole(0), "total": Whole(0)}),
            "timings": Record(
                {name: DURATION for name in ("prompt_ms", "predicted_ms", "prompt_per_second", "predicted_per_second")}
                | {"cache_n": Whole(0), "prompt_n": Whole(0), "draft_n": Whole(0), "draft_n_accepted": Whole(0)}
            ),
        }
    ),
}
"""Each route the backend asks, and the shape of its answer (for /completion, of each
streamed chunk)."""


def checked_answer(route: str, answer: Any) -> Any:
    """`answer` to `route` as the backend reads it (null fields it can do without dropped);
    AnswerMismatch naming the field that does not fit."""
    shape = ROUTES.get(route)
    return answer if shape is None else shape.checked(answer, "")
