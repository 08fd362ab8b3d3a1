"""`scriptorium continue --lore` on the author's layout: a context of 256 tokens, tokenized
by SentencePiece itself (`--spm`), with a draft that mentions two of five entries."""

from __future__ import annotations

import json
from pathlib import Path

from test_cli import assert_one_line_error, scriptorium

from scriptorium.app.sessions.lorebook_file import write_lorebook
from scriptorium.inference.window.lore import LoreEntry, Lorebook

PARAGRAPH = "Il gatto nero dorme sul tetto. La casa era buia nella notte più lunga."
# Marco is in the draft, but far from its end: past the scan depth, he does not fire.
DRAFT = (
    "Marco arrivò in paese.\n\n"
    + "\n\n".join(f"{PARAGRAPH} Poi il cane corre verso la porta {i}." for i in range(60))
    + "\n\nLa sera Lucia guardava il porto dalla finestra.\n"
)
ENTRIES = (
    LoreEntry("Lucia", ("Lucia", "la ragazza"), "Lucia ha sedici anni e non ha paura del buio.", priority=10),
    LoreEntry("Marco", ("Marco",), "Marco è il fratello di Lucia.", priority=8),
    LoreEntry("Nonna", ("la nonna",), "La nonna vive sola nella casa vicino al mare.", priority=6),
    LoreEntry("Torre", ("torre",), "La torre è crollata molti anni fa.", priority=4),
    LoreEntry("Porto", ("porto",), "Nel porto ci sono tre barche e una nave grande.", priority=2),
)


def continue_with(model: Path, spm: Path, tmp_path: Path, book: Lorebook) -> dict:
    draft, memory, lore = tmp_path / "draft.md", tmp_path / "memory.txt", tmp_path / "lore.toml"
    draft.write_text(DRAFT, encoding="utf-8")
    memory.write_text("La storia è ambientata in un paese sul mare.\n", encoding="utf-8")
    write_lorebook(lore, book)
    result = scriptorium(
        "continue",
        str(draft),
        "--model",
        str(model),
        "--spm",
        str(spm),
        "--ctx",
        "256",
        "--preset",
        "greedy",
        "--max-tokens",
        "8",
        "--memory",
        str(memory),
        "--lore",
        str(lore),
        "--json",
        "--no-heal",  # the window's counts add up to the prompt evaluated: healing would back it up a token
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def fired(done: dict) -> list[tuple[str, str, bool]]:
    return [(f["name"], f["key"], f["kept"]) for f in done["lore"]]


def assert_counts_add_up(done: dict) -> None:
    window = done["window"]
    assert window["n_ctx"] == 256 and done["prompt_tokens"] <= 256 - 8  # the prompt fits
    assert done["tokenizer"].startswith("SentencePiece")
    assert (
        window["memory_tokens"] + window["note_tokens"] + window["lore_tokens"] + window["draft_tokens"]
        == done["prompt_tokens"]
    )
    assert window["lore_tokens"] == sum(f["tokens"] for f in done["lore"] if f["kept"])
    assert window["dropped_tokens"] > 500  # the draft itself does not fit: the window was fitted


def test_exactly_the_two_entries_the_draft_mentions_enter(
    unigram_gguf: Path, unigram_spm: Path, tmp_path: Path
) -> None:
    done = continue_with(unigram_gguf, unigram_spm, tmp_path, Lorebook(ENTRIES, scan_depth=48, budget=100))
    assert fired(done) == [("Lucia", "Lucia", True), ("Porto", "porto", True)]
    assert_counts_add_up(done)
    assert done["window"]["lore_tokens"] > 10


def test_priorities_decide_what_is_dropped(unigram_gguf: Path, unigram_spm: Path, tmp_path: Path) -> None:
    roomy = continue_with(unigram_gguf, unigram_spm, tmp_path, Lorebook(ENTRIES, scan_depth=48, budget=100))
    both = sum(f["tokens"] for f in roomy["lore"])
    short = Lorebook(ENTRIES, scan_depth=48, budget=both - 1)
    done = continue_with(unigram_gguf, unigram_spm, tmp_path, short)
    assert fired(done) == [("Lucia", "Lucia", True), ("Porto", "porto", False)]
    assert_counts_add_up(done)
    # The port's entry above Lucia's: now Lucia's is the one left out.
    swapped = tuple(LoreEntry(e.name, e.keys, e.text, priority=20) if e.name == "Porto" else e for e in ENTRIES)
    done = continue_with(unigram_gguf, unigram_spm, tmp_path, Lorebook(swapped, scan_depth=48, budget=both - 1))
    assert fired(done) == [("Porto", "porto", True), ("Lucia", "Lucia", False)]
    assert_counts_add_up(done)
    assert done["window"]["draft_tokens"] > roomy["window"]["draft_tokens"]  # the room went to the draft


def test_plain_output_says_which_lore_fired_and_which_was_dropped(random_model: Path, tmp_path: Path) -> None:
    draft, lore = tmp_path / "draft.md", tmp_path / "lore.toml"
    draft.write_text("La sera Lucia guardava il porto.\n", encoding="utf-8")
    write_lorebook(lore, Lorebook(ENTRIES, budget=0))  # no room: both are dropped, and said
    result = scriptorium(
        "continue",
        str(draft),
        "--model",
        str(random_model),
        "--preset",
        "greedy",
        "--max-tokens",
        "2",
        "--lore",
        str(lore),
    )
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stderr.splitlines() if "lore:" in line)
    assert line.startswith("scriptorium: lore: none; dropped for room: Lucia (") and ", Porto (" in line


def test_a_regular_expression_that_does_not_compile_is_one_line(random_model: Path, tmp_path: Path) -> None:
    draft, lore = tmp_path / "draft.md", tmp_path / "lore.toml"
    draft.write_text("La sera Lucia guardava il porto.\n", encoding="utf-8")
    lore.write_text(
        '[[entry]]\nname = "Lucia"\nkeys = ["/Luci(a/"]\ntext = "Lucia ha sedici anni."\n', encoding="utf-8"
    )
    result = scriptorium("continue", str(draft), "--model", str(random_model), "--lore", str(lore))
    assert_one_line_error(
        result,
        f"lorebook {lore}: the key /Luci(a/ of lore entry 'Lucia' is not a valid "
        "regular expression: missing ), unterminated subpattern at position 4",
    )
    missing = scriptorium("continue", str(draft), "--model", str(random_model), "--lore", str(tmp_path / "no.toml"))
    assert_one_line_error(missing, "lorebook not found: ")
