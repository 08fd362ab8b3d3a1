"""`scriptorium compare A B --text FILE` against the llama-perplexity runs that give the same
numbers (A's perplexity saving its distributions, then B's KL divergence against them), on
the same text, context and threads, in one run, alternating, wall clock from spawning each
command to its exit, and the CPU time the commands and their children used (user + system:
less moved by other work on a shared machine than the wall clock).

    python bench/compare.py --model A.gguf --model B.gguf --text FILE [--ctx 256] [--rounds 3]
    python bench/compare.py --author-layout --text FILE [--model A.gguf --model B.gguf]

--author-layout also measures the author's layout: the 46M stand-in (16k SentencePiece
vocabulary and 256 byte tokens, 256-token training context) that bench/author_model.py
writes, against itself. CPU time is the main figure (the machine is shared); the load
average is printed before and after each set, so a figure says what it was measured under.
With more than one thread, llama.cpp's threads spin while they wait for each other, and on
a loaded machine that spinning is CPU time of both programs: --threads 1 measures the work.

llama-perplexity is the one tools/build_llama_server.py builds. The issue's budget: a
compare run costs at most 1.1x the sum of the llama-perplexity runs.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def perplexity_binary() -> Path:
    located = subprocess.run(
        [sys.executable, str(REPO / "tools" / "build_llama_server.py"), "--locate", "--tool", "llama-perplexity"],
        capture_output=True,
        text=True,
    )
    if located.returncode != 0:
        raise SystemExit(f"bench/compare.py: {located.stderr.strip()}")
    return Path(located.stdout.strip())


def children_cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(command: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of `command`, its own children (compare's per-model processes) included."""
    cpu_before = children_cpu_s()
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"bench/compare.py: {' '.join(command[:2])} failed:\n{result.stderr[-1500:]}")
    if "you need at least" in result.stderr:
        # llama-perplexity refuses a text under two windows, and exits with status 0: nothing was measured.
        refusal = next(line for line in result.stderr.splitlines() if "you need at least" in line)
        raise SystemExit(f"bench/compare.py: llama-perplexity measured nothing: {refusal.strip()} (a longer --text)")
    return elapsed, children_cpu_s() - cpu_before


def llama_perplexity_s(models: list[str], text: str, ctx: int, threads: int) -> tuple[float, float]:
    binary = str(perplexity_binary())
    common = ["-f", text, "-c", str(ctx), "-b", str(ctx), "-t", str(threads), "-fa", "on"]
    with tempfile.TemporaryDirectory() as scratch:
        base = str(Path(scratch) / "base.kld")
        wall, cpu = timed([binary, "-m", models[0], *common, "--kl-divergence-base", base])
        for model in models[1:]:
            more_wall, more_cpu = timed([binary, "-m", model, *common, "--kl-divergence-base", base, "--kl-divergence"])
            wall, cpu = wall + more_wall, cpu + more_cpu
    return wall, cpu


def compare_s(models: list[str], text: str, ctx: int, threads: int, decode_tokens: int) -> tuple[float, float]:
    scriptorium = str(Path(sys.executable).with_name("scriptorium"))
    return timed(
        [
            scriptorium,
            "compare",
            *models,
            "--text",
            text,
            "--ctx",
            str(ctx),
            "--threads",
            str(threads),
            "--flash-attn",
            "on",
            "--decode-tokens",
            str(decode_tokens),
            "--json",
        ]
    )


def author_layout(scratch: Path) -> Path:
    """The 46M stand-in with a 256-token training context, written by bench/author_model.py."""
    path = scratch / "author-46m-16k.gguf"
    written = subprocess.run(
        [sys.executable, str(REPO / "bench" / "author_model.py"), str(path), "256"], capture_output=True, text=True
    )
    if written.returncode != 0:
        raise SystemExit(f"bench/compare.py: bench/author_model.py failed:\n{written.stderr[-1500:]}")
    return path


def load_average() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def measure(models: list[str], args: argparse.Namespace) -> None:
    print(
        f"{' vs '.join(Path(m).name for m in models)}: --ctx {args.ctx}, {args.threads} threads, {args.rounds} rounds"
    )
    print(f"  load average before (1, 5, 15 min): {load_average()}")
    llama, ours = [], []
    for _ in range(args.rounds):
        llama.append(llama_perplexity_s(models, args.text, args.ctx, args.threads))
        ours.append(compare_s(models, args.text, args.ctx, args.threads, args.decode_tokens))
    print(f"  load average after: {load_average()}")
    # CPU first: the main figure on a shared machine; wall for reference. Median, then min-max.
    for which, index in (("CPU", 1), ("wall", 0)):
        theirs, mine = [run[index] for run in llama], [run[index] for run in ours]
        ratios = [m / t for m, t in zip(mine, theirs)]
        print(
            f"  {which}: llama-perplexity runs  {statistics.median(theirs):7.2f} s  ({min(theirs):.2f}-{max(theirs):.2f})"
        )
        print(f"  {which}: scriptorium compare    {statistics.median(mine):7.2f} s  ({min(mine):.2f}-{max(mine):.2f})")
        print(
            f"  {which}: ratio                  {statistics.median(ratios):7.3f}  "
            f"({min(ratios):.3f}-{max(ratios):.3f}, per round; budget 1.1)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", action="append", default=[], help="a GGUF model (twice or more; the first is the base)"
    )
    parser.add_argument(
        "--author-layout", action="store_true", help="also the 46M stand-in of the author's layout, against itself"
    )
    parser.add_argument("--text", required=True)
    parser.add_argument("--ctx", type=int, default=256)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--decode-tokens", type=int, default=32, help="compare's decode-speed probe (its default)")
    args = parser.parse_args()
    if len(args.model) == 1 or not (args.model or args.author_layout):
        parser.error("give --model twice or more, or --author-layout")
    if args.model:
        measure(args.model, args)
    if args.author_layout:
        with tempfile.TemporaryDirectory(prefix="bench-compare-") as scratch:
            stand_in = str(author_layout(Path(scratch)))
            measure([stand_in, stand_in], args)


if __name__ == "__main__":
    main()
