"""The inference layer on real llama.cpp with the generated models."""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np
import pytest
from float_tolerance import PROB_RTOL, assert_same_greedy_run, assert_top_matches
from gguf_models import FIRST_BYTE_ID, LORA_PUSH_PIECE, N_VOCAB, byte_id, italian_vocab

from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.events import (
    ContextTrimmed,
    GenerationDone,
    PrefillDone,
    PrefillProgress,
    TokenEvent,
)
from scriptorium.inference.core.settings import PRESETS, LogitBias, SettingsError
from scriptorium.inference.core.text import TokenTextDecoder

GREEDY = PRESETS["greedy"]
DRAFT = "La casa era buia, e la notte più lunga."


def load(model: Path, **options) -> Engine:
    return Engine.load(LoadOptions(model_path=model, **options))


def run(engine: Engine, prompt: str, settings=GREEDY, bias=LogitBias(), **kwargs):
    with contextlib.closing(engine.generate(prompt, settings, bias, **kwargs)) as events:
        return list(events)


def tokens_of(events) -> list[TokenEvent]:
    return [e for e in events if isinstance(e, TokenEvent)]


def done_of(events) -> GenerationDone:
    assert isinstance(events[-1], GenerationDone)
    return events[-1]


@pytest.fixture
def random_engine(random_model: Path):
    engine = load(random_model, n_ctx=512)
    yield engine
    engine.close()


def test_byte_tokens_are_found_from_llama_cpp_attributes(random_engine: Engine) -> None:
    assert random_engine.n_vocab == N_VOCAB
    assert random_engine.byte_token_ids == tuple(range(FIRST_BYTE_ID, FIRST_BYTE_ID + 256))
    assert random_engine.facts.byte_token_ids == random_engine.byte_token_ids


def test_byte_dominated_model_loops_in_bytes_without_the_ban(byte_loop_model: Path) -> None:
    engine = load(byte_loop_model, n_ctx=256)
    settings = GREEDY.with_changes(max_tokens=12)
    unbanned = tokens_of(run(engine, DRAFT, settings, LogitBias(ban_byte_tokens=False)))
    assert [t.id for t in unbanned] == [byte_id(0xFF)] * 12
    banned = run(engine, DRAFT, settings, LogitBias())
    assert len(tokens_of(banned)) == 12
    assert all(t.id not in engine.byte_token_ids for t in tokens_of(banned))
    # The banned candidates are still reported, marked as banned.
    first_top = tokens_of(banned)[0].top
    assert first_top[0].id == byte_id(0xFF) and first_top[0].banned
    assert "\\x" not in done_of(banned).text


def test_sampled_runs_also_respect_the_ban(byte_loop_model: Path) -> None:
    engine = load(byte_loop_model, n_ctx=256)
    creative = PRESETS["creative"].with_changes(max_tokens=40, seed=7, top_k=0, top_p=1.0, min_p=0.0)
    events = run(engine, DRAFT, creative)
    assert all(t.id < FIRST_BYTE_ID for t in tokens_of(events))


def test_user_bias_entries_apply_and_win_over_the_ban(random_engine: Engine) -> None:
    favourite = italian_vocab().id_of("▁gatto")
    events = run(random_engine, DRAFT, GREEDY.with_changes(max_tokens=3), LogitBias(entries=((favourite, 100.0),)))
    assert [t.id for t in tokens_of(events)] == [favourite] * 3
    # A user entry for a byte token overrides the default ban.
    loud_byte = byte_id(0x41)
    events = run(random_engine, DRAFT, GREEDY.with_changes(max_tokens=1), LogitBias(entries=((loud_byte, 100.0),)))
    assert tokens_of(events)[0].id == loud_byte


