"""Finding words in the draft: where a text occurs, and which occurrence comes next.

Plain text, no widgets: the find bar (widgets/find_bar.py) asks these and moves the editor."""

from __future__ import annotations

import re
from typing import NamedTuple


class Match(NamedTuple):
    start: int
    end: int
    """Offsets into the draft's text, as TextArea.text counts them."""


def occurrences(text: str, wanted: str, *, match_case: bool) -> list[Match]:
    """Every place `wanted` occurs in `text`, left to right, none overlapping (what replacing
    all of them replaces). Without `match_case`, 'Lucia' also finds 'LUCIA' and 'lucia'."""
    if not wanted:
        return []
    flags = 0 if match_case else re.IGNORECASE
    return [Match(*found.span()) for found in re.finditer(re.escape(wanted), text, flags)]


def following(found: list[Match], offset: int, *, forward: bool) -> tuple[int, bool] | None:
    """The index in `found` of the occurrence after `offset` (before it, going back), and
    whether the search went round the draft's end to find it; None when there is none."""
    if not found:
        return None
    if forward:
        after = [index for index, match in enumerate(found) if match.start > offset]
        return (after[0], False) if after else (0, True)
    before = [index for index, match in enumerate(found) if match.start < offset]
    return (before[-1], False) if before else (len(found) - 1, True)
