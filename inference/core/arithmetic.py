"""Which arithmetic llama.cpp runs a model with: flash attention, KV-cache types, threads.

The choice changes the numbers, not only the speed: flash attention accumulates in f16
and an f16 KV cache rounds keys and values, so the top probabilities move by up to two
percentage points against an f32, non-flash reference. Whatever shows or records a
probability says which arithmetic produced it. The facts are read back from llama.cpp
after the context is made (its own log, its thread getters), not copied from the request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from .events import ThreadsChosen

_FLASH_LINE = re.compile(r"flash_attn\s*=\s*(enabled|disabled|auto)")
_FLASH_RESOLVED = re.compile(r"Flash Attention (?:was auto, set to )?(enabled|disabled)")
_KV_TYPES = re.compile(r"K \((\w+)\):.*V \((\w+)\):")


@dataclass(frozen=True, slots=True)
class Arithmetic:
    """How a loaded model computes: what llama.cpp actually used."""

    flash_attn: bool
    """Flash attention on (fused, f16 accumulation) or off."""
    type_k: str
    """KV-cache type of the keys (f16, q8_0, ...)."""
    type_v: str
    """KV-cache type of the values."""
    n_threads: int
    """CPU threads decoding one token at a time."""
    n_threads_batch: int
    """CPU threads evaluating prompt batches."""
    threads: ThreadsChosen | None = None
    """How the thread counts were chosen (measured or set) and why; None where not known.
    They change while the model writes (thread_choice.py): `with_threads` follows them."""
    repacked_weights: bool = False
    """Whether llama.cpp repacked the quantized weights for its CPU kernels (`use_extra_bufts`,
    LoadOptions.repack_weights, as asked: no log line says it for every backend). Not repacked,
    a verifying pass of up to 7 rows computes each row as a one-token decode does, which is
    what makes speculation's numbers plain decoding's (docs/guide/speculative.md)."""

    def with_threads(self, chosen: ThreadsChosen) -> "Arithmetic":
        """The same arithmetic on the thread counts `chosen` (they never change the numbers' meaning)."""
        return replace(self, n_threads=chosen.n_threads, n_threads_batch=chosen.n_threads_batch, threads=chosen)

    @property
    def attention(self) -> str:
        return f"flash attention {'on' if self.flash_attn else 'off'}"

    @property
    def kv_types(self) -> str:
        """'f16' when keys and values share a type, else 'K q8_0 / V f16'."""
        return self.type_k if self.type_k == self.type_v else f"K {self.type_k} / V {self.type_v}"

    @property
    def threads_text(self) -> str:
        """'2 threads', or measured: 'threads 1 of 2 (auto: 2 were slower while other work ran)'."""
        if self.threads is not None:
            return self.threads.describe()
        threads = f"{self.n_threads} thread{'s' if self.n_threads != 1 else ''}"
        if self.n_threads_batch != self.n_threads:
            threads += f" ({self.n_threads_batch} for prompts)"
        return threads

    def describe(self) -> str:
        """One line: 'flash attention off · KV f16 · 2 threads'."""
        return f"{self.attention} · KV {self.kv_types} · {self.threads_text}"

    def as_dict(self) -> dict[str, object]:
        values: dict[str, object] = {
            "flash_attn": self.flash_attn,
            "type_k": self.type_k,
            "type_v": self.type_v,
            "n_threads": self.n_threads,
            "n_threads_batch": self.n_threads_batch,
            "repacked_weights": self.repacked_weights,
        }
        if self.threads is not None:
            values.update(self.threads.as_dict())
        return values


def read_arithmetic(
    log_lines: Iterable[str],
    *,
    asked_flash: bool | None,
    type_k: str,
    type_v: str,
    n_threads: int,
    n_threads_batch: int,
    repacked_weights: bool = False,
) -> Arithmetic:
    """The arithmetic a new context runs, from what llama.cpp logged while making it.

    llama.cpp logs `flash_attn = enabled|disabled|auto` and, for auto, the resolution
    once the graph is built; the KV cache line names the K and V types. Where a line is
    missing (another llama.cpp version words it differently), the request stands in."""
    flash: bool | None = None
    for line in log_lines:
        if (match := _FLASH_RESOLVED.search(line)) or (match := _FLASH_LINE.search(line)):
            if match.group(1) != "auto":
                flash = match.group(1) == "enabled"
        elif match := _KV_TYPES.search(line):
            type_k, type_v = match.group(1), match.group(2)
    if flash is None:
        flash = bool(asked_flash)
    return Arithmetic(
        flash_attn=flash,
        type_k=type_k,
        type_v=type_v,
        n_threads=n_threads,
        n_threads_batch=n_threads_batch,
        repacked_weights=repacked_weights,
    )
