"""Lore in the window, pure: where the entries go, what the scan reads, what fits. Tokens
are counted by a stand-in (one per word, one BOS); the author's layout is tested in
test_lore_engine.py."""

from __future__ import annotations

from scriptorium.inference.window.lore import LoreEntry, Lorebook
from scriptorium.inference.window.lore_window import scan_start
from scriptorium.inference.window.window import build_window


def words(text: str) -> int:
    return 1 + len(text.split())


BOOK = Lorebook(
    (
        LoreEntry("Lucia", ("Lucia",), "Lucia ha sedici anni.", priority=5),
        LoreEntry("Marco", ("Marco",), "Marco è il fratello.", priority=3),
        LoreEntry("Torre", ("torre",), "La torre è crollata.", priority=1),
    ),
    scan_depth=12,
    budget=40,
)
FILLER = " ".join(["Il vento soffiava forte."] * 30)


def test_lore_goes_between_the_memory_and_the_draft_and_the_counts_add_up() -> None:
    draft = FILLER + " Poi Marco vide Lucia."
    window = build_window(
        draft, budget=100, count=words, memory="Una storia.", note="[Cupo.]", note_depth=0, lorebook=BOOK
    )
    assert window.prompt.startswith("Una storia.\n\nLucia ha sedici anni.\n\nMarco è il fratello.\n\n")
    assert window.prompt.endswith("Poi Marco vide Lucia.\n\n[Cupo.]\n\n")
    assert [(f.name, f.key, f.kept) for f in window.lore] == [("Lucia", "Lucia", True), ("Marco", "Marco", True)]
    assert window.lore_tokens == 8 == sum(f.tokens for f in window.lore)
    assert window.prompt_tokens <= 100 and window.prompt_tokens == words(window.prompt)
    assert window.memory_tokens + window.note_tokens + window.lore_tokens + window.draft_tokens == window.prompt_tokens
    assert window.as_json(256)["lore_tokens"] == 8
    # The draft's own text is still found where it is in the prompt (scoring colours it).
    at = window.prompt.index("Poi Marco")
    assert window.draft_offset(at) == draft.index("Poi Marco")


def test_only_the_last_tokens_of_the_draft_are_scanned() -> None:
    draft = "Lucia partì. " + FILLER + " Poi Marco tornò."
    window = build_window(draft, budget=400, count=words, lorebook=BOOK)
    assert [f.name for f in window.lore] == ["Marco"]  # Lucia is in the window, but 120 words back
    assert draft[scan_start(draft, len(draft), 12, words) :] == " ".join(draft.split()[-12:])


def test_the_note_is_scanned_too() -> None:
    window = build_window(FILLER, budget=200, count=words, note="[La torre trema.]", lorebook=BOOK)
    assert [f.name for f in window.lore] == ["Torre"]


def test_what_does_not_fit_is_dropped_by_priority() -> None:
    book = Lorebook(
        (
            LoreEntry("Lucia", ("Lucia",), "Lucia ha sedici anni.", priority=5),  # 4 tokens
            LoreEntry("Marco", ("Marco",), "Marco è il fratello di Lucia.", priority=3),  # 6
            LoreEntry("Torre", ("torre",), "La torre crollò.", priority=1),
        ),
        scan_depth=12,
        budget=8,
    )  # 3
    draft = FILLER + " Marco, Lucia e la torre."
    window = build_window(draft, budget=30, count=words, memory="Una storia.", lorebook=book)
    assert [(f.name, f.tokens, f.kept) for f in window.lore] == [
        ("Lucia", 4, True),
        ("Marco", 6, False),
        ("Torre", 3, True),
    ]
    assert window.prompt_tokens <= 30 and window.lore_tokens == 7
    # However large its budget, lore takes at most half of what the memory leaves the
    # prompt: here (24 - 3) // 2 = 10, so the draft keeps room.
    roomy = Lorebook(book.entries, scan_depth=12, budget=1000)
    half = build_window(draft, budget=24, count=words, memory="Una storia.", lorebook=roomy)
    assert [(f.name, f.kept) for f in half.lore] == [("Lucia", True), ("Marco", True), ("Torre", False)]
    assert half.lore_tokens == 10 and half.draft_tokens >= 10


def test_a_window_without_lore_is_as_before() -> None:
    draft = FILLER + " Poi Marco vide Lucia."
    assert build_window(draft, budget=60, count=words, lorebook=Lorebook()) == build_window(
        draft, budget=60, count=words
    )


def test_typing_a_key_letter_by_letter_changes_the_prompt_once() -> None:
    text = FILLER + " Poi arrivò Luciana, e poi Lucia."
    prompts = [
        build_window(text[:n], budget=200, count=words, lorebook=BOOK).lore for n in range(len(FILLER), len(text) + 1)
    ]
    changes = [n for n in range(1, len(prompts)) if prompts[n] != prompts[n - 1]]
    assert changes == [len(prompts) - 1]
