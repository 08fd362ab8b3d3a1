"""Helpers for the TUI tests: apps on the generated models (real engine, no fakes)."""

from __future__ import annotations

import asyncio
import threading
from contextlib import asynccontextmanager, closing
from dataclasses import replace
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Iterator

from textual import events
from textual.keys import _character_to_key
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from scriptorium.app.tui.app import ScriptoriumApp
from scriptorium.app.tui.screens.candidates_screen import CandidatesScreen
from scriptorium.app.tui.screens.pinned_screen import PinnedScreen
from scriptorium.app.tui.screens.main_screen import WORD_COUNT_DELAY
from scriptorium.app.config.tui_settings import TuiSettings
from scriptorium.app.i18n.language import ENGLISH, Language
from scriptorium.app.sessions import DraftSession, SessionStore
from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.errors import GenerationError
from scriptorium.inference.core.events import Event, GenerationDone, PrefillDone, TokenEvent
from scriptorium.inference.core.settings import SamplerSettings, preset

GREEDY = preset("greedy").with_changes(max_tokens=12, preset="greedy")
"""Reproducible: the same model and prompt always give the same text."""


def make_app(
    model: Path | None,
    *,
    draft: Path | None = None,
    sampler: SamplerSettings = GREEDY,
    lora: Path | None = None,
    mode: str = "draft",
    keymap: dict[str, str] | None = None,
    loader: Callable[..., Engine] = Engine.load,
    top_n: int = 8,
    resume: bool = False,
    spm: Path | None = None,
    prompt_threads: int = 1,
    language: Language = ENGLISH,
) -> ScriptoriumApp:
    # One thread, for prompts too: the same arithmetic order on any machine, so the same
    # probabilities, and the same Model panel whatever the cores (prefill would start on all).
    options = (
        LoadOptions(
            model_path=model, lora_path=lora, spm_path=spm, n_ctx=512, n_threads=1, n_threads_batch=prompt_threads
        )
        if model is not None
        else None
    )
    return ScriptoriumApp(
        settings=TuiSettings(sampler=sampler, mode=mode, top_n=top_n, language=language),
        keymap=keymap,
        draft=draft,
        load_options=options,
        backend_loader=loader,
        resume=resume,
    )


@asynccontextmanager
async def ready(
    model: Path | None, *, size: tuple[int, int] | None = None, **options: Any
) -> AsyncIterator[tuple[ScriptoriumApp, Pilot[Any]]]:
    """The Pilot tests' prelude: `async with ready(model, size=(120, 40), **options) as (app, pilot)`
    makes the app with make_app(model, **options), runs it under Pilot at `size` (Textual's
    default when not given) and waits for its model to load.

    Not a fixture, because the model and the options are the test's own: in almost every file
    they change from test to test (a draft in tmp_path, a loader, a size), and many tests look
    at files after the app has quit, outside the block. An async fixture that enters ready()
    itself does work: pytest-asyncio (1.1 and later) runs its setup and teardown in one
    context and copies the context variables Textual sets (active_app, active_message_pump)
    into the test. A fixture that hands the test a function to start the app does not: the
    test's call enters run_test in the test's context, the teardown exits it in the
    fixture's, and Textual's reset fails ("created in a different Context")."""
    app = make_app(model, **options)
    async with app.run_test(**({} if size is None else {"size": size})) as pilot:
        await model_ready(pilot)
        yield app, pilot


def copy_of(model: Path, folder: Path, name: str = "mio.gguf") -> Path:
    """A copy of `model` in `folder`: a model file the test may write again in place."""
    copy = folder / name
    copy.write_bytes(model.read_bytes())
    return copy


