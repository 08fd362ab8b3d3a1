"""How to load a model: the request a loader takes, validated before llama.cpp is touched.

Plain data, apart from the engine, so that the app and any backend can build and keep one
without importing the local llama.cpp engine.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .kv_cache import CACHE_TYPES
from .settings import Rule, SettingsError, check_rules, rule_for, ruled

DEFAULT_CONTEXT_CAP = 4096
"""The context a model gets unless asked for more: its training context, at most this.
Llama 3.1 trains at 128k, whose KV cache alone would not fit an 8 GB machine."""


def default_context(training_context: int) -> int:
    """The context for a model whose GGUF says it was trained on `training_context` tokens
    (0 when it does not say): that, at most DEFAULT_CONTEXT_CAP, at least the rule's minimum."""
    low = int(rule_for(LoadOptions, "n_ctx").low or 1)
    return max(low, min(training_context or DEFAULT_CONTEXT_CAP, DEFAULT_CONTEXT_CAP))


def context_rounded(asked: int | None, n_ctx: int) -> str:
    """One line when llama.cpp made the context larger than asked (it rounds a context up
    to a multiple of 256), else ''."""
    if asked is None or asked == n_ctx:
        return ""
    return f"the context is {n_ctx:,} tokens: llama.cpp rounds the {asked:,} asked for up to a multiple of 256"


def beyond_training(n_ctx: int, training_context: int) -> str:
    """One line when a context of `n_ctx` tokens goes past what the model was trained on, else ''."""
    if not training_context or n_ctx <= training_context:
        return ""
    return (
        f"the context ({n_ctx:,} tokens) exceeds the {training_context:,} the model was trained on: "
        "past them its text drifts"
    )


def usable_cpus() -> frozenset[int]:
    """The numbers of the cores this process may run on (`taskset` narrows them)."""
    try:
        return frozenset(os.sched_getaffinity(0)) or frozenset({0})
    except AttributeError:  # macOS, Windows: no affinity masks
        return frozenset(range(os.cpu_count() or 1))


def usable_cores() -> int:
    """How many cores this process may run on, which "every core" means."""
    return len(usable_cpus())


@dataclass(frozen=True, slots=True)
class LoadOptions:
    """How to load a model. Validated before llama.cpp is touched."""

    model_path: Path
    """The GGUF model file."""
    lora_path: Path | None = None
    """A GGUF LoRA adapter made for this model, or None."""
    lora_scale: float = ruled(1.0, Rule("LoRA scale", 0.0, 4.0))
    """How strongly the adapter applies: 0 disables it, 1 is as trained."""
    n_ctx: int | None = ruled(None, Rule("context size", 64, 1 << 20, whole=True, optional=True))
    """Context size in tokens; llama.cpp rounds it up to a multiple of 256. None: the
    model's training context, at most DEFAULT_CONTEXT_CAP (`context_for`)."""
    n_threads: int | None = ruled(None, Rule("threads", 1, 1024, whole=True, optional=True))
    """CPU threads for decoding one token at a time; None chooses them by measurement while
    decoding (every core to start with; thread_choice.py)."""
    n_threads_batch: int | None = ruled(None, Rule("prefill threads", 1, 1024, whole=True, optional=True))
    """CPU threads for prompt batches (prefill, scoring); None chooses them by measurement
    too, apart from decode's: prefill is compute-bound and wants every core a busy
    machine leaves it."""
    n_gpu_layers: int = ruled(-1, Rule("GPU layers", -1, whole=True))
    """Layers offloaded to the GPU (Metal on a Mac); -1 offloads all, 0 none."""
    n_batch: int = ruled(512, Rule("batch size", 1, 8192, whole=True))
    """Prompt tokens evaluated per llama_decode call during prefill."""
    type_k: str = "f16"
    """KV-cache type for keys (f16, q8_0, ...)."""
    type_v: str = "f16"
    """KV-cache type for values; a quantized V cache needs flash attention."""
    swa_full: bool = False
    """Give sliding-window layers a full-size cache (more memory, more prefix reuse)."""
    flash_attn: bool | None = None
    """Flash attention on or off; None lets llama.cpp decide for the backend."""
    repack_weights: bool = False
    """Let llama.cpp repack quantized weights for its CPU kernels (`use_extra_bufts`). Off by
    default, because the instrument's speculation must write plain decoding's text: repacked,
    the Q4_K kernel computes a group of 4 rows with a gemm that sums in another order than
    its one-row gemv, so a verifying pass's rows moved the demo model's probabilities by up
    to 11 points against one-token decodes. Off, a pass of 7 rows or fewer is one-token
    decoding bit for bit (with flash attention on, and on one decode thread or before the
    257th token: docs/guide/speculative.md); it cost no decode speed and 1% of the prompt
    speed here (AVX2 EPYC, Gemma 3 270M Q4_K_M). GPU offload does not use these kernels."""
    spm_path: Path | None = None
    """The SentencePiece `.model` the model was trained with: when its pieces match the
    GGUF's, text is tokenized with it instead of llama.cpp (tokenizer.py)."""

    def context_for(self, training_context: int) -> int:
        """The context size to allocate for a model trained on `training_context` tokens."""
        return self.n_ctx if self.n_ctx is not None else default_context(training_context)

    def validated(self) -> "LoadOptions":
        """Self, or SettingsError naming the first value its field's rule refuses."""
        check_rules(self)
        for name in (self.type_k, self.type_v):
            if name not in CACHE_TYPES:
                raise SettingsError(f"unknown KV-cache type '{name}' (choose from {', '.join(CACHE_TYPES)})")
        return self
