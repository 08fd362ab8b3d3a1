"""The Backend protocol answered by an Engine in a child process, as a notebook kernel is.

llama.cpp stops the whole process on a GGML_ASSERT, a C++ exception or a segfault, and
no validation finds them all. Here that process is a child (child_process.py,
worker.py): when it dies, the request that was running raises EngineCrashed quoting
llama.cpp's last stderr line, and the app, its editor and its draft carry on.

Requests take turns, as they do on an Engine's context: one at a time on the pipe, the
next waiting for the lock. What the app asks from its UI thread is answered here without
a round trip, so a long generation in the child never freezes a redraw:
  - `kv_usage` from the model's KV layout and the latest token count the child reported
    (every event batch and reply carries it, and each TokenEvent has its own);
  - `chat_prompt` by rendering the GGUF's chat template, which the child sent at load
    (a Jinja template, nothing native: rendered in the bounded renderer process of
    template_process.py, never waiting on the engine).
"""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

from ..core.arithmetic import Arithmetic
from ..core.errors import EngineCrashed, ModelLoadError
from ..core.events import Event, GenerationDone, KVCacheUsage, ThreadsChosen, TokenEvent
from ..core.load_options import LoadOptions, beyond_training
from ..core.model_facts import AdapterFacts, ModelFacts
from ..core.settings import LogitBias, SamplerSettings, SettingsError, check_top_n, rule_for
from ..core.speculation import OFF, Speculation
from .child_process import EngineProcess
from .wire import LoadedModel

POLL_S = 0.05
"""How often a stream waiting for the child looks at `should_stop` when no events come
(a prefill): a cancel reaches the child within this, and the child stops at its next
token. While tokens stream, their batches (worker.FLUSH_INTERVAL_S) wake it as often."""
STOP_WAIT_S = 10.0
"""How long a child asked to stop (a cancel, or a close while a request runs) may take to
answer before it is taken for hung and killed: it stops between two tokens, or inside a
prefill batch through llama.cpp's abort callback, so only a child that no longer runs
(stopped, spinning in native code) takes this long, and it would hold the app's exit."""
REPLY_WAIT_S = 10.0
"""How long a request answered at once (counting a prompt's tokens, a LoRA scale) may wait
for its answer: the child answers in milliseconds (a count is of a window, at most a
context's worth of text), so silence this long is a child that no longer runs (stopped,
spinning in native code). It is killed and the app loads the model again, as for a stream
that does not stop (STOP_WAIT_S); waiting on, the request held the lock for ever, and
every later request waited behind it, though Esc had ended the generation on screen."""
HUNG = "the model's engine did not stop when asked, so it was ended"
BUSY = "the model's engine was still busy when it was closed, so it was ended"
LOADING: set[EngineProcess] = set()
"""The children loading a model now (each added and taken out by the thread loading it)."""


def end_loading(why: str) -> None:
    """Kill every child still loading a model: the app's exit waits for the worker loading it,
    which waits for the child, and a hung child (or a big model) held the exit."""
    for process in list(LOADING):
        process.kill(why)


