"""A llama-server started with a guesser speculates on its own. Every token of a verifying pass,
the guesses it accepted and the token it sampled after them, streams with no
`completion_probabilities` at all (`result.prob = 1.0f` and `// TODO: set result.probs` in its
source): only its id and text. Each chunk's timings carry the totals so far (`draft_n`,
`draft_n_accepted`), from which the app tells the accepted guesses (server_draft.py). They come
out with no probability, never 100%, in the events and in `continue --json`; the accepted ones
are marked guessed; the server's totals are the generation's.

First against the stand-in server (the shape exactly as the real one streams it, saved from the
vendored build), then against a real llama-server speculating with a draft model and with an
n-gram lookup."""

from __future__ import annotations

import math
from contextlib import closing
from itertools import cycle, islice
from pathlib import Path
from typing import Any, Iterator

import pytest
from cli_runs import json_lines, scriptorium
from fake_llama_server import FakeLlamaServer, token_entry
from gguf_loop import LOOP_PHRASE, OTHER_WORDS, loop_transitions
from gguf_loop import PROMPT as LOOP_PROMPT
from gguf_models import write_llama_model
from llama_server import LlamaServer, connect_to

from scriptorium.inference.core.events import GenerationDone, SpeculationCounts, TokenEvent, has_probability
from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.inference.core.settings import PRESETS, LogitBias
from scriptorium.inference.remote.remote import RemoteBackend
from scriptorium.inference.remote.server_draft import AcceptedGuesses

TOKENS = 16


def timings(drafted: int = 0, accepted: int = 0) -> dict[str, Any]:
    """A chunk's timings as the server writes them with `timings_per_token`: the draft totals
    only once it drafted."""
    said: dict[str, Any] = {"cache_n": 0, "prompt_n": 3, "prompt_ms": 1.0, "predicted_ms": 2.0}
    return said | ({"draft_n": drafted, "draft_n_accepted": accepted} if drafted else {})


def scored_chunk(number: int, token_id: int, text: str, logprob: float = -0.1, **totals: int) -> dict[str, Any]:
    """A plainly decoded token: its probabilities, asked with `n_probs`."""
    entry = token_entry(token_id, text, logprob)
    return {
        "content": text,
        "tokens": [token_id],
        "stop": False,
        "tokens_predicted": number,
        "timings": timings(**totals),
        "completion_probabilities": [entry],
    }


def pass_chunk(number: int, token_id: int, text: str, **totals: int) -> dict[str, Any]:
    """A token of a verifying pass: its id and text, no `completion_probabilities`."""
    return {
        "content": text,
        "tokens": [token_id],
        "stop": False,
        "tokens_predicted": number,
        "timings": timings(**totals),
    }


def speculating_chunks() -> list[dict[str, Any]]:
    """' La' decoded plainly; a pass that drafted 4 and accepted ' casa' (1), then sampled ' bella';
    ' sera' decoded plainly at 100% (listed among its own candidates); then the final chunk."""
    return [
        {
            "content": "",
            "tokens": [0],
            "stop": False,
            "tokens_predicted": 0,
            "prompt_progress": {"processed": 3, "total": 3},
        },
        scored_chunk(1, 10, " La"),
        pass_chunk(2, 11, " casa", drafted=4, accepted=1),
        pass_chunk(3, 12, " bella", drafted=4, accepted=1),
        scored_chunk(4, 13, " sera", 0.0, drafted=4, accepted=1),
        {
            "content": "",
            "tokens": [],
            "stop": True,
            "stop_type": "limit",
            "tokens_predicted": 4,
            "timings": timings(4, 1),
        },
    ]


def test_a_verifying_pass_streams_no_probabilities_and_its_accepted_guesses_are_marked() -> None:
    with FakeLlamaServer({"/completion": speculating_chunks()}) as url:
        backend = RemoteBackend.connect(url, LoadOptions(model_path=Path("x")))
        try:
            events = list(backend.generate("La", PRESETS["greedy"], LogitBias(), top_n=2))
        finally:
            backend.close()
    plain, guessed, sampled, certain = [e for e in events if isinstance(e, TokenEvent)]
    assert not plain.drafted and math.isclose(plain.p, math.exp(-0.1)) and plain.top
    assert guessed.drafted and not has_probability(guessed.p) and guessed.top == ()
    assert not sampled.drafted and not has_probability(sampled.p) and sampled.top == ()
    assert not certain.drafted and certain.p == 1.0  # a plain token at 100% is one, with itself listed
    assert [e.text for e in (plain, guessed, sampled, certain)] == [" La", " casa", " bella", " sera"]
    done = events[-1]
    assert isinstance(done, GenerationDone) and done.text == " La casa bella sera"
    assert done.speculation == SpeculationCounts("server", drafted=4, accepted=1, passes=0, probabilities=False)


def test_continue_json_writes_null_for_them_never_100_percent() -> None:
    with FakeLlamaServer({"/completion": speculating_chunks()}) as url:
        lines = json_lines(scriptorium("continue", "--server", url, "--json", stdin="La"))
    tokens = [line for line in lines if line.get("type") == "token"]
    assert [(t["p"], t.get("drafted", False)) for t in tokens[1:]] == [(None, True), (None, False), (1.0, False)]
    assert tokens[1]["top"] == [] and tokens[2]["top"] == []


def test_the_accepted_guesses_are_the_first_tokens_of_each_pass() -> None:
    """Passes of 2 accepted + 1 sampled, 0 + 1, then 1 + 1 with its first token's chunk held
    back (a character left unfinished): the totals alone place each token."""
    guesses = AcceptedGuesses()
    stream = [(1, {}), (2, timings(3, 2)), (3, timings(3, 2)), (4, timings(3, 2)), (5, timings(5, 2))]
    stream += [(6, timings(6, 2)), (8, timings(8, 3)), (9, timings(8, 3))]
    assert [guesses.accepted(number, said) for number, said in stream] == [
        False,
        True,
        True,
        False,
        False,
        False,  # plain: the totals did not move
        False,  # 7, the accepted guess, was sent with 8, the token sampled after it
        False,  # plain
    ]


