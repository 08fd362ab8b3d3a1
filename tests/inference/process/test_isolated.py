"""IsolatedBackend: the Engine in a child process, through the real process.

It must answer as the in-process Engine does (the same tokens and probabilities, the
same errors), stop when asked, and turn the child's death (an abort in llama.cpp, a
segfault, a kill) into EngineCrashed quoting llama.cpp's last stderr line, without any
of that text reaching this process's own stderr.

The aborts are made by a test-only hook of the worker (worker.TEST_ABORT_AFTER_TOKENS),
which calls llama.cpp's own ggml_abort after N tokens, as a GGML_ASSERT does: the real
bad inputs found so far are refused before llama.cpp sees them (inference/gguf/preflight.py),
and the point here is what happens for the next one nobody has found yet.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Callable, Iterator

import pytest

from scriptorium.inference.core.backend import Backend
from scriptorium.inference.process.child_process import describe_death, last_words
from scriptorium.inference.local.engine import Engine
from scriptorium.inference.core.errors import EngineCrashed, ModelFileError
from scriptorium.inference.core.events import Candidate, GenerationDone, ScoreDone, TokenEvent, TokenScore
from scriptorium.inference.process import isolated as isolated_module
from scriptorium.inference.process.isolated import IsolatedBackend
from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.inference.core.settings import LogitBias, SettingsError, preset
from scriptorium.inference.process.wire import decode, encode
from scriptorium.inference.process.worker import TEST_ABORT_AFTER_TOKENS, TEST_HOLD_AFTER_TOKENS

GREEDY = preset("greedy").with_changes(max_tokens=12)
LONG = preset("greedy").with_changes(max_tokens=300)
PROMPT = "Il gatto"


def options(model: Path, **changes: object) -> LoadOptions:
    # One thread in both processes: the same arithmetic order, so the same floats.
    return LoadOptions(model_path=model, n_ctx=512, n_threads=1, n_threads_batch=1, **changes)  # type: ignore[arg-type]


@pytest.fixture
def isolated(sentence_model: Path) -> Iterator[IsolatedBackend]:
    backend = IsolatedBackend.load(options(sentence_model))
    yield backend
    backend.close()


def tokens_of(events: list) -> list[TokenEvent]:
    return [e for e in events if isinstance(e, TokenEvent)]


def test_events_cross_the_pipe_whole() -> None:
    candidates = (Candidate(7, " gatto", 0.625, False), Candidate(16_001, "<0x01>", 1e-9, True))
    events = (
        TokenEvent(index=3, id=7, text=" gatto", p=0.625, top=candidates, elapsed_ms=41.5, kv_tokens=12),
        TokenScore(index=2, id=9, text="è", start=5, p=0.25, top=candidates),
    )
    assert decode(encode(("events", 1, events))) == ("events", 1, events)


def test_it_is_a_backend_and_answers_as_the_engine_does(isolated: IsolatedBackend, sentence_model: Path) -> None:
    engine = Engine.load(options(sentence_model))
    try:
        assert isinstance(isolated, Backend)
        assert (isolated.facts, isolated.n_ctx, isolated.byte_token_ids) == (
            engine.facts,
            engine.n_ctx,
            engine.byte_token_ids,
        )
        here, there = (
            list(engine.generate(PROMPT, GREEDY, LogitBias())),
            list(isolated.generate(PROMPT, GREEDY, LogitBias())),
        )
        # The same binary, model and thread count in both processes compute the same
        # floats; pickling carries a float exactly. Equal, not close.
        assert [(t.id, t.p, [c.p for c in t.top]) for t in tokens_of(there)] == [
            (t.id, t.p, [c.p for c in t.top]) for t in tokens_of(here)
        ]
        assert there[-1].text == here[-1].text and there[-1].stop_reason == here[-1].stop_reason
        assert isolated.kv_usage() == engine.kv_usage()
        conversation = [{"role": "user", "content": "Ciao"}]
        assert isolated.chat_prompt(conversation) == engine.chat_prompt(conversation)
        scored_here, scored_there = list(engine.score("Il gatto dorme.")), list(isolated.score("Il gatto dorme."))
        assert [(s.id, s.p) for s in scored_there if isinstance(s, TokenScore)] == [
            (s.id, s.p) for s in scored_here if isinstance(s, TokenScore)
        ]
        assert isinstance(scored_there[-1], ScoreDone) and isolated.kv_usage() == engine.kv_usage()
        # Counting a text's tokens leaves the cache, and what the backend says of it, alone.
        assert isolated.count_tokens("Il gatto dorme. " * 20) == engine.count_tokens("Il gatto dorme. " * 20)
        assert isolated.kv_usage() == engine.kv_usage()
    finally:
        engine.close()


def test_bad_requests_fail_as_they_do_in_process(isolated: IsolatedBackend, tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="top must be 0 or more"):
        isolated.generate(PROMPT, GREEDY, LogitBias(), top_n=-1)
    with pytest.raises(SettingsError, match="no LoRA adapter"):
        isolated.set_lora_scale(0.5)
    missing = tmp_path / "missing.gguf"
    with pytest.raises(ModelFileError) as in_process:
        Engine.load(options(missing))
    with pytest.raises(ModelFileError) as in_child:
        IsolatedBackend.load(options(missing))
    assert str(in_child.value) == str(in_process.value)
    # The failures left the loaded backend as it was.
    assert list(isolated.generate(PROMPT, GREEDY, LogitBias()))[-1].completion_tokens > 0


def test_a_cancel_reaches_the_child_between_tokens_and_during_prefill(
    byte_loop_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The child holds after 3 tokens until cancelled: no race with a fast model.
    monkeypatch.setenv(TEST_HOLD_AFTER_TOKENS, "3")
    backend = IsolatedBackend.load(options(byte_loop_model))
    try:
        seen: list[TokenEvent] = []
        events = list(_collect(backend, seen))
        done = events[-1]
        assert isinstance(done, GenerationDone) and done.stop_reason == "cancelled"
        assert done.completion_tokens == 3 == len(seen)
        # Asked to stop at once: the cancel follows the request down the pipe and meets the
        # child in its prefill (the engine hands should_stop to llama.cpp as its abort
        # callback) or at one of the first tokens; which of them depends on how busy the
        # machine is (seen: 3 tokens under load), so the bound is the child's hold point.
        early = list(backend.generate(PROMPT * 50, LONG, LogitBias(), should_stop=lambda: True))
        assert early[-1].stop_reason == "cancelled" and early[-1].completion_tokens <= 3
    finally:
        backend.close()


def _collect(backend: IsolatedBackend, seen: list[TokenEvent]) -> Iterator:
    """A long generation that asks to stop once 3 tokens have been seen here."""
    for event in backend.generate(PROMPT, LONG, LogitBias(), should_stop=lambda: len(seen) >= 3):
        if isinstance(event, TokenEvent):
            seen.append(event)
        yield event


def test_a_stream_left_unfinished_does_not_disturb_the_next_request(isolated: IsolatedBackend) -> None:
    with closing(isolated.generate(PROMPT, GREEDY, LogitBias())) as events:
        next(events)
    assert list(isolated.generate(PROMPT, GREEDY, LogitBias()))[-1].stop_reason == "eos"


def test_the_lora_scale_changes_in_the_child(random_model: Path, lora_adapter: Path) -> None:
    engine = Engine.load(options(random_model, lora_path=lora_adapter))
    backend = IsolatedBackend.load(options(random_model, lora_path=lora_adapter))
    try:
        for scale in (0.0, 2.5):
            engine.set_lora_scale(scale)
            backend.set_lora_scale(scale)
            assert backend.lora_scale == scale
            here = tokens_of(list(engine.generate(PROMPT, GREEDY, LogitBias())))
            there = tokens_of(list(backend.generate(PROMPT, GREEDY, LogitBias())))
            assert [(t.id, t.p) for t in there] == [(t.id, t.p) for t in here]
        with pytest.raises(SettingsError):
            backend.set_lora_scale(99.0)
    finally:
        engine.close()
        backend.close()


def test_an_abort_in_llama_cpp_is_an_error_quoting_its_last_line(
    sentence_model: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(TEST_ABORT_AFTER_TOKENS, "3")
    backend = IsolatedBackend.load(options(sentence_model))
    received: list[TokenEvent] = []
    with pytest.raises(EngineCrashed) as crash:
        for event in backend.generate(PROMPT, GREEDY, LogitBias()):
            if isinstance(event, TokenEvent):
                received.append(event)
    message = str(crash.value)
    assert "(SIGABRT)" in message and "GGML_ASSERT(scriptorium test hook: abort after 3 tokens) failed" in message
    assert len(received) == 3  # what was streamed before the abort arrived
    # Everything after it fails the same way, at once; closing is quiet.
    with pytest.raises(EngineCrashed, match="SIGABRT"):
        list(backend.generate(PROMPT, GREEDY, LogitBias()))
    backend.close()
    backend.close()
    # llama.cpp's text went to the child's captured stderr, not to ours (the TUI's screen).
    assert "GGML_ASSERT" not in capfd.readouterr().err


@pytest.mark.parametrize("sig", [signal.SIGSEGV, signal.SIGKILL])
def test_a_child_killed_while_idle_is_an_error_at_the_next_request(isolated: IsolatedBackend, sig: int) -> None:
    os.kill(isolated.pid, sig)
    with pytest.raises(EngineCrashed) as crash:
        list(isolated.generate(PROMPT, GREEDY, LogitBias()))
    assert signal.Signals(sig).name in str(crash.value)
    if sig == signal.SIGKILL:
        assert "out of memory" in str(crash.value)  # what the OOM killer sends
    with pytest.raises(EngineCrashed):
        list(isolated.score("Il gatto"))


def test_the_child_exits_when_its_parent_closes_the_pipe(isolated: IsolatedBackend) -> None:
    process = isolated._process.process
    isolated._process._requests.close()  # what the kernel does when the parent dies
    assert process.wait(timeout=30) == 0


def test_the_quoted_line_is_llama_cpps_last_words() -> None:
    assert (
        last_words(["llama_model_load: loading", "", "ggml.c:12: GGML_ASSERT(x) failed", "  "])
        == "ggml.c:12: GGML_ASSERT(x) failed"
    )
    # A C++ exception says what it was on one line and what it said on the next: both.
    assert (
        last_words(
            ["terminate called after throwing an instance of 'std::out_of_range'", "  what():  unordered_map::at"]
        )
        == "terminate called after throwing an instance of 'std::out_of_range': what():  unordered_map::at"
    )
    assert len(last_words(["x" * 5000])) == 300
    assert describe_death(-signal.SIGKILL, []).endswith("(SIGKILL; the system may have run out of memory)")
    assert describe_death(3, []) == "the model's engine stopped (exit status 3) without a message"


def test_the_longest_piece_is_the_engines(isolated: IsolatedBackend, sentence_model: Path) -> None:
    engine = Engine.load(options(sentence_model))
    try:
        assert isolated.longest_piece_chars == engine.longest_piece_chars > 1
    finally:
        engine.close()


HUNG_WAIT_S = 60.0
"""What a test waits for the app's side to give up on a hung child (STOP_WAIT_S, made
short, and a kill): far more than that, so only a wait for ever fails it."""


def _finishes(work: Callable[[], None]) -> bool:
    """Whether `work` returns, run where a hang cannot take the test run with it."""
    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(HUNG_WAIT_S)
    return not thread.is_alive()


def _counting(backend: IsolatedBackend, failures: list[EngineCrashed]) -> Callable[[], None]:
    """A token count on `backend` that notes how it failed."""

    def count() -> None:
        try:
            backend.count_tokens(PROMPT)
        except EngineCrashed as error:
            failures.append(error)

    return count


def test_a_child_that_stops_answering_is_ended_once_asked_to_stop(
    byte_loop_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hung llama.cpp (stopped, swapped out, spinning in native code) answered no cancel:
    the stream waited for it for ever, holding the lock, so Esc never ended the generation
    and closing the backend (quitting the app, switching models) hung too."""
    monkeypatch.setattr(isolated_module, "STOP_WAIT_S", 0.5, raising=False)
    monkeypatch.setenv(TEST_HOLD_AFTER_TOKENS, "3")
    backend = IsolatedBackend.load(options(byte_loop_model))
    seen: list[TokenEvent] = []
    failures: list[EngineCrashed] = []

    def stop() -> bool:
        if len(seen) >= 3:
            os.kill(backend.pid, signal.SIGSTOP)  # hung before the cancel reaches it
            return True
        return False

    def generate() -> None:
        try:
            for event in backend.generate(PROMPT, LONG, LogitBias(), should_stop=stop):
                if isinstance(event, TokenEvent):
                    seen.append(event)
        except EngineCrashed as error:
            failures.append(error)

    try:
        assert _finishes(generate)
    finally:
        if backend._process.process.poll() is None:
            os.kill(backend.pid, signal.SIGCONT)
        backend.close()
    assert "did not stop" in str(failures[0])
    assert backend._process.process.poll() == -signal.SIGKILL


