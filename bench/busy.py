"""Decode on a busy machine: plain llama.cpp at every thread count against scriptorium's
engine choosing its threads by measurement (threads = "auto", inference/local/thread_choice.py).

    .venv/bin/python bench/busy.py [--model PATH] [--tokens 128] [--rounds 3]

In one run, under each condition:
  quiet       nothing of ours competing;
  one         one competing CPU-bound process;
  all         as many competing CPU-bound processes as cores;
  interface   a stand-in for the app's interface drawing while the model writes (it
              wakes ten times a second and works 5 ms: 5% of a core, as measured in the
              bench/tui_stream.py table of docs/benchmarks.md), to measure whether the
              interface and the decode are better sharing every core or splitting them
              (decode on one core fewer).
The competing processes are started here, each ending by itself after --limit seconds
at the latest or as soon as the benchmark is gone (killed, say), and stopped here when
their condition ends (or the run fails).

Plain llama.cpp: llama_decode and llama.cpp's greedy sampler on a context with a fixed
thread count (bench/reference.py's loop). scriptorium: the whole generation (the top-10
probabilities of every step, the byte ban), its thread counts on auto. One engine runs
through every condition, as an app left open does: its first generation after the load
changed is printed apart (the measuring it takes to notice), then --rounds more.
Printed per condition: each count's tok/s (median and range), plain and scriptorium's engine
fixed at that count (the same generation as auto's: probabilities, byte ban, its sampler
chain), auto's, and auto against the best fixed count (plain llama.cpp's), against
scriptorium's own engine at its best fixed count (what choosing by measurement costs, the
instrument's own work being the same on both sides) and against every core (llama.cpp's
default at its best), per round.
Default model: the Gemma 3 270M demo (installed with scriptorium[demo]).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import time
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Iterator

from reference import demo_model, machine_facts, plain_decode_tokens_per_s

from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.events import GenerationDone, ThreadsChosen
from scriptorium.inference.core.load_options import usable_cores
from scriptorium.inference.core.settings import LogitBias, preset

PROMPT = (
    "Era una sera d'autunno quando Lucia tornò al paese. Le strade erano vuote, il forno chiuso, "
    "e dalla finestra della vecchia scuola usciva ancora una luce gialla. Si fermò davanti al cancello e"
)

SPIN = """\
import os, sys, time
end, parent = time.monotonic() + float(sys.argv[1]), int(sys.argv[2])
while time.monotonic() < end and os.getppid() == parent:  # ends with the benchmark, however it ends
    pass
"""
INTERFACE = """\
import os, sys, time
end, parent = time.monotonic() + float(sys.argv[1]), int(sys.argv[2])
tick = time.monotonic()
while tick < end and os.getppid() == parent:
    tick += 0.1
    time.sleep(max(0.0, tick - time.monotonic()))
    busy_until = time.monotonic() + 0.005
    while time.monotonic() < busy_until:
        pass
