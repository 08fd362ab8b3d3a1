"""How numbers read in the interface's language: the one rule every panel and dialog follows.

A number is written with a Python format spec (",.1f", ".3g", ","), as the panels always
wrote them: in English that is Python's own `format`, so English reads exactly as before
there was a choice ("2,248.4 ms"). Another language formats the same way, then swaps the
decimal and group symbols for its locale's, from Babel's CLDR data ("2.248,4 ms" in Italian):
digits, rounding and grouping stay the spec's, the symbols are the locale's."""

from __future__ import annotations

from collections.abc import Callable

NumberFormat = Callable[[float, str], str]
"""(value, format spec) -> the number as the interface's language writes it."""


def english(value: float, spec: str = "") -> str:
    return format(value, spec)


class LocaleNumbers:
    """Numbers in the locale `code` ('it'). Babel is imported at the first number shown, not
    before: it costs tens of milliseconds, which English never pays and Italian pays once."""

    __slots__ = ("code", "_symbols")

    def __init__(self, code: str) -> None:
        self.code = code
        self._symbols: dict[int, str] | None = None

    def __call__(self, value: float, spec: str = "") -> str:
        if self._symbols is None:
            from babel import numbers

            # Both at once: "," becomes the group symbol while "." becomes the decimal one.
            self._symbols = str.maketrans(
                {".": numbers.get_decimal_symbol(self.code), ",": numbers.get_group_symbol(self.code)}
            )
        return format(value, spec).translate(self._symbols)
