"""Does the TUI cost decode speed, and does it answer keys while tokens stream?

    .venv/bin/python bench/tui_stream.py --model PATH [--tokens 256] [--rounds 3]

Three ways, alternating round by round in the same process:
  - reference: plain llama.cpp at its best here (reference.py: every core, flash
           attention on and off both measured, the faster path is the reference);
  - alone: the app's engine (its threads, flash attention chosen by its own measurement
           at load) with Engine.generate consumed in a plain loop;
  - app:   the whole ScriptoriumApp headless (run_test, 200x50, every panel shown and
           live) on that engine, continuing a draft with the same prompt and sampler.
Decode tokens/s is the engine's own figure (GenerationDone.decode_tokens_per_s) for
alone and app. While the app streams, keys are sent every 100 ms: typing into the draft
and nudging the temperature in the sampler panel; the delay is from posting the key
to the app until the edit or the nudge has been applied.
"""

from __future__ import annotations

import argparse
import os
import asyncio
import statistics
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path
from typing import Any, Callable

from reference import Reference, machine_facts, ratio_summary
from textual import events

from scriptorium import prompts
from scriptorium.app import paths
from scriptorium.app.tui.app import ScriptoriumApp
from scriptorium.app.config.tui_settings import TuiSettings
from scriptorium.inference.engine import Engine, LoadOptions
from scriptorium.inference.events import GenerationDone
from scriptorium.inference.settings import LogitBias, preset

DRAFT = ("La mattina del primo giorno di scuola, Marta uscì di casa prima del solito. "
         "Il cielo era ancora grigio e le strade erano vuote. ")
TOP_N = 12
KEY_INTERVAL = 0.1


def run_alone(engine: Engine, prompt: str, settings: Any) -> GenerationDone:
    with closing(engine.generate(prompt, settings, LogitBias(), top_n=TOP_N)) as events_:
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


async def send_key(app: ScriptoriumApp, key: str) -> float:
    """Post a key the way a terminal would; returns when it was posted."""
    character = key if len(key) == 1 else None
    event = events.Key(key, character)
    event.set_sender(app)
    posted = time.perf_counter()
    app.post_message(event)
    return posted


