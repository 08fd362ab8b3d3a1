"""Does the TUI cost decode speed, and does it answer keys while tokens stream?

    .venv/bin/python bench/tui_stream.py --model PATH [--tokens 256] [--rounds 5]
        [--fps 10,20,5] [--panel-rates 5,2] [--in-process]

Measured side by side, round after round, in one process:
  - reference: plain llama.cpp at its best here (reference.py: every usable core, flash
           attention on and off both measured, the faster path is the reference);
  - alone: the backend the app ships with (the engine in its child process; its threads,
           flash attention chosen by its own measurement at load) consumed in a plain loop;
  - floor: the least a Textual app does to show streamed text (textual_floor.py: one
           widget, fed by the same backend once per frame), per frame rate; the app
           cannot beat it, so it shows what drawing with Textual costs here;
  - app:   the whole ScriptoriumApp headless (run_test, 200x50, every panel shown and
           live) on that backend, continuing a draft with the same prompt and sampler,
           once per frame rate given (the app's `frames_per_second`, [ui] in the config:
           how often streamed tokens are drawn);
  - app, panels hidden: the same at the first frame rate with the side panels hidden
           (F3), as an author may: what the live panels cost;
  - app, panels at other rates: the same at the first frame rate with the panels'
           numbers changing at other rates a second than the app's (--panel-rates).
Decode tokens/s is llama.cpp's loop's own figure (GenerationDone.decode_tokens_per_s).
The interface's CPU is this process's CPU time while the app streams (the engine runs in
its child): on a machine whose every core runs llama.cpp's threads, that time is taken
from the decode, so it predicts the loss. It is given for the whole run (from the key) and
for the decode alone (from the prompt's end to the last token), the part that can slow the
decode speed measured.

Then, at the first frame rate, keys are sent every 100 ms while the app streams:
typing into the draft and nudging the temperature in the sampler panel; the delay is
from posting the key to the app until the edit or the nudge has been applied.
Run under `taskset -c 0` (one core), `-c 0,1` (two) and so on to see the ratio move with
cores: "every core" is the cores the process may use.
"""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import sys
import tempfile
import threading
import time
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from reference import Reference, machine_facts, parse_run_arguments, ratio_summary, run_arguments
from textual_floor import FloorApp
from textual import events

from scriptorium import prompts
from scriptorium.app.config import prompt_templates
from scriptorium.app import paths
from scriptorium.app.config.tui_settings import TuiSettings
from scriptorium.app.tui.app import ScriptoriumApp
from scriptorium.app.tui.widgets import sidebar
from scriptorium.inference.local.engine import Engine
from scriptorium.inference.core.events import GenerationDone
from scriptorium.inference.process.isolated import IsolatedBackend
from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.inference.core.settings import LogitBias, preset

DRAFT = (
    "La mattina del primo giorno di scuola, Marta uscì di casa prima del solito. "
    "Il cielo era ancora grigio e le strade erano vuote. "
)
TOP_N = 12
KEY_INTERVAL = 0.1


def run_alone(backend: Any, prompt: str, settings: Any) -> GenerationDone:
    with closing(backend.generate(prompt, settings, LogitBias(), top_n=TOP_N)) as events_:
        for event in events_:
            if isinstance(event, GenerationDone):
                return event
    raise AssertionError("no GenerationDone")


def hook(obj: Any, name: str, record: Callable[[], None]) -> None:
    """Call `record` each time obj.name runs (the moment a key's effect is applied)."""
    original = getattr(obj, name)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        record()
        return original(*args, **kwargs)

    setattr(obj, name, wrapped)


def send_key(app: ScriptoriumApp, key: str) -> float:
    """Post a key the way a terminal would; returns when it was posted."""
    character = key if len(key) == 1 else None
    event = events.Key(key, character)
    event.set_sender(app)
    posted = time.perf_counter()
    app.post_message(event)
    return posted


