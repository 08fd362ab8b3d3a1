"""A GGUF's vocabulary and tokenizer settings, read from its header (no llama.cpp).

Values llama.cpp defaults when a key is absent are filled in as llama.cpp fills them
for a SentencePiece ("llama") vocabulary, and the absent keys are listed, so a report
can say "add_space_prefix: true (not in the file: llama.cpp's default)".
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .gguf_file import TOKEN_TYPES, read_model_facts
from .gguf_header import read_gguf_header

TOKENS = "tokenizer.ggml.tokens"
SCORES = "tokenizer.ggml.scores"
# llama-vocab.cpp's defaults for tokenizer.ggml.model = "llama".
SPM_DEFAULTS = {
    "tokenizer.ggml.bos_token_id": 1,
    "tokenizer.ggml.eos_token_id": 2,
    "tokenizer.ggml.unknown_token_id": 0,
    "tokenizer.ggml.add_bos_token": True,
    "tokenizer.ggml.add_space_prefix": True,
    "tokenizer.ggml.remove_extra_whitespaces": False,
}


@dataclass(frozen=True, slots=True)
class GGUFVocab:
    path: Path
    tokenizer_model: str
    """tokenizer.ggml.model: 'llama' for SentencePiece, 'gpt2' for byte-level BPE..."""
    tokens: tuple[str, ...]
    scores: np.ndarray | None
    """float32, one per token; None when the file has none."""
    types: np.ndarray | None
    """gguf.TokenType values, one per token; None when the file has none."""
    bos_id: int
    eos_id: int
    unk_id: int
    add_bos: bool
    add_space_prefix: bool
    remove_extra_whitespaces: bool
    defaulted: frozenset[str]
    """Setting keys absent from the file, whose value above is llama.cpp's default."""
    embedding_rows: int
    output_rows: int | None
    """None: no output.weight, the output layer reuses the embeddings."""

    def __len__(self) -> int:
        return len(self.tokens)


def read_gguf_vocab(path: str | os.PathLike[str]) -> GGUFVocab:
    """ModelFileError (one line) for a file that is not a GGUF model."""
    facts = read_model_facts(path, preflight=False)
    header = read_gguf_header(facts.path, whole_arrays=frozenset({TOKENS, SCORES, TOKEN_TYPES}))

    def setting(key: str) -> int | bool:
        return header.get(key, SPM_DEFAULTS[key])

    def rows(name: str) -> int | None:
        tensor = next((t for t in header.tensors if t.name == name), None)
        return tensor.n_elements // facts.n_embd if tensor is not None else None

    scores, types = header.get(SCORES), header.get(TOKEN_TYPES)
    return GGUFVocab(
        path=facts.path,
        tokenizer_model=str(header.get("tokenizer.ggml.model", "")),
        # The header keeps token texts as raw bytes (as llama.cpp compares them); pieces read as text.
        tokens=tuple(raw.decode("utf-8", "replace") for raw in header.get(TOKENS, ())),
        scores=np.asarray(scores, dtype=np.float32) if scores is not None else None,
        types=np.asarray(types, dtype=np.int64) if types is not None else None,
        bos_id=int(setting("tokenizer.ggml.bos_token_id")),
        eos_id=int(setting("tokenizer.ggml.eos_token_id")),
        unk_id=int(setting("tokenizer.ggml.unknown_token_id")),
        add_bos=bool(setting("tokenizer.ggml.add_bos_token")),
        add_space_prefix=bool(setting("tokenizer.ggml.add_space_prefix")),
        remove_extra_whitespaces=bool(setting("tokenizer.ggml.remove_extra_whitespaces")),
        defaulted=frozenset(k for k in SPM_DEFAULTS if k not in header.metadata),
        embedding_rows=rows("token_embd.weight") or 0,
        output_rows=rows("output.weight"),
    )
