"""One generation as the app sees it: the messages the worker thread posts, and the loop that
turns engine events into those messages. What a generation asks for (the request) is
generation_request.py's.

The loop runs in a Textual thread worker. It touches no widget: it only posts messages,
and asks `should_stop` (the worker's cancellation flag) between tokens.
"""

from __future__ import annotations

import threading
import time
from contextlib import closing
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, ClassVar

from textual.message import Message

from scriptorium.inference.window.chat_window import ChatFormatError
from scriptorium.inference.core.errors import EngineCrashed, ScriptoriumError, ServerError, ServerUnreachable

from scriptorium.app.i18n.marker import N_
from scriptorium.app.models.loading import BackendCrashed, BackendUnreachable
from scriptorium.app.tui.process_tuning import older_collections_deferred

if TYPE_CHECKING:
    from textual.screen import Screen

    from scriptorium.inference.core.backend import Backend
    from scriptorium.inference.core.events import (
        ContextTrimmed,
        GenerationDone,
        KVCacheUsage,
        PrefillDone,
        PrefillProgress,
        TokenEvent,
    )
    from scriptorium.inference.window.lore import Fired

    from scriptorium.app.tui.generation_request import GenerationRequest


@dataclass
class GenerationStarted(Message):
    """A generation began (posted up to the app, which records it in the session)."""

    request: GenerationRequest
    draft_text: str
    """The draft as it was when the generation started."""
    anchor: int | None
    """Where in `draft_text` a draft generation continues; None for chat."""
    chat_messages: list[dict[str, str]]
    """The conversation a chat reply answers, its system prompt first; empty for the draft."""


@dataclass
class GenerationMessage(Message):
    request_id: int


@dataclass
class PromptPrepared(GenerationMessage):
    """The worker made the request's prompt: `request` is the request with it."""

    request: GenerationRequest
    note: str


@dataclass
class PrefillProgressed(GenerationMessage):
    """A batch of the prompt went into the KV cache."""

    event: PrefillProgress

    def can_replace(self, message: Message) -> bool:
        # Only the latest progress matters: a queue of them merges into one.
        return isinstance(message, PrefillProgressed) and message.request_id == self.request_id


@dataclass
class PrefillFinished(GenerationMessage):
    """The whole prompt is in the KV cache; decoding starts."""

    event: PrefillDone


@dataclass
class ContextWasTrimmed(GenerationMessage):
    """The prompt was too long for the context: its oldest tokens were dropped."""

    event: ContextTrimmed


@dataclass
class TokensGenerated(GenerationMessage):
    """The model produced tokens: every one since the previous message of this kind."""

    events: tuple[TokenEvent, ...]
    kv_cache: KVCacheUsage
    """The engine's KV accounting right after the last of them."""


@dataclass
class GenerationFinished(GenerationMessage):
    """The generation ended: stopped, finished, cancelled or out of context."""

    event: GenerationDone
    lore: tuple[Fired, ...] = ()
    """The lorebook entries that fired for its prompt (kept and dropped), for the session."""
    fim_after: int = 0
    """The characters after the cursor its prompt carried (fill in the middle), for the session."""


@dataclass
class GenerationWithdrawn(GenerationMessage):
    """Stopped while its prompt was being made: the engine was never asked, nothing ran."""

    engine_started: ClassVar[bool] = False
    """As GenerationFailed has it: the session keeps no record of what never ran."""


@dataclass
class GenerationFailed(GenerationMessage):
    """The engine refused or crashed; `error` is one line for the author."""

    error: str
    title: str = N_("Generation failed")
    """Marked: the notice translates it (as 'Model' and 'Window')."""
    engine_started: bool = True
    """False when making the prompt failed: the engine was never asked, nothing ran."""
    engine_lost: bool = False
    """The engine's process died: any other request on that backend fails the same way."""
    retry_helps: bool = True
    """False when the prompt itself was refused (a model that cannot chat, text it cannot
    encode, a prompt the context cannot hold): asking again fails the same way."""
    server_gone: bool = False
    """Nothing answered at the llama-server's address: asking again once it runs is the remedy."""


FIRST_FRAME_WAIT = 1.0
"""The longest a generation waits for its first frame before the engine starts anyway (an
app closing may draw no more)."""


def next_frame(screen: "Screen[Any]") -> threading.Event:
    """An event set once `screen` has drawn what it shows now: a generation's first frame."""
    drawn = threading.Event()
    screen.call_after_refresh(drawn.set)
    return drawn


