"""Which language the interface speaks: decided once, at start-up, from [ui] language and
the environment, then handed down."""

from __future__ import annotations

from collections.abc import Mapping

LANGUAGES = ("auto", "en", "it")
"""[ui] language's values: 'auto' follows the locale; the others are the catalogs shipped."""
_LOCALE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
"""In gettext's order (Python's gettext.find): the first one set decides."""


def chosen_language(setting: str, environ: Mapping[str, str]) -> str:
    """'it' or 'en': the setting if it names one, else the locale's: Italian for 'it*'
    ('it_IT.UTF-8', 'it_CH', 'fr:it'), English otherwise, and where nothing is set."""
    if setting != "auto":
        return setting
    for variable in _LOCALE_VARIABLES:
        if value := environ.get(variable):
            # A list of preferences ('fr:it'), as LANGUAGE may hold: the first language we have
            # wins, as gettext takes the first it has a catalog for; 'C' stops the search, as
            # there. English is the source, so it needs no catalog.
            for wanted in value.split(":"):
                if wanted.lower().startswith("it"):
                    return "it"
                if wanted.lower().startswith("en") or wanted in ("C", "POSIX"):
                    return "en"
            return "en"
    return "en"
