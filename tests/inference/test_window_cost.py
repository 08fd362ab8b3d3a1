"""What building a window costs: which texts it asks to be counted. The draft pane
builds one at every pause in typing, so what it tokenizes must not grow with the draft.
Counted by a stand-in (one token per word, one BOS) that records what it was asked;
no timing anywhere."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import gguf
import pytest

from scriptorium.inference.engine import Engine, LoadOptions
from scriptorium.inference.gguf_vocab import read_gguf_vocab
from scriptorium.inference.window import build_window


def words(text: str) -> int:
    return 1 + len(text.split())


class Recorder:
    """A count that remembers every text it was asked to count."""

    def __init__(self, count=words) -> None:
        self.count = count
        self.asked: list[str] = []

    def __call__(self, text: str) -> int:
        self.asked.append(text)
        return self.count(text)


PARAGRAPHS = [f"Paragraph {i} opens here. It goes on a little, then it ends." for i in range(40)]
DRAFT = "\n\n".join(PARAGRAPHS)


def test_the_dropped_tokens_are_counted_when_read_and_only_once() -> None:
    recorder = Recorder()
    window = build_window(DRAFT, budget=60, count=recorder)
    before = DRAFT[:window.start]
    assert window.start > 0 and before not in recorder.asked
    assert window.dropped_tokens == words(before) - 1
    assert recorder.asked.count(before) == 1
    assert window.dropped_tokens == words(before) - 1 and recorder.asked.count(before) == 1


def test_a_window_at_the_draft_start_drops_nothing_without_counting() -> None:
    recorder = Recorder()
    window = build_window("Una casa. Un gatto.", budget=100, count=recorder)
    asked = len(recorder.asked)
    assert window.dropped_tokens == 0 and len(recorder.asked) == asked


# ---- the bound's basis: the vocabulary's longest piece ------------------------------------
@pytest.fixture
def engine(short_context_model: Path) -> Iterator[Engine]:
    engine = Engine.load(LoadOptions(model_path=short_context_model, n_threads=1))
    yield engine
    engine.close()


def test_no_token_stands_for_more_characters_than_the_longest_piece(engine: Engine,
                                                                    short_context_model: Path) -> None:
    longest = engine.longest_piece_chars
    vocab = read_gguf_vocab(short_context_model)
    assert vocab.types is not None
    # The GGUF's own pieces, read without llama.cpp; a byte token is one byte.
    assert longest == max(len(text) for text, kind in zip(vocab.tokens, vocab.types) if kind != gguf.TokenType.BYTE)
    assert max(len(engine.token_bytes(i).decode("utf-8", "replace")) for i in range(engine.n_vocab)) <= longest
