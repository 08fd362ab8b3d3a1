"""KV-cache accounting from the model's shape, computed the way llama.cpp allocates it.

llama_kv_cache allocates, per layer, one K row of n_head_kv*key_length and one V row of
n_head_kv*value_length elements for every cell. Cells are n_ctx for ordinary layers; the
sliding-window layers of models like Gemma 3 get their own smaller cache of
pad(min(n_ctx, n_swa + n_ubatch), 256) cells (llama-kv-cache-iswa.cpp) unless swa_full.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .events import KVCacheUsage
    from .model_facts import ModelFacts

KV_PAD = 256

# ggml types usable for the cache: (elements per block, bytes per block), from ggml.c.
CACHE_TYPES: dict[str, tuple[int, int]] = {
    "f32": (1, 4),
    "f16": (1, 2),
    "bf16": (1, 2),
    "q8_0": (32, 34),
    "q4_0": (32, 18),
    "q4_1": (32, 20),
    "iq4_nl": (32, 18),
    "q5_0": (32, 22),
    "q5_1": (32, 24),
}


def row_bytes(cache_type: str, elements: int) -> int:
    block_elements, block_bytes = CACHE_TYPES[cache_type]
    return elements // block_elements * block_bytes


def pad(value: int, multiple: int = KV_PAD) -> int:
    return (value + multiple - 1) // multiple * multiple


@dataclass(frozen=True, slots=True)
class KVLayout:
    """How many cells each layer has and what one cell costs."""

    n_ctx: int
    cells_per_layer: tuple[int, ...]
    bytes_per_cell: tuple[int, ...]

    @classmethod
    def for_model(
        cls,
        facts: ModelFacts,
        n_ctx: int,
        *,
        type_k: str = "f16",
        type_v: str = "f16",
        n_ubatch: int = 512,
        swa_full: bool = False,
    ) -> "KVLayout":
        swa_cells = n_ctx
        if facts.sliding_window and not swa_full:
            swa_cells = pad(min(n_ctx, facts.sliding_window + n_ubatch))
        cells = tuple(swa_cells if is_swa else n_ctx for is_swa in facts.swa_layers)
        per_cell = tuple(
            row_bytes(type_k, kv_heads * facts.key_length) + row_bytes(type_v, kv_heads * facts.value_length)
            for kv_heads in facts.n_head_kv
        )
        return cls(n_ctx=n_ctx, cells_per_layer=cells, bytes_per_cell=per_cell)

    @property
    def bytes_allocated(self) -> int:
        return sum(c * b for c, b in zip(self.cells_per_layer, self.bytes_per_cell))

    @property
    def bytes_per_token(self) -> int:
        return sum(self.bytes_per_cell)

    @property
    def window_cells(self) -> int | None:
        """Cells of the smaller, sliding-window cache; None when every layer has n_ctx."""
        return min((c for c in self.cells_per_layer if c < self.n_ctx), default=None)

    @property
    def bytes_per_token_past_window(self) -> int | None:
        """What one more token costs once the window caches are full (their cells are
        recycled): the full-context layers only; None without a window."""
        if all(c >= self.n_ctx for c in self.cells_per_layer):
            return None
        return sum(b for c, b in zip(self.cells_per_layer, self.bytes_per_cell) if c >= self.n_ctx)

    def bytes_used(self, tokens: int) -> int:
        # A sliding-window layer never holds more cells than its cache has.
        return sum(min(tokens, c) * b for c, b in zip(self.cells_per_layer, self.bytes_per_cell))

    def usage(self, tokens: int) -> KVCacheUsage:
        # Imported here: the load options check the cache types (CACHE_TYPES) before the app's
        # first frame, which builds no event.
        from .events import KVCacheUsage

        return KVCacheUsage(
            tokens=tokens,
            n_ctx=self.n_ctx,
            bytes_allocated=self.bytes_allocated,
            bytes_used=self.bytes_used(tokens),
            bytes_per_token=self.bytes_per_token,
            window_tokens=self.window_cells,
            bytes_per_token_past_window=self.bytes_per_token_past_window,
        )
