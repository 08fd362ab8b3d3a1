"""Text to token ids on llama-server (`POST /tokenize`), and text it cannot tokenize
refused as the local engine refuses it.

A SentencePiece vocabulary with no byte tokens has no way to write a character it has no
piece for: llama.cpp looks for its bytes among the byte tokens and throws, which
llama-server answers with HTTP 500 `unordered_map::at` (and /completion with 400): only
that refusal is searched, any other is said as the server (or a gateway before it) gave it. The
local engine refuses such text before tokenizing, naming the character and where it is
(tokenizer.CharacterGuard): it knows the pieces, which the server does not list. So when
the server refuses a text, the shortest beginning of it the server refuses is searched
for, halving (a dozen requests for a long draft, and only on a refusal): its last
character is the one; the others are counted by asking about halves of them. The error is the local one, UnencodableTextError, which the draft
window and the chat then place in the author's text as they do locally.
"""

from __future__ import annotations

from .remote_http import NoPieceRefused, ServerClient
from .tokenizer import UnencodableTextError, describe_position


def server_tokens(client: ServerClient, text: str, special: bool) -> list[int]:
    """The server's tokens for `text` as a prompt (its BOS included); UnencodableTextError
    for a character its vocabulary cannot encode."""
    try:
        return _tokens(client, text, special)
    except NoPieceRefused as error:
        # Only this refusal is searched: any other (a gateway's, a server busy) is said as it is.
        raise _unencodable(client, text, special) or error from None


def _tokens(client: ServerClient, text: str, special: bool) -> list[int]:
    answer = client.post("/tokenize", {"content": text, "add_special": True, "parse_special": special})
    return [int(t) for t in answer.get("tokens", [])] if isinstance(answer, dict) else []


def _refused(client: ServerClient, text: str, special: bool) -> bool:
    try:
        _tokens(client, text, special)
    except NoPieceRefused:
        return True
    return False


def _unencodable(client: ServerClient, text: str, special: bool) -> UnencodableTextError | None:
    """The character of `text` the server cannot tokenize, as the local guard names it; None
    when the refusal is not about a character (the server refuses the empty text too, or
    the character found is tokenized on its own)."""
    if _refused(client, "", special):
        return None
    taken, refused = 0, len(text)  # text[:taken] is tokenized, text[:refused] is not
    while refused - taken > 1:
        middle = (taken + refused) // 2
        if _refused(client, text[:middle], special):
            refused = middle
        else:
            taken = middle
    index = refused - 1
    if not _refused(client, text[index], False):
        return None
    # As the local guard counts them: the other characters with no piece, each once.
    later = sorted(set(text[index + 1:]) - set(text[:refused]))
    return UnencodableTextError(text[index], describe_position(text, index), _count_refused(client, later), index)


def _count_refused(client: ServerClient, characters: list[str]) -> int:
    """How many of `characters` the server cannot tokenize, asking about halves of the
    list: a request per character only for the refused ones' halves."""
    if not characters or not _refused(client, " ".join(characters), False):
        return 0
    if len(characters) == 1:
        return 1
    half = len(characters) // 2
    return _count_refused(client, characters[:half]) + _count_refused(client, characters[half:])
