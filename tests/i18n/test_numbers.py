"""Numbers by the interface's language: English exactly as Python writes them, Italian with
the locale's symbols (Babel's CLDR data)."""

from __future__ import annotations

from scriptorium.app.i18n.language import ENGLISH, Language
from scriptorium.app.i18n.numbers import LocaleNumbers
from scriptorium.app.tui.widgets.formatting import format_ms, format_rate, percent
from scriptorium.app.units import format_bytes, format_count


def test_english_is_pythons_own_format() -> None:
    number = ENGLISH.number
    assert (number(4096, ","), number(2248.44, ",.1f"), number(0.5, ".0%")) == ("4,096", "2,248.4", "50%")
    assert (format_ms(2248.4), format_rate(1234.5), percent(0.123)) == ("2,248.4 ms", "1,234.5 tok/s", "12.3%")
    assert (format_bytes(1536), format_count(2154816)) == ("1.5 KiB", "2.15M")


def test_italian_groups_with_a_dot_and_marks_decimals_with_a_comma() -> None:
    number = LocaleNumbers("it")
    assert (number(4096, ","), number(2248.44, ",.1f"), number(12.5, ".2f")) == ("4.096", "2.248,4", "12,50")
    assert (format_ms(2248.4, number), format_ms(12345, number)) == ("2.248,4 ms", "12,35 s")
    assert (format_rate(1234.5, number), percent(0.123, number), percent(3e-7, number)) == (
        "1.234,5 tok/s",
        "12,3%",
        "3e-05%",
    )
    assert (format_bytes(1536, number), format_bytes(100, number), format_count(2154816, number)) == (
        "1,5 KiB",
        "100 B",
        "2,15M",
    )


def test_the_italian_language_carries_italian_numbers_and_words() -> None:
    italian = Language.load("it")
    assert italian.code == "it" and italian.number(2248.4, ",.1f") == "2.248,4"
    assert italian.gettext("Quit") == "Esci" and italian.gettext("") == ""
    assert italian.ngettext("{count} word", "{count} words", 1) == "{count} parola"
    assert Language.load("en") is ENGLISH and ENGLISH.gettext("Quit") == "Quit"
