"""compare's windows and paragraphs, without a model (the numbers: tests/cli/test_compare*.py)."""

from __future__ import annotations

import pytest

from scriptorium.inference.local.comparison import TextScore, paragraph_bits_per_character, paragraph_spans, windows


def test_windows_are_llama_perplexitys_then_the_tail() -> None:
    assert [(w.start, w.end, w.full) for w in windows(600, 256)] == [
        (0, 256, True),
        (256, 512, True),
        (512, 600, False),
    ]
    # A tail of one token was predicted by the last full window's final position already.
    assert [(w.start, w.end) for w in windows(513, 256)] == [(0, 256), (256, 512)]
    assert [(w.start, w.end, w.full) for w in windows(40, 256)] == [(0, 40, False)]
    assert windows(1, 256) == []


def test_paragraphs_cover_the_text_and_share_its_bits() -> None:
    text = "Prima riga.\nSeconda.\n\nAltro paragrafo.\n \n\nUltimo."
    spans = paragraph_spans(text)
    assert [text[s:e].strip() for s, e in spans] == ["Prima riga.\nSeconda.", "Altro paragrafo.", "Ultimo."]
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    # A token counts where it starts: the one opening the second paragraph goes there.
    starts = [0, 0, 12, spans[1][0], spans[2][0]]
    score = TextScore(
        n_ctx=256, tokens=5, characters=len(text), bits=10.0, token_bits=[0.0, 3.0, 1.0, 4.0, 2.0], token_starts=starts
    )
    per_paragraph = paragraph_bits_per_character(score, spans)
    lengths = [e - s for s, e in spans]
    assert per_paragraph == pytest.approx([4.0 / lengths[0], 4.0 / lengths[1], 2.0 / lengths[2]])
    assert sum(p * n for p, n in zip(per_paragraph, lengths)) == pytest.approx(score.bits)
