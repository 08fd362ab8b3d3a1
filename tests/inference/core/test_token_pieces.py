"""Every token's bytes at once (native.all_token_pieces): the C helper (_pieces.c) writes what
llama.cpp's llama_token_to_piece writes, token by token, as the Python loop it replaces does."""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any, Iterator

import pytest

from gguf_models import write_llama_model
from scriptorium.inference.core import native

PIECE_FUNCTION = ctypes.CFUNCTYPE(
    ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_bool
)
"""llama_token_to_piece's signature, the output buffer as an address."""


MODELS = {
    # The author's layout: 16k pieces, byte tokens <0x00>..<0xFF>, control tokens.
    "authors-layout": {},
    # Unused tokens after the byte tokens, as in Gemma 3, and FIM control tokens at the end.
    "unused-and-fim": {"unused_tokens": 20, "fim_tokens": True},
}


@pytest.fixture(params=MODELS)
def vocabulary(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Any, Any, int]]:
    """(llama_cpp's bindings, a vocabulary of MODELS, its size), loaded by llama.cpp from a
    model file without its weights."""
    path = write_llama_model(tmp_path / "model.gguf", **MODELS[request.param])
    lib = native.llama()
    params = lib.llama_model_default_params()
    params.vocab_only = True
    model = lib.llama_model_load_from_file(str(path).encode(), params)
    assert model
    vocab = lib.llama_model_get_vocab(model)
    try:
        yield lib, vocab, lib.llama_vocab_n_tokens(vocab)
    finally:
        lib.llama_model_free(model)


def test_the_c_helper_writes_every_tokens_bytes_as_llama_cpp_does(vocabulary: tuple[Any, Any, int]) -> None:
    pytest.importorskip("scriptorium.inference.core._pieces")
    lib, vocab, n_vocab = vocabulary
    compiled = native.all_token_pieces(lib, vocab, n_vocab)
    assert compiled == native.all_token_pieces(lib, vocab, n_vocab, compiled=False)
    assert len(compiled) == n_vocab and b"" in compiled and bytes([0xFF]) in compiled


def test_a_piece_longer_than_the_room_given_is_asked_for_again() -> None:
    """llama_token_to_piece returns minus the size it needs when the buffer is short: the
    helper then asks again with that much room (a Python stand-in for llama.cpp here)."""
    pieces = [b"", b"a", b"x" * 300, "▁casa".encode(), b"y" * 5000, b"\x00"]
    asked: list[tuple[int, int]] = []

    @PIECE_FUNCTION
    def to_piece(vocab: int, token: int, buffer: int, room: int, lstrip: int, special: bool) -> int:
        asked.append((token, room))
        assert (lstrip, special) == (0, False)
        piece = pieces[token]
        if len(piece) > room:
            return -len(piece)
        ctypes.memmove(buffer, piece, len(piece))
        return len(piece)

    token_pieces = pytest.importorskip("scriptorium.inference.core._pieces").token_pieces
    assert token_pieces(ctypes.cast(to_piece, ctypes.c_void_p).value, 1, len(pieces)) == pieces
    assert (2, 256) in asked and (2, 300) in asked and (4, 5000) in asked
