"""Finding a remote vocabulary's byte tokens (<0x00>..<0xFF>) by asking the server.

llama-server reports no token types, and a byte token's text is the byte itself, so one
token alone cannot be told apart from an ordinary piece of the same character. A run of
all 256 can: SentencePiece vocabularies keep them as 256 consecutive ids in byte order,
and `POST /detokenize` of such a run gives exactly the characters U+0000..U+007F followed
by the bytes 0x80..0xFF, which are no UTF-8 on their own and come back as U+FFFD. No run
of ordinary pieces reads like that. The runs tried are where converters put them: right
after the control tokens (ids 3..258: llama 2, Mistral, TinyLlama) and after the pieces
(the last 256 ids: the author's 16k + 256 layout), and wherever the server's own
tokenizer puts them: a character no vocabulary holds as a piece (a private-use one) falls
back to byte tokens, and `/tokenize` with `with_pieces` names each one's byte, so its id
minus its byte is where the run starts (Gemma 3 keeps them at 238..493). One request per
candidate run, and one to find the last.

Every id found is below the vocabulary size the server reported, so a logit bias built
from them is never silently dropped by the server (it drops out-of-range ids).
"""

from __future__ import annotations

from typing import Protocol

from .remote_http import RequestRejected

BYTE_COUNT = 256
ASCII = "".join(chr(code) for code in range(128))
CONTROL_TOKENS = 3
"""<unk>, <s>, </s> come first in SentencePiece vocabularies; the bytes follow."""
UNLIKELY_PIECE = "\U000f0000"
"""A private-use character (bytes F3 B0 80 80): no vocabulary has it as a piece, so a
SentencePiece tokenizer with byte fallback writes it as byte tokens."""


class _Detokenizer(Protocol):
    def post(self, path: str, body: dict[str, object]) -> object: ...


def candidate_starts(n_vocab: int, fallback_start: int | None = None) -> list[int]:
    starts = [CONTROL_TOKENS, n_vocab - BYTE_COUNT] + ([fallback_start] if fallback_start is not None else [])
    return sorted({start for start in starts if 0 <= start and start + BYTE_COUNT <= n_vocab})


def fallback_start(client: _Detokenizer) -> int | None:
    """Where the byte run starts, as the tokenizer's byte fallback shows it: the id of a
    token whose piece is one byte, minus that byte (None when no piece is a lone byte,
    as in byte-level BPE, whose tokens are not byte tokens, or when there are none)."""
    try:
        answer = client.post("/tokenize", {"content": UNLIKELY_PIECE, "add_special": False, "with_pieces": True})
    except RequestRejected:
        # A SentencePiece vocabulary with no byte tokens cannot write the character at all:
        # llama.cpp throws looking for its bytes (HTTP 500 "unordered_map::at"). No byte run.
        return None
    tokens = answer.get("tokens") if isinstance(answer, dict) else None
    for token in tokens if isinstance(tokens, list) else ():
        piece = token.get("piece") if isinstance(token, dict) else None
        # A piece that is not UTF-8 comes back as a list of byte values.
        if isinstance(piece, list) and len(piece) == 1 and isinstance(piece[0], int):
            token_id = token.get("id")
            if isinstance(token_id, int):
                return token_id - piece[0]
    return None


def is_byte_run(text: str) -> bool:
    """Whether detokenizing 256 consecutive ids gave the 256 bytes in order."""
    return text.startswith(ASCII) and len(text) > len(ASCII) and set(text[len(ASCII) :]) == {"\ufffd"}


def find_byte_tokens(client: _Detokenizer, n_vocab: int) -> tuple[int, ...]:
    """The byte-token ids of the server's vocabulary, () when it has none where they are kept."""
    for start in candidate_starts(n_vocab, fallback_start(client)):
        answer = client.post("/detokenize", {"tokens": list(range(start, start + BYTE_COUNT))})
        content = answer.get("content") if isinstance(answer, dict) else None
        if isinstance(content, str) and is_byte_run(content):
            return tuple(range(start, start + BYTE_COUNT))
    return ()
