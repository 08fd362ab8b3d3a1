"""The remote backend against a real llama-server (built from the llama.cpp that
llama-cpp-python vendors), compared with the in-process engine on the same model files.

Probabilities are compared within a tolerance argued from float32 (see PROBABILITY_RTOL);
token sequences only on rigged models whose greedy choices win by logit margins of about 30
(the "sentence" and "byte_loop" kinds), never on the "random" model where a near-tie could
flip with the server's thread count or batch shape.
"""

from __future__ import annotations

import math
from contextlib import closing
from pathlib import Path
from typing import Iterator

import pytest
from gguf_models import FIRST_BYTE_ID, LORA_PUSH_PIECE, N_VOCAB, italian_vocab, write_llama_model
from llama_server import CONTEXT, LlamaServer, connect_to

from scriptorium.inference.local.engine import Engine
from scriptorium.inference.core.errors import ScriptoriumError
from scriptorium.inference.core.events import GenerationDone, PrefillDone, TokenEvent
from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.inference.remote.remote import SCORING_UNAVAILABLE
from scriptorium.inference.remote.remote_http import ContextExceeded
from scriptorium.inference.core.settings import PRESETS, LogitBias, SettingsError

GREEDY = PRESETS["greedy"]
PROMPT = "La casa era buia, e la notte"
# Both sides compute the logits in float32 with the same llama.cpp kernels, but the server
# may split the work over other threads and batch shapes, which reorders float32 sums: on
# these 64-wide layers each logit can move by a few 1e-6 relative (|logit| < 40, so < 1e-4
# absolute). A probability moves by at most |Δlogit| + |Δlog Z| relative, both that small,
# and the server's logprob is a float32 log (1e-7 relative): 1e-3 relative is ample, and
# still catches any real difference (a wrong softmax, a bias applied, another position).
PROBABILITY_RTOL = 1e-3
PROBABILITY_ATOL = 1e-7


def _events(backend, prompt: str, **kwargs) -> tuple[list[TokenEvent], GenerationDone, list[PrefillDone]]:
    settings = kwargs.pop("settings", GREEDY)
    bias = kwargs.pop("bias", LogitBias())
    with closing(backend.generate(prompt, settings, bias, **kwargs)) as events:
        collected = list(events)
    tokens = [e for e in collected if isinstance(e, TokenEvent)]
    prefills = [e for e in collected if isinstance(e, PrefillDone)]
    done = collected[-1]
    assert isinstance(done, GenerationDone)
    return tokens, done, prefills


@pytest.fixture(scope="module")
def random_server(random_model: Path, lora_adapter: Path, server_logs: Path) -> Iterator[LlamaServer]:
    # The server lists the adapter at scale 1; every request sends the backend's own scale.
    with LlamaServer(random_model, server_logs, "--lora", str(lora_adapter)) as server:
        yield server


@pytest.fixture(scope="module")
def sentence_server(sentence_model: Path, server_logs: Path) -> Iterator[LlamaServer]:
    with LlamaServer(sentence_model, server_logs) as server:
        yield server


@pytest.fixture(scope="module")
def byte_server(byte_loop_model: Path, server_logs: Path) -> Iterator[LlamaServer]:
    with LlamaServer(byte_loop_model, server_logs) as server:
        yield server


@pytest.fixture(scope="module")
def utf8_server(utf8_model: Path, server_logs: Path) -> Iterator[LlamaServer]:
    with LlamaServer(utf8_model, server_logs) as server:
        yield server


def _local(model: Path, **kwargs) -> Engine:
    return Engine.load(LoadOptions(model_path=model, n_ctx=CONTEXT, **kwargs))


