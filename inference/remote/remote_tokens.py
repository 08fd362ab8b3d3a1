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
character is the one; the others are counted by asking about halves of them (COUNT_REQUESTS
at most). The error is the local one, UnencodableTextError, which the draft window and the
chat then place in the author's text as they do locally.
"""

from __future__ import annotations

from collections import deque

from ..vocab.tokenizer import UnencodableTextError, describe_position
from .remote_http import NoPieceRefused, ServerClient

COUNT_REQUESTS = 32
"""The most requests counting the other characters the server refuses may take: past them
the author is told "at least" so many (a pasted page of a script the vocabulary cannot
write would otherwise take two requests a character, at every pause in typing)."""


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
    later = sorted(set(text[index + 1 :]) - set(text[:refused]))
    others, at_least = _count_refused(client, later)
    return UnencodableTextError(text[index], describe_position(text, index), others, index, at_least)


def _count_refused(client: ServerClient, characters: list[str]) -> tuple[int, bool]:
    """How many of `characters` the server cannot tokenize, and whether that is a floor.
    Halves of the refused groups are asked about, the largest groups first: a request or two
    per group split, down to each refused character, for at most COUNT_REQUESTS requests; a
    script the vocabulary has no pieces for would take two requests per character."""
    if not characters or not _refused(client, " ".join(characters), False):
        return 0, False
    refused_groups = deque([characters])  # each holds at least one character the server refuses
    found, asked = 0, 1
    while refused_groups:
        group = refused_groups.popleft()
        if len(group) == 1:
            found += 1
            continue
        if asked + 2 > COUNT_REQUESTS:
            return found + 1 + len(refused_groups), True
        half = len(group) // 2
        first, second = group[:half], group[half:]
        asked += 1
        if not _refused(client, " ".join(first), False):
            refused_groups.append(second)  # the group's refused character is there: no need to ask
            continue
        refused_groups.append(first)
        asked += 1
        if _refused(client, " ".join(second), False):
            refused_groups.append(second)
    return found, False
