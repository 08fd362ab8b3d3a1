"""A loaded model's vocabulary: text to tokens, tokens to bytes and to readable labels.

Separate from the engine so that generation and scoring can use it without knowing the
engine (which imports them).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ..core import native
from ..core.errors import GenerationError
from ..core.text import piece_text
from ..vocab.tokenizer import TOKEN_ATTR_BYTE, LlamaTokenizer, Tokenizer, guard_for

if TYPE_CHECKING:
    from .healing import TokenPrefixes


class _Callers:
    """The threads inside a call into the vocabulary, which its closing waits for.

    The vocabulary is read without the context's lock (the window marker counts a draft
    while a suggestion streams), so closing the engine, which frees it, must wait for
    those calls: a count still running on another thread read freed memory, and llama.cpp
    crashed the process. A call after the close raises instead."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._inside = 0
        self._closed = False

    @contextmanager
    def call(self) -> Iterator[None]:
        with self._changed:
            if self._closed:
                raise GenerationError("the model was closed")
            self._inside += 1
        try:
            yield
        finally:
            with self._changed:
                self._inside -= 1
                self._changed.notify_all()

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.wait_for(lambda: not self._inside)


class Vocabulary:
    """The llama.cpp vocabulary of one model; token pieces and labels are remembered
    (looked up again, they cost no call into llama.cpp)."""

    def __init__(
        self, lib: Any, vocab: Any, *, add_space_prefix: bool = True, byte_token_ids: tuple[int, ...] | None = None
    ):
        """`add_space_prefix`: the GGUF's tokenizer.ggml.add_space_prefix (the C API has no getter).
        `byte_token_ids`: the tokens the GGUF types as bytes (ModelFacts), when the caller read
        them: llama.cpp gives a token its byte attribute from that type alone (llama-vocab.cpp),
        and asking it token by token is 262k foreign calls on Gemma 3, half a second of CPU."""
        self._lib = lib
        self._vocab = vocab
        self.n_vocab = int(lib.llama_vocab_n_tokens(vocab))
        if byte_token_ids is None:
            byte_token_ids = tuple(
                i for i in range(self.n_vocab) if lib.llama_vocab_get_attr(vocab, i) & TOKEN_ATTR_BYTE
            )
        self.byte_token_ids = byte_token_ids
        """The <0x00>..<0xFF> byte tokens: llama.cpp's token attributes, or the GGUF types they are made from."""
        self._byte_tokens = frozenset(self.byte_token_ids)
        self.add_bos = bool(lib.llama_vocab_get_add_bos(vocab))
        self.bos_id = int(lib.llama_vocab_bos(vocab))
        self._pieces: dict[int, bytes] = {}
        self._labels: dict[int, str] = {}
        self._ends_generation: dict[int, bool] = {}
        self._callers = _Callers()
        guard = guard_for(lib, vocab, add_space_prefix=add_space_prefix, has_byte_tokens=bool(self.byte_token_ids))
        self.tokenizer: Tokenizer = LlamaTokenizer(lib, vocab, guard)
        """What cuts text into ids; the engine swaps in the author's SentencePiece model
        when it matches the vocabulary (tokenizer.py)."""

    @cached_property
    def prefixes(self) -> "TokenPrefixes":
        """Every token by its bytes, for token healing (healing.py): built once, on a thread
        as the engine loads (engine.py), then kept with the vocabulary."""
        from .healing import TokenPrefixes

        with self._callers.call():
            pieces = native.all_token_pieces(self._lib, self._vocab, self.n_vocab)
        return TokenPrefixes(pieces)

    @cached_property
    def fim_texts(self) -> tuple[str, str, str] | None:
        """The texts of the fill-in-the-middle tokens (prefix, suffix, middle: "<|fim_prefix|>"...),
        which llama.cpp finds from the GGUF's tokenizer.ggml.fim_*_token_id keys or the tokens'
        own texts; None when the vocabulary lacks any of the three."""
        lib, vocab = self._lib, self._vocab
        with self._callers.call():
            ids = [
                int(get(vocab)) for get in (lib.llama_vocab_fim_pre, lib.llama_vocab_fim_suf, lib.llama_vocab_fim_mid)
            ]
        if any(not 0 <= token_id < self.n_vocab for token_id in ids):
            return None
        pre, suf, mid = (self.token_text(token_id) for token_id in ids)
        return pre, suf, mid

    def tokenize(self, text: str, *, add_bos: bool | None = None, special: bool = False) -> list[int]:
        """Tokens of `text`; `special` parses control-token text such as <start_of_turn>.
        UnencodableTextError for text the vocabulary cannot encode (tokenizer.py)."""
        with self._callers.call():
            return self.tokenizer.tokenize(text, add_bos=self.add_bos if add_bos is None else add_bos, special=special)

    def token_bytes(self, token_id: int) -> bytes:
        piece = self._pieces.get(token_id)
        if piece is None:
            with self._callers.call():
                piece = self._pieces[token_id] = native.token_piece(self._lib, self._vocab, token_id)
        return piece

    def token_text(self, token_id: int) -> str:
        """How a token reads in a candidate list: control tokens by name, byte tokens as
        the vocabulary writes them (<0xFF>), and so the bytes of a piece that are no
        character on their own (text.piece_text)."""
        label = self._labels.get(token_id)
        if label is None:
            with self._callers.call():
                if token_id in self._byte_tokens:
                    label = self._lib.llama_vocab_get_text(self._vocab, token_id).decode("utf-8", "replace")
                else:
                    label = piece_text(native.token_piece(self._lib, self._vocab, token_id, special=True))
            self._labels[token_id] = label
        return label

    def is_end_of_generation(self, token_id: int) -> bool:
        # Asked once per generated token: remembered, it is a dict lookup, not a foreign call.
        ends = self._ends_generation.get(token_id)
        if ends is None:
            with self._callers.call():
                ends = self._ends_generation[token_id] = bool(self._lib.llama_vocab_is_eog(self._vocab, token_id))
        return ends

    def stored_text(self, token_id: int) -> bytes:
        """The token's text as the GGUF stores it (special tokens by name, byte tokens as <0xFF>)."""
        with self._callers.call():
            return bytes(self._lib.llama_vocab_get_text(self._vocab, token_id) or b"")

    def model_call(self, call: Any, *args: Any) -> Any:
        """`call(*args)` into llama.cpp on the model this vocabulary belongs to, which
        closing waits for (see _Callers)."""
        with self._callers.call():
            return call(*args)

    def close(self) -> None:
        """Wait for the calls into the vocabulary under way, and refuse the next: the
        model that holds it is about to be freed."""
        self._callers.close()