# ---- what the server says about itself ------------------------------------------------------
def test_connection_reads_context_vocabulary_byte_tokens_and_adapter(
    random_server: LlamaServer, lora_adapter: Path
) -> None:
    backend = connect_to(random_server)
    try:
        assert backend.n_ctx == CONTEXT  # /props default_generation_settings.n_ctx
        assert backend.facts.vocab_size == N_VOCAB
        assert backend.facts.path.name == random_server.model.name
        assert backend.facts.name == random_server.model.stem  # not the path llama-server's alias is
        assert backend.byte_token_ids == tuple(range(FIRST_BYTE_ID, N_VOCAB))
        assert random_server.url in backend.origin and backend.origin.startswith("llama-server ")
        assert backend.adapter is not None and backend.adapter.path == lora_adapter
        assert backend.lora_scale == 1.0  # as GET /lora-adapters says
        usage = backend.kv_usage()
        assert usage.n_ctx == CONTEXT
        assert (usage.bytes_allocated, usage.bytes_used, usage.bytes_per_token) == (None, None, None)
    finally:
        backend.close()


# ---- generation against the local engine ------------------------------------------------------
def test_first_step_probabilities_match_the_local_engine(random_model: Path, random_server: LlamaServer) -> None:
    remote, local = connect_to(random_server), _local(random_model)
    remote.set_lora_scale(0.0)  # scale 0 leaves the logits bit-identical to no adapter
    try:
        (remote_token, *_), _, _ = _events(remote, PROMPT, top_n=10, settings=GREEDY.with_changes(max_tokens=1))
        (local_token, *_), _, _ = _events(local, PROMPT, top_n=40, settings=GREEDY.with_changes(max_tokens=1))
    finally:
        remote.close()
        local.close()
    local_p = {c.id: c.p for c in local_token.top}
    assert len(remote_token.top) == 10
    for candidate in remote_token.top:
        assert candidate.id in local_p
        assert math.isclose(candidate.p, local_p[candidate.id], rel_tol=PROBABILITY_RTOL, abs_tol=PROBABILITY_ATOL)
        assert candidate.text == local.token_text(candidate.id)
    assert math.isclose(remote_token.p, local_p[remote_token.id], rel_tol=PROBABILITY_RTOL)
    assert [c.p for c in remote_token.top] == sorted((c.p for c in remote_token.top), reverse=True)


def test_greedy_tokens_and_text_match_the_local_engine(sentence_model: Path, sentence_server: LlamaServer) -> None:
    remote, local = connect_to(sentence_server), _local(sentence_model)
    try:
        remote_tokens, remote_done, _ = _events(remote, PROMPT, top_n=3)
        local_tokens, local_done, _ = _events(local, PROMPT, top_n=3)
    finally:
        remote.close()
        local.close()
    assert [t.id for t in remote_tokens] == [t.id for t in local_tokens]
    assert remote_done.text == local_done.text == " La casa era buia."
    assert remote_done.stop_reason == local_done.stop_reason == "eos"
    assert remote_done.completion_tokens == local_done.completion_tokens == len(local_tokens)


def test_byte_tokens_are_banned_through_logit_bias(byte_server: LlamaServer) -> None:
    backend = connect_to(byte_server)
    try:
        banned, _, _ = _events(backend, PROMPT, top_n=5, settings=GREEDY.with_changes(max_tokens=4))
        allowed, _, _ = _events(
            backend, PROMPT, top_n=5, bias=LogitBias(ban_byte_tokens=False), settings=GREEDY.with_changes(max_tokens=4)
        )
    finally:
        backend.close()
    assert all(t.id < FIRST_BYTE_ID for t in banned)
    # The panel's probabilities are before the bias: the bytes still lead, marked banned.
    assert all(c.banned == (c.id >= FIRST_BYTE_ID) for t in banned for c in t.top)
    assert banned[0].top[0].id == N_VOCAB - 1 and banned[0].top[0].text == "<0xFF>"
    assert [t.id for t in allowed] == [N_VOCAB - 1] * 4


def test_byte_tokens_between_other_tokens_are_found_and_banned(gguf_dir: Path, server_logs: Path) -> None:
    # Bytes neither right after the control tokens nor last, as in Gemma 3 (238..493).
    model = write_llama_model(gguf_dir / "byte-loop-unused.gguf", kind="byte_loop", unused_tokens=64)
    with LlamaServer(model, server_logs) as server:
        backend = connect_to(server)
        try:
            assert backend.byte_token_ids == tuple(range(FIRST_BYTE_ID, N_VOCAB))
            banned, _, _ = _events(backend, PROMPT, top_n=5, settings=GREEDY.with_changes(max_tokens=4))
        finally:
            backend.close()
    assert all(t.id < FIRST_BYTE_ID for t in banned)


