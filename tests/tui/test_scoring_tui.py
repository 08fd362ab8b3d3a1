"""Scoring the author's own draft in the TUI (issue 6): the values are llama.cpp's, over the
text a continuation sees, each over its own characters."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pytest
from float_tolerance import PROB_RTOL, assert_top_matches
from scoring_helpers import TEXT, flash_loader, scored, scored_records
from tui_helpers import ready

from scriptorium.inference.core.events import Event


def scoring_recorded(scored_texts: list[str]) -> Callable[..., Any]:
    """A loader whose engine records every text it is asked to score in `scored_texts`."""
    from tui_helpers import loader_wrapping

    def spy(score: Callable[..., Iterator[Event]]) -> Callable[..., Iterator[Event]]:
        def recorded(text: str, **kwargs: Any) -> Iterator[Event]:
            scored_texts.append(text)
            return score(text, **kwargs)

        return recorded

    return loader_wrapping("score", spy)


async def test_scores_equal_a_softmax_of_llama_cpp_logits_and_the_cursor_shows_them(random_model: Path) -> None:
    from llama_cpp import Llama

    async def scenario() -> list[Any]:
        async with ready(random_model, loader=flash_loader(), top_n=5, size=(120, 40)) as (app, pilot):
            records = await scored(pilot, TEXT)
            assert app.main.draft.inspection.colouring and not app.main.draft.scoring
            assert app.main.status.activity == ""
            # The cursor on the fourth token shows its numbers, marked as the author's text.
            start, fourth = records[3]
            app.main.draft.editor.move_cursor((0, start))
            await pilot.pause()
            panel = app.main.sidebar.probabilities
            assert panel.event.id == fourth.id and panel.border_subtitle == "your text, scored"
            # The KV panel shows the cache as scoring left it: the draft's tokens, BOS included.
            assert app.main.sidebar.kv.usage.tokens == len(records) + 1
            return records

    records = await scenario()
    reference = Llama(
        model_path=str(random_model), n_ctx=512, n_threads=1, logits_all=True, flash_attn=True, verbose=False
    )
    tokens = reference.tokenize(TEXT.encode())
    reference.eval(tokens)
    logits = np.asarray(reference.scores[: len(tokens)], dtype=np.float64)
    reference.close()
    assert [r.id for _, r in records] == tokens[1:]
    # Every scored token covers its own characters, and together they cover the text.
    assert "".join(r.text for _, r in records) == TEXT[records[0][0] :]
    for position, (_, record) in enumerate(records):
        row = logits[position]
        softmax = np.exp(row - row.max())
        softmax /= softmax.sum()
        # Within float32 rounding of llama.cpp's own logits (see float_tolerance).
        assert record.p == pytest.approx(softmax[record.id], rel=PROB_RTOL)
        assert_top_matches(record.top, softmax)


async def test_scoring_sees_the_memory_and_the_note_as_a_continuation_does(random_model: Path) -> None:
    """The scores are how probable the model finds the author's words given what it sees
    when it continues: the memory first, the note N paragraphs before the end. Only the
    draft's own tokens are scored, each over its own characters."""
    from scriptorium.inference.window.window import Pinned

    draft_text = "Uno due tre.\n\nIl gatto dorme sul letto."
    scored_texts: list[str] = []

    async with ready(random_model, loader=scoring_recorded(scored_texts), size=(120, 40)) as (app, pilot):
        draft = app.main.draft
        draft.pinned = Pinned("Memoria: una casa sul lago.", "Nota: tono cupo.", 1)
        draft.editor.load_text(draft_text)
        await pilot.press("f9")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert scored_texts == [
            "Memoria: una casa sul lago.\n\nUno due tre.\n\nNota: tono cupo.\n\nIl gatto dorme sul letto."
        ]
        records = scored_records(app)
        assert records[0][0] == 0 and "".join(r.text for _, r in records) == draft_text
        assert all(draft_text[start:].startswith(r.text) for start, r in records)
        assert any(f"Scored {len(records)} tokens of your text" in n.message for n in app.notices)


async def test_scoring_a_draft_longer_than_the_window_says_the_text_before_it_is_not_scored(
    short_context_model: Path,
) -> None:
    """On a 256-token model F9 on a chapter said 'Scored 120 tokens of your text', as if that
    were all of it: only the window the model sees is scored, and the author is told so."""
    chapter = "\n\n".join(f"Il gatto nero dorme sul tetto. La casa era buia {i}." for i in range(200))

    async with ready(short_context_model, size=(120, 40)) as (app, pilot):
        records = await scored(pilot, chapter)
        assert 0 < records[0][0] == app.main.draft.editor.window_start
        said = [n.message for n in app.notices if n.message.startswith("Scored")]
        assert said and f"the last {len(records)} tokens of your text" in said[-1]
        assert "the dimmed text before them is not scored" in said[-1]