# ---- a real llama-server, speculating --------------------------------------------------------------


@pytest.fixture(scope="module")
def loop_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Repeats one phrase, each word winning by 0.3 logits or more (gguf_loop.py): its greedy text is
    certain, and the model as its own draft, or a lookup in its own text, guesses it."""
    transitions, default_next = loop_transitions()
    return write_llama_model(
        tmp_path_factory.mktemp("loop") / "loop.gguf", kind="markov", transitions=transitions, default_next=default_next
    )


GUESSERS = {
    "draft_server": lambda model: ("--spec-type", "draft-simple", "--model-draft", str(model)),
    # Its defaults look up 12 tokens and draft only where 48 follow them, more than these texts hold.
    "lookup_server": lambda model: (
        "--spec-type",
        "ngram-simple",
        "--spec-ngram-simple-size-n",
        "3",
        "--spec-ngram-simple-size-m",
        "4",
    ),
}
GREEDY = PRESETS["greedy"].with_changes(max_tokens=TOKENS)
SAMPLED = PRESETS["prose"].with_changes(max_tokens=TOKENS, seed=7, top_k=1 + len(OTHER_WORDS))
"""The loop's next word and the eight others (gguf_loop.py), whole words each: no token's chunk is
held back for a character left unfinished, so every token the server sampled is streamed."""


@pytest.fixture(scope="module")
def draft_server(loop_model: Path, server_logs: Path) -> Iterator[LlamaServer]:
    """The model as its own draft: it guesses the loop, which greedy decoding accepts entirely."""
    with LlamaServer(loop_model, server_logs, *GUESSERS["draft_server"](loop_model)) as server:
        yield server


@pytest.fixture(scope="module")
def lookup_server(loop_model: Path, server_logs: Path) -> Iterator[LlamaServer]:
    """An n-gram lookup in the text so far: the loop repeats, so it guesses it."""
    with LlamaServer(loop_model, server_logs, *GUESSERS["lookup_server"](loop_model)) as server:
        yield server


def streamed(server: LlamaServer, settings) -> tuple[list[TokenEvent], GenerationDone]:  # type: ignore[no-untyped-def]
    backend = connect_to(server)
    try:
        with closing(backend.generate(LOOP_PROMPT * 2, settings, LogitBias(), top_n=3)) as events:
            collected = list(events)
    finally:
        backend.close()
    done = collected[-1]
    assert isinstance(done, GenerationDone)
    return [e for e in collected if isinstance(e, TokenEvent)], done


def assert_read_as_the_server_sent_it(tokens: list[TokenEvent], done: GenerationDone) -> SpeculationCounts:
    """Every token came, those of a pass too; exactly the server's count of accepted guesses is
    marked, each with no probability; the token a pass samples after its guesses has none either
    and is no guess; no token is shown certain."""
    counts = done.speculation
    assert counts is not None and (counts.guesser, counts.probabilities, counts.passes) == ("server", False, 0)
    assert counts.drafted > 0 and 0 <= counts.accepted <= counts.drafted
    assert len(tokens) == done.completion_tokens == TOKENS
    assert sum(t.drafted for t in tokens) == counts.accepted
    assert all(not has_probability(t.p) and t.top == () for t in tokens if t.drafted)
    assert any(not t.drafted and not has_probability(t.p) for t in tokens)
    assert all(t.top and 0.0 < t.p < 0.99 for t in tokens if has_probability(t.p))
    assert not tokens[0].drafted and has_probability(tokens[0].p)  # the first is sampled after the prompt
    return counts


@pytest.mark.parametrize("server_name", sorted(GUESSERS))
def test_a_real_server_speculating_greedily_writes_the_loop_and_marks_what_it_accepted(
    request: pytest.FixtureRequest, server_name: str
) -> None:
    tokens, done = streamed(request.getfixturevalue(server_name), GREEDY)
    assert assert_read_as_the_server_sent_it(tokens, done).accepted > 0
    words = islice(cycle(LOOP_PHRASE), TOKENS)
    assert done.text == "".join(" " + word.removeprefix("▁") for word in words)


def test_a_real_server_speculating_while_sampling_marks_only_what_it_accepted(draft_server: LlamaServer) -> None:
    """Sampling rejects some of the draft's greedy guesses: the passes end early, on the token
    sampled in place of a guess, which is marked no guess."""
    assert_read_as_the_server_sent_it(*streamed(draft_server, SAMPLED))


@pytest.mark.parametrize("server_name", sorted(GUESSERS))
def test_continue_json_against_a_real_speculating_server(request: pytest.FixtureRequest, server_name: str) -> None:
    server = request.getfixturevalue(server_name)
    result = scriptorium(
        *("continue", "--server", server.url, "--json", "--preset", "greedy", "--max-tokens", TOKENS),
        stdin=LOOP_PROMPT * 2,
    )
    lines = json_lines(result)
    tokens = [line for line in lines if line.get("type") == "token"]
    (done,) = [line for line in lines if line.get("type") == "done"]
    assert len(tokens) == TOKENS
    assert done["speculation"]["guesser"] == "server" and done["speculation"]["probabilities"] is False
    guessed = [t for t in tokens if t.get("drafted")]
    assert len(guessed) == done["speculation"]["accepted"] > 0
    assert all(t["p"] is None and t["top"] == [] for t in guessed)
    assert all(t["p"] is None or t["p"] < 0.99 for t in tokens)
