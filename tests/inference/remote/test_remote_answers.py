"""A server that answers with the wrong types: each answer is refused in one line naming
the server, the route and the field, before any of it is used (remote_schema.py). Each
shape below failed with a Python error (ValueError, TypeError, KeyError), the stream's
ones after printing part of the text; a context of -5, 0 or 512.7 was used as a size."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_runs import scriptorium
from fake_llama_server import FakeLlamaServer, default_answers, stream_chunks, token_entry

from scriptorium.inference.core.events import TokenEvent
from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.inference.remote.remote import RemoteBackend
from scriptorium.inference.remote.remote_http import ServerError
from scriptorium.inference.core.settings import PRESETS, LogitBias

GREEDY = PRESETS["greedy"]


def _props(n_ctx: object) -> dict[str, Any]:
    props = default_answers()["/props"]
    props["default_generation_settings"]["n_ctx"] = n_ctx
    return props


def _entry(**changes: object) -> dict[str, Any]:
    entry = token_entry(11, " casa")
    entry.update(changes)
    return {k: v for k, v in entry.items() if v is not ...}


CONNECTING = {
    "n_vocab is text": ({"/v1/models": {"data": [{"meta": {"n_vocab": "lots"}}]}}, "/v1/models", "n_vocab"),
    "n_ctx is text": ({"/props": _props("abc")}, "/props", "n_ctx"),
    "n_ctx is negative": ({"/props": _props(-5)}, "/props", "n_ctx"),
    "n_ctx is 0": ({"/props": _props(0)}, "/props", "n_ctx"),
    "n_ctx is a fraction": ({"/props": _props(512.7)}, "/props", "n_ctx"),
    "adapter id is text": ({"/lora-adapters": [{"id": "x", "path": "a.gguf", "scale": 1.0}]}, "/lora-adapters", "id"),
    "tokens of other kinds": ({"/tokenize": {"tokens": [{"piece": "a"}, "x", None]}}, "/tokenize", "tokens[0]"),
}

STREAMING = {
    "tokens_predicted is text": ([{**stream_chunks()[0], "tokens_predicted": "q"}], "tokens_predicted"),
    "an entry without an id": (
        [stream_chunks()[0], {"completion_probabilities": [_entry(id=...)]}],
        "completion_probabilities[0].id",
    ),
    "bytes out of range": (
        [stream_chunks()[0], {"completion_probabilities": [_entry(bytes=[999, -1])]}],
        "completion_probabilities[0].bytes[0]",
    ),
    "a NaN log-probability": (
        [stream_chunks()[0], '{"completion_probabilities": [{"id": 11, "bytes": [97], "logprob": NaN}]}'],
        "completion_probabilities[0].logprob",
    ),
}


def _assert_one_line(error: BaseException, url: str, route: str, field: str) -> None:
    message = str(error)
    assert "\n" not in message
    assert f"llama-server at {url} answered {route} with" in message and field in message, message


@pytest.mark.parametrize("case", CONNECTING)
def test_a_wrong_type_at_connection_is_one_line_naming_the_field(case: str) -> None:
    answers, route, field = CONNECTING[case]
    with FakeLlamaServer(answers) as url:
        with pytest.raises(ServerError) as raised:
            backend = RemoteBackend.connect(url, LoadOptions(model_path=Path("x")))
            backend.count_tokens("La casa")  # /tokenize is first asked here when the byte search asks nothing
    _assert_one_line(raised.value, url, route, field)


@pytest.mark.parametrize("case", STREAMING)
def test_a_wrong_type_in_the_stream_is_one_line_naming_the_field(case: str) -> None:
    chunks, field = STREAMING[case]
    with FakeLlamaServer({"/completion": chunks}) as url:
        backend = RemoteBackend.connect(url, LoadOptions(model_path=Path("x")))
        tokens: list[TokenEvent] = []
        try:
            with pytest.raises(ServerError) as raised:
                for event in backend.generate("La", GREEDY, LogitBias(), top_n=1):
                    if isinstance(event, TokenEvent):
                        tokens.append(event)
        finally:
            backend.close()
    _assert_one_line(raised.value, url, "/completion", field)
    assert all(event.text in ("La", "") for event in tokens), "nothing of the refused chunk was used"


def test_the_well_formed_answers_still_generate() -> None:
    """The fake's own answers pass: the schema refuses only what does not fit."""
    with FakeLlamaServer() as url:
        backend = RemoteBackend.connect(url, LoadOptions(model_path=Path("x")))
        try:
            events = list(backend.generate("La", GREEDY, LogitBias(), top_n=1))
        finally:
            backend.close()
    assert "".join(e.text for e in events if isinstance(e, TokenEvent)) == "La casa"
    assert backend.n_ctx == 512


def test_continue_json_never_writes_nan_and_stops_in_one_line() -> None:
    """`"p": NaN` was written into `continue --json`, which is then no JSON a reader parses."""
    chunks = [stream_chunks()[0], '{"completion_probabilities": [{"id": 11, "bytes": [97], "logprob": NaN}]}']
    with FakeLlamaServer({"/completion": chunks}) as url:
        result = scriptorium("continue", "--server", url, "--json", "--max-tokens", 5, stdin="La")
    assert "Traceback" not in result.stderr and result.returncode != 0
    assert "NaN" not in result.stdout
    for line in result.stdout.splitlines():
        json.loads(line)  # every line written is JSON
    said = result.stderr.splitlines()
    [error] = [line for line in said if line.startswith("scriptorium:") and not line.startswith("scriptorium: note:")]
    assert "completion_probabilities[0].logprob" in error