async def bench(model: Path, tokens: int, rounds: int, n_ctx: int) -> int:
    print(f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')} for the app and the reference alike")
    print(machine_facts())
    reference = Reference.load(model, n_ctx)
    # The engine as the app loads it: its threads, flash attention measured (fresh cache).
    threads = TuiSettings().generation_threads()
    with tempfile.TemporaryDirectory() as cache:
        engine = Engine.load(LoadOptions(model_path=model, n_ctx=n_ctx, n_threads=threads),
                             flash_cache=Path(cache) / "flash.json")
    print(f"app: {engine.arithmetic.describe()}")
    settings = preset("greedy").with_changes(max_tokens=tokens, preset="greedy")
    template = prompts.load(prompts.CONTINUE, paths.prompts_dir())
    prompt = prompts.render_continue(DRAFT, template)
    prompt_tokens = engine.tokenize(prompt)
    run_alone(engine, prompt, settings.with_changes(max_tokens=8))  # warm-up
    reference.measure_round(prompt_tokens, 16)
    reference.rates = {True: [], False: []}

    app = ScriptoriumApp(settings=TuiSettings(sampler=settings, top_n=TOP_N), draft=None,
                         load_options=engine.options, backend_loader=lambda options, progress: engine)
    keyed_rates: list[float] = []
    alone_rates: list[float] = []
    app_rates: list[float] = []
    typing_delays: list[float] = []
    nudge_delays: list[float] = []
    pending: list[float] = []

    def applied(into: list[float]) -> Callable[[], None]:
        def record() -> None:
            if pending:
                into.append((time.perf_counter() - pending.pop(0)) * 1000.0)
        return record

    async with app.run_test(size=(200, 50)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        main = app.main
        editor = main.draft.editor
        hook(editor, "edit", applied(typing_delays))
        hook(main.sidebar.sampler, "action_nudge", applied(nudge_delays))

        async def app_run(keys: list[str]) -> GenerationDone:
            editor.load_text(DRAFT)
            editor.move_cursor(editor.document.end)
            main.focus_mode()
            await pilot.pause()
            # Keys go in the way a terminal sends them, without Pilot's waiting for idle
            # (the process is never idle while the model runs).
            await send_key(app, "ctrl+g")
            if keys[:1] == ["T"]:
                await send_key(app, "ctrl+t")
            elif keys:
                # Typing goes at the start of the draft, before the suggestion's anchor,
                # so the suggestion keeps streaming.
                editor.move_cursor((0, 0))
            sent = 0
            await asyncio.sleep(KEY_INTERVAL)
            while keys and main.is_generating:
                pending.append(await send_key(app, keys[sent % len(keys)]))
                sent += 1
                await asyncio.sleep(KEY_INTERVAL)
            await main.wait_until_idle()
            await pilot.pause()
            pending.clear()
            editor.clear_ghost()
            assert main.last_generation is not None
            return main.last_generation[2]

        for round_number in range(rounds):
            plain = reference.measure_round(prompt_tokens, tokens)
            alone = run_alone(engine, prompt, settings)
            streamed = await app_run([])
            alone_rates.append(alone.decode_tokens_per_s)
            app_rates.append(streamed.decode_tokens_per_s)
            print(f"round {round_number + 1}: plain FA on {plain[True]:6.1f}  FA off {plain[False]:6.1f}   "
                  f"alone {alone.decode_tokens_per_s:6.1f} tok/s   "
                  f"app {streamed.decode_tokens_per_s:6.1f} tok/s   ({streamed.completion_tokens} tokens, "
                  f"stop: {streamed.stop_reason})", flush=True)
        typed = await app_run(["x", "y"])
        nudged = await app_run(["T", "t"])
        keyed_rates = [typed.decode_tokens_per_s, nudged.decode_tokens_per_s]
    engine.close()
    reference.close()

    alone_median = statistics.median(alone_rates)
    app_median = statistics.median(app_rates)
    delays = typing_delays + nudge_delays
    print(f"\nmodel: {model.name}   tokens per run: {tokens}   rounds: {rounds}   "
          f"llama.cpp threads: {threads} of {os.cpu_count()} cores")
    print(reference.describe())
    print(f"decode, inference layer alone: {alone_median:7.1f} tok/s (median)")
    print(f"decode, whole app streaming:   {app_median:7.1f} tok/s (median)")
    print(f"ratio app / reference:         {ratio_summary(app_rates, reference.rates[reference.best_path])}")
    print(f"ratio app / alone:             {ratio_summary(app_rates, alone_rates)}")
    if delays:
        print(f"keypress handled while streaming: median {statistics.median(delays):.1f} ms, "
              f"max {max(delays):.1f} ms over {len(delays)} keys "
              f"(typing {len(typing_delays)}, sampler nudges {len(nudge_delays)}, one every "
              f"{KEY_INTERVAL * 1000:.0f} ms; decode meanwhile {statistics.median(keyed_rates):.1f} tok/s)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="GGUF model file")
    parser.add_argument("--tokens", type=int, default=256, help="tokens per generation (default 256)")
    parser.add_argument("--rounds", type=int, default=4, help="alone/app pairs (default 4)")
    parser.add_argument("--ctx", type=int, default=2048, help="context size (default 2048)")
    parser.add_argument("--passive", action="store_true",
                        help="OpenMP's passive wait for llama.cpp's idle threads (OMP_WAIT_POLICY=passive)")
    args = parser.parse_args(argv)
    if args.passive:
        from scriptorium.inference import native

        native.prefer_passive_waiting()
    if not args.model.is_file():
        parser.exit(2, f"tui_stream.py: no model file at {args.model}\n")
    return asyncio.run(bench(args.model, args.tokens, args.rounds, args.ctx))


if __name__ == "__main__":
    sys.exit(main())
