"""How numbers and tokens read in the panels. Display only: values are never re-derived."""

from __future__ import annotations

import unicodedata
from typing import Sequence, TypeVar

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text

from scriptorium.app.i18n.numbers import NumberFormat, english
from scriptorium.app.display_text import clip  # noqa: F401  (re-exported for the panels)
from scriptorium.app.units import format_bytes, format_count  # noqa: F401  (re-exported for the panels)

T = TypeVar("T", str, Text)

_EIGHTHS = " ▏▎▍▌▋▊▉"
_VISIBLE = str.maketrans({" ": "␣", "\n": "⏎", "\t": "⇥", "\r": "␍"})


def visible_token(text: str) -> str:
    """A token as a reader can see it: spaces and line breaks drawn, never blank. A token of
    characters that take no cell (a zero-width joiner, a variation selector) is named by
    code point; a combining mark is drawn on a dotted circle, not on the cell before it."""
    if not text:
        return "∅"
    shown = text.translate(_VISIBLE)
    if unicodedata.combining(shown[0]):
        return "◌" + shown
    return shown if cell_len(shown) else " ".join(f"U+{ord(c):04X}" for c in shown)


def fitting(width: int, *texts: T) -> T:
    """The first of `texts` (plain or styled, the fullest first) that fits in `width`
    cells, else the last cut."""
    for text in texts:
        if (text.cell_len if isinstance(text, Text) else cell_len(text)) <= width:
            return text
    last = texts[-1]
    if isinstance(last, Text):
        cut = last.copy()
        cut.truncate(width, overflow="ellipsis")
        return cut  # type: ignore[return-value]
    return clip(last, width)  # type: ignore[return-value]


def percent(p: float, number: NumberFormat = english) -> str:
    """A probability as a percentage: one decimal ('12.3%'), or its first significant digit
    where that would read 0.0% ('0.003%', '3e-05%'): what the model gave a word it did not
    expect, or a byte token, is small, not nothing (one digit: the panel's line is narrow)."""
    shown = p * 100
    return f"{number(shown, '.1f')}%" if shown >= 0.05 or shown == 0 else f"{number(shown, '.1g')}%"


def leading_parts(parts: Sequence[str], width: int, *, more: str = "") -> str:
    """As many of `parts` as fit in `width` cells, from the first, joined with " · ", each
    whole: a part cut at the edge ("top-p 0.…") reads as another value. `more` (" · …")
    ends the line when parts were left out, if it fits too; "" when not even the first fits."""
    for count in range(len(parts), 0, -1):
        joined = " · ".join(parts[:count])
        for shown in (joined + more, joined) if count < len(parts) else (joined,):
            if cell_len(shown) <= width:
                return shown
    return ""


def border_text_room(outer_width: int) -> int:
    """Cells a title (or subtitle) has in a round or thick border `outer_width` wide: Textual
    draws a corner, a line and a space on each side of it."""
    return outer_width - 6


def pad(text: str, width: int) -> str:
    """`text` followed by spaces to fill `width` cells: a column that lines up with wide characters."""
    return text + " " * max(width - cell_len(text), 0)


def bar(fraction: float, width: int) -> str:
    """A horizontal bar `width` cells wide, filled to `fraction` in eighths of a cell."""
    if width <= 0:
        return ""
    fraction = min(max(fraction, 0.0), 1.0)
    eighths = round(fraction * width * 8)
    full, rest = divmod(eighths, 8)
    return ("█" * full + (_EIGHTHS[rest] if rest else "")).ljust(width)


def meter(done: int, total: int, width: int, fill_style: Style, empty_style: Style) -> Text:
    """A meter of `done` out of `total` cells' worth, e.g. tokens in the KV cache."""
    width = max(width, 1)
    filled = round(width * done / total) if total > 0 else 0
    filled = min(max(filled, 1 if done > 0 else 0), width)
    text = Text("█" * filled, style=fill_style)
    text.append("░" * (width - filled), style=empty_style)
    return text


def format_ms(ms: float, number: NumberFormat = english) -> str:
    return f"{number(ms, ',.1f')} ms" if ms < 10_000 else f"{number(ms / 1000, ',.2f')} s"


def format_rate(tokens_per_s: float, number: NumberFormat = english) -> str:
    return f"{number(tokens_per_s, ',.1f')} tok/s"