"""


def conditions(cores: int) -> dict[str, tuple[str, int]]:
    """name -> (the competing program, how many of it)."""
    return {"quiet": (SPIN, 0), "one": (SPIN, 1), "all": (SPIN, cores), "interface": (INTERFACE, 1)}


@contextmanager
def competing(program: str, count: int, limit: float) -> Iterator[list[subprocess.Popen[bytes]]]:
    """`count` processes running `program`, each ending by itself after `limit` seconds or
    when this process is gone, stopped (killed, by their own ids) when the block ends."""
    processes = [subprocess.Popen([sys.executable, "-c", program, str(limit), str(os.getpid())]) for _ in range(count)]
    try:
        time.sleep(0.5 if count else 0.0)  # let them take their cores
        yield processes
    finally:
        for process in processes:
            process.kill()
        for process in processes:
            process.wait()


def auto_rate(engine: Engine, settings, bias: LogitBias) -> tuple[float, str]:
    """One scriptorium generation: its decode tok/s and the threads it ended on."""
    done: GenerationDone | None = None
    chosen: list[str] = []
    engine.clear_cache()
    with closing(engine.generate(PROMPT, settings, bias, top_n=10)) as events:
        for event in events:
            if isinstance(event, ThreadsChosen):
                chosen.append(f"{event.n_threads}")
            elif isinstance(event, GenerationDone):
                done = event
    assert done is not None and done.threads is not None
    moves = f" (moved: {' -> '.join(chosen)})" if chosen else ""
    n = done.threads.n_threads
    return done.decode_tokens_per_s, f"{n} thread{'s' if n != 1 else ''}{moves}"


def step_seconds(engine: Engine, prompt: list[int], n_tokens: int) -> list[float]:
    """Each llama_decode's seconds in plain llama.cpp's loop (the chooser's input): the
    timing sequences tests/inference/local/test_thread_choice.py replays."""
    lib, ctx = engine.handles.lib, engine.context.handle
    engine.clear_cache()
    tokens = (ctypes.c_int32 * len(prompt))(*prompt)
    lib.llama_decode(ctx, lib.llama_batch_get_one(tokens, len(prompt)))
    one, seconds = (ctypes.c_int32 * 1)(), []
    for _ in range(n_tokens):
        one[0] = prompt[-1]  # the same token again: a step's cost does not depend on which
        started = time.perf_counter()
        lib.llama_decode(ctx, lib.llama_batch_get_one(one, 1))
        seconds.append(time.perf_counter() - started)
    engine.clear_cache()
    return seconds


def probes_said(engine: Engine, since: int) -> str:
    """What auto's decode chooser tried under this condition, and what it found: the why of
    the count it kept (the step's milliseconds, tried against the count in use)."""
    said = [
        f"{p.tried} vs {p.best} at step {p.sample - since}: {p.tried_seconds * 1000:.1f} vs "
        f"{p.best_seconds * 1000:.1f} ms, {'kept' if p.won else 'lost'}{' (abandoned)' if p.abandoned else ''}"
        for p in engine.threads.decode.probes
        if p.sample > since
    ]
    return "; ".join(said) or "none"


def spread(values: list[float], digits: int = 1) -> str:
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, help="GGUF model file (default: the Gemma 3 270M demo)")
    parser.add_argument("--tokens", type=int, default=128, help="tokens per generation (default 128)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per condition (default 3)")
    parser.add_argument("--ctx", type=int, default=1024, help="context size (default 1024)")
    parser.add_argument(
        "--limit",
        type=float,
        default=900.0,
        help="seconds after which a competing process ends by itself (default 900)",
    )
    parser.add_argument("--only", nargs="*", help="run only these conditions (quiet, one, all, interface)")
    parser.add_argument(
        "--record",
        type=Path,
        metavar="FILE",
        help="also write each count's per-step decode seconds under each condition (JSON)",
    )
    args = parser.parse_args(argv)
    model = args.model or demo_model()
    if not model.is_file():
        parser.exit(2, f"busy.py: no model file at {model}\n")
    cores = usable_cores()
    print(machine_facts())
    print(f"model: {model.name}; {args.tokens} tokens a generation, {args.rounds} rounds a condition")

    # Flash attention as llama.cpp decides for the backend, the same path for every context here.
    auto = Engine.load(LoadOptions(model_path=model, n_ctx=args.ctx))
    flash = auto.arithmetic.flash_attn
    fixed = {
        n: Engine.load(LoadOptions(model_path=model, n_ctx=args.ctx, n_threads=n, n_threads_batch=n, flash_attn=flash))
        for n in range(1, cores + 1)
    }
    print(f"flash attention {'on' if flash else 'off'} everywhere; scriptorium: {auto.arithmetic.threads_text}")
    prompt = auto.tokenize(PROMPT)
    eos = int(auto.handles.lib.llama_vocab_eos(auto.handles.vocab))
    bias = LogitBias(entries=((eos, -100.0),) if eos >= 0 else ())
    settings = preset("greedy").with_changes(max_tokens=args.tokens)
    auto_rate(auto, settings.with_changes(max_tokens=8), bias)  # warm-up
    summary = []
    recorded: dict[str, dict[int, list[float]]] = {}
    try:
        for name, (program, count) in conditions(cores).items():
            if args.only and name not in args.only:
                continue
            with competing(program, count, args.limit):
                since = auto.threads.decode.samples
                first, first_threads = auto_rate(auto, settings, bias)
                rates: dict[int, list[float]] = {n: [] for n in fixed}
                ours: dict[int, list[float]] = {n: [] for n in fixed}
                autos: list[float] = []
                for _ in range(args.rounds):
                    for n, engine in fixed.items():
                        rates[n].append(plain_decode_tokens_per_s(engine, prompt, args.tokens))
                        ours[n].append(auto_rate(engine, settings, bias)[0])
                    rate, threads = auto_rate(auto, settings, bias)
                    autos.append(rate)
                if args.record:  # written after each condition: a run stopped midway keeps what it measured
                    recorded[name] = {
                        n: [round(t * 1000, 2) for t in step_seconds(engine, prompt, args.tokens)]
                        for n, engine in fixed.items()
                    }
                    args.record.write_text(
                        json.dumps({"unit": "ms per decode step", "model": model.name, "conditions": recorded}) + "\n"
                    )
            per_round_best = [max(rates[n][i] for n in fixed) for i in range(args.rounds)]
            vs_best = [a / b for a, b in zip(autos, per_round_best)]
            # The chooser's own cost: the same engine doing the same work at its best fixed count.
            per_round_ours = [max(ours[n][i] for n in fixed) for i in range(args.rounds)]
            vs_ours = [a / b for a, b in zip(autos, per_round_ours)]
            vs_all = [a / r for a, r in zip(autos, rates[cores])]
            # The most any thread count could reach against every core in this round: where plain
            # llama.cpp's best count is only 1.4x its every-core default, no chooser reaches 1.5x.
            ceiling = [b / r for b, r in zip(per_round_best, rates[cores])]
            print(
                f"\n{name} ({count} competing {'interface stand-in' if program is INTERFACE else 'CPU-bound'}"
                f" process{'es' if count != 1 else ''})"
            )
            for n in fixed:
                print(f"  plain llama.cpp, {n} thread{'s' if n != 1 else ''}: {spread(rates[n])} tok/s")
            for n in fixed:
                print(f"  scriptorium fixed at {n} thread{'s' if n != 1 else ''}: {spread(ours[n])} tok/s")
            print(
                f"  scriptorium auto: {spread(autos)} tok/s, ended on {threads}; "
                f"its first generation after the change {first:.1f} tok/s ({first_threads})"
            )
            print(f"  auto's decode probes: {probes_said(auto, since)}")
            print(f"  auto / best fixed count, per round: {spread(vs_best, 3)}")
            print(f"  auto / scriptorium at its best fixed count (the chooser's cost), per round: {spread(vs_ours, 3)}")
            print(f"  auto / plain llama.cpp on every core ({cores}), per round: {spread(vs_all, 3)}")
            print(f"  plain llama.cpp's best count / its every core, per round (the ceiling): {spread(ceiling, 3)}")
            summary.append((name, *map(statistics.median, (vs_best, vs_ours, vs_all, ceiling))))
    finally:
        auto.close()
        for engine in fixed.values():
            engine.close()
    print(
        "\nsummary (medians): "
        + "; ".join(
            f"{name}: auto/best {b:.3f}, auto/ours at best fixed {o:.3f}, auto/every core {a:.3f} (ceiling {c:.3f})"
            for name, b, o, a, c in summary
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
