"""Speculative decoding (inference/local/speculative.py) writes what plain decoding writes, every
token with its own numbers: the same tokens, probabilities, candidates and sampler trace, for
greedy and sampled generation with every kind of sampler; the cache then holds exactly the
accepted tokens; and prompt lookup drafts a lot where the text repeats and turns itself down
where it does not."""

from __future__ import annotations

from contextlib import closing

import pytest
from float_tolerance import PROB_RTOL, assert_same_greedy_run
from gguf_loop import PROMPT as LOOP_PROMPT
from gguf_loop import loop_transitions
from gguf_models import write_llama_model
from italian_vocab import italian_vocab

from scriptorium.inference.local.draft_model import DraftVocabularyError
from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.events import GenerationDone, SpeculationCounts, TokenEvent
from scriptorium.inference.gguf.gguf_file import read_model_facts
from scriptorium.inference.local.lookup import PromptLookup
from scriptorium.inference.gguf.quantize import QuantizeError, draft_layers, make_draft, quantize
from scriptorium.inference.core.settings import PRESETS, LogitBias, SettingsError
from scriptorium.inference.core.speculation import Speculation
from scriptorium.inference.local.speculative import COSTLY_PAUSE_GROWTH, PAUSE_LIMIT, DraftPacing, PacingRecord

LOOKUP = Speculation(guesser="lookup")
"""Drafting as many tokens a pass as the app does by default: 12 on these F32 models."""
CHAIN_WORDS = (
    "casa notte giorno sera mattina tempo anno vita mondo uomo donna bambino bambina madre padre figlio figlia "
    "fratello sorella amico amica nome voce occhi mano mani cuore testa viso porta finestra strada città paese"
).split()
OTHER_WORD = "gatto"


@pytest.fixture(scope="module")
def loop_engine(tmp_path_factory: pytest.TempPathFactory):
    transitions, default_next = loop_transitions()
    path = write_llama_model(
        tmp_path_factory.mktemp("loop") / "loop.gguf", kind="markov", transitions=transitions, default_next=default_next
    )
    engine = Engine.load(LoadOptions(model_path=path, n_ctx=512, n_threads=1))
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def random_engine(tmp_path_factory: pytest.TempPathFactory):
    path = write_llama_model(tmp_path_factory.mktemp("random") / "random.gguf", kind="random")
    # Flash attention off: its f16 sums differ between batch shapes by more than the float32 bound
    # (a warm cache against a cold one, speculation or not), and the cache test compares those.
    engine = Engine.load(LoadOptions(model_path=path, n_ctx=512, n_threads=1, flash_attn=False))
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def chain_engine(tmp_path_factory: pytest.TempPathFactory):
    """A markov model that walks CHAIN_WORDS once, never repeating itself, then ends."""
    vocab = italian_vocab()
    ids = [vocab.id_of("▁" + word) for word in CHAIN_WORDS]
    path = write_llama_model(
        tmp_path_factory.mktemp("chain") / "chain.gguf", kind="markov", transitions=dict(zip(ids, ids[1:]))
    )
    engine = Engine.load(LoadOptions(model_path=path, n_ctx=512, n_threads=1))
    yield engine
    engine.close()


def run(engine: Engine, prompt: str, settings, speculation: Speculation = Speculation(), top_n: int = 5):
    engine.clear_cache()  # both runs from an empty cache: only speculation differs
    with closing(engine.generate(prompt, settings, LogitBias(), top_n=top_n, speculation=speculation)) as events:
        events = list(events)
    done = events[-1]
    assert isinstance(done, GenerationDone)
    return [e for e in events if isinstance(e, TokenEvent)], done


