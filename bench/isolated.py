"""What the engine's child process costs: in-process Engine against IsolatedBackend.

    .venv/bin/python bench/isolated.py --model PATH [--tokens 128] [--rounds 3]

Both are loaded once, with the same options (the TUI's thread count), and used in
alternation, round after round, two ways:
  - plain:  generate() consumed in a loop (the inference layer and, for the child, the pipe);
  - app:    the whole ScriptoriumApp headless (200x50, every panel live) continuing a draft.
Per run: decode tok/s as llama.cpp's loop measured it (GenerationDone, in whichever
process ran it), decode tok/s as the consumer received the tokens, and first paint: from
the request (or the ctrl+g key) to the first token in the consumer's hands (or drawn in
the panels). The app-vs-alone ratio is the app's decode rate over the in-process plain
loop's, for both backends: whether moving the decode loop off the UI's interpreter helps.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from contextlib import closing
from typing import Any

from reference import parse_run_arguments, run_arguments

from scriptorium import prompts
from scriptorium.app.config import prompt_templates
from scriptorium.app import paths
from scriptorium.app.config.tui_settings import TuiSettings
from scriptorium.app.tui.app import ScriptoriumApp
from scriptorium.inference.local.engine import Engine
from scriptorium.inference.core.events import GenerationDone, TokenEvent
from scriptorium.inference.process.isolated import IsolatedBackend
from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.inference.core.settings import LogitBias, preset

DRAFT = (
    "La mattina del primo giorno di scuola, Marta uscì di casa prima del solito. "
    "Il cielo era ancora grigio e le strade erano vuote. "
)
TOP_N = 12


def plain_run(backend: Any, prompt: str, settings: Any) -> tuple[float, float, float]:
    """(llama.cpp's decode tok/s, received tok/s, ms to the first token received)."""
    started = time.perf_counter()
    arrivals: list[float] = []
    with closing(backend.generate(prompt, settings, LogitBias(), top_n=TOP_N)) as events:
        for event in events:
            if isinstance(event, TokenEvent):
                arrivals.append(time.perf_counter())
            elif isinstance(event, GenerationDone):
                received = (len(arrivals) - 1) / (arrivals[-1] - arrivals[0]) if len(arrivals) > 1 else 0.0
                return event.decode_tokens_per_s, received, (arrivals[0] - started) * 1000.0
    raise AssertionError("no GenerationDone")


async def app_run(backend: Any, settings: Any, rounds: int) -> list[tuple[float, float]]:
    """(llama.cpp's decode tok/s, ms from ctrl+g to the first token drawn) per round."""
    app = ScriptoriumApp(
        settings=TuiSettings(sampler=settings, top_n=TOP_N),
        draft=None,
        load_options=backend.options,
        backend_loader=lambda options, progress: backend,
    )
    results = []
    async with app.run_test(size=(200, 50)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        main, editor = app.main, app.main.draft.editor
        painted: list[float] = []
        token = main.sidebar.token

        def drawn(*args: Any) -> None:
            painted.append(time.perf_counter())
            token(*args)

        main.sidebar.token = drawn  # type: ignore[method-assign]
        for _ in range(rounds):
            editor.load_text(DRAFT)
            editor.move_cursor(editor.document.end)
            main.focus_mode()
            await pilot.pause()
            painted.clear()
            pressed = time.perf_counter()
            await pilot.press("ctrl+g")
            await main.wait_until_idle()
            await pilot.pause()
            editor.clear_ghost()
            done = main.last_generation[2]
            results.append((done.decode_tokens_per_s, (painted[0] - pressed) * 1000.0))
    return results


def median(values: list[float]) -> float:
    return statistics.median(values)


def main(argv: list[str] | None = None) -> int:
    args = parse_run_arguments(run_arguments(__doc__.splitlines()[0], tokens=128, rounds=3), argv)
    threads = TuiSettings().generation_threads()
    options = LoadOptions(model_path=args.model, n_ctx=args.ctx, n_threads=threads)
    settings = preset("greedy").with_changes(max_tokens=args.tokens, preset="greedy")
    prompt = prompts.render_continue(DRAFT, prompt_templates.load(prompts.CONTINUE, paths.prompts_dir()))
    backends = {"in-process": Engine.load(options), "child process": IsolatedBackend.load(options)}
    for backend in backends.values():
        plain_run(backend, prompt, settings.with_changes(max_tokens=8))  # warm-up

    plain: dict[str, list[tuple[float, float, float]]] = {name: [] for name in backends}
    for _ in range(args.rounds):
        for name, backend in backends.items():
            plain[name].append(plain_run(backend, prompt, settings))
    in_app = {name: asyncio.run(app_run(backend, settings, args.rounds)) for name, backend in backends.items()}
    for backend in backends.values():
        backend.close()

    baseline = median([run[0] for run in plain["in-process"]])
    print(
        f"model: {args.model.name}   tokens per run: {args.tokens}   rounds: {args.rounds}   "
        f"llama.cpp threads: {threads} of {os.cpu_count()} cores   (medians)"
    )
    print(
        f"{'backend':<14} {'plain decode':>13} {'received':>10} {'first token':>12} "
        f"{'app decode':>11} {'app first paint':>16} {'app / in-process plain':>23}"
    )
    for name in backends:
        decode = median([run[0] for run in plain[name]])
        received = median([run[1] for run in plain[name]])
        first = median([run[2] for run in plain[name]])
        app_decode = median([run[0] for run in in_app[name]])
        paint = median([run[1] for run in in_app[name]])
        print(
            f"{name:<14} {decode:9.1f} t/s {received:6.1f} t/s {first:9.1f} ms "
            f"{app_decode:7.1f} t/s {paint:13.1f} ms {app_decode / baseline:23.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
