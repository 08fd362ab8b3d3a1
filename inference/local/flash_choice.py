"""Flash attention chosen by measurement, and remembered.

Which path decodes faster depends on the model and the machine (measured on one 2-core
EPYC: SmolLM2-135M 62.9 tok/s with flash attention against 80.0 without, Gemma 3 270M
37.0 against 34.3), and llama.cpp's own AUTO only asks whether the backend supports it.
So at a model's first load a few decode steps are timed each way, interleaved so that a
busy neighbour slows both alike, and the faster path is remembered per model file
(path, size, mtime), llama.cpp build (version and CPU features) and GPU offload. The
cache file is the caller's: the app passes one under its cache folder.
"""

from __future__ import annotations

import ctypes
import json
import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

CACHE_VERSION = 1
PROBE_CONTEXT = 256
"""Tokens in each probe context: enough for the prompt and the timed steps."""
PROBE_PROMPT = 16
"""Tokens evaluated before timing, so attention has a few positions to read."""
PROBE_STEPS = 6
"""Timed single-token decodes per path (after one untimed warm-up each)."""


@dataclass(frozen=True, slots=True)
class FlashTiming:
    """Median milliseconds per decoded token with flash attention on and off."""

    on_ms: float
    off_ms: float

    @property
    def faster(self) -> bool:
        """Flash attention on if it is strictly faster: on a tie the plain path wins."""
        return self.on_ms < self.off_ms


def build_id(lib: Any) -> str:
    """The llama.cpp build: llama-cpp-python's version and the CPU features compiled in."""
    import llama_cpp

    info = lib.llama_print_system_info()
    return f"llama-cpp-python {llama_cpp.__version__}; {info.decode('utf-8', 'replace').strip()}"


def choice_key(model_path: Path, build: str, *, n_gpu_layers: int) -> str | None:
    """What a measurement holds for: this file as it is now, this build and this offload
    (which picks the backend). None when the file cannot be looked at (nothing is then
    remembered)."""
    try:
        stat = Path(model_path).stat()
        where = os.path.realpath(model_path)
    except OSError:
        return None
    return json.dumps([where, stat.st_size, stat.st_mtime_ns, build, n_gpu_layers])


class FlashChoiceCache:
    """A JSON file of key -> {"flash_attn": bool, "on_ms", "off_ms"}. An unreadable or
    foreign file counts as empty and a failed write is dropped: a lost entry costs one
    measurement, never a load."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def _entries(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if (
            not isinstance(data, dict)
            or data.get("version") != CACHE_VERSION
            or not isinstance(data.get("choices"), dict)
        ):
            return {}
        return data["choices"]

    def get(self, key: str) -> FlashTiming | None:
        """The timing measured for `key`, whose `faster` is the choice; None if not measured."""
        entry = self._entries().get(key)
        if not isinstance(entry, dict):
            return None
        on, off = entry.get("on_ms"), entry.get("off_ms")
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (on, off)):
            return None
        return FlashTiming(on_ms=float(on), off_ms=float(off))

    def put(self, key: str, timing: FlashTiming) -> None:
        entries = self._entries()
        entries[key] = {"flash_attn": timing.faster, "on_ms": round(timing.on_ms, 3), "off_ms": round(timing.off_ms, 3)}
        text = json.dumps({"version": CACHE_VERSION, "choices": entries}, indent=1)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Two processes may measure at once: each writes whole, the last one stays.
            handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".flash-", suffix=".tmp")
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as out:
                    out.write(text)
                os.replace(temporary, self.path)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:
            pass


def choose_flash(key: str | None, cache: FlashChoiceCache | None, measure: Callable[[], FlashTiming]) -> bool:
    """The remembered choice for `key`, else measure, remember and return the faster path."""
    if key is not None and cache is not None:
        remembered = cache.get(key)
        if remembered is not None:
            return remembered.faster
    timing = measure()
    if key is not None and cache is not None:
        cache.put(key, timing)
    return timing.faster


def time_decode_paths(
    lib: Any,
    model: Any,
    make_params: Callable[[bool], Any],
    n_vocab: int,
    *,
    steps: int = PROBE_STEPS,
    clock: Callable[[], float] = time.perf_counter,
) -> FlashTiming:
    """Decode speed of `model` with flash attention on and off: two small contexts made by
    `make_params(flash)`, the same prompt in each, then single-token steps taken in turn."""
    contexts = {}
    try:
        for flash in (True, False):
            ctx = lib.llama_init_from_model(model, make_params(flash))
            if not ctx:
                # A path llama.cpp cannot make is never the faster one.
                return (
                    FlashTiming(on_ms=float("inf"), off_ms=0.0)
                    if flash
                    else FlashTiming(on_ms=0.0, off_ms=float("inf"))
                )
            contexts[flash] = ctx
        prompt = [1 + i % max(1, n_vocab - 1) for i in range(PROBE_PROMPT)]
        for ctx in contexts.values():
            array = (ctypes.c_int32 * len(prompt))(*prompt)
            if lib.llama_decode(ctx, lib.llama_batch_get_one(array, len(prompt))):
                return FlashTiming(on_ms=0.0, off_ms=0.0)
        token = (ctypes.c_int32 * 1)(prompt[-1])
        batch = lib.llama_batch_get_one(token, 1)
        times: dict[bool, list[float]] = {True: [], False: []}
        for step in range(steps + 1):
            for flash, ctx in contexts.items():
                started = clock()
                lib.llama_decode(ctx, batch)
                times[flash].append((clock() - started) * 1000.0)
        # The first step of each path pays for first-use allocations: not counted.
        return FlashTiming(on_ms=statistics.median(times[True][1:]), off_ms=statistics.median(times[False][1:]))
    finally:
        for ctx in contexts.values():
            lib.llama_free(ctx)


def remembered_timing(model_path: Path, cache_path: Path, *, n_gpu_layers: int) -> FlashTiming | None:
    """What the measurement at the model's first load found, if it was made with this build."""
    from ..core import native

    key = choice_key(model_path, build_id(native.llama()), n_gpu_layers=n_gpu_layers)
    return FlashChoiceCache(cache_path).get(key) if key is not None else None