def assert_same_numbers(plain: list[TokenEvent], guessed: list[TokenEvent]) -> None:
    """The same tokens, each with the same probability, candidates and sampler trace."""
    assert [e.id for e in guessed] == [e.id for e in plain]
    for a, b in zip(plain, guessed):
        assert b.p == pytest.approx(a.p, rel=PROB_RTOL)
        assert [c.id for c in b.top] == [c.id for c in a.top]
        assert [c.p for c in b.top] == pytest.approx([c.p for c in a.top], rel=PROB_RTOL)
        assert [k[0] for k in b.kept] == [k[0] for k in a.kept]
        assert [k[1] for k in b.kept] == pytest.approx([k[1] for k in a.kept], rel=PROB_RTOL, abs=1e-6)
        assert b.removed == a.removed
        assert [p[:2] for p in b.pushed] == [p[:2] for p in a.pushed]
        assert (b.text, b.piece, b.kv_tokens) == (a.text, a.piece, a.kv_tokens)


# ---- the guesser and its pacing, alone ------------------------------------------------------


def test_lookup_proposes_what_followed_the_longest_recurring_run() -> None:
    lookup = PromptLookup([1, 2, 3, 4, 9, 2, 3, 5, 6, 1, 2, 3])
    assert lookup.propose(3) == [4, 9, 2]  # "1 2 3" was followed by 4: longer than "2 3", followed by 5 since
    lookup = PromptLookup([2, 3, 4, 9, 2, 3, 5, 6, 7, 2, 3])
    assert lookup.propose(3) == [5, 6, 7]  # "2 3": its latest occurrence
    lookup = PromptLookup([1, 2, 3, 4, 9, 1, 2, 3])
    assert lookup.propose(2) == [4, 9]
    lookup.append(7)
    assert lookup.propose(4) == []  # "3 7" never occurred


def test_lookup_continues_a_repetition_past_the_texts_end() -> None:
    lookup = PromptLookup([5, 6, 7, 5, 6])
    assert lookup.propose(7) == [7, 5, 6, 7, 5, 6, 7]


def pauses_after_misses(pacing: DraftPacing, misses: int) -> list[int]:
    """The pauses after each of `misses` wholly rejected passes in a row."""
    pauses = []
    for _ in range(misses):
        assert pacing.length() > 0
        pacing.record(pacing.length() or 1, 0)
        paused = 0
        while pacing.length() == 0:
            paused += 1
        pauses.append(paused)
    return pauses


def test_pacing_pauses_longer_after_each_wholly_rejected_pass() -> None:
    pacing = DraftPacing(8)
    pauses = pauses_after_misses(pacing, 12)
    assert pauses[:4] == [2, 4, 8, 16]
    assert max(pauses) == PAUSE_LIMIT
    pacing.record(1, 1)
    assert pacing.length() == 2  # all kept: twice as long


def test_a_draft_models_pauses_grow_faster_and_shrink_with_kept_guesses() -> None:
    pacing = DraftPacing(6, COSTLY_PAUSE_GROWTH)  # a miss costs the draft model's own decodes
    assert pauses_after_misses(pacing, 5) == [16, 256, PAUSE_LIMIT, PAUSE_LIMIT, PAUSE_LIMIT]
    # Two kept: the next miss pauses as the second in a row did. Misses past the third, which
    # already paused the longest, were not counted, or two kept guesses would not have been enough.
    pacing.record(6, 2)
    assert pauses_after_misses(pacing, 1) == [256]


def test_a_draft_models_record_carries_over_to_the_next_generation() -> None:
    record = PacingRecord()
    assert pauses_after_misses(DraftPacing(6, COSTLY_PAUSE_GROWTH, record), 2) == [16, 256]
    following = DraftPacing(6, COSTLY_PAUSE_GROWTH, record)
    assert following.length() == 1  # asked at its first token, as long as the last pass earned
    following.record(1, 0)
    paused = 0
    while following.length() == 0:
        paused += 1
    assert paused == PAUSE_LIMIT  # the third miss in a row: the longest pause at once
    third = DraftPacing(6, COSTLY_PAUSE_GROWTH, record)
    third.record(1, 1)
    third.record(2, 2)  # kept guesses shorten the pauses and lengthen the drafts again
    assert (record.misses, third.length()) == (0, 4)


