"""The draft coloured "compared with" a second model (issue 35): word by word, whether the
second model finds the author's prose more or less surprising than the first.

Both models' bits come from one comparison run (app/models/comparing.py's records: the bits
of every token and where it starts), so each was read in the same windows. Their
tokenizers may cut the text differently, so a token's bits are spread over its characters
and a word's figure is the mean over its characters of (second − first): bits per
character, comparable whatever the vocabularies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scriptorium.app.i18n.language import ENGLISH, Language
from scriptorium.app.i18n.marker import N_

_WORD = re.compile(r"\S+")

BANDS = (
    # (lowest difference in bits per character, highlight name, legend): the second model against the first.
    (0.5, "compared-more2", N_("much more surprised")),
    (0.1, "compared-more", N_("more surprised")),
    (-0.1, "", N_("about the same")),
    (-0.5, "compared-less", N_("less surprised")),
    (float("-inf"), "compared-less2", N_("much less surprised")),
)
"""A difference within ±0.1 bits per character is left uncoloured."""


def band(difference: float) -> str:
    return next(name for lowest, name, _ in BANDS if difference >= lowest)


@dataclass(frozen=True, slots=True)
class ComparedWord:
    start: int
    end: int
    difference: float
    """Mean bits per character of the second model minus the first's, over the word's characters."""


@dataclass(frozen=True, slots=True)
class DraftComparison:
    """What the draft is coloured by: the first row's label, the second's, each word's difference."""

    first: str
    second: str
    words: tuple[ComparedWord, ...]
    first_bits_per_character: float | None
    second_bits_per_character: float | None

    def word_at(self, offset: int) -> ComparedWord | None:
        return next((word for word in self.words if word.start <= offset < word.end), None)


def character_bits(text: str, token_bits: list[float], token_starts: list[int]) -> list[float | None]:
    """Each character's share of the bits of the token it belongs to (None: a character no
    position predicted, as the first token's without a BOS)."""
    shares: list[float | None] = [None] * len(text)
    carried = 0.0
    for index, (bits, start) in enumerate(zip(token_bits, token_starts)):
        if index == 0:
            continue  # nothing predicted the first token (a BOS, or characters left out)
        end = token_starts[index + 1] if index + 1 < len(token_starts) else len(text)
        end = max(min(end, len(text)), start)
        carried += bits
        if end == start:
            continue  # a byte token before the one that completes its character: its bits go with that one
        for position in range(start, end):
            shares[position] = (shares[position] or 0.0) + carried / (end - start)
        carried = 0.0
    return shares


def compared_words(text: str, first: dict, second: dict) -> DraftComparison:
    """`first` and `second`: two finished records of a comparison run on `text`."""
    mine = character_bits(text, first["token_bits"], first["token_starts"])
    theirs = character_bits(text, second["token_bits"], second["token_starts"])
    words = []
    for match in _WORD.finditer(text):
        pairs = [(a, b) for a, b in zip(mine[match.start() : match.end()], theirs[match.start() : match.end()])]
        known = [(a, b) for a, b in pairs if a is not None and b is not None]
        if known:
            difference = sum(b - a for a, b in known) / len(known)
            words.append(ComparedWord(match.start(), match.end(), difference))
    return DraftComparison(
        first["label"],
        second["label"],
        tuple(words),
        first.get("bits_per_character"),
        second.get("bits_per_character"),
    )


def highlights(comparison: DraftComparison) -> list[tuple[int, int, str]]:
    """(start, end, highlight name) of each coloured word."""
    return [(word.start, word.end, name) for word in comparison.words if (name := band(word.difference))]


def figure_at(comparison: DraftComparison, offset: int, language: Language = ENGLISH) -> str:
    """What the status bar says of the word at `offset`."""
    _ = language.gettext
    word = comparison.word_at(offset)
    if word is None:
        return _("compared with {model}").format(model=comparison.second)
    legend = next(text for lowest, _name, text in BANDS if word.difference >= lowest)
    return _("{second}: {difference} bits/char against {first} here ({legend})").format(
        second=comparison.second,
        difference=language.number(word.difference, "+.2f"),
        first=comparison.first,
        legend=_(legend),
    )