def test_utf8_split_over_byte_tokens_reads_as_locally(utf8_model: Path, utf8_server: LlamaServer) -> None:
    remote, local = connect_to(utf8_server), _local(utf8_model)
    # <0xE2> <0x80> <0x99> then <0xC3> <0xA8> three times: nine tokens, four characters.
    # Unhealed on both sides: a llama-server cannot heal, and healed, "era" is written again locally.
    no_ban, settings = LogitBias(ban_byte_tokens=False), GREEDY.with_changes(max_tokens=9, heal=False)
    try:
        remote_tokens, remote_done, _ = _events(remote, "La casa era", bias=no_ban, settings=settings)
        local_tokens, local_done, _ = _events(local, "La casa era", bias=no_ban, settings=settings)
    finally:
        remote.close()
        local.close()
    assert remote_done.text == local_done.text == "’èèè"
    assert remote_done.completion_tokens == local_done.completion_tokens == 9
    # llama-server sends nothing for a token that leaves a character unfinished: the token
    # completing it brings the whole character. The characters arrive as locally.
    assert [t.text for t in remote_tokens] == [t.text for t in local_tokens if t.text] == ["’", "è", "è", "è"]
    assert [t.index for t in remote_tokens] == [t.index for t in local_tokens if t.text]


def test_a_byte_that_is_no_text_reads_as_locally(utf8_model: Path, utf8_server: LlamaServer) -> None:
    """After "notte", <0xFF>: never UTF-8, the replacement character in the text (it was
    "\\xff", written into the author's draft on Tab), and <0xFF> in the candidates."""
    remote, local = connect_to(utf8_server), _local(utf8_model)
    no_ban, settings = LogitBias(ban_byte_tokens=False), GREEDY.with_changes(max_tokens=4)
    try:
        remote_tokens, remote_done, _ = _events(remote, "La notte", bias=no_ban, settings=settings, top_n=2)
        _, local_done, _ = _events(local, "La notte", bias=no_ban, settings=settings, top_n=2)
    finally:
        remote.close()
        local.close()
    assert remote_done.text == local_done.text == "\ufffd casaè"
    assert remote_tokens[0].text == "\ufffd" and remote_tokens[0].top[0].text == "<0xFF>"


def test_stop_strings_match_the_text_as_the_author_sees_it(crlf_model: Path, server_logs: Path) -> None:
    """The model's newline token is "\\r\\n": llama-server matches stop strings on the raw
    text, where the author's "\\n\\n" never meets "\\r\\n\\r\\n", and the reply ran on."""
    with LlamaServer(crlf_model, server_logs) as server:
        remote = connect_to(server)
        try:
            _, plain, _ = _events(remote, "Era notte", settings=GREEDY.with_changes(max_tokens=8))
            tokens, done, _ = _events(remote, "Era notte", settings=GREEDY.with_changes(max_tokens=8, stop=("\n\n",)))
        finally:
            remote.close()
    assert plain.text == " La casa.\n\n\n\n\n"
    assert (done.text, done.stop_reason) == (" La casa.", "stop")
    assert "".join(t.text for t in tokens) == " La casa."


def test_lora_scale_is_sent_per_request(random_model: Path, lora_adapter: Path, random_server: LlamaServer) -> None:
    gatto = italian_vocab().id_of(LORA_PUSH_PIECE)
    one_step = GREEDY.with_changes(max_tokens=1)
    remote = connect_to(random_server)
    local = _local(random_model, lora_path=lora_adapter, lora_scale=1.0)
    try:
        remote.set_lora_scale(0.0)
        (off, *_), _, _ = _events(remote, PROMPT, settings=one_step)
        remote.set_lora_scale(1.0)
        (on, *_), _, _ = _events(remote, PROMPT, settings=one_step)
        (local_on, *_), _, _ = _events(local, PROMPT, settings=one_step)
    finally:
        remote.close()
        local.close()
    assert off.id != gatto
    assert on.id == local_on.id == gatto
    assert math.isclose(on.p, local_on.p, rel_tol=PROBABILITY_RTOL)


