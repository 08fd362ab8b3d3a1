"""Fixtures for the session, atomic-write and export tests: stores and sessions built from
the same calls the TUI makes (start_generation, finish, accept), without loading a model."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import strategies as st

from scriptorium.app.sessions import ChatSession, DraftSession, Generation, LoraRef, ModelRef, SessionStore
from scriptorium.app.sessions.token_records import HealingRecord, TokenRecord
from scriptorium.inference.core.events import Candidate, GenerationDone, KVCacheUsage, TokenEvent
from scriptorium.inference.core.settings import LogitBias, SamplerSettings, preset

BYTE_TOKEN_IDS = tuple(range(16000, 16256))
KV = KVCacheUsage(tokens=10, n_ctx=2048, bytes_allocated=1 << 20, bytes_used=1 << 12, bytes_per_token=512)


def done(text: str, seed: int = 1234, stop_reason: str = "eos") -> GenerationDone:
    return GenerationDone(
        stop_reason=stop_reason,
        prompt_tokens=12,
        completion_tokens=len(text.split()),
        reused_tokens=0,
        prefill_ms=5.0,
        ttft_ms=6.0,
        decode_ms=20.0,
        decode_tokens_per_s=50.0,
        prefill_tokens_per_s=900.0,
        kv_cache=KV,
        text=text,
        seed=seed,
    )


def token_event(index: int, token_id: int, text: str, p: float) -> TokenEvent:
    top = (
        Candidate(id=token_id, text=text, p=p, banned=False),
        Candidate(id=16001, text="<0x01>", p=0.01234567891, banned=True),
    )
    return TokenEvent(index=index, id=token_id, text=text, p=p, top=top, elapsed_ms=1.0 * index, kv_tokens=12 + index)


@pytest.fixture
def json_values() -> st.SearchStrategy:
    """Any JSON value, a few levels deep (for fields a session keeps as given, and for fuzzing)."""
    return st.recursive(
        st.one_of(
            st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False), st.text(max_size=12)
        ),
        lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
        max_leaves=10,
    )


@pytest.fixture
def store() -> SessionStore:
    return SessionStore()


@pytest.fixture
def model_ref() -> ModelRef:
    return ModelRef(
        path="/models/tiny-Q4_K_M.gguf",
        name='Tiny Llama: "test"',
        size=123456,
        sha256="ab" * 32,
        quantization="Q4_K_M",
        architecture="llama",
        parameters=1_000_000,
    )


@pytest.fixture
def other_model_ref() -> ModelRef:
    return ModelRef(
        path="/models/other-Q8_0.gguf",
        name="Other",
        size=654321,
        sha256="cd" * 32,
        quantization="Q8_0",
        architecture="llama",
        parameters=2_000_000,
    )


@pytest.fixture
def lora_ref() -> LoraRef:
    return LoraRef(path="/loras/style.gguf", name="style", size=4096, sha256="ef" * 32, scale=0.5)


GenerateFn = Callable[..., Generation]


@pytest.fixture
def generate(model_ref: ModelRef) -> GenerateFn:
    """Record a finished generation on a session, as the TUI does after a run."""

    def run(
        session: DraftSession | ChatSession,
        text: str,
        *,
        model: ModelRef | None = None,
        lora: LoraRef | None = None,
        settings: SamplerSettings | None = None,
        bias: LogitBias | None = None,
        seed: int = 1234,
        anchor: int | None = None,
        with_tokens: bool = False,
        arithmetic: dict | None = None,
    ) -> Generation:
        generation = session.start_generation(
            model=model or model_ref,
            lora=lora,
            settings=settings or preset("prose"),
            bias=bias or LogitBias(),
            byte_token_ids=BYTE_TOKEN_IDS,
            anchor=anchor,
            arithmetic=arithmetic,
        )
        if with_tokens:
            for index, word in enumerate(text.split(" ")):
                generation.add_token(token_event(index, 100 + index, word, 0.5 / (index + 1)))
        generation.finish(done(text, seed=seed))
        return generation

    return run


@pytest.fixture
def add_tokens() -> Callable[[Generation, int], None]:
    """Record `count` more tokens on a generation, as a streaming generation does."""

    def add(generation: Generation, count: int) -> None:
        start = len(generation.tokens or ())
        for index in range(start, start + count):
            generation.add_token(token_event(index, 500 + index, f" t{index}", 0.25))

    return add


@pytest.fixture
def rich_draft(store: SessionStore, generate: GenerateFn, lora_ref: LoraRef, other_model_ref: ModelRef) -> DraftSession:
    """A draft with accepted, partly accepted and rejected suggestions, token records,
    a LoRA, a settings change, a model change and author edits around the passages."""
    session = store.create_draft(title="Chapter: One", text="# The Sea\n\nShe walked to the shore.")
    g1 = generate(session, " The waves rose, grey and slow.", anchor=len(session.text), with_tokens=True)
    session.accept(g1, g1.text, len(session.text))
    session.set_text(session.text + "\n\nShe said nothing.")
    g2 = generate(
        session,
        " Gulls cried overhead. Then silence.",
        lora=lora_ref,
        settings=preset("prose").with_changes(temperature=1.1),
        seed=99,
        bias=LogitBias(entries=((42, 2.0), (7, -100.0))),
    )
    session.accept(g2, " Gulls cried overhead.", len(session.text))
    g3 = generate(session, " A boat.", model=other_model_ref)
    g3.reject()
    return session


@pytest.fixture
def chat(store: SessionStore, generate: GenerateFn) -> ChatSession:
    session = store.create_chat(title="Questions", system_prompt="You are terse.")
    session.add_user_turn("What rhymes with sea?")
    reply = generate(session, "Tree, free, and *glee*.\n\n```\nsea / tree\n```", anchor=0)
    session.record_reply(reply)
    session.add_user_turn("Another?")
    discarded = generate(session, "Bee.", anchor=2)
    session.record_reply(discarded)
    session.retract_reply(discarded)
    again = generate(session, "Knee.", anchor=2, settings=preset("creative"))
    session.record_reply(again)
    return session


@pytest.fixture
def unwritable_dir(tmp_path: Path) -> Path:
    """A folder where creating a file fails with a permission error, even for root."""
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    candidates = [folder, Path("/sys")]
    for candidate in candidates:
        try:
            fd, name = tempfile.mkstemp(dir=candidate)
        except OSError:
            return candidate
        os.close(fd)
        os.unlink(name)
    pytest.skip("no folder here refuses writes (root on a writable /sys)")


@pytest.fixture
def token_with_every_field() -> TokenRecord:
    """A token record with no field at its default (the fields are listed, so a new one fails
    test_token_records first): what the fast path and the documented format are checked on."""
    return TokenRecord(
        id=5,
        text="",
        p=0.5,
        top=((5, "", 0.5, False),),
        piece=b"\xc3",
        kept=((5, 0.7),),
        removed=((6, "top_k"),),
        pushed=((7, "dry", -1.5),),
        drafted=True,
        healing=HealingRecord(rest=" mo", allowed_count=3, mass=0.4, allowed=((5, " molo", 0.3, False),)),
    )
