"""One language of the interface: its words (a gettext catalog, domain `scriptorium`) and its
numbers. Chosen once at start-up (choice.py) and handed down to the screens and widgets,
which translate where they show a string, never at import time."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from scriptorium.app.i18n.numbers import LocaleNumbers, NumberFormat, english

if TYPE_CHECKING:
    from gettext import NullTranslations

DOMAIN = "scriptorium"
LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"
"""app/locale/<code>/LC_MESSAGES/scriptorium.mo, shipped with the package."""


def _same_plural(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


class Language:
    """What a widget needs to speak the author's language: `gettext` and `ngettext` (names
    Babel's extraction knows), and `number` (numbers.py). A plain class, not a dataclass: it is
    on the path to the first screen, where a dataclass's generated methods cost a millisecond."""

    __slots__ = ("code", "translations", "number")

    def __init__(
        self, code: str = "en", translations: "NullTranslations | None" = None, number: NumberFormat = english
    ) -> None:
        self.code = code
        self.translations = translations
        """None for English, the source: every string is its own translation."""
        self.number = number

    def __repr__(self) -> str:
        return f"Language({self.code!r})"

    def gettext(self, message: str) -> str:
        # gettext("") is the catalog's header, never what an empty tooltip means.
        return message if self.translations is None or not message else self.translations.gettext(message)

    def pgettext(self, context: str, message: str) -> str:
        """`message` where the same English needs another translation: 'none' of an adapter is
        'nessuno' in Italian, of the stop strings 'nessuna'."""
        return message if self.translations is None else self.translations.pgettext(context, message)

    def ngettext(self, singular: str, plural: str, count: int) -> str:
        if self.translations is None:
            return _same_plural(singular, plural, count)
        return self.translations.ngettext(singular, plural, count)

    @classmethod
    def load(cls, code: str) -> "Language":
        """The language `code` ('en', 'it'). English is the source: no catalog, nothing read,
        gettext not even imported (start-up). Another reads its compiled catalog (a missing
        one is a broken install, and says so)."""
        if code == "en":
            return ENGLISH
        import gettext

        with open(LOCALE_DIR / code / "LC_MESSAGES" / f"{DOMAIN}.mo", "rb") as catalog:
            return cls(code, gettext.GNUTranslations(catalog), LocaleNumbers(code))


ENGLISH = Language()
"""The default: the source strings, Python's number formats."""
