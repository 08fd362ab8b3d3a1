"""SentencePiece models trained on tests/data/italiano.txt, and GGUF conversions of them.

`train_spm` runs sentencepiece's own trainer (a fraction of a second for these sizes).
`convert_to_gguf` converts a `.model` as the author's pipeline did: tokenizer model
"llama", every piece with its score and type (SentencePiece's piece types and GGUF's
token types share their numbers), then the 256 byte tokens `<0x00>`..`<0xFF>` appended
with type BYTE when the `.model` has none of its own (`byte_tokens="none"` leaves them
out: the GGUF that makes llama.cpp abort). The weights are gguf_models' small random
llama network, sized for the vocabulary. `edit` changes the converted vocabulary before
it is written, to break the contract in one chosen way.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import gguf
import numpy as np
import sentencepiece

from gguf_models import _add_hparams, _layers, _Shape, finish
from scriptorium.inference.vocab.spm_model import BYTE, load_spm

TEXT = Path(__file__).resolve().parent / "data" / "italiano.txt"
UNSEEN = "«»?—0123456789"
"""Characters a few pages of prose may lack: trained `without` them, a model reads them as <unk>."""


def italian_lines() -> list[str]:
    return TEXT.read_text(encoding="utf-8").splitlines()


def train_spm(
    path: Path,
    *,
    model_type: str = "unigram",
    byte_fallback: bool = False,
    vocab_size: int | None = None,
    normalization: str = "nmt_nfkc",
    without: str = "",
) -> Path:
    """Train on the test text; a byte_fallback model needs 256 more pieces for its bytes.
    `without`: characters taken out of the text first, which the model then never saw."""
    model = io.BytesIO()
    removed = str.maketrans("", "", without)
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter([line.translate(removed) for line in italian_lines()]),
        model_writer=model,
        model_type=model_type,
        vocab_size=vocab_size or (800 if byte_fallback else 500),
        byte_fallback=byte_fallback,
        character_coverage=1.0,
        normalization_rule_name=normalization,
        num_threads=1,
        minloglevel=2,
    )
    path.write_bytes(model.getvalue())
    return path


def add_random_network(
    w: gguf.GGUFWriter,
    n_vocab: int,
    *,
    seed: int = 0,
    embedding_rows: int | None = None,
    output_rows: int | None = None,
) -> None:
    """The hyperparameters and seeded random weights of the small llama network above, for a
    vocabulary of `n_vocab` tokens that the caller writes (a SentencePiece conversion, say).
    `embedding_rows` / `output_rows` other than n_vocab make a model whose matrices lack rows."""
    shape = _Shape(2, 64, 4, 2, 128)
    rng = np.random.default_rng(seed)
    _add_hparams(w, shape, 2048)
    tensors = _layers(shape, rng, silent=False)
    tensors.update(
        {
            "token_embd.weight": rng.normal(0.0, 1.0, (embedding_rows or n_vocab, shape.n_embd)).astype(np.float32),
            "output_norm.weight": np.ones(shape.n_embd, np.float32),
            "output.weight": rng.normal(
                0.0, 2.5 / np.sqrt(shape.n_embd), (output_rows or n_vocab, shape.n_embd)
            ).astype(np.float32),
        }
    )
    for tname, data in tensors.items():
        w.add_tensor(tname, data)


@dataclass
class Converted:
    """The vocabulary and settings a conversion writes; `edit` may change any of them."""

    tokens: list[str]
    scores: list[float]
    types: list[int]
    add_space_prefix: bool
    unk_id: int
    bos_id: int
    eos_id: int
    embedding_rows: int | None = None
    output_rows: int | None = None


def convert_to_gguf(
    spm_path: Path,
    gguf_path: Path,
    *,
    byte_tokens: str = "append",
    edit: Callable[[Converted], None] | None = None,
    seed: int = 0,
) -> Path:
    if byte_tokens not in ("append", "none"):
        raise ValueError("byte_tokens is 'append' or 'none'")
    spm = load_spm(spm_path)
    vocab = Converted(
        list(spm.pieces), list(spm.scores), list(spm.types), spm.add_dummy_prefix, spm.unk_id, spm.bos_id, spm.eos_id
    )
    if byte_tokens == "append" and BYTE not in spm.types:
        vocab.tokens += [f"<0x{b:02X}>" for b in range(256)]
        vocab.scores += [0.0] * 256
        vocab.types += [int(gguf.TokenType.BYTE)] * 256
    if edit is not None:
        edit(vocab)
    w = gguf.GGUFWriter(str(gguf_path), "llama")
    w.add_name(f"scriptorium-test-{spm_path.stem}")
    w.add_file_type(int(gguf.LlamaFileType.ALL_F32))
    add_random_network(
        w, len(vocab.tokens), seed=seed, embedding_rows=vocab.embedding_rows, output_rows=vocab.output_rows
    )
    w.add_vocab_size(len(vocab.tokens))
    w.add_tokenizer_model("llama")
    w.add_token_list(vocab.tokens)
    w.add_token_scores(vocab.scores)
    w.add_token_types(vocab.types)
    w.add_bos_token_id(vocab.bos_id)
    w.add_eos_token_id(vocab.eos_id)
    w.add_unk_token_id(vocab.unk_id)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.add_add_space_prefix(vocab.add_space_prefix)
    finish(w)
    return gguf_path
