"""Token healing (inference/local/healing.py): the prompt backs up over the token the cursor cut,
and the first tokens drawn must write its text again, on real llama.cpp with models the
tests write."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import Path

import pytest
from gguf_models import FIM_TOKENS, PHRASES_GREEDY, italian_vocab, write_llama_model
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spm_models import italian_lines

from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.events import GenerationDone, TokenEvent
from scriptorium.inference.local.healing import Healer, TokenPrefixes, plan_healing
from scriptorium.inference.core.settings import PRESETS, LogitBias, SettingsError
from scriptorium.inference.window.window import FIM_SUFFIX_CHARS, Fim, build_window, fim_suffix
from scriptorium.inference.core.writer_stop import WriterStop

GREEDY = PRESETS["greedy"]
UNHEALED = replace(GREEDY, heal=False)


def run(engine: Engine, prompt: str, settings=GREEDY, **kwargs) -> list:
    with contextlib.closing(engine.generate(prompt, settings, LogitBias(), **kwargs)) as events:
        return list(events)


def tokens_of(events: list) -> list[TokenEvent]:
    return [e for e in events if isinstance(e, TokenEvent)]


def done_of(events: list) -> GenerationDone:
    assert isinstance(events[-1], GenerationDone)
    return events[-1]


# ---- the rules, on a vocabulary of a few pieces ------------------------------------

PIECES = [b"", b" ", b" m", b" mo", b" mol", b" molo", b" il", b"lo", b"o", b".", b"zzo"]


def ids(*pieces: bytes) -> list[int]:
    return [PIECES.index(piece) for piece in pieces]


def test_the_prompt_backs_up_while_a_longer_token_begins_with_the_text_backed_up_over() -> None:
    prefixes = TokenPrefixes(PIECES)
    plan = plan_healing([0, *ids(b" il", b" mo")], PIECES.__getitem__, prefixes)
    assert (plan.kept, plan.removed) == (2, b" mo")  # " il mo" begins no token: " il" stays
    # A full stop nothing extends is a boundary: nothing is backed up over.
    assert plan_healing([0, *ids(b" il", b".")], PIECES.__getitem__, prefixes).removed == b""
    # A trailing space is a cut token like any other.
    assert plan_healing([0, *ids(b" il", b" ")], PIECES.__getitem__, prefixes).removed == b" "
    # The first token always stays (here a control token, the BOS).
    assert plan_healing([0], PIECES.__getitem__, prefixes).kept == 1


def test_the_allowed_tokens_begin_with_the_rest_or_are_a_beginning_of_it() -> None:
    prefixes = TokenPrefixes(PIECES)
    allowed = sorted(PIECES[i] for i in prefixes.allowed(b" mo").tolist())
    assert allowed == [b" ", b" m", b" mo", b" mol", b" molo"]
    healer = Healer(prefixes, b" mo", len(PIECES))
    assert healer.take(b" m") == b"" and healer.rest == b"o"  # a beginning: the rest is still to write
    assert healer.take(b"o") == b"" and not healer.active
    healer = Healer(prefixes, b" mo", len(PIECES))
    assert healer.take(b" molo") == b"lo"  # only what follows the cursor is shown


def test_a_prefix_of_high_bytes_finds_its_tokens() -> None:
    pieces = [b"", b"\xff", b"\xff\xff", b"\xc3\xa8", b"\xc3\xa8a"]
    prefixes = TokenPrefixes(pieces)
    assert sorted(prefixes.allowed(b"\xff").tolist()) == [1, 2]
    assert prefixes.extended(b"\xc3\xa8") and not prefixes.extended(b"\xc3\xa8a")


# ---- "lungo il mo" on a model that learned "▁molo" as one token ---------------------


@pytest.fixture(scope="module")
def molo_engine(molo_model: Path):
    """ "▁molo" is one token; "▁il" is followed by "▁molo", "▁mo" by "etto" (gguf_healing.py)."""
    engine = Engine.load(LoadOptions(model_path=molo_model, n_ctx=256))
    yield engine
    engine.close()


def test_lungo_il_mo_continues_with_lo_when_healed(molo_engine: Engine) -> None:
    healed = run(molo_engine, "lungo il mo", top_n=5)
    assert "".join(t.text for t in tokens_of(healed)) == "lo"
    first = tokens_of(healed)[0]
    assert first.id == italian_vocab().id_of("▁molo") and first.piece == b" molo"
    assert done_of(healed).healed == " mo"
    # The step says what it is: held to " mo", "▁molo" allowed and all but certain among the allowed.
    assert first.healing is not None and first.healing.rest == " mo"
    assert first.healing.allowed[0].id == first.id
    assert first.healing.allowed[0].p / first.healing.mass > 0.99
    assert 0 < first.healing.allowed_count < molo_engine.n_vocab
    # The raw candidates are the model's own from the shorter prompt, beside the allowed ones.
    assert first.top[0].id == first.id
    # The trace follows the allowed candidates: none of them was taken out by a sampler of its own.
    assert {token for token, _ in first.kept} <= {c.id for c in first.healing.allowed}

    unhealed = run(molo_engine, "lungo il mo", UNHEALED)
    assert "".join(t.text for t in tokens_of(unhealed)) == "etto"
    assert done_of(unhealed).healed == ""


def test_a_trailing_space_goes_through_the_same_healing(molo_engine: Engine) -> None:
    events = run(molo_engine, "lungo il ")
    assert "".join(t.text for t in tokens_of(events)) == "molo"  # the author's space is not written twice
    assert done_of(events).healed == " "


def test_the_raw_probability_is_reported_without_candidates_too(molo_engine: Engine) -> None:
    first = tokens_of(run(molo_engine, "lungo il mo", top_n=0))[0]
    assert first.healing is not None and first.p > 0.99  # the model's own: "▁molo" after "▁il"


def test_with_healing_the_window_keeps_the_spaces_ending_the_text() -> None:
    def count(text: str) -> int:
        return len(text)

    healed = build_window("pronto.  ", budget=100, count=count, heals=True)
    assert (healed.prompt, healed.spaces_left_out) == ("pronto.  ", 0)
    unhealed = build_window("pronto.  ", budget=100, count=count)
    assert (unhealed.prompt, unhealed.spaces_left_out) == ("pronto.", 2)


# ---- random cuts in Italian prose, with a SentencePiece model trained on it ----------

PROSE = " ".join(line.strip() for line in italian_lines() if line.strip())[:4000]


@pytest.fixture(scope="module")
def prose_engine(unigram_gguf: Path):
    engine = Engine.load(LoadOptions(model_path=unigram_gguf, n_ctx=512))
    yield engine
    engine.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=20, max_value=len(PROSE)), seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_a_healed_continuation_never_rewrites_the_authors_characters(prose_engine: Engine, cut: int, seed: int) -> None:
    prompt = PROSE[max(0, cut - 200) : cut]
    sampled = replace(PRESETS["creative"], seed=seed, max_tokens=4)
    events = run(prose_engine, prompt, sampled, top_n=3)
    tokens = tokens_of(events)
    healed = done_of(events).healed.encode()
    assert prompt.encode().endswith(healed)  # only the author's own text is backed up over
    written = b"".join(t.piece for t in tokens)
    # What the model wrote starts by writing the cut text again, byte for byte (or is a
    # beginning of it when it stopped first), and the text shown is what follows it.
    assert written.startswith(healed) or healed.startswith(written)
    if tokens and healed:
        first = tokens[0].piece
        assert first.startswith(healed) or healed.startswith(first)  # the first token extends the cut
    shown = "".join(t.text for t in tokens) + done_of(events).tail_text
    if written.startswith(healed):
        assert shown == written[len(healed) :].decode("utf-8", "ignore")
    else:
        assert shown == ""


# ---- stop where a writer would (writer_stop.py) -------------------------------------


def test_a_sentence_ends_at_its_punctuation_once_white_space_follows() -> None:
    stop = WriterStop("sentence")
    for text in (" La", " casa", " costa", " 3", ".", "5", " euro", "."):
        assert not stop.stops_before(text)
        stop.wrote(text)
    assert not stop.stops_before("»")  # the quote closing after the full stop belongs to the sentence
    stop.wrote("»")
    assert stop.stops_before(" Poi")
    assert stop.stops_before("\n")
    assert not WriterStop("tokens").stops_before(" Poi")


def test_a_paragraph_ends_at_a_blank_line_after_some_text() -> None:
    stop = WriterStop("paragraph")
    assert not stop.stops_before("\n\n")  # nothing written yet: a break first is no end
    stop.wrote("\n\n")
    for text in (" La", " casa", ".", "\n"):
        assert not stop.stops_before(text)
        stop.wrote(text)
    assert stop.stops_before("\n")
    one_token = WriterStop("paragraph")
    one_token.wrote(" La casa.\n\n")
    assert one_token.stops_before(" Poi")


def test_length_modes_stop_the_generation_before_the_next_sentence(phrases_model: Path, crlf_model: Path) -> None:
    engine = Engine.load(LoadOptions(model_path=phrases_model, n_ctx=256))
    try:
        free = run(engine, "La casa era buia.", replace(GREEDY, max_tokens=30))
        sentence = run(engine, "La casa era buia.", replace(GREEDY, max_tokens=30, length="sentence"))
    finally:
        engine.close()
    assert done_of(free).text.startswith(PHRASES_GREEDY) and len(done_of(free).text) > len(PHRASES_GREEDY)
    assert (done_of(sentence).text, done_of(sentence).stop_reason) == (PHRASES_GREEDY, "sentence")

    engine = Engine.load(LoadOptions(model_path=crlf_model, n_ctx=256))
    try:
        paragraph = run(engine, "Poi", replace(GREEDY, max_tokens=30, length="paragraph"))
        line = run(engine, "Poi", replace(GREEDY, max_tokens=30, length="sentence"))
    finally:
        engine.close()
    assert (done_of(paragraph).text, done_of(paragraph).stop_reason) == (" La casa.\n", "paragraph")
    assert done_of(line).text == " La casa."


def test_a_length_mode_that_does_not_exist_is_refused_naming_it() -> None:
    with pytest.raises(SettingsError, match="length must be one of tokens, sentence, paragraph"):
        replace(GREEDY, length="chapter").validated()


# ---- fill in the middle ----------------------------------------------------------------


def test_a_vocabulary_with_fim_tokens_gives_their_texts_and_the_window_carries_the_suffix(tmp_path: Path) -> None:
    path = write_llama_model(tmp_path / "fim.gguf", kind="sentence", fim_tokens=True)
    engine = Engine.load(LoadOptions(model_path=path, n_ctx=256))
    try:
        assert engine.fim_texts == FIM_TOKENS
        fim = Fim.at(engine.fim_texts, "Lucia. Poi scese dalla salita.\n\nAltro.", 6)
        assert fim.after == " Poi scese dalla salita."  # to the end of its paragraph
        window = build_window("Lucia.", budget=200, count=engine.count_tokens, fim=fim)
        assert window.prompt == "<|fim_prefix|>Lucia.<|fim_suffix|> Poi scese dalla salita.<|fim_middle|>"
        assert window.as_json(256)["fim_suffix_chars"] == len(fim.after)
        events = run(engine, window.prompt, special=True)
        assert done_of(events).text == " La casa era buia."  # what the model writes between
    finally:
        engine.close()
    plain = Engine.load(LoadOptions(model_path=write_llama_model(tmp_path / "plain.gguf", kind="sentence"), n_ctx=256))
    try:
        assert plain.fim_texts is None
    finally:
        plain.close()


def test_the_text_after_the_cursor_is_cut_after_a_whole_sentence() -> None:
    long = " ".join(["La casa era buia."] * 60)
    cut = fim_suffix(long, 0)
    assert len(cut) <= FIM_SUFFIX_CHARS and cut.endswith("buia.")


def test_the_healing_index_is_built_after_the_load_not_in_the_first_generations_wait(molo_model: Path) -> None:
    """On Gemma 3's 262k tokens the index takes about a second: built beside the author's first
    keys, not between their first ctrl+g and its first token."""
    import time

    engine = Engine.load(LoadOptions(model_path=molo_model, n_ctx=256, n_threads=1))
    try:
        for _ in range(200):  # a guard against hanging, not a time the test asserts
            if "prefixes" in vars(engine.vocabulary):
                break
            time.sleep(0.05)
        assert "prefixes" in vars(engine.vocabulary), "the index was not built after the load"
    finally:
        engine.close()