async def test_an_unexpected_word_of_the_author_says_it_is_not_among_the_candidates(random_model: Path) -> None:
    """The cursor on a word the model did not rank among its candidates drew
    '▶ chosen ␣gatto  0.0%  (no': the words saying why the bars miss it were cut off."""

    async with ready(random_model, top_n=5, size=(140, 40)) as (app, pilot):
        records = await scored(pilot, TEXT)
        # Far below the fifth candidate: unlisted whatever the rounding.
        start, record = next(
            (start, r) for start, r in records[1:] if all(c.id != r.id for c in r.top) and r.p < r.top[-1].p / 2
        )
        editor = app.main.draft.editor
        editor.move_cursor(editor.document.get_location_from_index(start + len(record.text) // 2 + 1))
        await pilot.pause()
        panel = app.main.sidebar.probabilities
        summary = panel.render_line(panel.line_count - 1).text.rstrip()
        assert panel.content_size.width <= 30
        assert "top 5)" in summary and record.text.strip()[:3] in summary, summary


async def test_characters_spread_over_byte_tokens_are_counted_as_the_tokens_scored(random_model: Path) -> None:
    """'Scored 59 tokens of your text' on a Japanese paragraph the 16k Italian vocabulary
    spells in 172 byte tokens: the count was of the characters coloured, not of the
    tokens llama.cpp scored."""
    from tui_helpers import loader_wrapping

    from scriptorium.inference.core.events import TokenScore

    counted: list[int] = []

    def spy(score: Callable[..., Iterator[Event]]) -> Callable[..., Iterator[Event]]:
        def counting(text: str, **kwargs: Any) -> Iterator[Event]:
            for event in score(text, **kwargs):
                counted.extend([1] if isinstance(event, TokenScore) else [])
                yield event

        return counting

    async with ready(random_model, loader=loader_wrapping("score", spy), size=(120, 40)) as (app, pilot):
        records = await scored(pilot, "La casa " + "€" * 5)  # no piece has "€": three byte tokens each
        assert len(counted) > len(records)
        said = [n.message for n in app.notices if n.message.startswith("Scored")]
        assert said and f"Scored {len(counted)} tokens of your text" in said[-1], said


async def test_a_character_spelled_in_byte_tokens_shows_its_own_probability_and_alternatives(
    random_model: Path,
) -> None:
    """'€' is three byte tokens to the vocabulary: the cursor on it showed the last byte's
    numbers (how probable that byte was after the first two), and a branch there offered
    what the model expected in the middle of the character. It shows the chance the model
    gave the whole character (the product of its bytes') and the alternatives where it starts."""
    from tui_helpers import loader_wrapping

    from scriptorium.inference.core.events import TokenScore

    events: list[TokenScore] = []

    def spy(score: Callable[..., Iterator[Event]]) -> Callable[..., Iterator[Event]]:
        def kept(text: str, **kwargs: Any) -> Iterator[Event]:
            for event in score(text, **kwargs):
                events.extend([event] if isinstance(event, TokenScore) else [])
                yield event

        return kept

    text = "La casa €"

    async def scenario() -> list[Any]:
        async with ready(random_model, loader=loader_wrapping("score", spy), size=(120, 40)) as (app, pilot):
            return await scored(pilot, text)

    records = await scenario()
    start, euro = records[-1]
    assert (start, euro.text) == (text.index("€"), "€")
    bytes_ = [event for event in events if event.start == start]
    assert len(bytes_) == 3
    assert euro.id == bytes_[0].id and euro.top == bytes_[0].top and euro.index == bytes_[0].index
    assert euro.p == pytest.approx(bytes_[0].p * bytes_[1].p * bytes_[2].p, rel=1e-12)


async def test_scoring_a_draft_ending_in_a_newline_scores_the_prompt_a_continuation_sends(random_model: Path) -> None:
    """F9 says it scores the window the model sees when it continues: the draft before the
    newline a file ends with (the file's, not the author's), as ctrl+g and `continue` read
    it. With the note at depth 0 the scored prompt had it after that newline instead of
    after a paragraph break, a token short of what ctrl+g then sent."""
    from tui_helpers import generated, write_pinned

    scored_texts: list[str] = []

    async with ready(random_model, loader=scoring_recorded(scored_texts), size=(160, 50)) as (app, pilot):
        await write_pinned(pilot, "alt+n", "[Tono cupo.]", depth="0")
        await scored(pilot, "Uno due tre.\n\nIl gatto dorme sul letto.\n")
        await generated(pilot, "ctrl+g")
        window = app.main.last_generation[0].window
        assert window is not None and scored_texts == [window.prompt]
