"""Flash attention chosen by measurement: the choice, its cache and its key, and the
arithmetic the engine reads back from llama.cpp. No timed assertion: the timing goes
through a clock and a measure function the tests replace."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from scriptorium.inference.local import flash_choice
from scriptorium.inference.core.arithmetic import read_arithmetic
from scriptorium.inference.local.engine import Engine
from scriptorium.inference.local.flash_choice import (
    FlashChoiceCache,
    FlashTiming,
    choice_key,
    choose_flash,
    remembered_timing,
    time_decode_paths,
)
from scriptorium.inference.core.load_options import LoadOptions

BUILD = "llama-cpp-python 0.3.36; CPU : AVX2 = 1 |"


class Measure:
    """A measure function that returns a fixed timing and counts its calls."""

    def __init__(self, on_ms: float, off_ms: float):
        self.timing = FlashTiming(on_ms=on_ms, off_ms=off_ms)
        self.calls = 0

    def __call__(self) -> FlashTiming:
        self.calls += 1
        return self.timing


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF" + bytes(60))
    return path


@pytest.mark.parametrize(("on_ms", "off_ms", "chosen"), [(1.0, 2.0, True), (2.0, 1.0, False), (1.5, 1.5, False)])
def test_the_faster_path_is_chosen_and_a_tie_keeps_plain_attention(
    tmp_path: Path, model_file: Path, on_ms: float, off_ms: float, chosen: bool
) -> None:
    key = choice_key(model_file, BUILD, n_gpu_layers=-1)
    assert choose_flash(key, FlashChoiceCache(tmp_path / "c.json"), Measure(on_ms, off_ms)) is chosen


def test_the_choice_is_remembered_for_the_same_file_and_build(tmp_path: Path, model_file: Path) -> None:
    cache = FlashChoiceCache(tmp_path / "cache" / "flash.json")
    key = choice_key(model_file, BUILD, n_gpu_layers=-1)
    first = Measure(1.0, 2.0)
    assert choose_flash(key, cache, first) is True and first.calls == 1
    # Now the other path would be faster: the remembered choice stands, nothing is timed.
    second = Measure(2.0, 1.0)
    assert choose_flash(choice_key(model_file, BUILD, n_gpu_layers=-1), cache, second) is True
    assert second.calls == 0
    assert cache.get(key) == FlashTiming(on_ms=1.0, off_ms=2.0)


def test_another_build_or_a_changed_file_is_measured_again(tmp_path: Path, model_file: Path) -> None:
    cache = FlashChoiceCache(tmp_path / "flash.json")
    choose_flash(choice_key(model_file, BUILD, n_gpu_layers=-1), cache, Measure(1.0, 2.0))

    other_build = Measure(2.0, 1.0)
    assert choose_flash(choice_key(model_file, BUILD + " AVX512 = 1 |", n_gpu_layers=-1), cache, other_build) is False
    assert other_build.calls == 1
    other_offload = Measure(2.0, 1.0)
    assert choose_flash(choice_key(model_file, BUILD, n_gpu_layers=0), cache, other_offload) is False
    assert other_offload.calls == 1

    model_file.write_bytes(b"GGUF" + bytes(61))  # re-converted: another size (and mtime)
    changed = Measure(2.0, 1.0)
    assert choose_flash(choice_key(model_file, BUILD, n_gpu_layers=-1), cache, changed) is False
    assert changed.calls == 1
    stat = model_file.stat()
    os.utime(model_file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # same size, touched
    touched = Measure(1.0, 2.0)
    assert choose_flash(choice_key(model_file, BUILD, n_gpu_layers=-1), cache, touched) is True
    assert touched.calls == 1


def test_a_broken_or_unwritable_cache_costs_a_measurement_not_a_load(tmp_path: Path, model_file: Path) -> None:
    key = choice_key(model_file, BUILD, n_gpu_layers=-1)
    broken = tmp_path / "flash.json"
    for text in ("{not json", json.dumps([1, 2]), json.dumps({"version": 1, "choices": {key: {"on_ms": "x"}}})):
        broken.write_text(text)
        assert FlashChoiceCache(broken).get(key) is None
        assert choose_flash(key, FlashChoiceCache(broken), Measure(2.0, 1.0)) is False
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    measure = Measure(1.0, 2.0)
    assert choose_flash(key, FlashChoiceCache(blocked / "flash.json"), measure) is True  # its folder is a file
    assert choice_key(tmp_path / "missing.gguf", BUILD, n_gpu_layers=-1) is None
    assert choose_flash(None, FlashChoiceCache(broken), measure) is True and measure.calls == 2


class SteppingClock:
    """perf_counter for time_decode_paths: each timed decode (start, end) lasts the next
    of `durations` in turn; the paths are timed alternately, flash attention first."""

    def __init__(self, on_s: float, off_s: float):
        self.durations = (on_s, off_s)
        self.now = 100.0
        self.calls = 0

    def __call__(self) -> float:
        if self.calls % 2:
            self.now += self.durations[(self.calls // 2) % 2]
        self.calls += 1
        return self.now


@pytest.mark.parametrize(("on_s", "off_s"), [(0.001, 0.003), (0.004, 0.002)])
def test_the_decode_timing_takes_both_paths_in_turn(random_model: Path, on_s: float, off_s: float) -> None:
    engine = Engine.load(LoadOptions(model_path=random_model, n_ctx=256))
    handles = engine.handles
    try:

        def params(flash: bool):  # type: ignore[no-untyped-def]
            options = LoadOptions(model_path=random_model, n_ctx=256, n_batch=64, flash_attn=flash)
            return Engine._context_params(handles.lib, options)

        clock = SteppingClock(on_s, off_s)
        timing = time_decode_paths(handles.lib, handles.model, params, engine.n_vocab, steps=4, clock=clock)
    finally:
        engine.close()
    # 4 timed steps and 1 warm-up per path, two clock readings each.
    assert clock.calls == 2 * 2 * 5
    assert timing == FlashTiming(on_ms=pytest.approx(on_s * 1000), off_ms=pytest.approx(off_s * 1000))
    assert timing.faster is (on_s < off_s)


@pytest.mark.parametrize("flash_faster", [True, False])
def test_auto_loads_the_measured_path_and_remembers_it(
    random_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flash_faster: bool
) -> None:
    cache = tmp_path / "flash.json"
    on, off = (1.0, 2.0) if flash_faster else (2.0, 1.0)
    monkeypatch.setattr(flash_choice, "time_decode_paths", lambda *a, **k: FlashTiming(on_ms=on, off_ms=off))
    engine = Engine.load(LoadOptions(model_path=random_model, n_ctx=256), flash_cache=cache)
    try:
        assert engine.arithmetic.flash_attn is flash_faster
        assert engine.options.flash_attn is None  # the request stays "auto" for the next model
    finally:
        engine.close()
    assert remembered_timing(random_model, cache, n_gpu_layers=-1) == FlashTiming(on_ms=on, off_ms=off)

    def must_not_time(*args: object, **kwargs: object) -> FlashTiming:
        raise AssertionError("the remembered choice should have been used")

    monkeypatch.setattr(flash_choice, "time_decode_paths", must_not_time)
    engine = Engine.load(LoadOptions(model_path=random_model, n_ctx=256), flash_cache=cache)
    try:
        assert engine.arithmetic.flash_attn is flash_faster
    finally:
        engine.close()


@pytest.mark.parametrize("flash", [True, False])
def test_the_arithmetic_is_read_back_from_llama_cpp(random_model: Path, flash: bool) -> None:
    engine = Engine.load(
        LoadOptions(
            model_path=random_model,
            n_ctx=256,
            n_threads=1,
            n_threads_batch=2,
            flash_attn=flash,
            type_k="f32",
            type_v="f16",
        )
    )
    try:
        arithmetic = engine.arithmetic
    finally:
        engine.close()
    assert arithmetic.flash_attn is flash
    assert (arithmetic.type_k, arithmetic.type_v) == ("f32", "f16")
    assert (arithmetic.n_threads, arithmetic.n_threads_batch) == (1, 2)
    assert (
        arithmetic.describe()
        == f"flash attention {'on' if flash else 'off'} · KV K f32 / V f16 · 1 thread (2 for prompts)"
    )


def test_llama_cpps_own_words_win_over_the_request() -> None:
    auto_resolved = [
        "llama_context: flash_attn            = auto",
        "llama_kv_cache: size =    0.06 MiB (   256 cells,   2 layers,  1/1 seqs), K (q8_0):    0.03 MiB, V (f16):    0.03 MiB",
        "resolve_fused_ops: Flash Attention was auto, set to disabled",
    ]
    read = read_arithmetic(auto_resolved, asked_flash=None, type_k="f16", type_v="f16", n_threads=2, n_threads_batch=2)
    assert (read.flash_attn, read.type_k, read.type_v) == (False, "q8_0", "f16")
    unknown = read_arithmetic(
        ["something else"], asked_flash=True, type_k="f16", type_v="f16", n_threads=1, n_threads_batch=1
    )
    assert unknown.flash_attn is True and unknown.kv_types == "f16"
