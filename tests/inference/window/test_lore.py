"""The lorebook, pure: which entries fire on which text, from which key, and what fits.
Tokens are counted by a stand-in (one per word, one BOS); the engine's own count is
tested in test_lore_window.py and through `continue --lore` (tests/cli/test_cli_lore.py)."""

from __future__ import annotations

import pytest

from scriptorium.inference.window.lore import (
    ALWAYS,
    LoreEntry,
    LoreError,
    Lorebook,
    choose,
    compile_key,
    scan,
    settled_end,
)


def words(text: str) -> int:
    return 1 + len(text.split())


def fired(book: Lorebook, *texts: str) -> list[tuple[str, str]]:
    return [(entry.name, key) for entry, key in scan(book, texts)]


LUCIA = LoreEntry("Lucia", ("Lucia", "la ragazza"), "Lucia ha sedici anni e non ha paura del buio.")


def test_keys_match_whole_words_in_any_case() -> None:
    book = Lorebook((LUCIA,))
    assert fired(book, "Poi LUCIA aprì la porta.") == [("Lucia", "Lucia")]
    assert fired(book, "Poi Luciana aprì la porta.") == []  # not a whole word
    assert fired(book, "Lucia") == [("Lucia", "Lucia")]
    # A phrase cut by a line break is still the phrase.
    assert fired(book, "e la\nragazza rise") == [("Lucia", "la ragazza")]


def test_a_case_sensitive_entry_matches_only_as_written() -> None:
    book = Lorebook((LoreEntry("Rosa", ("Rosa",), "Rosa è la nonna.", case_sensitive=True),))
    assert fired(book, "una rosa rossa") == [] and fired(book, "disse Rosa.") == [("Rosa", "Rosa")]


def test_a_key_between_slashes_is_a_regular_expression() -> None:
    book = Lorebook((LoreEntry("Torre", ("/torr[ei]cell[ao]/",), "La torre crolla nel 1902."),))
    assert fired(book, "Salirono sul TORRICELLO.") == [("Torre", "/torr[ei]cell[ao]/")]
    assert fired(book, "Salirono sulla torre.") == []


def test_a_regular_expression_that_does_not_compile_is_one_line_naming_the_entry() -> None:
    with pytest.raises(LoreError) as caught:
        Lorebook((LoreEntry("Torre", ("torre", "/torr(e/"), "La torre."),))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("the key /torr(e/ of lore entry 'Torre' is not a valid regular expression: ")
    assert "missing )" in message
    with pytest.raises(LoreError):
        compile_key("/[/")


def test_secondary_keys_are_required_with_the_primary() -> None:
    book = Lorebook((LoreEntry("Lucia a scuola", ("Lucia",), "A scuola Lucia tace.", secondary=("scuola", "classe")),))
    assert fired(book, "Lucia corre.") == []
    assert fired(book, "Lucia corre in classe.") == [("Lucia a scuola", "Lucia")]
    assert fired(book, "In classe.", "[Lucia è stanca.]") == [("Lucia a scuola", "Lucia")]  # from the note


def test_switched_off_entries_never_fire_and_always_entries_always_do() -> None:
    book = Lorebook(
        (
            LoreEntry("Lucia", ("Lucia",), "Lucia.", enabled=False),
            LoreEntry("Stile", (), "Frasi brevi.", always=True),
            LoreEntry("Vuota", ("Lucia",), "   "),
        )
    )
    assert fired(book, "Lucia corre.") == [("Stile", ALWAYS)]


def test_entries_fire_in_priority_order_ties_in_the_books() -> None:
    book = Lorebook(
        (
            LoreEntry("a", ("gatto",), "A.", priority=1),
            LoreEntry("b", ("cane",), "B.", priority=5),
            LoreEntry("c", ("gatto",), "C.", priority=1),
        )
    )
    assert [name for name, _ in fired(book, "il cane e il gatto")] == ["b", "a", "c"]


@pytest.mark.parametrize(
    ("typed", "settled"),
    [
        ("arrivò Luci", "arrivò "),
        ("arrivò Lucia", "arrivò "),
        ("arrivò Lucia ", "arrivò Lucia "),
        ("arrivò Lucia.", "arrivò Lucia."),
        ("", ""),
        ("Lucia", ""),
    ],
)
def test_the_word_being_typed_is_not_scanned(typed: str, settled: str) -> None:
    assert typed[: settled_end(typed)] == settled


def test_half_typed_keys_do_not_toggle_entries() -> None:
    """Typed a letter at a time, "Lucia" then "Luciana": with the last word scanned the
    entry would fire at "Lucia" and leave at "Lucian", changing the prompt twice."""
    book = Lorebook((LUCIA,))
    text = "Poi arrivò Luciana, e poi Lucia."
    states = []
    for n in range(len(text) + 1):
        typed = text[:n]
        states.append(bool(scan(book, [typed[: settled_end(typed)]])))
    changes = [n for n in range(1, len(states)) if states[n] != states[n - 1]]
    assert changes == [len(text)]  # once, at the full stop after "Lucia"


def test_fitting_keeps_entries_by_priority_and_says_which_were_dropped() -> None:
    book = Lorebook(
        (
            LoreEntry("low", ("gatto",), "uno due tre", priority=1),
            LoreEntry("high", ("gatto",), "uno due tre quattro", priority=9),
            LoreEntry("mid", ("gatto",), "uno due tre quattro cinque sei", priority=5),
        )
    )
    choice = choose(scan(book, ["il gatto"]), 8, words)
    assert [(f.name, f.tokens, f.kept) for f in choice.fired] == [
        ("high", 4, True),
        ("mid", 6, False),
        ("low", 3, True),
    ]
    assert choice.block == "uno due tre quattro\n\nuno due tre\n\n"
    assert sum(f.tokens for f in choice.kept) == words(choice.block) - 1
    assert [f.name for f in choice.dropped] == ["mid"]


def test_lorebook_settings_are_checked() -> None:
    with pytest.raises(LoreError, match="lorebook scan_depth must be a whole number from 1"):
        Lorebook(scan_depth=0)
    with pytest.raises(LoreError, match="lorebook budget"):
        Lorebook(budget=True)  # type: ignore[arg-type]
