"""What a GGUF file says about a model or an adapter, as plain data: gguf_file.py reads
and checks the file, everyone else (the Backend protocol, KV-cache accounting, the wire to
the engine's child, the app's status) only holds these."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class ModelFacts:
    """What a GGUF file says about its model, read without loading the weights."""

    path: Path
    name: str
    architecture: str
    parameters: int
    file_type: str
    file_size: int
    vocab_size: int
    context_length: int
    n_layer: int
    n_embd: int
    n_head: int
    n_head_kv: tuple[int, ...]
    """Per layer: llama.cpp allows the KV head count to vary by layer."""
    key_length: int
    value_length: int
    sliding_window: int | None
    swa_layers: tuple[bool, ...]
    """Per layer: True where llama.cpp uses the sliding-window cache."""
    has_chat_template: bool
    byte_token_ids: tuple[int, ...]
    tokenizer_model: str = ""
    """tokenizer.ggml.model: 'llama' for SentencePiece, 'gpt2' for byte-level BPE..."""
    add_bos: bool | None = None
    """tokenizer.ggml.add_bos_token; None when the file leaves it to llama.cpp."""
    add_space_prefix: bool = True
    """tokenizer.ggml.add_space_prefix (llama.cpp's default when absent: true)."""
    named_token_ids: tuple[int, ...] = ()
    """Unknown, control and unused tokens (gguf_file.TOKEN_TYPES_NAMED): not text to write into a draft."""
    unknown_token_ids: tuple[int, ...] = ()
    """<unk>: the token a SentencePiece model reads any character it has no piece for as.
    The panels name it, never show the characters it stood for as if they were its text."""
    tiled_weights: bool = False
    """Whether any weight is of a type (K-quants, most IQ types) that llama.cpp's CPU backend
    multiplies with its tiled kernel in a batch of 8 rows or more, summing in another order than
    for one row: speculation's passes stay under it by default (speculation.py)."""
    longest_token_chars: int = 1
    """The most characters of text one token stands for, byte tokens aside (a byte token covers
    at most one character): the window search's bound (window.py). A token's text is never
    shorter than the characters it covers: SentencePiece writes a space as one ▁, byte-level
    BPE a byte as one character (so a character as one to four), and special tokens are their
    own text."""

    @property
    def gqa_ratio(self) -> float:
        """Query heads per KV head: 1 is plain multi-head attention, n_head is MQA."""
        kv = max(self.n_head_kv) or 1
        return self.n_head / kv

    @property
    def attention_kind(self) -> str:
        kv = max(self.n_head_kv)
        if kv == self.n_head:
            return "MHA"
        return "MQA" if kv == 1 else "GQA"


@dataclass(frozen=True, slots=True)
class AdapterFacts:
    path: Path
    architecture: str
    alpha: float | None
    file_size: int
