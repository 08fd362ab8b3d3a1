"""How numbers and tokens read in the panels. Display only: values are never re-derived."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

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


def format_bytes(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{count} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def format_count(count: int) -> str:
    """2154816 -> '2.15M', 268098176 -> '268M', 7241732096 -> '7.24B'."""
    for divisor, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if count >= divisor:
            value = count / divisor
            return f"{value:.3g}{suffix}"
    return str(count)


def format_ms(ms: float) -> str:
    return f"{ms:,.1f} ms" if ms < 10_000 else f"{ms / 1000:,.2f} s"


def format_rate(tokens_per_s: float) -> str:
    return f"{tokens_per_s:,.1f} tok/s"