def floor_run(backend: Any, prompt: str, settings: Any, fps: int) -> tuple[GenerationDone, float]:
    """The floor app streams one generation, with its own event loop in a thread of its own.

    This blocks the caller's event loop, as run_alone does: the app under test stays frozen
    (not a timer of it runs) while the floor is measured."""
    result: list[tuple[GenerationDone, float]] = []

    async def stream() -> None:
        floor = FloorApp(backend, prompt, settings, TOP_N, 1.0 / fps)
        cpu_before, wall_before = cpu_seconds(), time.perf_counter()
        async with floor.run_test(size=(200, 50)):
            done = await floor.done
        result.append((done, (cpu_seconds() - cpu_before) / (time.perf_counter() - wall_before)))

    thread = threading.Thread(target=asyncio.run, args=(stream(),), name="floor")
    thread.start()
    thread.join()
    return result[0]


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def bench(  # noqa: C901 - one run: its rounds and conditions in the order it prints them
    model: Path,
    tokens: int,
    rounds: int,
    n_ctx: int,
    frames: list[int],
    panel_rates: list[float],
    in_process: bool,
) -> int:
    print(machine_facts())
    reference = Reference.load(model, n_ctx)
    threads = TuiSettings().generation_threads()
    options = LoadOptions(model_path=model, n_ctx=n_ctx, n_threads=threads)
    with tempfile.TemporaryDirectory() as cache:  # flash attention measured afresh, as at a first load
        flash_cache = Path(cache) / "flash.json"
        backend: Any = (
            Engine.load(options, flash_cache=flash_cache)
            if in_process
            else IsolatedBackend.load(options, flash_cache=flash_cache)
        )
    where = "in the app's process" if in_process else "in its child process (the app's default)"
    print(f"engine {where}: {backend.arithmetic.describe()}")
    settings = preset("greedy").with_changes(max_tokens=tokens, preset="greedy")
    prompt = prompts.render_continue(DRAFT, prompt_templates.load(prompts.CONTINUE, paths.prompts_dir()))
    prompt_tokens = reference.engines[True].tokenize(prompt)
    run_alone(backend, prompt, settings.with_changes(max_tokens=8))  # warm-up
    reference.measure_round(prompt_tokens, 16)
    reference.rates = {True: [], False: []}

    app = ScriptoriumApp(
        settings=TuiSettings(sampler=settings, top_n=TOP_N),
        draft=None,
        load_options=backend.options,
        backend_loader=lambda options, progress: backend,
    )
    alone_rates: list[float] = []
    app_rates: dict[int, list[float]] = {fps: [] for fps in frames}
    floor_rates: dict[int, list[float]] = {fps: [] for fps in frames}
    floor_cpu: dict[int, list[float]] = {fps: [] for fps in frames}
    interface_cpu: dict[int, list[float]] = {fps: [] for fps in frames}
    decode_cpu: dict[int, list[float]] = {fps: [] for fps in frames}
    hidden_rates: list[float] = []
    app_interval = sidebar.NUMBERS_INTERVAL_S
    rated_rates: dict[float, list[float]] = {rate: [] for rate in panel_rates}
    rated_cpu: dict[float, list[float]] = {rate: [] for rate in panel_rates}
    hidden_cpu: list[float] = []
    decode_began_at: list[float] = []
    """CPU seconds and wall time when the app's latest decode began (its prefill was drawn)."""
    decode_shares: list[float] = []
    """Each app run's CPU during its decode, in cores."""
    typing_delays: list[float] = []
    nudge_delays: list[float] = []
    pending: list[tuple[float, float]] = []
    """(wall time, the interface thread's CPU time) as each key was posted."""
    worked: dict[float, float] = {}
    """Each key's delay (ms) -> the interface thread's CPU time (ms) within it: far less means
    the thread waited for a core, not for the app's own work."""

    def applied(into: list[float]) -> Callable[[], None]:
        def record() -> None:
            if pending:
                posted, cpu = pending.pop(0)
                into.append((time.perf_counter() - posted) * 1000.0)
                worked[into[-1]] = (time.thread_time() - cpu) * 1000.0

        return record

    async with app.run_test(size=(200, 50)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        main = app.main
        editor = main.draft.editor
        hook(editor, "edit", applied(typing_delays))
        hook(main.sidebar.sampler, "action_nudge", applied(nudge_delays))

        def decode_began() -> None:
            decode_began_at[:] = [cpu_seconds(), time.perf_counter()]

        def decode_ended() -> None:
            cpu, wall = decode_began_at
            decode_shares.append((cpu_seconds() - cpu) / (time.perf_counter() - wall))

        hook(main.sidebar, "prefill_done", decode_began)
        hook(main.sidebar, "finished", decode_ended)

        async def app_run(fps: int, keys: list[str], panels: bool = True) -> tuple[GenerationDone, float, float]:
            # The screen reads its frame rate at each generation.
            main._settings = replace(main._settings, frames_per_second=fps)
            main.sidebar.display = panels
            editor.load_text(DRAFT)
            editor.move_cursor(editor.document.end)
            main.focus_mode()
            await pilot.pause()
            # Keys go in the way a terminal sends them, without Pilot's waiting for idle
            # (the process is never idle while the model runs).
            cpu_before, wall_before = cpu_seconds(), time.perf_counter()
            send_key(app, "ctrl+g")
            if keys[:1] == ["T"]:
                # Not in the same tick as ctrl+g: the panel would take the focus before the
                # editor's continue ran, and no generation would start (so no nudge recorded).
                started_by = time.perf_counter() + 10.0
                while not main.is_generating and time.perf_counter() < started_by:
                    await asyncio.sleep(0.005)
                send_key(app, "ctrl+t")
            elif keys:
                # Typing goes at the start of the draft, before the suggestion's anchor,
                # so the suggestion keeps streaming.
                editor.move_cursor((0, 0))
            sent = 0
            await asyncio.sleep(KEY_INTERVAL)
            while keys and main.is_generating:
                cpu = time.thread_time()
                pending.append((send_key(app, keys[sent % len(keys)]), cpu))
                sent += 1
                await asyncio.sleep(KEY_INTERVAL)
            await main.wait_until_idle()
            cpu_share = (cpu_seconds() - cpu_before) / (time.perf_counter() - wall_before)
            await pilot.pause()
            pending.clear()
            editor.clear_ghost()
            assert main.last_generation is not None
            return main.last_generation[2], cpu_share, decode_shares[-1]

        for round_number in range(rounds):
            plain = reference.measure_round(prompt_tokens, tokens)
            alone = run_alone(backend, prompt, settings)
            alone_rates.append(alone.decode_tokens_per_s)
            shown = []
            for fps in frames:
                floored, share = floor_run(backend, prompt, settings, fps)
                floor_rates[fps].append(floored.decode_tokens_per_s)
                floor_cpu[fps].append(share)
                shown.append(f"floor@{fps}fps {floored.decode_tokens_per_s:6.1f} (ui {share * 100:4.1f}%)")
                streamed, share, in_decode = await app_run(fps, [])
                app_rates[fps].append(streamed.decode_tokens_per_s)
                interface_cpu[fps].append(share)
                decode_cpu[fps].append(in_decode)
                shown.append(
                    f"app@{fps}fps {streamed.decode_tokens_per_s:6.1f} (ui {share * 100:4.1f}%, "
                    f"in decode {in_decode * 100:4.1f}%)"
                )
            hidden, _, in_decode = await app_run(frames[0], [], panels=False)
            hidden_rates.append(hidden.decode_tokens_per_s)
            hidden_cpu.append(in_decode)
            shown.append(
                f"app@{frames[0]}fps, panels hidden {hidden.decode_tokens_per_s:6.1f} "
                f"(in decode {in_decode * 100:4.1f}%)"
            )
            for rate in panel_rates:
                # The sidebar reads its interval at each update: a module constant, set for this run only.
                sidebar.NUMBERS_INTERVAL_S = 1.0 / rate
                try:
                    rated, _, in_decode = await app_run(frames[0], [])
                finally:
                    sidebar.NUMBERS_INTERVAL_S = app_interval
                rated_rates[rate].append(rated.decode_tokens_per_s)
                rated_cpu[rate].append(in_decode)
                shown.append(
                    f"app@{frames[0]}fps, panels {rate:g}/s {rated.decode_tokens_per_s:6.1f} "
                    f"(in decode {in_decode * 100:4.1f}%)"
                )
            print(
                f"round {round_number + 1}: plain FA on {plain[True]:6.1f}  off {plain[False]:6.1f}   "
                f"alone {alone.decode_tokens_per_s:6.1f}   " + "   ".join(shown),
                flush=True,
            )
        typed, _, _ = await app_run(frames[0], ["x", "y"])
        nudged, _, _ = await app_run(frames[0], ["T", "t"])
        keyed_rates = [typed.decode_tokens_per_s, nudged.decode_tokens_per_s]
    backend.close()
    reference.close()

    best = reference.rates[reference.best_path]
    print(
        f"\nmodel: {model.name}   tokens per run: {tokens}   rounds: {rounds}   "
        f"llama.cpp threads: {threads} of {os.cpu_count()} cores   engine {where}"
    )
    print(reference.describe())
    print(
        f"alone (the backend in a plain loop): {statistics.median(alone_rates):7.1f} tok/s   "
        f"alone / reference {ratio_summary(alone_rates, best)}"
    )
    for fps in frames:
        print(
            f"floor, drawing {fps} frames/s: {statistics.median(floor_rates[fps]):7.1f} tok/s   "
            f"floor / reference {ratio_summary(floor_rates[fps], best)}   "
            f"interface CPU {statistics.median(floor_cpu[fps]) * 100:.1f}% of a core"
        )
    for fps in frames:
        print(
            f"app, drawing {fps} frames/s: {statistics.median(app_rates[fps]):7.1f} tok/s   "
            f"app / reference {ratio_summary(app_rates[fps], best)}   "
            f"interface CPU {statistics.median(interface_cpu[fps]) * 100:.1f}% of a core "
            f"({statistics.median(decode_cpu[fps]) * 100:.1f}% during the decode)"
        )
    print(
        f"app, drawing {frames[0]} frames/s, side panels hidden: {statistics.median(hidden_rates):7.1f} tok/s   "
        f"app / reference {ratio_summary(hidden_rates, best)}   "
        f"interface CPU during the decode {statistics.median(hidden_cpu) * 100:.1f}% of a core"
    )
    for rate in panel_rates:
        print(
            f"app, drawing {frames[0]} frames/s, panels' numbers {rate:g} times a second "
            f"(the app's: {1.0 / app_interval:g}): {statistics.median(rated_rates[rate]):7.1f} tok/s   "
            f"app / reference {ratio_summary(rated_rates[rate], best)}   "
            f"interface CPU during the decode {statistics.median(rated_cpu[rate]) * 100:.1f}% of a core"
        )
    delays = typing_delays + nudge_delays
    if delays:
        print(
            f"keypress handled while streaming ({frames[0]} frames/s): median "
            f"{statistics.median(delays):.1f} ms, max {max(delays):.1f} ms over {len(delays)} keys "
            f"(typing {len(typing_delays)}, sampler nudges {len(nudge_delays)}, one every "
            f"{KEY_INTERVAL * 1000:.0f} ms); decode meanwhile {statistics.median(keyed_rates):.1f} tok/s, "
            f"{statistics.median(keyed_rates) / statistics.median(best):.3f} of the reference"
        )
        slowest = sorted(delays)[-3:][::-1]
        print(
            "the slowest keys, and the interface thread's CPU within each: "
            + ", ".join(f"{delay:.1f} ms ({worked[delay]:.1f} ms)" for delay in slowest)
        )
    if nudge_delays:
        print(
            f"sampler nudges alone: median {statistics.median(nudge_delays):.1f} ms, "
            f"max {max(nudge_delays):.1f} ms over {len(nudge_delays)}"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = run_arguments(__doc__.splitlines()[0], tokens=256, rounds=5)
    parser.add_argument(
        "--fps",
        default=str(TuiSettings().frames_per_second),
        help="frame rates to compare, comma-separated (default: the app's)",
    )
    parser.add_argument(
        "--panel-rates",
        default="",
        help="also run the app at the first frame rate with the panels' numbers changing "
        "this many times a second, comma-separated (e.g. 2,1)",
    )
    parser.add_argument(
        "--in-process", action="store_true", help="run the engine in the app's own process instead of its child"
    )
    args = parse_run_arguments(parser, argv)
    try:
        frames = [int(value) for value in args.fps.split(",")]
    except ValueError:
        parser.exit(2, f"tui_stream.py: --fps takes whole frame rates separated by commas, not {args.fps!r}\n")
    try:
        panel_rates = [float(value) for value in args.panel_rates.split(",") if value.strip()]
    except ValueError:
        panel_rates = [0.0]
    if any(not 0 < rate <= 60 for rate in panel_rates):
        parser.exit(
            2,
            f"tui_stream.py: --panel-rates takes rates a second (above 0, at most 60) separated by "
            f"commas, not {args.panel_rates!r}\n",
        )
    return asyncio.run(bench(args.model, args.tokens, args.rounds, args.ctx, frames, panel_rates, args.in_process))


if __name__ == "__main__":
    sys.exit(main())
