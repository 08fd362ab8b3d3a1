"""The draft with text beyond Latin letters: combining accents written apart (NFD), and
Chinese or Japanese, which write no spaces."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import generated, ready, spying_loader

from scriptorium.app.tui.token_spans import TokenRecord, TokenSource
from scriptorium.app.tui.widgets.draft_editor import next_word


async def test_continue_from_a_cursor_inside_a_character_starts_after_it(random_model: Path) -> None:
    """The editor's cursor steps by code point: between an "e" and its combining accent
    (Italian typed as NFD), a continuation from the cursor went in between, and the accent
    left the "e" for the suggestion's last letter."""

    load, spies = spying_loader()
    async with ready(random_model, loader=load) as (app, pilot):
        editor = app.main.draft.editor
        editor.load_text("Perche\u0300 no. Fine.")
        editor.move_cursor((0, 6))  # after the "e", before U+0300
        done = await generated(pilot, "ctrl+o")
        assert spies[0].last["prompt"].endswith("Perche\u0300")
        ghost = editor.ghost
        assert ghost is not None and ghost.anchor == (0, 7)
        await pilot.press("tab")
        assert editor.text == "Perche\u0300" + done.text + " no. Fine."


def test_the_next_word_of_chinese_or_japanese_is_a_token_not_the_sentence() -> None:
    """They write no spaces: the run up to the next space, taken as a word, was a whole
    sentence (or paragraph) per key."""
    pieces, tokens, at = ["明るく", "笑い", "の", "連続", "だった。", "\n\n", "夜"], [], 0
    for piece in pieces:
        tokens.append(TokenRecord(at, piece, 1, 0.5, (), TokenSource("generated")))
        at += len(piece)
    text = "".join(pieces)
    assert next_word(text, tokens) == "明るく"
    assert next_word(text[3:], [t.moved(-3) for t in tokens[1:]]) == "笑い"
    assert next_word(text) == "明"  # no tokens (typed over): one character
    assert next_word(" Tokyo東京") == " Tokyo" and next_word("「まだ？」") == "「ま"
