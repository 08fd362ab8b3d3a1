"""GGUF models for `scriptorium compare` and `quantize`.

- `write_quantizable_model`: the author's layout (gguf_models.py's 16k SentencePiece
  pieces + 256 byte tokens, trained on 256 tokens) 256 wide, so every weight row is a
  multiple of 256 and the K-quants apply to every tensor (no fallback types).
- `write_letter_model`: a model over the letters "a" and "b" whose every prediction is
  the same from any context: "a" with probability P_A, "b" with 1 - P_A. With
  `pairs=True` its vocabulary adds the four pairs "aa" "ab" "ba" "bb" (llama.cpp
  cuts an even-length text of a and b into pairs, from the left), each predicted with
  the product of its letters' probabilities: the same predictions on the characters,
  cut by another tokenizer.
"""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
from gguf_models import _add_hparams, _layers, _Shape, finish, write_llama_model

P_A = 0.8
LETTERS = ("a", "b")
OFF = -30.0
"""The logit of every token the model never predicts, against the likely ones near 0."""


def write_quantizable_model(path: str | Path) -> Path:
    return write_llama_model(
        path,
        kind="random",
        n_layer=1,
        n_embd=256,
        n_head=4,
        n_head_kv=2,
        n_ff=256,
        context_length=256,
        name="scriptorium-test-quantizable",
    )


def letter_probability(letter: str) -> float:
    return P_A if letter == "a" else 1.0 - P_A


def write_letter_model(path: str | Path, *, pairs: bool) -> Path:
    path = Path(path)
    words = [x + y for x in LETTERS for y in LETTERS] if pairs else []
    # The single letters are pieces of both (llama.cpp merges pieces from single
    # characters); the pair model never predicts them.
    tokens = ["<unk>", "<s>", "</s>", "\n", *LETTERS] + words
    shape = _Shape(n_layer=1, n_embd=64, n_head=4, n_head_kv=2, n_ff=64)
    tensors = _layers(shape, np.random.default_rng(0), silent=True)  # nothing depends on the context
    embd = np.zeros((len(tokens), shape.n_embd), np.float32)
    embd[:, 0] = 1.0  # every token the same input: the same prediction after any of them
    normed = 1.0 / np.sqrt(1.0 / shape.n_embd + 1e-5)  # RMS norm of that one-hot row
    logits = np.full(len(tokens), OFF)
    for index, word in enumerate(words or LETTERS, start=len(tokens) - len(words or LETTERS)):
        logits[index] = np.log(np.prod([letter_probability(c) for c in word]))
    out = np.zeros((len(tokens), shape.n_embd), np.float32)
    out[:, 0] = logits / normed
    tensors.update(
        {"token_embd.weight": embd, "output_norm.weight": np.ones(shape.n_embd, np.float32), "output.weight": out}
    )
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("scriptorium-test-letter-" + ("pairs" if pairs else "letters"))
    w.add_file_type(int(gguf.LlamaFileType.ALL_F32))
    _add_hparams(w, shape, 256)
    w.add_vocab_size(len(tokens))
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * len(tokens))
    w.add_token_types(
        [int(gguf.TokenType.UNKNOWN), int(gguf.TokenType.CONTROL), int(gguf.TokenType.CONTROL)]
        + [int(gguf.TokenType.NORMAL)] * (len(tokens) - 3)
    )
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.add_add_space_prefix(False)
    for name, data in tensors.items():
        w.add_tensor(name, data)
    finish(w)
    return path


def letter_text(length: int, seed: int = 0) -> str:
    """`length` (even) letters a and b drawn with the models' own probabilities."""
    rng = np.random.default_rng(seed)
    return "".join(np.where(rng.random(length) < P_A, "a", "b"))


def expected_bits_per_character(text: str) -> float:
    return float(sum(-np.log2(letter_probability(c)) for c in text) / len(text))