def test_timings_come_from_the_server_and_the_prompt_cache_is_reused(random_server: LlamaServer) -> None:
    backend = connect_to(random_server)
    settings = GREEDY.with_changes(max_tokens=4)
    try:
        _, first, prefills = _events(backend, PROMPT, settings=settings)
        _, again, _ = _events(backend, PROMPT + " lunga", settings=settings)
    finally:
        backend.close()
    assert len(prefills) == 1 and prefills[0].prompt_tokens == first.prompt_tokens
    assert first.prefill_ms > 0 and first.prefill_tokens_per_s > 0 and first.decode_tokens_per_s > 0
    assert first.ttft_ms == first.prefill_ms and first.completion_tokens == 4
    assert 0 < again.reused_tokens < again.prompt_tokens  # the shared prefix was kept (cache_n)
    assert backend.kv_usage().tokens == again.kv_cache.tokens


@pytest.mark.parametrize(
    "server_name, max_tokens, reason", [("random_server", 4, "length"), ("sentence_server", 20, "eos")]
)
def test_the_kv_figure_is_what_the_servers_slot_holds(
    server_name: str, max_tokens: int, reason: str, request: pytest.FixtureRequest
) -> None:
    """The last token sampled is never decoded (the generation ends on it), on the server
    as locally: the slot holds prompt + completion - 1 after a length stop, and prompt +
    completion after an end-of-generation token (sampled, not a completion token)."""
    backend = connect_to(request.getfixturevalue(server_name))
    try:
        _, done, _ = _events(backend, PROMPT, settings=GREEDY.with_changes(max_tokens=max_tokens))
        slots = backend.client.get("/slots")
    finally:
        backend.close()
    assert done.stop_reason == reason
    assert done.kv_cache.tokens == max(slot["n_prompt_tokens"] for slot in slots)
    assert backend.kv_usage().tokens == done.kv_cache.tokens


def test_the_length_asked_for_ending_at_the_context_is_a_length_stop(
    random_model: Path, random_server: LlamaServer
) -> None:
    remote, local = connect_to(random_server), _local(random_model)
    try:
        rest = GREEDY.with_changes(max_tokens=CONTEXT - remote.count_tokens(PROMPT))
        _, remote_done, _ = _events(remote, PROMPT, settings=rest)
        _, local_done, _ = _events(local, PROMPT, settings=rest)
    finally:
        remote.close()
        local.close()
    assert remote_done.completion_tokens == local_done.completion_tokens == rest.max_tokens
    assert remote_done.stop_reason == local_done.stop_reason == "length"


# ---- what is not available, and failures ---------------------------------------------------------
def test_scoring_is_refused_with_the_reason(random_server: LlamaServer) -> None:
    backend = connect_to(random_server)
    try:
        with pytest.raises(ScriptoriumError, match="every position"):
            backend.score("La casa era buia.")
    finally:
        backend.close()
    assert "\n" not in SCORING_UNAVAILABLE


def test_a_setting_the_server_lacks_is_refused_not_ignored(random_server: LlamaServer) -> None:
    backend = connect_to(random_server)
    backend.server_fields = backend.server_fields - {"min_p"}
    try:
        with pytest.raises(SettingsError, match="min_p: not available"):
            _events(backend, PROMPT)
    finally:
        backend.close()


def test_a_prompt_longer_than_the_context_is_one_line(random_server: LlamaServer) -> None:
    backend = connect_to(random_server)
    try:
        with pytest.raises(ContextExceeded, match="longer than llama-server's context") as raised:
            _events(backend, "casa " * (CONTEXT * 2))
    finally:
        backend.close()
    assert "\n" not in str(raised.value)


def test_the_longest_piece_is_unknown_not_guessed(random_server: LlamaServer) -> None:
    backend = connect_to(random_server)
    try:
        assert backend.longest_piece_chars is None  # the window search assumes its own safe length
    finally:
        backend.close()