def test_closing_does_not_wait_for_ever_on_a_request_to_a_hung_child(
    isolated: IsolatedBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Quitting while the window marker's count waits on a child that no longer runs.
    monkeypatch.setattr(isolated_module, "STOP_WAIT_S", 0.5, raising=False)
    os.kill(isolated.pid, signal.SIGSTOP)
    failures: list[EngineCrashed] = []
    count = _counting(isolated, failures)

    counting = threading.Thread(target=count, daemon=True)
    counting.start()
    while not isolated._lock.locked():
        time.sleep(0.01)
    try:
        assert _finishes(isolated.close)
        counting.join()
    finally:
        if isolated._process.process.poll() is None:
            os.kill(isolated.pid, signal.SIGCONT)
    assert "still busy when it was closed" in str(failures[0])
    assert isolated._process.process.poll() == -signal.SIGKILL


def test_a_stream_left_unfinished_on_a_hung_child_lets_go(
    byte_loop_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ctrl+c in `continue` while the child no longer runs: the stream's end waited for it for ever.
    monkeypatch.setattr(isolated_module, "STOP_WAIT_S", 0.5, raising=False)
    monkeypatch.setenv(TEST_HOLD_AFTER_TOKENS, "3")  # still writing when it is stopped
    backend = IsolatedBackend.load(options(byte_loop_model))
    events = backend.generate(PROMPT, LONG, LogitBias())
    next(event for event in events if isinstance(event, TokenEvent))
    os.kill(backend.pid, signal.SIGSTOP)
    try:
        assert _finishes(events.close)  # type: ignore[attr-defined]
    finally:
        if backend._process.process.poll() is None:
            os.kill(backend.pid, signal.SIGCONT)
        backend.close()
    assert backend._process.process.poll() == -signal.SIGKILL


def test_a_child_stopped_while_idle_is_ended_at_the_next_request(
    isolated: IsolatedBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGSTOP while idle, then ctrl+g: the prompt's count waited for ever, holding the lock;
    Esc ended the generation on screen only, and every later request waited behind it."""
    monkeypatch.setattr(isolated_module, "REPLY_WAIT_S", 0.5, raising=False)
    os.kill(isolated.pid, signal.SIGSTOP)
    failures: list[EngineCrashed] = []
    count = _counting(isolated, failures)

    try:
        assert _finishes(count)
    finally:
        if isolated._process.process.poll() is None:
            os.kill(isolated.pid, signal.SIGCONT)
    assert "did not answer within 0.5 s" in str(failures[0])
    assert isolated._process.process.poll() == -signal.SIGKILL
    assert not isolated._lock.locked()


def test_a_generation_on_a_stopped_idle_child_asks_for_the_engine_to_be_loaded_again(
    isolated: IsolatedBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the app does with it: the request fails as the engine's, and the engine is loaded again."""
    from scriptorium.app.models.loading import BackendCrashed
    from scriptorium.app.tui.generation import GenerationFailed, stream_generation
    from scriptorium.app.tui.generation_request import Prepared, new_request

    monkeypatch.setattr(isolated_module, "REPLY_WAIT_S", 0.5, raising=False)
    os.kill(isolated.pid, signal.SIGSTOP)
    posted: list[object] = []
    request = new_request(
        "draft", lambda: Prepared(PROMPT * isolated.count_tokens(PROMPT)), GREEDY, LogitBias(), 3, None
    )
    try:
        assert _finishes(
            lambda: stream_generation(isolated, request, posted.append, should_stop=lambda: False, frame_interval=0.0)
        )
    finally:
        if isolated._process.process.poll() is None:
            os.kill(isolated.pid, signal.SIGCONT)
    failed, crashed = posted
    assert isinstance(failed, GenerationFailed) and failed.engine_lost and "did not answer" in failed.error
    assert isinstance(crashed, BackendCrashed) and crashed.backend is isolated