@pytest.mark.parametrize("flash_attn", [True, False])
def test_probabilities_equal_a_softmax_of_llama_cpp_logits(random_model: Path, flash_attn: bool) -> None:
    from llama_cpp import Llama

    settings = PRESETS["prose"].with_changes(max_tokens=6, seed=11)
    engine = load(random_model, n_ctx=512, flash_attn=flash_attn)
    events = run(engine, DRAFT, settings, top_n=10)
    generated = tokens_of(events)
    reference = Llama(model_path=str(random_model), n_ctx=512, logits_all=True, verbose=False, flash_attn=flash_attn)
    prompt_tokens = reference.tokenize(DRAFT.encode())
    # Evaluated in the same batches as the engine: the prompt, then one token at a time.
    reference.eval(prompt_tokens)
    for event in generated[:-1]:
        reference.eval([event.id])
    scores = np.asarray(reference.scores[: reference.n_tokens], dtype=np.float64)
    for step, event in enumerate(generated):
        logits = scores[len(prompt_tokens) - 1 + step]
        softmax = np.exp(logits - logits.max())
        softmax /= softmax.sum()
        # Not bit-for-bit: with logits_all the reference computes the output layer for
        # every position, in another batch shape than the engine: float_tolerance says how
        # far apart that may put them.
        assert_top_matches(event.top, softmax)
        assert event.p == pytest.approx(softmax[event.id], rel=PROB_RTOL)
    reference.close()


def fresh_run(engine: Engine, prompt: str, settings) -> list:
    """A run prefilled from scratch: the same batches, so the same float32 arithmetic, as
    any other fresh run (reusing the cached prefix evaluates the last prompt token alone,
    which rounds differently and can move a sample across a boundary)."""
    engine.clear_cache()
    return run(engine, prompt, settings)


def test_greedy_is_deterministic_and_a_seed_reproduces_a_sampled_run(random_engine: Engine) -> None:
    greedy = GREEDY.with_changes(max_tokens=15)
    texts = [done_of(fresh_run(random_engine, DRAFT, greedy)).text for _ in range(2)]
    assert texts[0] == texts[1]
    seeded = PRESETS["creative"].with_changes(max_tokens=20, seed=1234)
    first, second = fresh_run(random_engine, DRAFT, seeded), fresh_run(random_engine, DRAFT, seeded)
    assert [t.id for t in tokens_of(first)] == [t.id for t in tokens_of(second)]
    assert done_of(first).seed == 1234
    others = {done_of(run(random_engine, DRAFT, seeded.with_changes(seed=s))).text for s in (1, 2, 3)}
    assert len(others | {done_of(first).text}) > 1


def test_an_unseeded_run_reports_the_seed_that_reproduces_it(random_engine: Engine) -> None:
    loose = PRESETS["creative"].with_changes(max_tokens=12)
    done = done_of(fresh_run(random_engine, DRAFT, loose))
    again = done_of(fresh_run(random_engine, DRAFT, loose.with_changes(seed=done.seed)))
    assert again.text == done.text


def test_split_utf8_characters_come_out_whole_and_invalid_bytes_show(utf8_model: Path) -> None:
    engine = load(utf8_model, n_ctx=256)
    no_ban = LogitBias(ban_byte_tokens=False)
    events = tokens_of(run(engine, "La casa", GREEDY.with_changes(max_tokens=6), no_ban))
    assert [t.id for t in events] == [byte_id(0xC3), byte_id(0xA8)] * 3
    assert [t.text for t in events] == ["", "è"] * 3
    # After "▁notte" the model emits <0xFF>, which is never valid UTF-8: written as the
    # replacement character, not dropped, and not as "\\xff" (four characters the author
    # could have typed, written into the draft on Tab).
    events = run(engine, "la notte", GREEDY.with_changes(max_tokens=4), no_ban)
    assert done_of(events).text == "\ufffd casaè"
    assert tokens_of(events)[0].top[0].text == "<0xFF>"  # the panels name the token by its byte
    assert "".join(t.text for t in tokens_of(events)) + done_of(events).tail_text == done_of(events).text
    # A three-byte character split over three tokens. Unhealed: this model keys on the last token,
    # and healing backs the prompt up over "▁era", which "▁erano" extends.
    unhealed = GREEDY.with_changes(max_tokens=5, heal=False)
    assert done_of(run(engine, "la casa era", unhealed, no_ban)).text == "’è"


def test_an_unfinished_character_at_the_end_never_reaches_the_text(utf8_model: Path) -> None:
    """With the byte ban lifted, a generation cut after <0xC3> (max tokens, Esc, a stop)
    showed "\\xc3" at its end, and accepting it wrote that escape into the draft."""
    engine = load(utf8_model, n_ctx=256)
    events = run(engine, "La casa", GREEDY.with_changes(max_tokens=3), LogitBias(ban_byte_tokens=False))
    done = done_of(events)
    assert done.completion_tokens == 3 and done.text == "è" and done.tail_text == ""
    assert "".join(t.text for t in tokens_of(events)) == done.text


