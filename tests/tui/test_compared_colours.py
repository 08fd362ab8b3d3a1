"""The draft compared with a second model, word by word (issue 35), without a model: each
token's bits spread over its characters, so two tokenizers compare (the TUI: test_compare_tui.py)."""

from __future__ import annotations

import pytest

from scriptorium.app.tui.compared_colours import band, character_bits, compared_words, figure_at, highlights

TEXT = "casa buia"


def record(label: str, bits: list[float], starts: list[int]) -> dict:
    return {"label": label, "token_bits": bits, "token_starts": starts, "bits_per_character": sum(bits) / len(TEXT)}


def test_a_tokens_bits_are_shared_by_its_characters_and_bytes_go_with_their_character() -> None:
    # BOS, "ca", "sa", " buia"; the first token is never predicted.
    assert character_bits(TEXT, [0.0, 4.0, 2.0, 10.0], [0, 0, 2, 4]) == pytest.approx(
        [2.0, 2.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0]
    )
    # Two byte tokens of one character start where it does: the first's bits go with the second's.
    assert character_bits("aé", [0.0, 1.0, 3.0, 5.0], [0, 0, 1, 1]) == pytest.approx([1.0, 8.0])
    assert character_bits("ab", [7.0, 1.0], [0, 1]) == [None, 1.0]  # no BOS: the first character unpredicted


def test_words_are_coloured_by_the_difference_whatever_the_tokenizers() -> None:
    first = record("mine.gguf", [0.0, 4.0, 2.0, 10.0], [0, 0, 2, 4])  # casa 6 bits, " buia" 10
    second = record("other.gguf", [0.0, 6.0, 12.5], [0, 0, 4])  # casa 6 bits, " buia" 12.5
    comparison = compared_words(TEXT, first, second)
    assert [(w.start, w.end) for w in comparison.words] == [(0, 4), (5, 9)]
    assert [w.difference for w in comparison.words] == pytest.approx([0.0, 0.5])
    assert highlights(comparison) == [(5, 9, "compared-more2")]  # the same: left uncoloured
    assert figure_at(comparison, 6) == "other.gguf: +0.50 bits/char against mine.gguf here (much more surprised)"
    assert band(-0.2) == "compared-less" and band(-3.0) == "compared-less2" and band(0.05) == ""
