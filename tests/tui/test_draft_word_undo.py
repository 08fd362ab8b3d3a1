"""Undoing words accepted from a suggestion: each undo gives one back to the front of the
suggestion, the last first; with the model still writing (or having written on after the
word was kept), nothing it wrote is lost and it writes on."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from gguf_models import italian_vocab, write_llama_model
from tui_helpers import Gate, generated, kept_whole, loader_calling, ready, saved_draft, typed, write_pinned

from scriptorium.app.tui.token_spans import TokenSource, add_records
from scriptorium.app.tui.widgets.draft_editor import next_word
from scriptorium.inference.core.settings import preset

OPENING = "C'era una volta"
LONG_GREEDY = preset("greedy").with_changes(max_tokens=40)
"""Long enough that the model is still writing when the gate holds it."""


async def held(pilot: Pilot[Any], gate: Gate, *keys: str) -> None:
    """Press `keys`, which start a generation, and wait until `gate` holds it, its first tokens shown."""
    await pilot.press(*keys)
    await gate.wait_reached()
    await pilot.pause()


@pytest.mark.parametrize("undone_while_writing", [True, False], ids=["while-writing", "after-it-ended"])
async def test_undoing_a_word_kept_while_the_model_writes_gives_it_back(
    random_model: Path, tmp_path: Path, undone_while_writing: bool
) -> None:
    """ctrl+→ while the suggestion streamed, then ctrl+z: the suggestion was dropped (and the
    model stopped), so what it had written after the word, and would still write, was lost."""
    draft = tmp_path / "bozza.md"

    gate = Gate(after_tokens=4)
    async with ready(random_model, draft=draft, loader=gate.loader, sampler=LONG_GREEDY) as (app, pilot):
        await held(pilot, gate, *OPENING, "ctrl+g")
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
        streamed: list = []
        add_records(streamed, tokens, 0, TokenSource("generated", LONG_GREEDY))
        assert [(r.start, r.text) for r in ghost.tokens] == [(r.start, r.text) for r in streamed]
        await kept_whole(pilot, draft, OPENING, done)


async def test_each_undo_gives_back_one_more_of_the_words_kept(random_model: Path, tmp_path: Path) -> None:
    """ctrl+→ three times, then ctrl+z three times: the first undo gave the last word back,
    the second threw the suggestion away (and its first word with the draft's undo)."""
    draft = tmp_path / "bozza.md"

    async with ready(random_model, draft=draft) as (app, pilot):
        await typed(pilot, OPENING)
        done = await generated(pilot, "ctrl+g")
        editor = app.main.draft.editor
        tokens = list(editor.ghost.tokens)
        words = [next_word(done.text)]
        for _ in range(2):
            words.append(next_word(done.text[len("".join(words)) :]))
        assert len(done.text) > len("".join(words))
        await pilot.press("ctrl+right", "ctrl+right", "ctrl+right")
        assert editor.text == OPENING + "".join(words)
        for kept in (2, 1, 0):
            await pilot.press("ctrl+z")
            await pilot.pause()
            assert editor.text == OPENING + "".join(words[:kept])
            assert editor.ghost is not None and editor.ghost.text == done.text[len("".join(words[:kept])) :]
        assert editor.ghost.tokens == tokens
        await kept_whole(pilot, draft, OPENING, done)


@pytest.mark.parametrize("undo", [False, True], ids=["kept", "given-back-and-kept-again"])
async def test_words_kept_while_the_model_writes_after_a_depth_zero_note_stay_its(
    comma_stop_model: Path, tmp_path: Path, undo: bool
) -> None:
    """A note at depth 0 puts a paragraph break before the model's words. ctrl+→ kept
    "\\n\\n La" while it wrote, and what it wrote after was ",.", as long as the break: at its
    end the pane thought it had written nothing after the break, dropped its writer, and
    keeping ",." credited nobody (the generation stayed partly kept)."""
    draft = tmp_path / "bozza.md"

    gate = Gate(after_tokens=1)
    async with ready(comma_stop_model, draft=draft, loader=gate.loader, sampler=LONG_GREEDY) as (app, pilot):
        await write_pinned(pilot, "alt+n", "[Tono cupo.]", depth="0")
        await held(pilot, gate, *"Il gatto dorme", "ctrl+g")
        editor = app.main.draft.editor
        assert editor.ghost is not None and editor.ghost.text == "\n\n La"
        await pilot.press("ctrl+right")
        if undo:  # given back, then kept again: the break is where it was each time
            await pilot.press("ctrl+z")
            await pilot.pause()
            assert editor.ghost is not None and editor.ghost.text == "\n\n La"
            await pilot.press("ctrl+right")
        assert editor.text == "Il gatto dorme\n\n La"
        gate.release()
        await app.main.wait_until_idle()
        await pilot.pause()
        _, _, done = app.main.last_generation
        assert done.text == " La,." and editor.ghost is not None and editor.ghost.text == ",."
        await pilot.press("tab")
        await pilot.pause()
        assert editor.text == "Il gatto dorme\n\n La,."
        (generation,) = saved_draft(draft).generations
        assert generation.outcome == "accepted" and generation.accepted_text == done.text


@pytest.mark.parametrize("undo", [False, True], ids=["kept", "given-back-and-kept-again"])
async def test_a_break_the_model_wrote_nothing_after_goes_when_words_before_it_were_kept(
    tmp_path: Path, undo: bool
) -> None:
    """A suggestion waiting, a note set at depth 0, ctrl+g: the suggestion gets the note's
    paragraph break and the model writes on after it. ctrl+→ kept the suggestion's word
    meanwhile (and ctrl+z gave it back, ctrl+→ kept it again); the model wrote nothing,
    yet the break stayed, a suggestion of its own, as the pane looked for it where it no longer was."""
    draft = tmp_path / "bozza.md"
    vocab = italian_vocab()
    chain = {vocab.id_of(a): vocab.id_of(b) for a, b in (("▁guardò", "▁La"), ("▁La", ","), (",", "."))}
    model = write_llama_model(tmp_path / "stops-after-a-break.gguf", kind="markov", transitions=chain)
    starts, go_on = [], threading.Event()

    def held_from_the_second() -> None:
        starts.append(1)
        if len(starts) > 1:
            go_on.wait(30)

    async with ready(
        model,
        draft=draft,
        loader=loader_calling(held_from_the_second),
        sampler=LONG_GREEDY,
    ) as (app, pilot):
        await typed(pilot, "Il gatto guardò")
        done = await generated(pilot, "ctrl+g")
        assert done.text == " La,."
        await write_pinned(pilot, "alt+n", "[Tono cupo.]", depth="0")
        await pilot.press("ctrl+g")
        await pilot.pause()
        editor = app.main.draft.editor
        assert editor.ghost is not None and editor.ghost.streaming and editor.ghost.text == " La,.\n\n"
        await pilot.press("ctrl+right")
        if undo:
            await pilot.press("ctrl+z")
            await pilot.pause()
            assert editor.ghost is not None and editor.ghost.text == " La,.\n\n"
            await pilot.press("ctrl+right")
        go_on.set()
        await app.main.wait_until_idle()
        await pilot.pause()
        assert app.main.last_generation[2].text == ""
        # The break went with the suggestion, which was all break: tab would have put it into the draft.
        assert editor.text == "Il gatto guardò La,." and editor.ghost is None
