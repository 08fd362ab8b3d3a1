"""Which language the interface speaks: [ui] language, else the locale as gettext reads it."""

from __future__ import annotations

import os

import pytest

from scriptorium.app.i18n.choice import chosen_language


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, "en"),
        ({"LANG": "it_IT.UTF-8"}, "it"),
        ({"LANG": "it_CH"}, "it"),
        ({"LANG": "en_GB.UTF-8"}, "en"),
        ({"LANG": "de_DE.UTF-8"}, "en"),
        ({"LC_MESSAGES": "it_IT.UTF-8", "LANG": "en_US.UTF-8"}, "it"),
        ({"LC_ALL": "en_US.UTF-8", "LC_MESSAGES": "it_IT.UTF-8"}, "en"),
        ({"LANGUAGE": "it", "LC_ALL": "en_US.UTF-8"}, "it"),
        ({"LANGUAGE": "fr:it", "LANG": "fr_FR.UTF-8"}, "it"),  # the first language there is a catalog for
        ({"LANGUAGE": "en:it", "LANG": "it_IT.UTF-8"}, "en"),
        ({"LANGUAGE": "", "LANG": "it_IT.UTF-8"}, "it"),  # set but empty: the next variable decides
        ({"LC_ALL": "C", "LANG": "it_IT.UTF-8"}, "en"),
    ],
)
def test_auto_follows_the_locale_as_gettext_does(environ: dict[str, str], expected: str) -> None:
    assert chosen_language("auto", environ) == expected


def test_a_named_language_wins_over_the_locale() -> None:
    assert chosen_language("en", {"LANG": "it_IT.UTF-8", "LANGUAGE": "it"}) == "en"
    assert chosen_language("it", {"LANG": "en_US.UTF-8"}) == "it"


def test_the_suite_speaks_english_whatever_the_machines_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    """tests/conftest.py pins the language: an Italian machine runs the suite in English."""
    monkeypatch.setenv("LANG", "it_IT.UTF-8")
    monkeypatch.setenv("LC_MESSAGES", "it_IT.UTF-8")
    assert chosen_language("auto", os.environ) == "en"