def test_a_character_interrupted_by_another_token_is_dropped_not_escaped() -> None:
    decoder = TokenTextDecoder()
    # <0xE2> <0x80> then a word: the character never completes; "\\xe2\\x80" was written.
    assert [decoder.feed(piece) for piece in (b"\xe2", b"\x80", b" casa", b"\xc3", b"\xa8")] == [
        "",
        "",
        " casa",
        "",
        "è",
    ]
    # A byte that can never start a character is still shown, not dropped: as U+FFFD.
    assert decoder.feed(b"\xff") == "\ufffd" and decoder.finish() == ""
    # So is a lone continuation byte, and an overlong lead (C0, C1) that no byte completes.
    assert [decoder.feed(piece) for piece in (b"\x80", b"a\xbf", b"\xc0", b"\xc1\x81")] == [
        "\ufffd",
        "a\ufffd",
        "\ufffd",
        "\ufffd\ufffd",
    ]


def test_stop_strings_match_the_text_as_the_author_sees_it(crlf_model: Path) -> None:
    """The model's newline token is "\\r\\n" (SmolLM2's are): the author's stop "\\n\\n"
    was matched on the raw "\\r\\n\\r\\n" and never fired."""
    engine = load(crlf_model, n_ctx=256)
    events = run(engine, "Era notte", GREEDY.with_changes(max_tokens=8))
    assert done_of(events).text == " La casa.\n\n\n\n\n"  # line breaks as the editor keeps them
    assert "".join(t.text for t in tokens_of(events)) + done_of(events).tail_text == done_of(events).text
    for stop in ("\n\n", "\r\n\r\n"):  # a stop written with CRLF reads as the author's text too
        done = done_of(run(engine, "Era notte", GREEDY.with_changes(max_tokens=8, stop=(stop,))))
        assert (done.text, done.stop_reason, done.completion_tokens) == (" La casa.", "stop", 5)


def test_lora_scale_zero_equals_the_base_model(random_model: Path, lora_adapter: Path, random_engine: Engine) -> None:
    settings = GREEDY.with_changes(max_tokens=8)
    base = tokens_of(run(random_engine, DRAFT, settings))
    tuned = load(random_model, n_ctx=512, lora_path=lora_adapter, lora_scale=1.0)
    gatto = italian_vocab().id_of(LORA_PUSH_PIECE)
    assert tokens_of(run(tuned, DRAFT, settings))[0].id == gatto
    tuned.set_lora_scale(0.0)
    off = tokens_of(run(tuned, DRAFT, settings))
    # Bit-for-bit: the same batches, and the adapter adds exactly 0 * x to each weight's output.
    assert [(t.id, t.p) for t in off] == [(t.id, t.p) for t in base]
    tuned.set_lora_scale(1.0)
    assert tokens_of(run(tuned, DRAFT, settings))[0].id == gatto
    tuned.close()


def test_loaded_at_scale_zero_equals_the_base_model(
    random_model: Path, lora_adapter: Path, random_engine: Engine
) -> None:
    settings = GREEDY.with_changes(max_tokens=5)
    zero = load(random_model, n_ctx=512, lora_path=lora_adapter, lora_scale=0.0)
    assert [t.id for t in tokens_of(run(zero, DRAFT, settings))] == [
        t.id for t in tokens_of(run(random_engine, DRAFT, settings))
    ]


def test_appending_a_sentence_prefills_only_the_new_tokens(random_engine: Engine) -> None:
    settings = GREEDY.with_changes(max_tokens=5)
    cold = run(random_engine, DRAFT, settings)
    cold_prefill = next(e for e in cold if isinstance(e, PrefillDone))
    assert cold_prefill.reused_tokens == 0 and cold_prefill.prefill_tokens == cold_prefill.prompt_tokens
    longer = DRAFT + " Il gatto dorme."
    warm = run(random_engine, longer, settings)
    warm_prefill = next(e for e in warm if isinstance(e, PrefillDone))
    appended = len(random_engine.tokenize(longer)) - len(random_engine.tokenize(DRAFT))
    assert warm_prefill.reused_tokens == cold_prefill.prompt_tokens
    assert warm_prefill.prefill_tokens == appended
    # Reuse must not change what the model computes, beyond float32 rounding: the reused
    # prefix was prefilled in another batch than the fresh run's single one.
    fresh = run(load(random_engine.options.model_path, n_ctx=512), longer, settings)
    assert_same_greedy_run(tokens_of(warm), tokens_of(fresh))


