"""Undoing words accepted from a suggestion: each undo gives one back to the front of the
suggestion, the last first; with the model still writing (or having written on after the
word was kept), nothing it wrote is lost and it writes on."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_helpers import Gate, generated, kept_whole, make_app, model_ready, run

from scriptorium.app.tui.token_spans import TokenSource, records_from_events
from scriptorium.app.tui.widgets.draft_editor import next_word
from scriptorium.inference.settings import preset

OPENING = "C'era una volta"
LONG_GREEDY = preset("greedy").with_changes(max_tokens=40)
"""Long enough that the model is still writing when the gate holds it."""


@pytest.mark.parametrize("undone_while_writing", [True, False], ids=["while-writing", "after-it-ended"])
def test_undoing_a_word_kept_while_the_model_writes_gives_it_back(random_model: Path, tmp_path: Path,
                                                                  undone_while_writing: bool) -> None:
    """ctrl+→ while the suggestion streamed, then ctrl+z: the suggestion was dropped (and the
    model stopped), so what it had written after the word, and would still write, was lost."""
    draft = tmp_path / "bozza.md"

    async def scenario() -> None:
        gate = Gate(after_tokens=4)
        app = make_app(random_model, draft=draft, loader=gate.loader, sampler=LONG_GREEDY)
        async with app.run_test() as pilot:
            await model_ready(pilot)
            await pilot.press(*OPENING, "ctrl+g")
            await gate.wait_reached()
            await pilot.pause()
            editor = app.main.draft.editor
            shown = app.main.draft.suggestion.text
            assert shown and editor.ghost is not None and editor.ghost.streaming
            word = next_word(shown)
            await pilot.press("ctrl+right")
            assert editor.text == OPENING + word
            if not undone_while_writing:
                gate.release()
                await app.main.wait_until_idle()
                await pilot.pause()
            await pilot.press("ctrl+z")
            await pilot.pause()
            assert editor.text == OPENING
            ghost = editor.ghost
            assert ghost is not None and ghost.text.startswith(shown)
            assert ghost.streaming == undone_while_writing == app.main.is_generating
            gate.release()
            await app.main.wait_until_idle()
            await pilot.pause()
            _, tokens, done = app.main.last_generation
            assert done.stop_reason != "cancelled"  # the undo did not stop it
            assert ghost is editor.ghost and ghost.text == done.text and not ghost.streaming
            streamed = records_from_events(tokens, 0, TokenSource("generated", LONG_GREEDY))
            assert [(r.start, r.text) for r in ghost.tokens] == [(r.start, r.text) for r in streamed]
            await kept_whole(pilot, draft, OPENING, done)

    run(scenario)


def test_each_undo_gives_back_one_more_of_the_words_kept(random_model: Path, tmp_path: Path) -> None:
    """ctrl+→ three times, then ctrl+z three times: the first undo gave the last word back,
    the second threw the suggestion away (and its first word with the draft's undo)."""
    draft = tmp_path / "bozza.md"

    async def scenario() -> None:
        app = make_app(random_model, draft=draft)
        async with app.run_test() as pilot:
            await model_ready(pilot)
            await pilot.press(*OPENING)
            done = await generated(pilot, "ctrl+g")
            editor = app.main.draft.editor
            tokens = list(editor.ghost.tokens)
            words = [next_word(done.text)]
            for _ in range(2):
                words.append(next_word(done.text[len("".join(words)):]))
            assert len(done.text) > len("".join(words))
            await pilot.press("ctrl+right", "ctrl+right", "ctrl+right")
            assert editor.text == OPENING + "".join(words)
            for kept in (2, 1, 0):
                await pilot.press("ctrl+z")
                await pilot.pause()
                assert editor.text == OPENING + "".join(words[:kept])
                assert editor.ghost is not None and editor.ghost.text == done.text[len("".join(words[:kept])):]
            assert editor.ghost.tokens == tokens
            await kept_whole(pilot, draft, OPENING, done)

    run(scenario)