def stream_generation(  # noqa: C901 - the worker's one loop over the events, batching frames per token
    engine: "Backend",
    request: GenerationRequest,
    post: Callable[[Message], object],
    should_stop: Callable[[], bool],
    frame_interval: float,
    drawn: threading.Event | None = None,
) -> None:
    """Run `request` on `engine`, posting its events as messages.

    A request to prepare has its prompt made first (PromptPrepared, or GenerationFailed or
    GenerationWithdrawn before the engine is asked).

    With `drawn` (next_frame()), the engine starts once the screen has drawn the frame
    that shows the generation starting (a new box, new keys: a layout, a frame's
    costliest), or it is cancelled, or after FIRST_FRAME_WAIT: drawn while llama.cpp's
    threads run on every core, that frame was taken from their prefill and first steps.

    Tokens are gathered and posted at most once per `frame_interval` (the first one at
    once): a message costs the UI thread a wake-up and a redraw, and the UI thread's
    time is time the generation waits for the GIL."""
    # Imported here, in the worker: the first frame is not kept waiting for the event classes
    # (tests/packaging/test_startup_imports.py).
    from scriptorium.inference.core.events import (
        ContextTrimmed,
        GenerationDone,
        PrefillDone,
        PrefillProgress,
        TokenEvent,
    )

    rid = request.id
    if request.prepare is not None:
        prepared = _prepared(engine, request, post, should_stop)
        if prepared is None:
            return
        request = prepared
    if drawn is not None:
        deadline = time.monotonic() + FIRST_FRAME_WAIT
        while not drawn.wait(0.01) and not should_stop() and time.monotonic() < deadline:
            pass
    batch: list[TokenEvent] = []
    last_post = -frame_interval

    def post_tokens() -> None:
        nonlocal last_post
        if batch:
            post(TokensGenerated(rid, tuple(batch), engine.kv_usage()))
            batch.clear()
            last_post = time.monotonic()

    try:
        if request.lora_scale is not None and engine.adapter is not None and engine.lora_scale != request.lora_scale:
            engine.set_lora_scale(request.lora_scale)
        generation = engine.generate(
            request.prompt,
            request.settings,
            request.bias,
            top_n=request.top_n,
            should_stop=should_stop,
            special=request.special,
            speculation=request.speculation,
        )
        with closing(generation) as events, older_collections_deferred():
            for event in events:
                if isinstance(event, TokenEvent):
                    batch.append(event)
                    if time.monotonic() - last_post >= frame_interval:
                        post_tokens()
                    continue
                post_tokens()
                if isinstance(event, PrefillProgress):
                    post(PrefillProgressed(rid, event))
                elif isinstance(event, PrefillDone):
                    post(PrefillFinished(rid, event))
                elif isinstance(event, GenerationDone):
                    post(
                        GenerationFinished(
                            rid,
                            event,
                            request.window.lore if request.window else (),
                            request.window.fim_suffix_chars if request.window else 0,
                        )
                    )
                elif isinstance(event, ContextTrimmed):
                    post(ContextWasTrimmed(rid, event))
    except ScriptoriumError as error:
        post_tokens()
        post(
            GenerationFailed(
                rid,
                str(error),
                engine_lost=isinstance(error, EngineCrashed),
                server_gone=isinstance(error, ServerUnreachable),
            )
        )
        said_of_the_model(engine, error, post)
    except Exception as error:  # noqa: BLE001 - a bug must not take the author's draft down with it
        post_tokens()
        post(GenerationFailed(rid, f"generation crashed ({type(error).__name__}: {error})"))


def _prepared(
    engine: "Backend", request: GenerationRequest, post: Callable[[Message], object], should_stop: Callable[[], bool]
) -> GenerationRequest | None:
    """`request` with its prompt made (PromptPrepared posted), or None once a message has
    said why the engine is not to be asked."""
    assert request.prepare is not None
    rid = request.id
    try:
        prepared = request.prepare()
    except ScriptoriumError as error:
        # A server that did not answer, an engine found dead or a model that cannot chat is
        # the model's failure; the rest (memory and note leaving no room...) is the window's.
        about_model = isinstance(error, (EngineCrashed, ServerError, ChatFormatError))
        # Only the engine or the server may answer another time; the prompt stays what it is.
        post(
            GenerationFailed(
                rid,
                str(error),
                N_("Model") if about_model else N_("Window"),
                engine_started=False,
                engine_lost=isinstance(error, EngineCrashed),
                retry_helps=isinstance(error, (EngineCrashed, ServerError)),
                server_gone=isinstance(error, ServerUnreachable),
            )
        )
        # Stopped while its prompt was made, the generation has ended on screen already
        # (GenerationWithdrawn's case): its failure is not shown, so the app says the engine's.
        said_of_the_model(engine, error, post, said=not should_stop())
        return None
    except Exception as error:  # noqa: BLE001 - a bug must not take the author's draft down with it
        post(
            GenerationFailed(rid, f"making the prompt crashed ({type(error).__name__}: {error})", engine_started=False)
        )
        return None
    if should_stop():
        post(GenerationWithdrawn(rid))
        return None
    request = replace(request, prompt=prepared.prompt, window=prepared.window, prepare=None)
    post(PromptPrepared(rid, request, prepared.note))
    return request


def said_of_the_model(
    engine: "Backend", error: ScriptoriumError, post: Callable[[Message], object], said: bool = True
) -> None:
    """What a request's failure tells the app of the model itself, beyond the request's own
    message (`said`: shown to the author): its engine died (it is loaded again), or its
    llama-server is not answering (the panels say so; the next request asks it again)."""
    if isinstance(error, EngineCrashed):
        post(BackendCrashed(engine, str(error), said=said))
    elif isinstance(error, ServerUnreachable):
        post(BackendUnreachable(engine))
