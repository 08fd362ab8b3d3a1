"""How to load a model: the request a loader takes, validated before llama.cpp is touched.

Plain data, apart from the engine, so that the app and any backend can build and keep one
without importing the local llama.cpp engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .kv_cache import CACHE_TYPES
from .settings import SettingsError


@dataclass(frozen=True, slots=True)
class LoadOptions:
    """How to load a model. Validated before llama.cpp is touched."""

    model_path: Path
    """The GGUF model file."""
    lora_path: Path | None = None
    """A GGUF LoRA adapter made for this model, or None."""
    lora_scale: float = 1.0
    """How strongly the adapter applies: 0 disables it, 1 is as trained."""
    n_ctx: int = 4096
    """Context size in tokens; llama.cpp rounds it up to a multiple of 256."""
    n_threads: int | None = None
    """CPU threads for decoding one token at a time; None uses every core."""
    n_threads_batch: int | None = None
    """CPU threads for prompt batches (prefill, scoring); None uses every core. Prefill is
    compute-bound and wants them all; an app that keeps one core for its UI lowers only
    n_threads."""
    n_gpu_layers: int = -1
    """Layers offloaded to the GPU (Metal on a Mac); -1 offloads all, 0 none."""
    n_batch: int = 512
    """Prompt tokens evaluated per llama_decode call during prefill."""
    type_k: str = "f16"
    """KV-cache type for keys (f16, q8_0, ...)."""
    type_v: str = "f16"
    """KV-cache type for values; a quantized V cache needs flash attention."""
    swa_full: bool = False
    """Give sliding-window layers a full-size cache (more memory, more prefix reuse)."""
    flash_attn: bool | None = None
    """Flash attention on or off; None lets llama.cpp decide for the backend."""

    def validated(self) -> "LoadOptions":
        if self.n_ctx < 64:
            raise SettingsError(f"context size must be at least 64 tokens, not {self.n_ctx}")
        if not 0.0 <= self.lora_scale <= 4.0:
            raise SettingsError(f"LoRA scale must be between 0 and 4, not {self.lora_scale}")
        for threads in (self.n_threads, self.n_threads_batch):
            if threads is not None and threads < 1:
                raise SettingsError(f"threads must be at least 1, not {threads}")
        if not 1 <= self.n_batch <= 8192:
            raise SettingsError(f"batch size must be between 1 and 8192, not {self.n_batch}")
        for name in (self.type_k, self.type_v):
            if name not in CACHE_TYPES:
                raise SettingsError(f"unknown KV-cache type '{name}' (choose from {', '.join(CACHE_TYPES)})")
        return self
