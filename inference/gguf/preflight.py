"""What llama.cpp is known to abort on, checked before it sees a model file.

These files parse, and llama.cpp then stops the whole process with a GGML_ASSERT (while
loading, or at the first decode), which no Python code can catch: the author's unsaved
words would go with it. Each check names the file and what is wrong in one line.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from ..core.errors import ModelLoadError
from .gguf_header import GGUFHeader

LLAMA_MAX_LAYERS = 512
"""llama-hparams.h: more layers fail `n_layer_all <= LLAMA_MAX_LAYERS`."""
TOKEN_TEXTS = "tokenizer.ggml.tokens"
"""Read whole (as bytes) for the duplicate check: llama.cpp maps text to id and asserts
that the map holds as many entries as the vocabulary."""
TOKEN_TYPES = "tokenizer.ggml.token_type"
TOKEN_TYPE_BYTE = 6
BYTE_TOKEN_TEXT = re.compile(rb"<0x[0-9A-Fa-f]{2}>")
"""How a byte token reads: llama.cpp takes its value from characters 3 and 4 of the text
(llama_vocab::token_to_byte), and a shorter text throws out of its std::string."""
WORDPIECE = "bert"
"""tokenizer.ggml.model of llama.cpp's WordPiece vocabulary, which aborts on any byte token."""
ROPE_SCALING_TYPES = ("none", "linear", "yarn", "longrope")
"""llama-model.cpp's LLAMA_ROPE_SCALING_TYPES: any other name fails a GGML_ASSERT while loading."""


def check_model(path: Path, header: GGUFHeader, arch: str, n_layer: int) -> None:
    """Raise ModelLoadError for a model llama.cpp would abort on, or load with figures no
    model has (heads of no width): each names the key."""
    if n_layer > LLAMA_MAX_LAYERS:
        raise ModelLoadError(
            f"model {path} declares {n_layer} layers; llama.cpp supports at most "
            f"{LLAMA_MAX_LAYERS} (block_count is corrupt)"
        )
    _check_heads(path, header, arch, n_layer)
    scaling = header.get(f"{arch}.rope.scaling.type")
    if scaling is not None and scaling not in ROPE_SCALING_TYPES:
        raise ModelLoadError(
            f"model {path} has {arch}.rope.scaling.type = {str(scaling)[:40]!r}; llama.cpp "
            f"knows {', '.join(ROPE_SCALING_TYPES[:-1])} and {ROPE_SCALING_TYPES[-1]}"
        )
    _check_byte_tokens(path, header)
    for key, value in header.metadata.items():
        # layer_norm_rms_epsilon, layer_norm_epsilon...: the norms assert eps >= 0.
        if key.startswith(f"{arch}.") and key.endswith("epsilon") and not _finite_non_negative(value):
            shown = f"{value:g}" if isinstance(value, float) else repr(value)
            raise ModelLoadError(f"model {path} has {key} = {shown}; llama.cpp needs a finite number of 0 or more")
    texts = header.get(TOKEN_TEXTS)
    if texts is not None and len(set(texts)) != len(texts):
        first, second, text = _first_duplicate(texts)
        raise ModelLoadError(
            f"model {path} has tokens {first} and {second} with the same text "
            f"{text.decode('utf-8', 'replace')!r}; llama.cpp needs every token text once"
        )


def _check_heads(path: Path, header: GGUFHeader, arch: str, n_layer: int) -> None:
    """Every layer with attention has KV heads, no more than its query heads and a whole
    number of query heads to each (llama.cpp's GQA), and heads at least one value wide."""
    heads_key, kv_key = f"{arch}.attention.head_count", f"{arch}.attention.head_count_kv"
    heads = _per_layer(header.get(heads_key), n_layer)
    kv_heads = _per_layer(header.get(kv_key), n_layer) if kv_key in header.metadata else heads
    for layer, (n_head, n_kv) in enumerate(zip(heads, kv_heads)):
        where = f" on layer {layer}" if isinstance(header.get(kv_key), tuple) else ""
        if n_head and not n_kv:
            raise ModelLoadError(f"model {path} has {kv_key} = 0{where}; a layer with attention needs a KV head")
        if n_kv and (n_kv > n_head or n_head % n_kv):
            raise ModelLoadError(
                f"model {path} has {kv_key} = {n_kv}{where} for {n_head} attention heads; "
                "llama.cpp needs the heads to be a whole multiple of the KV heads"
            )
    n_embd = header.get(f"{arch}.embedding_length")
    widest = max(heads, default=0)
    if f"{arch}.attention.key_length" not in header.metadata and isinstance(n_embd, int) and widest > n_embd:
        raise ModelLoadError(
            f"model {path} has {heads_key} = {widest:,}, more than its embedding_length "
            f"{n_embd:,}: its heads would have no width"
        )


def _per_layer(value: object, n_layer: int) -> tuple[int, ...]:
    """A per-layer count as llama.cpp reads it: one for every layer, or an array of them;
    a value of another type is llama.cpp's to refuse (it names the key)."""
    values = value if isinstance(value, tuple) else (value,) * n_layer
    return tuple(v for v in values if isinstance(v, int) and not isinstance(v, bool))


def _check_byte_tokens(path: Path, header: GGUFHeader) -> None:
    """Byte tokens (tokenizer.ggml.token_type 6) as llama.cpp reads them at load."""
    types, texts = header.get(TOKEN_TYPES), header.get(TOKEN_TEXTS)
    if types is None:
        return
    import numpy as np

    byte_ids = np.flatnonzero(np.asarray(types) == TOKEN_TYPE_BYTE)
    if not len(byte_ids):
        return
    tokenizer = header.get("tokenizer.ggml.model")
    if tokenizer == WORDPIECE:
        raise ModelLoadError(
            f"model {path} has tokenizer.ggml.model = {WORDPIECE!r} and {len(byte_ids):,} byte "
            f"tokens (from id {byte_ids[0]}); llama.cpp's WordPiece tokenizer aborts on byte tokens"
        )
    if texts is None:
        return
    for token in byte_ids:
        text = texts[token] if token < len(texts) else b""
        if not isinstance(text, bytes) or not BYTE_TOKEN_TEXT.fullmatch(text):
            shown = text[:20].decode("utf-8", "replace") if isinstance(text, bytes) else str(text)[:20]
            raise ModelLoadError(
                f"model {path} marks token {token} as a byte token ({TOKEN_TYPES} {TOKEN_TYPE_BYTE}), "
                f"but its text {shown!r} is not <0xNN>: llama.cpp cannot read its byte"
            )


def _finite_non_negative(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def _first_duplicate(texts: tuple[bytes, ...]) -> tuple[int, int, bytes]:
    seen: dict[bytes, int] = {}
    for index, text in enumerate(texts):
        if text in seen:
            return seen[text], index, text
        seen[text] = index
    raise ValueError("no duplicate")