class IsolatedBackend:
    """A loaded model in a child process. Load it with `IsolatedBackend.load` (a BackendLoader)."""

    def __init__(self, process: EngineProcess, loaded: LoadedModel) -> None:
        self._process = process
        self._loaded = loaded
        self.options: LoadOptions = loaded.options
        self.facts: ModelFacts = loaded.facts
        self.adapter: AdapterFacts | None = loaded.adapter
        self.lora_scale: float = loaded.lora_scale
        self.n_ctx: int = loaded.n_ctx
        self.byte_token_ids: tuple[int, ...] = loaded.byte_token_ids
        self.longest_piece_chars: int = loaded.longest_piece_chars
        self.tokenizer_name: str = loaded.tokenizer_name
        self.tokenizer_warning: str = loaded.tokenizer_warning
        self.origin = ""  # llama.cpp on this machine, in a child process of ours
        self.heals = True  # the engine in the child heals
        self.fim_texts: tuple[str, str, str] | None = loaded.fim_texts
        self.arithmetic: Arithmetic | None = loaded.arithmetic
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._kv_tokens = 0
        self._closed = False

    @property
    def pid(self) -> int:
        """The child's process id (tests signal it)."""
        return self._process.pid

    # ---- loading -------------------------------------------------------------------
    @classmethod
    def load(
        cls,
        options: LoadOptions,
        on_progress: Callable[[float], None] | None = None,
        *,
        flash_cache: Path | None = None,
    ) -> "IsolatedBackend":
        """Start a child and load `options` in it; raises a ScriptoriumError with a one-line
        reason, ModelLoadError quoting llama.cpp if the child dies while loading."""
        options = options.validated()
        process = EngineProcess()
        LOADING.add(process)
        try:
            process.send(("load", options, flash_cache))
            while True:
                reply = process.receive()
                assert reply is not None
                if reply[0] == "progress":
                    if on_progress is not None:
                        on_progress(reply[1])
                elif reply[0] == "loaded":
                    return cls(process, reply[1])
                elif reply[0] == "error":
                    raise reply[2]
        except EngineCrashed as crash:
            raise ModelLoadError(f"llama.cpp could not load {options.model_path}: {crash}") from None
        except BaseException:
            process.stop()
            raise
        finally:
            LOADING.discard(process)

    # ---- requests --------------------------------------------------------------------
    def set_lora_scale(self, scale: float) -> None:
        """Change the adapter's strength without reloading (0 disables it)."""
        if self.adapter is None:
            raise SettingsError("no LoRA adapter is loaded")
        rule_for(LoadOptions, "lora_scale").check(scale)
        with self._lock:
            request_id = next(self._ids)
            self._process.send(("lora", request_id, scale))
            self._kv_tokens = self._reply(request_id)[2]  # the worker answers with the cache's tokens
            self.lora_scale = scale

    def kv_usage(self) -> KVCacheUsage:
        return self._loaded.kv_layout.usage(self._kv_tokens)

    def count_tokens(self, text: str) -> int:
        """How many tokens `text` is as a prompt, as the child's tokenizer cuts it (waits
        for a running request to end: callers ask between requests)."""
        with self._lock:
            request_id = next(self._ids)
            self._process.send(("count", request_id, text))
            return int(self._reply(request_id)[2])

    def unknown_characters(self, text: str) -> str:
        """The characters of `text` the child's tokenizer turns into <unk> (between requests, as counting)."""
        with self._lock:
            request_id = next(self._ids)
            self._process.send(("unknown", request_id, text))
            return str(self._reply(request_id)[2])

    @property
    def context_warning(self) -> str:
        return beyond_training(self.n_ctx, self.facts.context_length)

    def generate(
        self,
        prompt: str,
        settings: SamplerSettings,
        bias: LogitBias,
        *,
        top_n: int = 10,
        should_stop: Callable[[], bool] | None = None,
        special: bool = False,
        speculation: Speculation = OFF,
    ) -> Iterator[Event]:
        """Stream a continuation of `prompt` from the child; ends with GenerationDone.
        Bad settings raise here, at the call, as the Engine's do."""
        settings = settings.validated()
        bias = bias.validated(self._loaded.n_vocab)
        check_top_n(top_n)
        speculation = speculation.validated()
        return self._stream(("generate", prompt, settings, bias, top_n, special, speculation), should_stop)

    def score(self, text: str, *, top_n: int = 10, should_stop: Callable[[], bool] | None = None) -> Iterator[Event]:
        """Stream how probable each token of `text` is; ends with ScoreDone."""
        check_top_n(top_n)
        return self._stream(("score", text, top_n), should_stop)

    def chat_prompt(self, messages: list[dict[str, str]], fallback_template: str | None = None) -> str:
        from ..window.chat import render_chat

        return render_chat(messages, self._loaded.chat_template, fallback_template, self._loaded.bos_text)

    def close(self) -> None:
        """Stop the child once a running request has ended (a child that has not ended it
        within STOP_WAIT_S is killed); closing twice does nothing."""
        if not self._lock.acquire(timeout=STOP_WAIT_S):
            # Hung, or a request nobody stopped (scoring a long draft while the model is switched).
            self._process.kill(BUSY)
            self._lock.acquire()  # the request's reading fails on the closed pipe and lets go
        try:
            if not self._closed:
                self._closed = True
                self._process.stop()
        finally:
            self._lock.release()

    # ---- the pipe ----------------------------------------------------------------------
    def _reply(self, request_id: int) -> tuple[Any, ...]:
        """The reply that ends `request_id` (the lock held); raises the child's error, and
        EngineCrashed once the child, silent for REPLY_WAIT_S, is killed."""
        deadline = time.monotonic() + REPLY_WAIT_S
        while True:
            reply = self._process.receive(max(deadline - time.monotonic(), 0.0))
            if reply is None:
                self._process.kill(f"the model's engine did not answer within {REPLY_WAIT_S:g} s, so it was ended")
                reply = self._process.receive()  # EngineCrashed, with that reason, once it is dead
                assert reply is not None
            if reply[1] != request_id:
                continue  # the tail of a stream abandoned earlier
            if reply[0] == "error":
                raise reply[2]
            # Not every reply is the cache's token count (a count request's is the text's):
            # the caller that asked for the cache's reads it from the reply.
            return reply

    def _stream(self, request: tuple[Any, ...], should_stop: Callable[[], bool] | None) -> Iterator[Event]:
        with self._lock:
            if self._closed:
                raise EngineCrashed("the model's engine was closed")
            request_id = next(self._ids)
            self._process.send((request[0], request_id, *request[1:]))
            cancelled = finished = False
            cancelled_at = 0.0
            try:
                while True:
                    if not cancelled and should_stop is not None and should_stop():
                        self._process.send(("cancel", request_id))
                        cancelled, cancelled_at = True, time.monotonic()
                    reply = self._process.receive(POLL_S)
                    if reply is None and cancelled and time.monotonic() - cancelled_at > STOP_WAIT_S:
                        self._process.kill(HUNG)
                    if reply is None or reply[1] != request_id:
                        continue
                    if reply[0] == "error":
                        finished = True
                        raise reply[2]
                    _, _, events, kv_tokens, final = reply
                    self._kv_tokens = kv_tokens
                    for event in events:
                        if type(event) is TokenEvent:
                            self._kv_tokens = event.kv_tokens
                        elif type(event) is ThreadsChosen:
                            self._follow_threads(event)
                        elif type(event) is GenerationDone and event.threads is not None:
                            self._follow_threads(event.threads)
                        yield event
                    self._kv_tokens = kv_tokens
                    if final:
                        finished = True
                        return
            finally:
                if not finished:
                    self._abandon(request_id, cancelled)

    def _follow_threads(self, chosen: ThreadsChosen) -> None:
        """The child's engine chose other thread counts: `arithmetic` says so from now on."""
        if self.arithmetic is not None:
            self.arithmetic = self.arithmetic.with_threads(chosen)

    def _abandon(self, request_id: int, cancelled: bool) -> None:
        """The consumer stopped reading (or a crash ended the stream): stop the child's
        request and read its replies to the end, so the next request starts clean."""
        try:
            if not cancelled:
                self._process.send(("cancel", request_id))
            while True:
                reply = self._process.receive(STOP_WAIT_S)
                if reply is None:
                    self._process.kill(HUNG)  # ctrl+c in `continue` waited here for ever
                elif reply[1] == request_id and (reply[0] == "error" or reply[-1] is True):
                    return
        except EngineCrashed:
            return  # nothing left to read
