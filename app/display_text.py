"""Text read from files (a session's title, a model's general.name) as a terminal may show it.

Such text is anyone's: a title can hold the escape sequences that set the terminal's title
or clear its screen, a GGUF name can be a megabyte long. Every listing shows it through
`display_safe`: control characters written out as escapes, and cut to a width.
"""

from __future__ import annotations

import unicodedata

from rich.cells import cell_len, set_cell_size

_BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Marks that reorder the text after them on screen (a row's other columns too)."""


def escaped(text: str) -> str:
    """`text` with its control characters (C0, DEL, C1, line and paragraph separators, bidi
    overrides) written as Python escapes: '\\x1b]0;hi\\x07', never the sequence itself."""
    if text.isprintable():
        return text
    return "".join(_escape(char) for char in text)


def _escape(char: str) -> str:
    if char.isprintable() or (char not in _BIDI_CONTROLS and unicodedata.category(char) not in ("Cc", "Zl", "Zp")):
        return char  # a space, or a format character that only joins (ZWJ in an emoji)
    return ascii(char)[1:-1]


def clip(text: str, width: int) -> str:
    """`text` in at most `width` cells (a wide character takes two), cut with '…'."""
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return text
    kept = set_cell_size(text, width - 1)
    if not text.startswith(kept):
        kept = kept[:-1]  # the space that stood for half of a wide character
    return kept + "…"


def display_safe(text: str, width: int) -> str:
    """`text` escaped, then cut to `width` cells: one row's cell of a listing."""
    # Only the start is escaped and measured, so a megabyte name costs what a short one does;
    # no character takes less than no cell, and an escape takes more than one.
    limit = max(width, 0) * 4
    shown = escaped(text[:limit]) + ("…" if len(text) > limit else "")
    return clip(shown, width)
