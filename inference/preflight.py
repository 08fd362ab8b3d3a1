"""What llama.cpp is known to abort on, checked before it sees a model file.

These files parse, and llama.cpp then stops the whole process with a GGML_ASSERT (while
loading, or at the first decode), which no Python code can catch: the author's unsaved
words would go with it. Each check names the file and what is wrong in one line.
"""

from __future__ import annotations

import math
from pathlib import Path

from .errors import ModelLoadError
from .gguf_header import GGUFHeader

LLAMA_MAX_LAYERS = 512
"""llama-hparams.h: more layers fail `n_layer_all <= LLAMA_MAX_LAYERS`."""
TOKEN_TEXTS = "tokenizer.ggml.tokens"
"""Read whole (as bytes) for the duplicate check: llama.cpp maps text to id and asserts
that the map holds as many entries as the vocabulary."""


def check_model(path: Path, header: GGUFHeader, arch: str, n_layer: int) -> None:
    """Raise ModelLoadError for a model llama.cpp would abort on."""
    if n_layer > LLAMA_MAX_LAYERS:
        raise ModelLoadError(f"model {path} declares {n_layer} layers; llama.cpp supports at most "
                             f"{LLAMA_MAX_LAYERS} (block_count is corrupt)")
    for key, value in header.metadata.items():
        # layer_norm_rms_epsilon, layer_norm_epsilon...: the norms assert eps >= 0.
        if key.startswith(f"{arch}.") and key.endswith("epsilon") and not _finite_non_negative(value):
            shown = f"{value:g}" if isinstance(value, float) else repr(value)
            raise ModelLoadError(f"model {path} has {key} = {shown}; llama.cpp needs a finite number of 0 or more")
    texts = header.get(TOKEN_TEXTS)
    if texts is not None and len(set(texts)) != len(texts):
        first, second, text = _first_duplicate(texts)
        raise ModelLoadError(f"model {path} has tokens {first} and {second} with the same text "
                             f"{text.decode('utf-8', 'replace')!r}; llama.cpp needs every token text once")


def _finite_non_negative(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def _first_duplicate(texts: tuple[bytes, ...]) -> tuple[int, int, bytes]:
    seen: dict[bytes, int] = {}
    for index, text in enumerate(texts):
        if text in seen:
            return seen[text], index, text
        seen[text] = index
    raise ValueError("no duplicate")
