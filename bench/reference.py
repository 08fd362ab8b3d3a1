"""The one reference every decode benchmark compares against: plain llama.cpp at its best
on this machine. All cores, and flash attention on and off both measured in the same run;
the faster is the reference. Also the facts to print beside any figure: CPU model, cores,
and the llama.cpp build's flags.

Used by bench/decode.py, bench/tui_stream.py and the other benchmarks (run as scripts, so this
folder is on sys.path), which take the demo model from `demo_model` here when given none.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from scriptorium.inference.core import native
from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.load_options import usable_cores


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    try:  # macOS
        return (
            subprocess.run(
                ["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True, text=True, timeout=5
            ).stdout.strip()
            or platform.processor()
        )
    except (OSError, subprocess.SubprocessError):
        return platform.processor() or platform.machine()


def demo_model() -> Path:
    """The Gemma 3 270M demo model, fetched and checked as the app fetches it."""
    from scriptorium.app import paths
    from scriptorium.inference.gguf.demo_model import ensure_demo_model

    return ensure_demo_model(paths.demo_model_cache_dir())


def machine_facts() -> str:
    import llama_cpp

    flags = native.llama().llama_print_system_info().decode("utf-8", "replace").strip()
    return (
        f"CPU: {cpu_model()}, {usable_cores()} usable cores of {os.cpu_count()}\n"
        f"llama.cpp: llama-cpp-python {llama_cpp.__version__}; {flags}\n"
        f"OMP_WAIT_POLICY: {os.environ.get('OMP_WAIT_POLICY', '(unset: libgomp spins, then sleeps)')}"
    )


def plain_decode_tokens_per_s(engine: Engine, prompt: list[int], n_tokens: int) -> float:
    """llama_decode + llama.cpp's greedy sampler, nothing else, on the engine's context."""
    lib, ctx = engine.handles.lib, engine.context.handle
    engine.clear_cache()
    batch_tokens = (ctypes.c_int32 * len(prompt))(*prompt)
    if lib.llama_decode(ctx, lib.llama_batch_get_one(batch_tokens, len(prompt))) != 0:
        raise SystemExit("prompt decode failed")
    chain = lib.llama_sampler_chain_init(lib.llama_sampler_chain_default_params())
    eos = int(lib.llama_vocab_eos(engine.handles.vocab))
    if eos >= 0:  # banned, so every loop decodes the same number of tokens
        bias = (lib.llama_logit_bias * 1)(lib.llama_logit_bias(eos, -1e9))
        lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_logit_bias(engine.n_vocab, 1, bias))
    lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_greedy())
    one = (ctypes.c_int32 * 1)()
    token = lib.llama_sampler_sample(chain, ctx, -1)
    start = time.perf_counter()
    for _ in range(n_tokens - 1):
        one[0] = token
        if lib.llama_decode(ctx, lib.llama_batch_get_one(one, 1)) != 0:
            raise SystemExit("decode failed")
        token = lib.llama_sampler_sample(chain, ctx, -1)
    elapsed = time.perf_counter() - start
    lib.llama_sampler_free(chain)
    engine.clear_cache()
    return (n_tokens - 1) / elapsed


@dataclass
class Reference:
    """Plain llama.cpp on every usable core, with flash attention on and with it off."""

    engines: dict[bool, Engine]
    rates: dict[bool, list[float]]

    @classmethod
    def load(cls, model: Path, n_ctx: int) -> "Reference":
        threads = usable_cores()
        engines = {
            flash: Engine.load(
                LoadOptions(model_path=model, n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads, flash_attn=flash)
            )
            for flash in (True, False)
        }
        return cls(engines, {True: [], False: []})

    def measure_round(self, prompt: list[int], n_tokens: int) -> dict[bool, float]:
        """One plain run each way, back to back; returns this round's rates."""
        this_round = {}
        for flash, engine in self.engines.items():
            this_round[flash] = plain_decode_tokens_per_s(engine, prompt, n_tokens)
            self.rates[flash].append(this_round[flash])
        return this_round

    @property
    def best_path(self) -> bool:
        """Flash attention on (True) or off: whichever path had the higher median."""
        return statistics.median(self.rates[True]) > statistics.median(self.rates[False])

    def describe(self) -> str:
        on, off = statistics.median(self.rates[True]), statistics.median(self.rates[False])
        return (
            f"plain llama.cpp, {usable_cores()} threads: flash attention on {on:.1f} tok/s, off {off:.1f} tok/s "
            f"(medians of {len(self.rates[True])}); reference: {'on' if self.best_path else 'off'}"
        )

    def close(self) -> None:
        for engine in self.engines.values():
            engine.close()


def ratio_summary(ours: list[float], reference: list[float]) -> str:
    """The median and range of the per-round ratios ours / reference (each round's pair
    ran back to back, which the shared machine's drift disturbs least)."""
    ratios = sorted(o / r for o, r in zip(ours, reference))
    return f"{statistics.median(ratios):.3f} (median of {len(ratios)} rounds; range {ratios[0]:.3f}-{ratios[-1]:.3f})"


def run_arguments(description: str, *, tokens: int, rounds: int) -> argparse.ArgumentParser:
    """The arguments every side-by-side decode benchmark takes; more can be added."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--model", type=Path, required=True, help="GGUF model file")
    parser.add_argument("--tokens", type=int, default=tokens, help=f"tokens per generation (default {tokens})")
    parser.add_argument("--rounds", type=int, default=rounds, help=f"rounds (default {rounds})")
    parser.add_argument("--ctx", type=int, default=2048, help="context size (default 2048)")
    return parser


def parse_run_arguments(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """Parsed arguments; one line and exit status 2 when the model file is missing."""
    args = parser.parse_args(argv)
    if not args.model.is_file():
        parser.exit(2, f"{Path(sys.argv[0]).name}: no model file at {args.model}\n")
    return args