def test_an_edit_in_the_middle_reuses_the_prefix_before_it(random_engine: Engine) -> None:
    run(random_engine, DRAFT, GREEDY.with_changes(max_tokens=2))
    edited = DRAFT.replace("notte", "casa")
    prefill = next(
        e for e in run(random_engine, edited, GREEDY.with_changes(max_tokens=2)) if isinstance(e, PrefillDone)
    )
    unchanged = random_engine.tokenize(DRAFT)[: random_engine.tokenize(DRAFT).index(italian_vocab().id_of("▁notte"))]
    assert prefill.reused_tokens == len(unchanged)
    assert prefill.prefill_tokens == prefill.prompt_tokens - len(unchanged)


def test_a_prompt_longer_than_the_context_keeps_the_most_recent_text(random_model: Path) -> None:
    engine = load(random_model, n_ctx=256)
    long_draft = " ".join([DRAFT] * 60)
    events = run(engine, long_draft, GREEDY.with_changes(max_tokens=40))
    trimmed = next(e for e in events if isinstance(e, ContextTrimmed))
    assert trimmed.kept_tokens == 256 - 40
    assert trimmed.dropped_tokens == len(engine.tokenize(long_draft)) - trimmed.kept_tokens
    done = done_of(events)
    assert done.completion_tokens == 40 and done.trimmed_tokens == trimmed.dropped_tokens
    assert done.kv_cache.tokens <= 256
    # max_tokens beyond the whole context: generation stops when the context is full.
    events = run(engine, long_draft, GREEDY.with_changes(max_tokens=1000))
    assert done_of(events).stop_reason == "context"
    assert done_of(events).kv_cache.tokens == 256


def test_cancelling_between_tokens(random_engine: Engine) -> None:
    seen: list[TokenEvent] = []
    events = run(random_engine, DRAFT, GREEDY.with_changes(max_tokens=50), should_stop=lambda: len(seen) >= 3)
    for event in tokens_of(events):
        seen.append(event)
    # The generator is lazy: re-run, consuming as we go.
    seen.clear()
    with contextlib.closing(
        random_engine.generate(
            DRAFT, GREEDY.with_changes(max_tokens=50), LogitBias(), should_stop=lambda: len(seen) >= 3
        )
    ) as stream:
        for event in stream:
            if isinstance(event, TokenEvent):
                seen.append(event)
            last = event
    assert len(seen) == 3 and last.stop_reason == "cancelled" and last.completion_tokens == 3


def test_a_long_prefill_can_be_interrupted_and_the_engine_recovers(random_model: Path) -> None:
    engine = load(random_model, n_ctx=2048, n_batch=512)
    long_draft = " ".join([DRAFT] * 100)
    calls = []

    def stop_inside_decode() -> bool:
        calls.append(1)
        return len(calls) > 1  # let the first check pass, then abort from inside llama_decode

    events = run(engine, long_draft, GREEDY.with_changes(max_tokens=5), should_stop=stop_inside_decode)
    assert done_of(events).stop_reason == "cancelled" and done_of(events).completion_tokens == 0
    # No token came, so there is no time to the first token (not the time until the cancel).
    assert done_of(events).ttft_ms == 0.0
    assert not any(isinstance(e, PrefillProgress) for e in events)
    assert engine.kv_usage().tokens == 0
    # The next generation computes the same as a fresh engine.
    after = done_of(run(engine, long_draft, GREEDY.with_changes(max_tokens=5)))
    fresh = done_of(run(load(random_model, n_ctx=2048), long_draft, GREEDY.with_changes(max_tokens=5)))
    assert after.text == fresh.text


def test_eos_and_stop_strings(sentence_model: Path) -> None:
    engine = load(sentence_model, n_ctx=256)
    done = done_of(run(engine, "Allora", GREEDY.with_changes(max_tokens=20)))
    assert (done.stop_reason, done.text) == ("eos", " La casa era buia.")
    events = run(engine, "Allora", GREEDY.with_changes(max_tokens=20, stop=("era b",)))
    done = done_of(events)
    assert (done.stop_reason, done.text) == ("stop", " La casa ")
    assert "".join(t.text for t in tokens_of(events)) == " La casa "


