"""How many threads should decode while the UI must stay responsive?

    .venv/bin/python bench/threads.py --model PATH [--tokens 96] [--rounds 1]

Each setting runs in a fresh process (OpenMP reads its environment once, when llama.cpp
loads): scriptorium's generation (top-12 probabilities, as the app asks) decodes
`--tokens` tokens while a stand-in for the UI thread wakes every 10 ms and does 1 ms of
Python work, as a keypress and a repaint would. Printed: decode tok/s, and how late the
UI work finished against its schedule (median and worst).

Settings:
  cores-1            the app's old default: one core left to the interface
  all                every core, llama.cpp's defaults (OpenMP spins after each token)
  all, passive wait  every core, OMP_WAIT_POLICY=passive: OpenMP's idle threads sleep
                     at once instead of spinning (install.sh builds llama.cpp with
                     OpenMP, so ggml's own threadpool polling level does not apply; a
                     build without OpenMP is measured in docs/guide/speed.md). Not the app's
                     default: on the quiet 2-core machine it halves decode speed
  all, short spin    every core, GOMP_SPINCOUNT=20000: a short spin, then sleep
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

UI_PERIOD = 0.010
UI_WORK = 0.001


def ui_standin(stop: threading.Event, lateness_ms: list[float]) -> None:
    """Wake every UI_PERIOD, busy the interpreter for UI_WORK, record how late it ended."""
    due = time.perf_counter() + UI_PERIOD
    while not stop.is_set():
        time.sleep(max(0.0, due - time.perf_counter()))
        work_end = time.perf_counter() + UI_WORK
        while time.perf_counter() < work_end:
            pass
        lateness_ms.append((time.perf_counter() - (due + UI_WORK)) * 1000.0)
        due += UI_PERIOD
        if due < time.perf_counter():
            due = time.perf_counter() + UI_PERIOD


def child(model: Path, threads: int, tokens: int, flash: bool) -> None:
    from contextlib import closing

    from scriptorium.inference.local.engine import Engine, LoadOptions
    from scriptorium.inference.core.events import GenerationDone
    from scriptorium.inference.core.settings import LogitBias, preset

    engine = Engine.load(LoadOptions(model_path=model, n_ctx=1024, n_threads=threads, flash_attn=flash))
    eos = int(engine.handles.lib.llama_vocab_eos(engine.handles.vocab))
    bias = LogitBias(entries=((eos, -100.0),) if eos >= 0 else ())
    settings = preset("greedy").with_changes(max_tokens=tokens)
    prompt = "Era una sera d'autunno quando Lucia tornò al paese. Le strade erano vuote, e"

    def generate(n: int) -> GenerationDone:
        with closing(engine.generate(prompt, settings.with_changes(max_tokens=n), bias, top_n=12)) as events:
            return [e for e in events if isinstance(e, GenerationDone)][0]

    generate(8)  # warm-up
    engine.clear_cache()
    lateness: list[float] = []
    stop = threading.Event()
    ui = threading.Thread(target=ui_standin, args=(stop, lateness), daemon=True)
    ui.start()
    done = generate(tokens)
    stop.set()
    ui.join()
    engine.close()
    print(
        json.dumps(
            {
                "tok_s": done.decode_tokens_per_s,
                "late_median": statistics.median(lateness),
                "late_max": max(lateness),
                "wakes": len(lateness),
            }
        )
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--tokens", type=int, default=96)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--flash-attn", choices=("on", "off"), default="off")
    parser.add_argument("--child", nargs=2, metavar=("THREADS", "FLASH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.model, int(args.child[0]), args.tokens, args.child[1] == "on")
        return 0
    sys.path.insert(0, str(Path(__file__).parent))
    from reference import machine_facts, usable_cores

    print(machine_facts())
    cores = usable_cores()
    settings = [
        ("cores-1", max(1, cores - 1), {}),
        ("all", cores, {}),
        ("all, passive wait", cores, {"OMP_WAIT_POLICY": "passive"}),
        ("all, short spin", cores, {"GOMP_SPINCOUNT": "20000"}),
    ]
    print(
        f"model: {args.model.name}, {args.tokens} tokens, flash attention {args.flash_attn}, "
        f"UI stand-in: {UI_WORK * 1000:.0f} ms of Python every {UI_PERIOD * 1000:.0f} ms"
    )
    results: dict[str, list[dict]] = {name: [] for name, _, _ in settings}
    for _ in range(args.rounds):
        for name, threads, env in settings:  # interleaved, so the machine's drift hits all alike
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--model",
                    str(args.model),
                    "--tokens",
                    str(args.tokens),
                    "--child",
                    str(threads),
                    args.flash_attn,
                ],
                env={**{k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}, **env},
                capture_output=True,
                text=True,
                timeout=900,
            )
            if out.returncode != 0:
                print(f"{name}: failed\n{out.stderr[-2000:]}")
                return 1
            results[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
    for name, threads, _ in settings:
        runs = results[name]
        print(
            f"{name:<18} {threads} threads: decode {statistics.median(r['tok_s'] for r in runs):6.1f} tok/s   "
            f"UI late: median {statistics.median(r['late_median'] for r in runs):6.2f} ms, "
            f"worst {max(r['late_max'] for r in runs):7.2f} ms  ({args.rounds} round(s))"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
