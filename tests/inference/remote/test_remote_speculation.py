"""A llama-server started with a draft gives the tokens it accepted from it no probabilities
(`result.prob = 1.0f; // TODO` in its source): they stream with no candidates and the placeholder
log-probability 0. They come out marked guessed with no probability, never 100%, in the events and
in `continue --json`; the server's own totals (`draft_n`, `draft_n_accepted`) are the generation's."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

from fake_llama_server import FakeLlamaServer, stream_chunks, token_entry

from scriptorium.inference.core.events import GenerationDone, SpeculationCounts, TokenEvent, has_probability
from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.inference.core.settings import PRESETS, LogitBias
from scriptorium.inference.remote.remote import RemoteBackend


def speculating_chunks() -> list[dict[str, Any]]:
    """' La' decoded plainly, ' casa' accepted from the server's draft (no candidates, logprob 0),
    ' bella' decoded plainly at 100% (listed among its own candidates), then the totals."""
    chunks = stream_chunks(
        [
            token_entry(10, " La"),
            {**token_entry(11, " casa", 0.0), "top_logprobs": []},
            token_entry(12, " bella", 0.0),
        ]
    )
    chunks[-1]["timings"].update(draft_n=4, draft_n_accepted=1)
    return chunks


def test_a_token_accepted_from_the_servers_draft_has_no_probability_and_is_marked_guessed() -> None:
    with FakeLlamaServer({"/completion": speculating_chunks()}) as url:
        backend = RemoteBackend.connect(url, LoadOptions(model_path=Path("x")))
        try:
            events = list(backend.generate("La", PRESETS["greedy"], LogitBias(), top_n=2))
        finally:
            backend.close()
    plain, guessed, certain = [e for e in events if isinstance(e, TokenEvent)]
    assert not plain.drafted and math.isclose(plain.p, math.exp(-0.1)) and plain.top
    assert guessed.drafted and not has_probability(guessed.p) and guessed.top == ()
    assert not certain.drafted and certain.p == 1.0  # a plain token at 100% is one, with itself listed
    done = events[-1]
    assert isinstance(done, GenerationDone)
    assert done.speculation == SpeculationCounts("server", drafted=4, accepted=1, passes=0, probabilities=False)


def test_continue_json_writes_null_for_it_never_100_percent() -> None:
    with FakeLlamaServer({"/completion": speculating_chunks()}) as url:
        result = subprocess.run(
            [sys.executable, "-m", "scriptorium.app.cli.main", "continue", "--server", url, "--json"],
            input="La",
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    tokens = [line for line in lines if line.get("type") == "token"]
    assert [(t["p"], t.get("drafted", False)) for t in tokens[1:]] == [(None, True), (1.0, False)]
    assert tokens[1]["top"] == []