async def model_ready(pilot: Pilot[Any]) -> None:
    """Wait for the background model load, and for its messages to be handled."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


UNTIL_GIVES_UP_S = 60.0
"""A guard against hanging, not a time limit a test asserts: a loaded machine takes long."""


async def until(pilot: Pilot[Any], condition: Callable[[], bool], what: str) -> None:
    """Let the app run until `condition` holds (a process starts, a model loads).

    The first looks come soon after one another, for what is nearly done (a worker's
    count, a timer's save); then every 50 ms, for a model's load, so that the looking (a
    pause walks the screen's widgets) leaves the CPU to the app. A fixed 50 ms between
    looks cost each wait 25 ms on average past the moment the condition held."""
    loop = asyncio.get_running_loop()
    give_up = loop.time() + UNTIL_GIVES_UP_S
    delay = 0.005
    while not condition():
        if loop.time() > give_up:
            raise AssertionError(f"never happened: {what}")
        await pilot.pause(delay)
        delay = min(2 * delay, 0.05)


async def window_marked(pilot: Pilot[Any]) -> None:
    """Wait until the window marker shows where the model's window starts in the draft as it
    is now: the pause after typing (or the model's load) is over, and the count it started
    in a worker is done and shown. A fixed pause lost the race to a loaded CPU."""
    app = pilot.app
    assert isinstance(app, ScriptoriumApp)
    draft = app.main.draft
    await pilot.pause()
    await until(
        pilot,
        lambda: (
            not draft.window_mark.waiting
            and not any(worker.group == "window-mark" and not worker.is_finished for worker in app.workers)
        ),
        "the window marker",
    )
    await pilot.pause()


async def autosaved(pilot: Pilot[Any]) -> None:
    """Wait for the autosave the last change scheduled: its timer fired, the session files it
    writes on the store's own thread written, and what they said handled. A fixed pause
    stood in for it, and a loaded CPU could hold the timer past it."""
    app = pilot.app
    assert isinstance(app, ScriptoriumApp)
    await until(pilot, lambda: not app.manuscript.autosave.pending, "the autosave")
    app.sessions.store.flush()
    await pilot.pause()


async def candidates_written(pilot: Pilot[Any]) -> CandidatesScreen:
    """Wait until every candidate in the dialog has finished (they run one after another).
    Not workers.wait_for_complete: each candidate's end starts the next one's worker, which
    cancels the one before if Textual has not yet marked it done, and the wait then raised
    WorkerCancelled (with the workers a little slower, seven tests of test_candidates failed)."""
    screen = pilot.app.screen
    assert isinstance(screen, CandidatesScreen)
    await until(pilot, lambda: all(c.finished for c in screen.candidates), "every candidate to end")
    await pilot.pause()
    return screen


async def replacement_ready(pilot: Pilot[Any], first: Any) -> None:
    """Wait until a model loaded in place of `first` is ready, and its messages handled."""
    app = pilot.app
    assert isinstance(app, ScriptoriumApp)
    await until(
        pilot,
        lambda: app.engine_state.backend not in (None, first) and app.engine_state.model_status.state == "ready",
        "the new model ready",
    )
    await pilot.pause()


async def typed(pilot: Pilot[Any], text: str) -> None:
    """Type `text` into whatever has focus, a key event a character, as a terminal delivers a
    quick typist's keys: all of them, then the app handles them in turn.

    Pilot.press waits twice after every key for the process to look idle: 20 ms of sleep at
    least each time, and up to a second while a model loads or writes in a thread, and the
    screen is drawn after every key. Pressed keys took 45 % of tests/tui's worker time, four
    in five of them characters of text; here a character costs the app its handling, about a
    millisecond. The keys are named as Pilot.press names them (`_character_to_key`) and go
    through the app as pressed keys do (its bindings, then the focused widget), in order.
    The first pause waits until the app has handed every one on, the second until the
    focused widget has handled them, the last for what they set off. Keys that move focus
    or open a screen, and enter, are pressed with pilot.press."""
    assert text.isprintable(), f"typed() types printable characters; press the keys of {text!r}"
    app = pilot.app
    for character in text:
        event = events.Key(_character_to_key(character), character)
        event.set_sender(app)
        app.post_message(event)
    await pilot.pause(0)
    await pilot.pause(0)
    await pilot.pause()


async def generated(pilot: Pilot[Any], *keys: str) -> GenerationDone:
    """Press `keys` (which start a generation), wait until it ends; its GenerationDone."""
    app = pilot.app
    assert isinstance(app, ScriptoriumApp)
    await pilot.press(*keys)
    await app.main.wait_until_idle()
    await pilot.pause()
    assert app.main.last_generation is not None
    return app.main.last_generation[2]


class EngineSpy:
    """Records what the real engine is asked to do: the settings, bias and LoRA scale
    of every generation, as the engine itself received them."""

    def __init__(self, engine: Engine) -> None:
        self.calls: list[dict[str, Any]] = []
        original = engine.generate

        def generate(prompt: str, settings: Any, bias: Any, **kwargs: Any) -> Iterator[Event]:
            self.calls.append(
                {"prompt": prompt, "settings": settings, "bias": bias, "lora_scale": engine.lora_scale, **kwargs}
            )
            return original(prompt, settings, bias, **kwargs)

        engine.generate = generate  # type: ignore[method-assign]

    @property
    def last(self) -> dict[str, Any]:
        return self.calls[-1]


def spying_loader() -> tuple[Callable[..., Engine], list[EngineSpy]]:
    """An engine loader that puts an EngineSpy on every engine it loads."""
    spies: list[EngineSpy] = []

    def load(options: LoadOptions, on_progress: Callable[[float], None]) -> Engine:
        engine = Engine.load(options, on_progress)
        spies.append(EngineSpy(engine))
        return engine

    return load, spies


def loader_wrapping(method: str, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]) -> Callable[..., Engine]:
    """An engine loader whose engines have `method` replaced by `wrap(the engine's own)`."""

    def load(options: LoadOptions, on_progress: Callable[[float], None] | None = None) -> Engine:
        engine = Engine.load(options, on_progress)
        setattr(engine, method, wrap(getattr(engine, method)))
        return engine

    return load


class HeldCounts:
    """Holds the engine's token counts, as a server slow to answer does: while `holding` is
    set, each count_tokens call sets `counting` and waits for `release()`."""

    def __init__(self) -> None:
        self.holding, self.counting, self._released = threading.Event(), threading.Event(), threading.Event()

    def hold(self) -> None:
        self.counting.clear()
        self._released.clear()
        self.holding.set()

    def release(self) -> None:
        self.holding.clear()
        self._released.set()

    async def wait_counting(self) -> None:
        """Wait until a count (in a worker thread) is held."""
        assert await asyncio.to_thread(self.counting.wait, 30), "no token count was asked for"

    def loader(self) -> Callable[..., Engine]:
        def wrap(count: Callable[[str], int]) -> Callable[[str], int]:
            def held(text: str) -> int:
                if self.holding.is_set():
                    self.counting.set()
                    self._released.wait(30)
                return count(text)

            return held

        return loader_wrapping("count_tokens", wrap)


def loader_calling(at_start: Callable[[], None]) -> Callable[..., Engine]:
    """An engine loader whose engines call `at_start` (in the generation's worker thread)
    as each generation starts, before the engine's first step."""

    def wrap(generate: Callable[..., Iterator[Event]]) -> Callable[..., Iterator[Event]]:
        def generate_after(*args: Any, **kwargs: Any) -> Iterator[Event]:
            at_start()
            return generate(*args, **kwargs)

        return generate_after

    return loader_wrapping("generate", wrap)


def loader_failing_after(events: int) -> Callable[..., Engine]:
    """An engine loader whose generations fail after `events` events, as one does when its
    llama-server goes away mid-generation."""

    def wrap(generate: Callable[..., Iterator[Event]]) -> Callable[..., Iterator[Event]]:
        def failing(*args: Any, **kwargs: Any) -> Iterator[Event]:
            for count, event in enumerate(generate(*args, **kwargs)):
                if count == events:
                    raise GenerationError("llama-server closed the connection mid-generation")
                yield event

        return failing

    return loader_wrapping("generate", wrap)


class FixedClockEngine:
    """The real engine, with the times in its events replaced by fixed values, so a
    screenshot of the speed panel is the same on every run and every machine."""

    PREFILL_MS = 4.0
    FIRST_TOKEN_MS = 6.0
    STEP_MS = 5.0

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    def generate(self, *args: Any, **kwargs: Any) -> Iterator[Event]:
        with closing(self._engine.generate(*args, **kwargs)) as events:
            for event in events:
                yield self._fixed(event)

    def _fixed(self, event: Event) -> Event:
        if isinstance(event, PrefillDone):
            return replace(event, prefill_ms=self.PREFILL_MS)
        if isinstance(event, TokenEvent):
            return replace(event, elapsed_ms=self.FIRST_TOKEN_MS + self.STEP_MS * event.index)
        if isinstance(event, GenerationDone):
            steps = max(event.completion_tokens - 1, 0)
            return replace(
                event,
                prefill_ms=self.PREFILL_MS,
                ttft_ms=self.FIRST_TOKEN_MS,
                decode_ms=self.STEP_MS * steps,
                decode_tokens_per_s=1000.0 / self.STEP_MS if steps else 0.0,
                prefill_tokens_per_s=(event.prompt_tokens - event.reused_tokens) / self.PREFILL_MS * 1000.0,
            )
        return event


def fixed_clock_loader(options: LoadOptions, on_progress: Callable[[float], None]) -> Engine:
    return FixedClockEngine(Engine.load(options, on_progress))  # type: ignore[return-value]


class Gate:
    """Holds a generation open: after `after_tokens` tokens the worker thread waits until
    `release()`, so a test can press keys while tokens are still streaming."""

    def __init__(self, after_tokens: int = 3) -> None:
        self.after_tokens = after_tokens
        self.reached = threading.Event()
        self._open = threading.Event()

    def release(self) -> None:
        self._open.set()

    async def wait_reached(self) -> None:
        assert await asyncio.to_thread(self.reached.wait, 30), "the generation never reached the gate"

    def loader(self, options: LoadOptions, on_progress: Callable[[float], None]) -> Engine:
        engine = Engine.load(options, on_progress)
        original = engine.generate
        gate = self

        def generate(*args: Any, **kwargs: Any) -> Iterator[Event]:
            with closing(original(*args, **kwargs)) as events:
                for event in events:
                    yield event
                    if isinstance(event, TokenEvent) and event.index + 1 == gate.after_tokens:
                        gate.reached.set()
                        gate._open.wait(30)

        engine.generate = generate  # type: ignore[method-assign]
        return engine

    async def escape(self, pilot: Pilot[Any]) -> tuple[list[TokenEvent], GenerationDone]:
        """Press Esc while the gate holds the model, let it go on, and return the
        generation's tokens and its end once the app is idle."""
        await pilot.press("escape")
        self.release()
        app = pilot.app
        assert isinstance(app, ScriptoriumApp)
        await app.main.wait_until_idle()
        await pilot.pause()
        _, tokens, done = app.main.last_generation
        return tokens, done


async def saved(pilot: Pilot[Any]) -> None:
    """Save now what the autosave would save a moment later, and wait out the pause after
    which the status bar counts the draft's words, so a screenshot never depends on whether
    either timer fired yet (the title bar's unsaved marker, "N words")."""
    app = pilot.app
    assert isinstance(app, ScriptoriumApp)
    app.manuscript.save_everything()
    await pilot.pause(WORD_COUNT_DELAY + 0.2)
    await pilot.pause()


def notifications(app: ScriptoriumApp) -> list[str]:
    """What the app's notifications said, oldest first, as the Messages screen keeps them."""
    return [notice.message for notice in app.notices]


def drawn_lines(widget: Any) -> list[str]:
    """What the screen shows of `widget`'s content, line by line, right spaces stripped."""
    screen = widget.screen._compositor.render_strips()
    region = widget.content_region
    return [screen[y].crop(region.x, region.right).text.rstrip() for y in range(region.y, region.bottom)]


def drawn_border(widget: Any, *, bottom: bool = False) -> str:
    """What the screen shows in `widget`'s top (or bottom) border: its title (subtitle), the
    corners and lines stripped."""
    region = widget.region
    row = widget.screen._compositor.render_strips()[region.bottom - 1 if bottom else region.y]
    return row.crop(region.x, region.right).text.strip("╭╮╰╯─ ")


async def session_written_with(model_or_app: Path | ScriptoriumApp) -> None:
    """A draft session with one suggestion from a model (or an app made elsewhere), saved as the app quits."""
    app = model_or_app if isinstance(model_or_app, ScriptoriumApp) else make_app(model_or_app)

    async with app.run_test() as pilot:
        await model_ready(pilot)
        await typed(pilot, "Era notte")
        await generated(pilot, "ctrl+g")
        await pilot.press("ctrl+q")
        await pilot.pause()


def saved_chat(app: Any) -> Any:
    """The chat session as saving everything now writes it, read back from disk."""
    app.manuscript.save_everything()
    assert app.sessions.chat is not None
    return SessionStore().load(app.sessions.chat.id)


def saved_draft(draft: Path) -> DraftSession:
    """The session saved for the draft file `draft` (it must have one)."""
    session = SessionStore().find_for_draft(draft)
    assert isinstance(session, DraftSession)
    return session


async def write_pinned(pilot: Pilot[Any], key: str, text: str, depth: str | None = None) -> None:
    """Open the memory or note dialog with `key`, write `text` (and the note's `depth`) and keep it."""
    await pilot.press(key)
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, PinnedScreen)
    screen.query_one("#pinned-text", TextArea).text = text
    if depth is not None:
        screen.query_one("#pinned-depth", Input).value = depth
    await pilot.press("ctrl+s")
    await pilot.pause()


async def kept_whole(pilot: Pilot[Any], draft: Path, before: str, done: GenerationDone) -> None:
    """Keep the suggestion waiting (tab): the draft is `before` and all `done` wrote, and
    the session records the generation as kept whole."""
    await pilot.press("tab")
    await pilot.pause()
    app = pilot.app
    assert isinstance(app, ScriptoriumApp)
    assert app.main.draft.editor.text == before + done.text
    (generation,) = saved_draft(draft).generations
    assert generation.outcome == "accepted" and generation.accepted_text == done.text