def test_the_draft_length_follows_the_models_weights(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Up to 6 guesses a pass where a pass of 8 rows would take llama.cpp's tiled kernel (K-quant
    weights), 12 where no weight is of a type it takes; a length that was set is kept."""
    folder = tmp_path_factory.mktemp("weights")
    source = write_llama_model(folder / "f32.gguf", kind="random", n_embd=256, n_head=4, n_head_kv=2, n_ff=512)
    paths = (source, quantize(source, "Q4_K_M").output_path, quantize(source, "Q8_0").output_path)
    lengths = {
        path.name: Speculation("lookup").for_model(read_model_facts(path).tiled_weights).draft_max for path in paths
    }
    assert lengths == {"f32.gguf": 12, "f32-Q4_K_M.gguf": 6, "f32-Q8_0.gguf": 12}
    assert Speculation("lookup", 4).for_model(tiled_weights=False).draft_max == 4


def test_speculation_settings_name_the_bad_value() -> None:
    with pytest.raises(SettingsError, match="speculative must be one of off, lookup, draft, not 'ngram'"):
        Speculation(guesser="ngram").validated()
    with pytest.raises(SettingsError, match="draft length must be a whole number from 1 to 32, not 0"):
        Speculation(guesser="lookup", draft_max=0).validated()
    with pytest.raises(SettingsError, match="draft model"):
        Speculation(guesser="draft").validated()


# ---- lossless --------------------------------------------------------------------------------

SAMPLED = {
    "prose": PRESETS["prose"],
    "creative (min-p, XTC)": PRESETS["creative"],
    "anti-loop (DRY)": PRESETS["anti-loop"],
    "penalties": PRESETS["prose"].with_changes(repeat_penalty=1.3, frequency_penalty=0.2, presence_penalty=0.1),
    "typical, top-n-sigma, dynamic temperature": PRESETS["prose"].with_changes(
        typical_p=0.9, top_n_sigma=2.0, dynatemp_range=0.5
    ),
    "mirostat 2": PRESETS["prose"].with_changes(mirostat=2),
    "mirostat 1": PRESETS["prose"].with_changes(mirostat=1, mirostat_tau=3.0),
}


@pytest.mark.parametrize("name", list(SAMPLED))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sampled_speculation_draws_what_plain_decoding_draws(loop_engine: Engine, name: str, seed: int) -> None:
    settings = SAMPLED[name].with_changes(seed=seed, max_tokens=60, temperature=1.0)
    plain, plain_done = run(loop_engine, LOOP_PROMPT, settings)
    guessed, done = run(loop_engine, LOOP_PROMPT, settings, LOOKUP)
    assert_same_numbers(plain, guessed)
    assert done.text == plain_done.text and done.stop_reason == plain_done.stop_reason
    assert done.speculation is not None and done.speculation.passes > 0 and plain_done.speculation is None
    assert sum(e.drafted for e in guessed) == done.speculation.accepted


def test_greedy_speculation_on_a_repeating_model_accepts_almost_everything(loop_engine: Engine) -> None:
    settings = PRESETS["greedy"].with_changes(max_tokens=120)
    plain, _ = run(loop_engine, LOOP_PROMPT, settings)
    guessed, done = run(loop_engine, LOOP_PROMPT, settings, LOOKUP)
    assert_same_numbers(plain, guessed)
    counts = done.speculation
    assert counts is not None and counts.acceptance >= 0.9
    assert counts.tokens_per_pass > 7  # passes past the 6 guesses a K-quant model's are held to
    assert sum(e.drafted for e in guessed) == counts.accepted


RANDOM_PROMPTS = (
    "La notte era lunga e il gatto guardò la luna. La notte era lunga e il gatto guardò il mare. La notte era",
    "Il cane aspettava sulla porta. Il cane aspettava sulla porta della casa, e poi il cane aspettava",
)


@pytest.mark.parametrize("prompt", RANDOM_PROMPTS)
def test_greedy_speculation_on_a_random_model_keeps_every_number(random_engine: Engine, prompt: str) -> None:
    settings = PRESETS["greedy"].with_changes(max_tokens=80)
    plain, _ = run(random_engine, prompt, settings)
    guessed, done = run(random_engine, prompt, settings, LOOKUP)
    assert_same_greedy_run(plain, guessed)
    assert done.speculation is not None and done.speculation.drafted > 0


@pytest.mark.parametrize("seed", [5, 6])
def test_sampled_speculation_on_a_random_model_keeps_every_number(random_engine: Engine, seed: int) -> None:
    settings = PRESETS["prose"].with_changes(seed=seed, max_tokens=80)
    plain, _ = run(random_engine, RANDOM_PROMPTS[0], settings)
    guessed, done = run(random_engine, RANDOM_PROMPTS[0], settings, LOOKUP)
    assert_same_numbers(plain, guessed)


# ---- the cache -------------------------------------------------------------------------------


def test_after_rejections_the_cache_holds_exactly_the_accepted_tokens(random_engine: Engine) -> None:
    prompt = RANDOM_PROMPTS[1]
    settings = PRESETS["greedy"].with_changes(max_tokens=60)
    guessed, done = run(random_engine, prompt, settings, LOOKUP)
    counts = done.speculation
    assert counts is not None and counts.passes > 0 and counts.accepted < counts.drafted  # some were rejected
    expected = tuple(random_engine.tokenize(prompt)) + tuple(e.id for e in guessed[:-1])  # the last is not decoded
    assert random_engine.cached_tokens == expected
    assert random_engine.context.memory_positions()[1] == len(expected) - 1
    # A plain continuation from that cache equals one from an empty cache.
    following = PRESETS["greedy"].with_changes(max_tokens=30)
    longer = prompt + done.text
    with closing(random_engine.generate(longer, following, LogitBias(), top_n=5)) as events:
        warm = [e for e in events if isinstance(e, TokenEvent)]
    cold, _ = run(random_engine, longer, following)
    assert_same_greedy_run(cold, warm)


def test_a_generation_stopped_inside_a_pass_leaves_only_what_was_accepted(loop_engine: Engine) -> None:
    settings = PRESETS["greedy"].with_changes(max_tokens=23)  # ends inside a pass of 8 guesses
    guessed, done = run(loop_engine, LOOP_PROMPT, settings, LOOKUP)
    assert len(guessed) == 23 and done.speculation is not None and done.speculation.passes > 0
    assert loop_engine.cached_tokens == tuple(loop_engine.tokenize(LOOP_PROMPT)) + tuple(e.id for e in guessed[:-1])
    assert loop_engine.context.memory_positions()[1] == len(loop_engine.cached_tokens) - 1


# ---- never slower --------------------------------------------------------------------------------


def test_lookup_turns_itself_down_where_the_text_never_repeats(chain_engine: Engine) -> None:
    # The prompt pairs each two chain words with another word: lookup guesses it every time, wrongly.
    pairs = " ".join(f"{a} {b} {OTHER_WORD}" for a, b in zip(CHAIN_WORDS, CHAIN_WORDS[1:]))
    prompt = " " + pairs + " " + CHAIN_WORDS[0]
    settings = PRESETS["greedy"].with_changes(max_tokens=60)
    plain, _ = run(chain_engine, prompt, settings)
    timed = chain_engine.threads.decode.samples
    guessed, done = run(chain_engine, prompt, settings, LOOKUP)
    assert [e.id for e in guessed] == [e.id for e in plain]
    assert len(guessed) == len(CHAIN_WORDS) - 1
    counts = done.speculation
    assert counts is not None and counts.accepted == 0
    # Without pacing every step would draft (32 passes); it pauses 2, 4, 8, 16 tokens after each.
    assert 1 <= counts.passes <= 5
    # Its tokens decoded alone are timed for the thread count, as plain decoding's are; its passes not.
    assert chain_engine.threads.decode.samples - timed == len(guessed) - counts.passes


# ---- a draft model --------------------------------------------------------------------------------


def test_a_draft_with_another_vocabulary_is_refused_naming_the_token(
    random_engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("drafts")
    other = write_llama_model(folder / "crlf.gguf", kind="crlf_lines")  # token 4 is "\r\n" there
    longer = write_llama_model(folder / "longer.gguf", kind="random", unused_tokens=3)
    settings = PRESETS["greedy"].with_changes(max_tokens=4)
    with pytest.raises(DraftVocabularyError, match=r"crlf.gguf has another vocabulary: token 4 is '\\r\\n' there"):
        random_engine.generate("La notte", settings, LogitBias(), speculation=Speculation("draft", 4, other))
    with pytest.raises(DraftVocabularyError, match="longer.gguf has 16,259 tokens and the model 16,256"):
        random_engine.generate("La notte", settings, LogitBias(), speculation=Speculation("draft", 4, longer))


def test_a_pruned_draft_is_made_and_guesses_without_changing_a_number(tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = tmp_path_factory.mktemp("pruned")
    vocab = italian_vocab()
    ids = [vocab.id_of("▁" + word) for word in CHAIN_WORDS]
    walk = dict(zip(ids, ids[1:] + ids[:1]))  # round and round the chain: sure of every next word
    model = write_llama_model(folder / "chain4.gguf", kind="markov", transitions=walk, n_layer=4)
    result = make_draft(model, folder / "loop-draft.gguf", keep_layers=2)
    assert read_model_facts(result.output_path).n_layer == 2
    engine = Engine.load(LoadOptions(model_path=model, n_ctx=512, n_threads=1))
    try:
        settings = PRESETS["prose"].with_changes(seed=4, max_tokens=40)
        prompt = " " + " ".join(CHAIN_WORDS[:3])
        plain, _ = run(engine, prompt, settings)
        drafted = Speculation(guesser="draft", draft_max=6, draft_model=result.output_path)
        guessed, done = run(engine, prompt, settings, drafted)
        assert_same_numbers(plain, guessed)
        counts = done.speculation
        assert counts is not None and counts.guesser == "draft" and counts.acceptance >= 0.9
    finally:
        engine.close()


class CountedDecodes:
    """A draft model's context that counts its llama_decode calls (each batch and each token)."""

    def __init__(self, context) -> None:
        self._context = context
        self.calls = 0

    def __getattr__(self, name: str):
        return getattr(self._context, name)

    def decode(self, tokens, **options):
        for chunk in self._context.decode(tokens, **options):
            self.calls += 1
            yield chunk

    def one_token_decoder(self):
        decode = self._context.one_token_decoder()

        def counted(token: int) -> int:
            self.calls += 1
            return decode(token)

        return counted


