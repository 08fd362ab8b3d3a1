"""Every generation records the arithmetic that produced its probabilities; sessions
written before that still load; the export says it."""

from __future__ import annotations

import json
from typing import Callable

import yaml

from scriptorium.app.sessions import DraftSession, Generation, SessionStore
from scriptorium.app.sessions.export import render_markdown
from scriptorium.app.sessions.format import dumps, loads

GenerateFn = Callable[..., Generation]
FLASH_ON = {"flash_attn": True, "type_k": "f16", "type_v": "f16", "n_threads": 2, "n_threads_batch": 2}
FLASH_OFF = dict(FLASH_ON, flash_attn=False)


def split_front_matter(markdown: str) -> tuple[dict, str]:
    head, _, body = markdown.removeprefix("---\n").partition("\n---\n")
    return yaml.safe_load(head), body


def draft_with(store: SessionStore, generate: GenerateFn, *arithmetics: dict | None) -> DraftSession:
    """A draft whose passages were written, one each, under `arithmetics`."""
    session = store.create_draft(title="t", text="Start.")
    for number, arithmetic in enumerate(arithmetics):
        generation = generate(session, f" Part {number}.", anchor=len(session.text), arithmetic=arithmetic)
        session.accept(generation, generation.text, len(session.text))
    return session


def test_the_arithmetic_survives_the_file(store: SessionStore, generate: GenerateFn) -> None:
    session = draft_with(store, generate, FLASH_ON)
    assert json.loads(dumps(session))["generations"][0]["arithmetic"] == FLASH_ON
    assert loads(dumps(session)).generations[0].arithmetic == FLASH_ON


def test_a_session_from_before_still_loads(store: SessionStore, generate: GenerateFn) -> None:
    data = json.loads(dumps(draft_with(store, generate, FLASH_ON)))
    del data["generations"][0]["arithmetic"]
    generation = loads(json.dumps(data)).generations[0]
    assert generation.arithmetic is None and generation.arithmetic_text() == "unknown"


def test_the_export_says_which_arithmetic(store: SessionStore, generate: GenerateFn) -> None:
    meta, _ = split_front_matter(render_markdown(draft_with(store, generate, FLASH_ON)))
    assert meta["arithmetic"] == FLASH_ON and "arithmetics" not in meta
    mixed = draft_with(store, generate, FLASH_ON, FLASH_OFF)
    meta, body = split_front_matter(render_markdown(mixed, settings_changes=True))
    assert meta["arithmetic"] == FLASH_ON
    assert meta["arithmetics"] == ["flash attention on, KV f16", "flash attention off, KV f16"]
    assert "arithmetic flash attention on, KV f16 → flash attention off, KV f16" in body


def test_the_threads_a_generation_ended_on_are_recorded_with_why(store: SessionStore, model_ref) -> None:  # type: ignore[no-untyped-def]
    """Measured thread counts move while the model writes: the record keeps those the
    generation ended on and the reason, and a session from before them still loads."""
    from scriptorium.inference.core.events import GenerationDone, KVCacheUsage, ThreadsChosen
    from scriptorium.inference.core.settings import LogitBias, preset

    session = store.create_draft(title="t", text="Start.")
    generation = session.start_generation(
        model=model_ref,
        lora=None,
        settings=preset("prose"),
        bias=LogitBias(),
        byte_token_ids=(),
        anchor=6,
        arithmetic=dict(FLASH_ON),
    )
    chosen = ThreadsChosen(
        n_threads=1, n_threads_batch=2, cores=2, auto=True, reason="2 were slower while other work ran"
    )
    kv = KVCacheUsage(tokens=14, n_ctx=512, bytes_allocated=None, bytes_used=None, bytes_per_token=None)
    generation.finish(
        GenerationDone(
            stop_reason="eos",
            prompt_tokens=12,
            completion_tokens=2,
            reused_tokens=0,
            prefill_ms=5.0,
            ttft_ms=6.0,
            decode_ms=20.0,
            decode_tokens_per_s=50.0,
            prefill_tokens_per_s=900.0,
            kv_cache=kv,
            text=" Part.",
            threads=chosen,
        )
    )
    recorded = json.loads(dumps(session))["generations"][0]["arithmetic"]
    assert recorded == {
        **FLASH_ON,
        "n_threads": 1,
        "threads_auto": True,
        "threads_reason": "2 were slower while other work ran",
        "cores": 2,
    }
    assert loads(dumps(session)).generations[0].arithmetic == recorded
    # The thread counts do not change the numbers: the export does not call it another arithmetic.
    assert generation.arithmetic_text() == "flash attention on, KV f16"
