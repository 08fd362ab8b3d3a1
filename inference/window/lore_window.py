"""Which lore a draft prompt holds: the entries whose keys the end of the draft or the
author's note mention, fitted by priority into the lore budget (lore.py has the entries
and the matching; window.py puts the chosen block between the memory and the draft).

Why the block sits right after the memory: the memory stays the cached prefix, and an
entry that leaves lets the cache move the draft back (as when the window slides) instead
of evaluating it again. An entry that arrives pushes the draft forward: the draft after it
is evaluated again, which no position before the draft can avoid.

Pure: no llama.cpp, no Textual.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Callable

from .lore import Lorebook, LoreChoice, choose, scan, settled_end

Count = Callable[[str], int]
_GUESS_CHARS_PER_TOKEN = 8
"""Characters a token is first guessed to hold when looking for the scan's start (generous:
the guess only sets where the search starts, every probe is counted)."""


def choose_lore(lorebook: Lorebook | None, draft: str, end: int, note: str, room: int, count: Count) -> LoreChoice:
    """The lore for a prompt continuing draft[:end], with `room` tokens left by memory and
    note: at most the lorebook's budget and half that room, so the draft keeps the rest."""
    if lorebook is None or not lorebook.active:
        return LoreChoice()
    stop = settled_end(draft, end)
    start = scan_start(draft, stop, lorebook.scan_depth, count)
    fired = scan(lorebook, (draft[start:stop], note))
    return choose(fired, min(lorebook.budget, max(0, room) // 2), count)


def scan_start(text: str, end: int, depth: int, count: Count) -> int:
    """The earliest word start of text[:end] from which at most `depth` tokens reach `end`:
    only that end is tokenized, however long the text."""
    empty = count("")
    reach = depth * _GUESS_CHARS_PER_TOKEN
    while True:
        low = max(0, end - reach)
        starts = _word_starts(text, low, end)
        if low == 0 or count(text[starts[0] : end]) - empty > depth:
            break
        reach *= 4  # a text of long tokens: look further back
    fits = bisect_left(range(len(starts)), True, key=lambda i: count(text[starts[i] : end]) - empty <= depth)
    return starts[fits] if fits < len(starts) else end


def _word_starts(text: str, low: int, end: int) -> list[int]:
    starts = [low] if low == 0 or (text[low - 1].isspace() and not text[low].isspace()) else []
    starts.extend(i for i in range(low + 1, end) if text[i - 1].isspace() and not text[i].isspace())
    return starts or [end]
