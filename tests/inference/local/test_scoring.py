"""Scoring the author's own text: each token's probability given the text before it."""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
import pytest
from float_tolerance import PROB_RTOL, assert_top_matches

from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.events import ScoreDone, ScoreProgress, TokenScore
from scriptorium.inference.local.scoring import chunk_size

TEXT = "La casa era buia, e la notte più lunga. Il gatto dorme sul letto."


def score(engine: Engine, text: str, **kwargs) -> list:
    with contextlib.closing(engine.score(text, **kwargs)) as events:
        return list(events)


@pytest.mark.parametrize("n_batch", [512, 8])
def test_scores_equal_a_softmax_of_llama_cpp_logits_at_every_position(random_model: Path, n_batch: int) -> None:
    from llama_cpp import Llama

    engine = Engine.load(LoadOptions(model_path=random_model, n_ctx=512, flash_attn=True, n_batch=n_batch))
    events = score(engine, TEXT, top_n=5)
    scores = [e for e in events if isinstance(e, TokenScore)]
    reference = Llama(
        model_path=str(random_model),
        n_ctx=512,
        n_batch=n_batch,
        n_ubatch=n_batch,
        logits_all=True,
        flash_attn=True,
        verbose=False,
    )
    tokens = reference.tokenize(TEXT.encode())
    reference.eval(tokens)
    logits = np.asarray(reference.scores[: len(tokens)], dtype=np.float64)
    assert [s.id for s in scores] == tokens[1:]
    for position, item in enumerate(scores):
        row = logits[position]
        softmax = np.exp(row - row.max())
        softmax /= softmax.sum()
        # Within float32 rounding of llama.cpp's own logits (see float_tolerance).
        assert item.p == pytest.approx(softmax[item.id], rel=PROB_RTOL)
        assert_top_matches(item.top, softmax)
    done = events[-1]
    assert isinstance(done, ScoreDone) and done.tokens == len(tokens) - 1 and not done.cancelled
    reference.close()


def test_offsets_point_into_the_authors_text(random_model: Path) -> None:
    engine = Engine.load(LoadOptions(model_path=random_model, n_ctx=512))
    scores = [e for e in score(engine, TEXT) if isinstance(e, TokenScore)]
    assert scores[0].start == 0
    assert [TEXT[s.start :].startswith(s.text.lstrip()) or TEXT[s.start :].startswith(s.text) for s in scores] == [
        True
    ] * len(scores)


def test_offsets_follow_the_authors_characters_through_sentencepiece_normalization(
    unigram_spm: Path, unigram_gguf: Path
) -> None:
    """The .model normalizes before it cuts (nmt_nfkc: "…" becomes "...", a run of spaces
    one ▁): each scored token must still start where its words are in the author's text,
    or the colours and a branch from a scored word land on the wrong characters."""
    text = "È finito… lo  compro  domani. Il gatto dorme sul letto."
    engine = Engine.load(LoadOptions(model_path=unigram_gguf, n_ctx=512, spm_path=unigram_spm))
    try:
        scores = [e for e in score(engine, text) if isinstance(e, TokenScore)]
    finally:
        engine.close()
    words = [s for s in scores if s.text.strip() and s.text.strip() not in ".…"]
    assert len(words) > 10
    for s in words:
        # A piece's ▁ covers the space (or run of spaces) before its word.
        assert text[s.start :].lstrip(" ").startswith(s.text.strip()), (s.text, s.start, text[s.start :])
    assert text[scores[-1].start :] == "."


def test_scoring_leaves_the_text_cached_for_continuing(random_model: Path) -> None:
    from scriptorium.inference.core.events import PrefillDone
    from scriptorium.inference.core.settings import PRESETS, LogitBias

    engine = Engine.load(LoadOptions(model_path=random_model, n_ctx=512))
    score(engine, TEXT)
    with contextlib.closing(engine.generate(TEXT, PRESETS["greedy"].with_changes(max_tokens=2), LogitBias())) as ev:
        prefill = next(e for e in ev if isinstance(e, PrefillDone))
    assert prefill.prefill_tokens == 1  # only the last token again, for its logits


def test_long_text_shows_progress_and_can_be_cancelled(random_model: Path) -> None:
    engine = Engine.load(LoadOptions(model_path=random_model, n_ctx=2048, n_batch=64))
    long_text = " ".join([TEXT] * 40)
    progress = [e for e in score(engine, long_text, top_n=0) if isinstance(e, ScoreProgress)]
    assert len(progress) > 3 and progress[-1].done == progress[-1].total
    seen = []
    with contextlib.closing(engine.score(long_text, top_n=0, should_stop=lambda: len(seen) >= 2)) as events:
        for event in events:
            if isinstance(event, ScoreProgress):
                seen.append(event)
            last = event
    # Each row predicts the next token, so two chunks of 64 score tokens 1..128.
    assert last.cancelled and len(seen) == 2 and last.tokens == 2 * 64


def test_text_longer_than_the_context_scores_its_end(random_model: Path) -> None:
    engine = Engine.load(LoadOptions(model_path=random_model, n_ctx=256))
    long_text = " ".join([TEXT] * 30)
    events = score(engine, long_text, top_n=0)
    done = events[-1]
    assert done.trimmed_tokens == len(engine.tokenize(long_text)) - 256
    assert done.tokens == 255
    last = [e for e in events if isinstance(e, TokenScore)][-1]
    assert long_text[last.start :] == "."


def test_chunks_keep_the_logits_buffer_bounded() -> None:
    assert chunk_size(16256, 512) == 512
    assert chunk_size(262144, 512) == 128
