"""How sizes and counts read, the same in the panels and on the command line. `number` is
how the interface's language writes a number (app/i18n/numbers.py); the command line's is
English, Python's own `format`."""

from __future__ import annotations

from scriptorium.app.i18n.numbers import NumberFormat, english


def format_bytes(count: int, number: NumberFormat = english) -> str:
    """1536 -> '1.5 KiB'; binary units, as llama.cpp reports its buffers."""
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{number(count, '')} B" if unit == "B" else f"{number(value, '.1f')} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def format_count(count: int, number: NumberFormat = english) -> str:
    """2154816 -> '2.15M', 268098176 -> '268M', 7241732096 -> '7.24B'."""
    for divisor, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if count >= divisor:
            return f"{number(count / divisor, '.3g')}{suffix}"
    return number(count, "")
