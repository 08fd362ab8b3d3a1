"""The engine's child process: a real Engine answering requests on a pipe.

    python -m scriptorium.inference.process.worker REQUEST_FD REPLY_FD

Started by child_process.py. The main thread runs one request at a time on the engine;
a reader thread takes requests off the pipe meanwhile, so a cancel reaches a running
generation between two tokens (and interrupts a prefill through llama.cpp's abort
callback, which asks the same `should_stop`). When the parent goes away (its end of
the pipe closes), the running request stops and the process exits.

Events are sent in batches: at once for anything but a token or a scored token, and
tokens at most every FLUSH_INTERVAL_S (the first at once, for the first paint), which
keeps a fast model from costing a pipe write per token.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import pickle
import queue
import sys
import threading
import time
import traceback
from contextlib import closing
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Callable, Iterator

from ..core import native
from ..core.errors import ScriptoriumError
from ..core.events import Event, TokenEvent, TokenScore
from ..core.load_options import LoadOptions
from ..local.engine import Engine
from .wire import LoadedModel, decode, encode

FLUSH_INTERVAL_S = 0.05
"""Tokens wait at most this long for company. The app draws at most every frame (100 ms
by default), and each batch costs the decode loop a pickle and a write, and the app a
wake-up: on a small machine the app's CPU time is taken from llama.cpp's threads."""
TEST_ABORT_AFTER_TOKENS = "SCRIPTORIUM_TEST_ABORT_AFTER_TOKENS"
"""Tests only: after this many generated tokens, abort through llama.cpp's own
`ggml_abort`, as a GGML_ASSERT does (same stderr line format, same SIGABRT)."""
TEST_HOLD_AFTER_TOKENS = "SCRIPTORIUM_TEST_HOLD_AFTER_TOKENS"
"""Tests only: after this many generated tokens, wait until the request is cancelled, so
a test cancels a generation under way without racing a fast model."""


class Worker:
    def __init__(self, requests: Connection, replies: Connection) -> None:
        self._requests = requests
        self._replies = replies
        self._queue: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self._cancelled = 0
        """The highest request id cancelled: ids only grow, so a late cancel stops nothing newer."""
        self._parent_gone = False
        self._engine: Engine | None = None
        self._abort_after = int(os.environ.get(TEST_ABORT_AFTER_TOKENS) or 0)
        self._hold_after = int(os.environ.get(TEST_HOLD_AFTER_TOKENS) or 0)

    def run(self) -> None:
        threading.Thread(target=self._read_requests, name="requests", daemon=True).start()
        try:
            while True:
                message = self._queue.get()
                if message[0] == "close":
                    break
                self._handle(message)
        except OSError:
            pass  # the reply pipe broke: the parent is gone
        finally:
            if self._engine is not None:
                self._engine.close()

    def _read_requests(self) -> None:
        while True:
            try:
                message = decode(self._requests.recv_bytes())
            except (EOFError, OSError):
                self._parent_gone = True
                self._queue.put(("close",))
                return
            if message[0] == "cancel":
                self._cancelled = max(self._cancelled, message[1])
            else:
                self._queue.put(message)

    def _send(self, message: tuple[Any, ...]) -> None:
        self._replies.send_bytes(encode(message))

    def _stopper(self, request_id: int) -> Callable[[], bool]:
        return lambda: self._parent_gone or self._cancelled >= request_id

    # ---- requests ----------------------------------------------------------------------
    def _handle(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        request_id = 0 if kind == "load" else message[1]
        try:
            if kind == "load":
                self._load(message[1], message[2])
            elif kind == "generate":
                _, _, prompt, settings, bias, top_n, special, speculation = message
                stop = self._stopper(request_id)
                events = self._loaded().generate(
                    prompt, settings, bias, top_n=top_n, should_stop=stop, special=special, speculation=speculation
                )
                self._stream(request_id, events, stop)
            elif kind == "score":
                _, _, text, top_n = message
                stop = self._stopper(request_id)
                self._stream(request_id, self._loaded().score(text, top_n=top_n, should_stop=stop), stop)
            elif kind == "count":
                self._send(("done", request_id, self._loaded().count_tokens(message[2])))
            elif kind == "unknown":
                self._send(("done", request_id, self._loaded().unknown_characters(message[2])))
            elif kind == "lora":
                engine = self._loaded()
                engine.set_lora_scale(message[2])
                self._send(("done", request_id, engine.kv_tokens))
            else:
                raise ScriptoriumError(f"the engine does not know the request '{kind}'")
        except OSError:
            raise
        except Exception as error:  # noqa: BLE001 - every error goes back to the request that caused it
            if not isinstance(error, ScriptoriumError):
                traceback.print_exc()  # a bug: its trace goes to the stderr tail the parent keeps
            self._send(("error", request_id, _transportable(error)))

    def _loaded(self) -> Engine:
        if self._engine is None:
            raise ScriptoriumError("no model is loaded in the engine")
        return self._engine

    def _load(self, options: LoadOptions, flash_cache: Path | None) -> None:
        engine = self._engine = Engine.load(
            options, lambda fraction: self._send(("progress", fraction)), flash_cache=flash_cache
        )
        template, bos = engine.chat_format()
        self._send(
            (
                "loaded",
                LoadedModel(
                    options=engine.options,
                    facts=engine.facts,
                    adapter=engine.adapter,
                    lora_scale=engine.lora_scale,
                    n_ctx=engine.n_ctx,
                    n_vocab=engine.n_vocab,
                    byte_token_ids=tuple(engine.byte_token_ids),
                    longest_piece_chars=engine.longest_piece_chars,
                    kv_layout=engine.kv_layout,
                    chat_template=template,
                    bos_text=bos,
                    tokenizer_name=engine.tokenizer_name,
                    tokenizer_warning=engine.tokenizer_warning,
                    arithmetic=engine.arithmetic,
                    fim_texts=engine.fim_texts,
                ),
            )
        )

    def _stream(self, request_id: int, events: Iterator[Event], should_stop: Callable[[], bool]) -> None:
        engine = self._loaded()
        batch: list[Event] = []
        last_token_flush = -FLUSH_INTERVAL_S
        tokens = 0
        with closing(events):  # type: ignore[arg-type]
            for event in events:
                batch.append(event)
                if isinstance(event, (TokenEvent, TokenScore)):
                    tokens += isinstance(event, TokenEvent)
                    if tokens and tokens in (self._abort_after, self._hold_after):
                        self._send(("events", request_id, batch, engine.kv_tokens, False))
                        batch = []
                        if tokens == self._abort_after:
                            _abort_as_llama_cpp_does(f"scriptorium test hook: abort after {tokens} tokens")
                        while not should_stop():
                            time.sleep(0.005)
                        continue
                    now = time.monotonic()
                    if now - last_token_flush < FLUSH_INTERVAL_S:
                        continue
                    last_token_flush = now
                self._send(("events", request_id, batch, engine.kv_tokens, False))
                batch = []
        self._send(("events", request_id, batch, engine.kv_tokens, True))


def _transportable(error: Exception) -> Exception:
    """The error itself when it survives pickling (the parent raises the same class),
    else a ScriptoriumError with its class and message."""
    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:  # noqa: BLE001 - any failure to pickle means: send it as text
        return ScriptoriumError(f"{type(error).__name__}: {error}")


def _abort_as_llama_cpp_does(reason: str) -> None:
    # ggml_abort(file, line, fmt, ...) prints "file:line: <fmt>" to stderr and aborts. The
    # format has no % directives, so no variadic arguments are passed.
    ggml_abort = native.own_binding("ggml_abort", None, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p)
    ggml_abort(__file__.encode(), 0, f"GGML_ASSERT({reason}) failed".encode())


def main(argv: list[str] | None = None) -> None:
    request_fd, reply_fd = (int(arg) for arg in (sys.argv[1:] if argv is None else argv))
    Worker(Connection(request_fd, writable=False), Connection(reply_fd, readable=False)).run()
    # The model is freed and every reply sent. What is left of a normal exit is Python
    # tearing down the modules it imported (numpy's, llama_cpp's, a few hundred): 40 ms on an
    # idle 2-core machine, which every `continue` and the app's quit waited for. The exit
    # handlers still run (a chat template's renderer process is closed by one); every thread
    # here is a daemon, which a normal exit would not wait for either.
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
