"""A llama_batch that asks for the logits of every position (scoring reads them all), made
once per request and freed with it: one wrapper per C object."""

from __future__ import annotations

import ctypes
from typing import Any, Sequence


class EveryRowBatch:
    """A llama_batch that asks for the logits of every position, made once per request."""

    def __init__(self, lib: Any, size: int):
        self._lib = lib
        self._batch = lib.llama_batch_init(size, 0, 1)
        batch = self._batch
        for i in range(size):  # every position: sequence 0, logits wanted
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = 1
        self._tokens = (ctypes.c_int32 * size).from_address(ctypes.addressof(batch.token.contents))
        self._positions = (ctypes.c_int32 * size).from_address(ctypes.addressof(batch.pos.contents))

    def filled(self, tokens: Sequence[int], first_position: int) -> Any:
        self._batch.n_tokens = len(tokens)
        self._tokens[: len(tokens)] = tokens
        self._positions[: len(tokens)] = range(first_position, first_position + len(tokens))
        return self._batch

    def free(self) -> None:
        self._lib.llama_batch_free(self._batch)