def test_decode_speed_counts_the_step_before_an_end_of_generation_token(sentence_model: Path) -> None:
    # " La casa era buia." is five tokens, then </s>: </s> is sampled after the fifth
    # token's decode, so the first-to-last span holds five decode steps, not four.
    engine = load(sentence_model, n_ctx=256)
    done = done_of(run(engine, "Allora", GREEDY.with_changes(max_tokens=20)))
    assert (done.stop_reason, done.completion_tokens) == ("eos", 5)
    assert done.decode_tokens_per_s * done.decode_ms / 1000.0 == pytest.approx(5, rel=1e-9)
    # One token then </s>: one decode step was timed, so there is a speed to show.
    done = done_of(run(engine, "La casa era buia", GREEDY.with_changes(max_tokens=20)))
    assert (done.stop_reason, done.text) == ("eos", ".")
    assert done.decode_ms > 0
    assert done.decode_tokens_per_s * done.decode_ms / 1000.0 == pytest.approx(1, rel=1e-9)


def test_timings_and_kv_usage_are_reported(random_engine: Engine) -> None:
    events = run(random_engine, DRAFT, GREEDY.with_changes(max_tokens=10))
    done = done_of(events)
    prompt_tokens = len(random_engine.tokenize(DRAFT))
    assert done.prompt_tokens == prompt_tokens and done.completion_tokens == 10
    assert done.prefill_ms > 0 and done.ttft_ms >= done.prefill_ms and done.decode_tokens_per_s > 0
    # The last sampled token is not evaluated: nothing asks for its successor yet.
    assert done.kv_cache.tokens == prompt_tokens + 9
    assert done.kv_cache.bytes_used == done.kv_cache.tokens * done.kv_cache.bytes_per_token
    assert [t.kv_tokens for t in tokens_of(events)] == list(range(prompt_tokens, prompt_tokens + 10))


def test_chat_prompt_uses_the_model_template_or_the_fallback(sentence_model: Path, random_engine: Engine) -> None:
    engine = load(sentence_model, n_ctx=256)
    messages = [{"role": "user", "content": "Ciao"}]
    assert engine.chat_prompt(messages).endswith("assistant:")
    fallback = random_engine.chat_prompt([{"role": "system", "content": "Sii breve."}] + messages)
    assert fallback.startswith("Sii breve.") and "Utente: Ciao" in fallback and fallback.endswith("Assistente:")


@pytest.mark.parametrize("reply", [" La casa era buia.", "\nLa casa.", "La casa."])
def test_the_fallbacks_next_turn_holds_a_reply_as_the_model_wrote_it(random_engine: Engine, reply: str) -> None:
    """A reply written after "Assistente:" starts with its own space (SentencePiece's ▁):
    the next turn's prompt read "Assistente:  La casa", a double space the model never
    wrote (an extra "▁" token), and the cached reply could not be reused from its first token."""
    asked = [{"role": "user", "content": "Ciao"}]
    answered = [*asked, {"role": "assistant", "content": reply}, {"role": "user", "content": "E poi?"}]
    first, second = random_engine.chat_prompt(asked), random_engine.chat_prompt(answered)
    assert second.startswith(first + reply + "\n") if reply[:1].isspace() else second.startswith(first + " " + reply)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"temperature": -1.0}, "temperature"),
        ({"top_k": -2}, "top-k"),
        ({"top_p": 0.0}, "top-p"),
        ({"min_p": 1.0}, "min-p"),
        ({"repeat_penalty": 0.0}, "repeat penalty"),
        ({"max_tokens": 0}, "max tokens"),
        ({"seed": -5}, "seed"),
    ],
)
def test_invalid_sampler_values_are_named(change, message) -> None:
    with pytest.raises(SettingsError, match=message):
        GREEDY.with_changes(**change)


def test_bias_for_a_token_outside_the_vocabulary(random_engine: Engine) -> None:
    with pytest.raises(SettingsError, match="token 99999"):
        run(random_engine, DRAFT, GREEDY, LogitBias(entries=((99999, -1.0),)))
