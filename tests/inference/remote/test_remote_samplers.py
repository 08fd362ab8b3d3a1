"""The sampler chain on llama-server: the same settings sent as its fields, and applied as
the in-process chain applies them, on the looping model (gguf_loop.py), whose greedy
choices under DRY and XTC are apart by 0.02 in logits at the least: two hundred times the
float noise between the server and this process (test_remote.py's PROBABILITY_RTOL)."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import Iterator

import pytest
from gguf_loop import PROMPT, loop_transitions, repeated_share
from gguf_models import write_llama_model
from llama_server import CONTEXT, LlamaServer, connect_to

from scriptorium.inference.local.engine import Engine
from scriptorium.inference.core.events import TokenEvent
from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.inference.remote.remote_stream import request_body
from scriptorium.inference.core.settings import PRESETS, LogitBias, SettingsError

GREEDY = PRESETS["greedy"].with_changes(max_tokens=80)
DRY = GREEDY.with_changes(dry_multiplier=0.8, dry_base=1.75, dry_allowed_length=2, dry_penalty_last_n=CONTEXT)


@pytest.fixture(scope="module")
def loop_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    transitions, default_next = loop_transitions()
    return write_llama_model(
        tmp_path_factory.mktemp("loop") / "loop.gguf", kind="markov", transitions=transitions, default_next=default_next
    )


@pytest.fixture(scope="module")
def loop_server(loop_model: Path, server_logs: Path) -> Iterator[LlamaServer]:
    with LlamaServer(loop_model, server_logs) as server:
        yield server


@pytest.fixture(scope="module")
def both(loop_model: Path, loop_server: LlamaServer):
    remote = connect_to(loop_server)
    local = Engine.load(LoadOptions(model_path=loop_model, n_ctx=CONTEXT, flash_attn=False))
    yield remote, local
    remote.close()
    local.close()


def ids(backend, settings) -> list[int]:
    with closing(backend.generate(PROMPT, settings, LogitBias(), top_n=3)) as events:
        return [event.id for event in events if isinstance(event, TokenEvent)]


def test_dry_is_sent_and_applied_as_in_process(both) -> None:
    remote, local = both
    body = request_body(remote, [1, 2], DRY, LogitBias(), 3, 5)
    assert (body["dry_multiplier"], body["dry_base"], body["dry_allowed_length"], body["dry_penalty_last_n"]) == (
        0.8,
        1.75,
        2,
        CONTEXT,
    )
    assert body["dry_sequence_breakers"] == ["\n", ":", '"', "*"]
    assert body["samplers"] == [
        "penalties",
        "dry",
        "top_n_sigma",
        "top_k",
        "typ_p",
        "top_p",
        "min_p",
        "xtc",
        "temperature",
    ]
    served = ids(remote, DRY)
    assert served == ids(local, DRY)
    assert repeated_share(served) < repeated_share(ids(remote, GREEDY)) / 3  # applied, not ignored


def test_the_order_is_sent_and_applied_as_in_process(both) -> None:
    remote, local = both
    xtc = GREEDY.with_changes(xtc_probability=1.0, xtc_threshold=0.1)
    # Temperature 0 first leaves one candidate, on which XTC cannot act: the phrase loops.
    # XTC first removes the phrase's word and the runner-up: the greedy pick is the third.
    after, before = xtc.with_changes(samplers=("temperature", "xtc")), xtc.with_changes(samplers=("xtc", "temperature"))
    assert request_body(remote, [1], before, LogitBias(), 3, 5)["samplers"] == ["xtc", "temperature"]
    served_after, served_before = ids(remote, after), ids(remote, before)
    assert served_after == ids(local, after) and served_before == ids(local, before)
    assert served_after == ids(remote, GREEDY) != served_before


def test_a_sampler_the_server_lacks_is_refused_while_it_acts(both) -> None:
    remote, _local = both
    known = remote.server_fields
    remote.server_fields = known - {"dry_multiplier", "top_n_sigma"}
    try:
        request_body(remote, [1], GREEDY, LogitBias(), 3, 5)  # neither acts: nothing is lost
        with pytest.raises(SettingsError, match="has no dry_multiplier: not available remotely"):
            request_body(remote, [1], DRY, LogitBias(), 3, 5)
        with pytest.raises(SettingsError, match="top_n_sigma"):
            ids(remote, GREEDY.with_changes(top_n_sigma=1.0))
    finally:
        remote.server_fields = known


def test_an_empty_list_of_dry_breakers_is_refused_remotely_only_while_dry_acts(both) -> None:
    remote, _local = both
    assert "dry_sequence_breakers" not in request_body(
        remote, [1], GREEDY.with_changes(dry_sequence_breakers=()), LogitBias(), 3, 5
    )
    with pytest.raises(SettingsError, match="at least one DRY sequence breaker"):
        request_body(remote, [1], DRY.with_changes(dry_sequence_breakers=()), LogitBias(), 3, 5)


def test_a_length_mode_is_refused_remotely_not_ignored(both) -> None:
    remote, _local = both
    with pytest.raises(SettingsError, match="length 'sentence' is not available with a llama-server"):
        request_body(remote, [1], GREEDY.with_changes(length="sentence"), LogitBias(), 3, 5)
