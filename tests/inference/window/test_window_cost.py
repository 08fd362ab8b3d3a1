"""What building a window costs: which texts it asks to be counted. The draft pane
builds one at every pause in typing, so what it tokenizes must not grow with the draft.
Counted by a stand-in (one token per word, one BOS) that records what it was asked, and
by a real model's tokenizer; no timing anywhere.

The window itself must be the one the exhaustive search finds: the earliest sentence
start whose prompt fits, else the earliest word start, each tried in order from the
draft's beginning, with the prompt assembled as before the search was bounded."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

import gguf
import pytest

from scriptorium import prompts
from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.gguf.gguf_vocab import read_gguf_vocab
from scriptorium.inference.window.window import (
    MARGIN_TOKENS,
    boundaries,
    build_window,
    memory_block,
    note_block,
    note_position,
    prompt_budget,
    prompt_end,
)


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
    before = DRAFT[: window.start]
    assert window.start > 0 and before not in recorder.asked
    assert window.dropped_tokens == words(before) - 1
    assert recorder.asked.count(before) == 1
    assert window.dropped_tokens == words(before) - 1 and recorder.asked.count(before) == 1  # kept, not recounted


def test_a_window_at_the_draft_start_drops_nothing_without_counting() -> None:
    recorder = Recorder()
    window = build_window("Una casa. Un gatto.", budget=100, count=recorder)
    asked = len(recorder.asked)
    assert window.dropped_tokens == 0 and len(recorder.asked) == asked


# ---- the exhaustive search, as before the bound --------------------------------------------
def old_note_position(text: str, start: int, depth: int) -> int:
    if depth == 0:
        return len(text)
    starts = [0] + [m.end() for m in re.finditer(r"\n[ \t]*\n\s*", text) if m.end() < len(text)]
    starts = [p for p in starts if p >= start] or [start]
    if starts[0] != start:
        starts.insert(0, start)
    return starts[max(0, len(starts) - depth)]


def old_assemble(draft: str, start: int, end: int, memory: str, note: str, depth: int, wrap) -> tuple[str, int | None]:
    text = draft[:end]
    block = note_block(note)
    at = old_note_position(text, start, depth) if block else None
    if at is None:
        window = text[start:]
    elif at >= len(text) and text and not text.endswith("\n"):
        window = text[start:] + "\n\n" + block
    else:
        window = text[start:at] + block + text[at:]
    return memory_block(memory) + wrap(window), at


def exhaustive(
    draft: str,
    *,
    budget: int,
    count,
    end: int | None = None,
    memory: str = "",
    note: str = "",
    note_depth: int = 3,
    wrap=None,
) -> tuple[int, str, int | None]:
    """(start, prompt, note_at) of the largest window, every candidate tried from the first.
    The prompt ends before the spaces ending the text there (the rule build_window keeps too)."""
    end = prompt_end(draft, end)
    wrap = wrap or (lambda text: text)

    def fits(start: int) -> bool:
        return count(old_assemble(draft, start, end, memory, note, note_depth, wrap)[0]) <= budget

    sentences, words_ = boundaries(draft[:end])
    start = next((s for s in sentences if fits(s)), None)
    if start is None:
        start = next((w for w in words_ if fits(w)), end)
    prompt, at = old_assemble(draft, start, end, memory, note, note_depth, wrap)
    return start, prompt, at


def same_as_exhaustive(draft: str, count, **kwargs) -> None:
    window = build_window(draft, count=count, **kwargs)
    kwargs.pop("longest_piece", None)
    start, prompt, at = exhaustive(draft, count=count, **kwargs)
    assert (window.start, window.prompt, window.note_at) == (start, prompt, at)
    assert window.prompt_tokens == count(prompt) <= kwargs["budget"]
    assert window.dropped_tokens == (count(draft[:start]) - count("") if start else 0)


def words_longest(draft: str) -> int:
    """The most characters one stand-in token stands for: a word and the whitespace on
    either side of it (the first word takes the text's leading whitespace)."""
    return max(map(len, draft.split())) + 2 * max(map(len, re.findall(r"\s+", draft)), default=0)


WORDS = "il gatto nero dorme sul tetto e la casa era buia nella notte più lunga poi il cane corre".split()


def sentence(i: int) -> str:
    return " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(6 + i % 9)).capitalize() + "."


def book(chars: int) -> str:
    """Paragraphs of a few sentences, `chars` characters or a little more."""
    parts: list[str] = []
    size = done = 0
    while size < chars:
        length = 1 + len(parts) % 4
        parts.append(" ".join(sentence(done + k) for k in range(length)))
        size += len(parts[-1]) + 2
        done += length
    return "\n\n".join(parts)


STORY = "Continua la storia:\n\n{draft}"


def test_the_note_goes_where_it_went_reading_only_the_window() -> None:
    text = "Uno.\n\nDue. Tre.\n \n\t\nQuattro.  \n\n  Cinque.\n\n\nSei.\n\n"
    for end in range(len(text) + 1):
        for start in range(end + 1):  # inside runs of whitespace too, where windows never start
            for depth in range(5):
                assert note_position(text, start, depth, end) == old_note_position(text[:end], start, depth)


@pytest.mark.parametrize("budget", [12, 30, 57, 100, 200])
def test_the_window_is_the_one_the_exhaustive_search_finds(budget: int) -> None:
    draft = book(6000)
    longest = words_longest(draft)
    same_as_exhaustive(draft, words, budget=budget, longest_piece=longest)
    same_as_exhaustive(
        draft,
        words,
        budget=budget,
        longest_piece=longest,
        memory="Memoria.",
        note="[Nota]",
        note_depth=2,
        wrap=lambda text: prompts.render_continue(text, STORY),
    )
    same_as_exhaustive(
        draft,
        words,
        budget=budget,
        longest_piece=longest,
        note="[Nota]",
        note_depth=0,
        end=draft.index("\n\n", len(draft) // 2),
    )
    same_as_exhaustive(draft, words, budget=budget)  # the backend cannot say its longest piece


def test_a_sentence_longer_than_the_room_is_still_cut_at_the_earliest_word() -> None:
    draft = book(3000) + " " + " ".join(f"parola{i}" for i in range(2000))
    same_as_exhaustive(draft, words, budget=50, longest_piece=words_longest(draft))
    one_word = "x" * 5000
    same_as_exhaustive(one_word, words, budget=50, longest_piece=8)


def test_where_whitespace_vanishes_the_bound_fails_and_the_window_is_still_the_largest() -> None:
    # The stand-in collapses whitespace, as SentencePiece's remove_extra_whitespaces does:
    # here a token stands for far more characters than the longest piece said.
    draft = (" " * 3000).join(book(4000).split("\n\n"))
    said = max(map(len, draft.split())) + 2
    same_as_exhaustive(draft, words, budget=40, longest_piece=said)
    same_as_exhaustive(draft, words, budget=40, longest_piece=said, note="[Nota]", note_depth=1)


def test_a_huge_draft_is_counted_only_within_the_bound() -> None:
    draft = book(1_000_000)
    longest, budget = words_longest(draft), 200
    bound = (budget + MARGIN_TOKENS) * longest
    recorder = Recorder()
    window = build_window(draft, budget=budget, count=recorder, longest_piece=longest)
    assert max(map(len, recorder.asked)) <= bound < len(draft) // 100
    assert window.prompt_tokens <= budget and window.prompt == draft[window.start :]
    tail = draft[draft.index("\n\n", len(draft) - 2 * bound) + 2 :]  # from a paragraph start
    offset = len(draft) - len(tail)
    earlier = max(s for s in boundaries(tail)[0] if s < window.start - offset)
    assert words(tail[earlier:]) > budget  # one sentence more would not fit
    # With memory, note and template, the prompt adds their own text and no more.
    recorder = Recorder()
    pinned = {"memory": "Memoria: Lucia torna al paese.", "note": "[Tono cupo.]", "note_depth": 2}
    build_window(
        draft,
        budget=budget,
        count=recorder,
        longest_piece=longest,
        wrap=lambda text: prompts.render_continue(text, STORY),
        **pinned,
    )
    added = len(memory_block(pinned["memory"]) + note_block(pinned["note"]) + prompts.render_continue("", STORY))
    assert max(map(len, recorder.asked)) <= bound + added


# ---- the bound's basis: the vocabulary's longest piece ------------------------------------
@pytest.fixture
def engine(short_context_model: Path) -> Iterator[Engine]:
    engine = Engine.load(LoadOptions(model_path=short_context_model, n_threads=1))
    yield engine
    engine.close()


def test_no_token_stands_for_more_characters_than_the_longest_piece(engine: Engine, short_context_model: Path) -> None:
    longest = engine.longest_piece_chars
    vocab = read_gguf_vocab(short_context_model)
    assert vocab.types is not None
    # The GGUF's own pieces, read without llama.cpp; a byte token is one byte.
    assert longest == max(len(text) for text, kind in zip(vocab.tokens, vocab.types) if kind != gguf.TokenType.BYTE)
    assert max(len(engine.token_bytes(i).decode("utf-8", "replace")) for i in range(engine.n_vocab)) <= longest


def test_on_a_real_tokenizer_the_window_is_the_exhaustive_one(engine: Engine) -> None:
    draft, budget = book(9000), prompt_budget(engine.n_ctx, 16)
    assert engine.count_tokens(draft) > 4 * budget
    for kwargs in (
        {},
        {
            "memory": "Il gatto si chiama Nero.",
            "note": "[Tono cupo.]",
            "note_depth": 2,
            "wrap": lambda text: prompts.render_continue(text, STORY),
        },
        {"end": draft.index(". ", len(draft) // 2) + 2, "note": "[Nota]", "note_depth": 0},
    ):
        same_as_exhaustive(
            draft, engine.count_tokens, budget=budget, longest_piece=engine.longest_piece_chars, **kwargs
        )


def test_on_a_real_tokenizer_a_huge_draft_is_counted_only_within_the_bound(engine: Engine) -> None:
    draft, budget = book(1_000_000), prompt_budget(engine.n_ctx, 16)
    longest = engine.longest_piece_chars
    recorder = Recorder(engine.count_tokens)
    window = build_window(draft, budget=budget, count=recorder, longest_piece=longest)
    assert max(map(len, recorder.asked)) <= (budget + MARGIN_TOKENS) * longest
    assert window.start > len(draft) - budget * longest and window.prompt_tokens <= budget
    # The same window as the exhaustive search over the end of the draft, which holds it.
    tail = draft[draft.index("\n\n", len(draft) - 4 * budget * longest) + 2 :]
    start, prompt, _ = exhaustive(tail, budget=budget, count=engine.count_tokens)
    assert start > 0 and prompt == window.prompt and len(draft) - len(tail) + start == window.start
