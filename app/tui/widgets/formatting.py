"""How numbers and tokens read in the panels. Display only: values are never re-derived."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from scriptorium.app.units import format_bytes, format_count  # noqa: F401  (re-exported for the panels)

_EIGHTHS = " ▏▎▍▌▋▊▉"
_VISIBLE = str.maketrans({" ": "␣", "\n": "⏎", "\t": "⇥", "\r": "␍"})


def visible_token(text: str) -> str:
    """A token as a reader can see it: spaces and line breaks drawn, never blank."""
    return text.translate(_VISIBLE) if text else "∅"


def clip(text: str, width: int) -> str:
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


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


def format_ms(ms: float) -> str:
    return f"{ms:,.1f} ms" if ms < 10_000 else f"{ms / 1000:,.2f} s"


def format_rate(tokens_per_s: float) -> str:
    return f"{tokens_per_s:,.1f} tok/s"