def test_a_draft_that_never_agrees_is_asked_for_far_fewer_decodes_than_tokens_written(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scriptorium.inference.local import draft_model

    folder = tmp_path_factory.mktemp("disagreeing")
    ids = [italian_vocab().id_of("▁" + word) for word in CHAIN_WORDS]
    # Both sure of every next word, never the same one: the draft skips a word of the model's round.
    model = write_llama_model(folder / "round.gguf", kind="markov", transitions=dict(zip(ids, ids[1:] + ids[:1])))
    draft = write_llama_model(folder / "skip.gguf", kind="markov", transitions=dict(zip(ids, ids[2:] + ids[:2])))
    contexts: list[CountedDecodes] = []
    guesser = draft_model.DraftModelGuesser

    def counted_guesser(context, *args, **options):
        contexts.append(CountedDecodes(context))
        return guesser(contexts[-1], *args, **options)

    monkeypatch.setattr(draft_model, "DraftModelGuesser", counted_guesser)
    # Batches on two threads, decodes on one: the draft's batches are decode-sized, and run on one.
    engine = Engine.load(LoadOptions(model_path=model, n_ctx=512, n_threads=1, n_threads_batch=2))
    try:
        settings = PRESETS["greedy"].with_changes(max_tokens=160)
        prompt = " " + " ".join(CHAIN_WORDS[:3])
        plain, _ = run(engine, prompt, settings)
        speculation = Speculation(guesser="draft", draft_max=6, draft_model=draft)
        guessed, done = run(engine, prompt, settings, speculation)
        again, done_again = run(engine, prompt, settings, speculation)
        lib, drafts = engine.handles.lib, contexts[0].handle
        assert (lib.llama_n_threads(drafts), lib.llama_n_threads_batch(drafts)) == (1, 1)
    finally:
        engine.close()
    assert [e.id for e in guessed] == [e.id for e in again] == [e.id for e in plain] and len(guessed) == 160
    counts = done.speculation
    assert counts is not None and counts.accepted == 0 and counts.drafted > 0
    # Asked after 1 and 18 tokens (pauses of 16, then 256): a batch of what was written since each
    # time, and the first draft's tokens one by one. Paused, the draft decodes nothing.
    assert len(contexts) == 2 and contexts[0].calls <= len(guessed) // 10
    assert counts.passes == 2
    # The next generation remembers: asked once at its start, for one guess, then paused.
    counts = done_again.speculation
    assert counts is not None and (counts.passes, counts.drafted, counts.accepted) == (1, 1, 0)
    assert contexts[1].calls < contexts[0].calls


def test_draft_model_keeps_a_layer_count_the_model_has(tmp_path_factory: pytest.TempPathFactory) -> None:
    assert draft_layers(4, 2) == [1, 2]
    with pytest.raises(QuantizeError, match="--keep-layers must be from 1 to 3 .the model has 4 layers., not 4"):
        draft_layers(4, 4)


# ---- a llama-server's own speculation ------------------------------------------------------------


def test_a_servers_draft_counts_are_shown_and_its_accepted_tokens_said_to_have_no_probabilities() -> None:
    from scriptorium.inference.remote.server_draft import server_speculation

    assert server_speculation({"predicted_n": 40}) is None  # started without a draft: nothing drafted
    counts = server_speculation({"draft_n": 30, "draft_n_accepted": 21})
    assert counts is not None and (counts.guesser, counts.drafted, counts.accepted) == ("server", 30, 21)
    assert counts.probabilities is False and counts.passes == 0
    assert counts.describe() == (
        "server: 21 of 30 guesses accepted (70%); the server gives the tokens of its verifying passes no probabilities"
    )
    from scriptorium.app.tui.widgets.speed_panel import guesses_line

    assert guesses_line(counts) == "21/30 guessed 70% · no p"


def test_speculation_that_drafted_nothing_says_so_on_the_speed_panel() -> None:
    from scriptorium.app.tui.widgets.speed_panel import guesses_line

    assert guesses_line(SpeculationCounts("draft", drafted=0, accepted=0, passes=0)) == "speculating, nothing guessed"
    assert guesses_line(SpeculationCounts("lookup", drafted=4, accepted=3, passes=1)) == "3/4 guessed 75% · 4.0/pass"


def test_without_repacked_weights_a_quantized_passs_rows_are_one_token_decodes(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """With llama.cpp's repacked weights off (LoadOptions.repack_weights), each row of a verifying
    pass of 7 rows over Q4_K weights is bit for bit the one-token decode of its position: the
    arithmetic that makes speculation's text plain decoding's on the demo model (the speculative guide)."""
    import ctypes

    import numpy as np

    folder = tmp_path_factory.mktemp("q4k")
    source = write_llama_model(folder / "random.gguf", kind="random", n_embd=256, n_head=4, n_head_kv=2, n_ff=512)
    model = quantize(source, "Q4_K_M", folder / "random-q4_k_m.gguf").output_path
    engine = Engine.load(
        LoadOptions(model_path=model, n_ctx=512, n_threads=1, flash_attn=True, repack_weights=False),
        index_for_healing=False,
    )
    try:
        lib, context = engine.handles.lib, engine.context
        tokens = engine.tokenize("Era una sera d'autunno quando Lucia tornò al paese, e il vento portava")
        prompt, pass_tokens = tokens[:-7], tokens[-7:]

        def row(index: int) -> np.ndarray:
            pointer = ctypes.cast(lib.llama_get_logits_ith(context._ctx, index), ctypes.POINTER(ctypes.c_float))
            return np.ctypeslib.as_array(pointer, shape=(engine.n_vocab,)).copy()

        with context.claim():
            context.clear()
            list(context.decode(prompt))
            alone = []
            for token in pass_tokens:
                list(context.decode([token]))
                alone.append(row(-1))
            context.trim(len(prompt))
            list(context.decode(pass_tokens, every_row=True))
            batched = [row(i) for i in range(len(pass_tokens))]
        assert all(np.array_equal(a, b) for a, b in zip(alone, batched))
    finally:
        engine.close()
