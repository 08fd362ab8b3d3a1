"""`scriptorium compare A B --text FILE` against the llama-perplexity runs that give the same
numbers (A's perplexity saving its distributions, then B's KL divergence against them), on
the same text, context and threads, in one run, alternating, wall clock from spawning each
command to its exit, and the CPU time the commands and their children used (user + system:
less moved by other work on a shared machine than the wall clock).

    python bench/compare.py --model A.gguf --model B.gguf --text FILE [--ctx 256] [--rounds 3]

llama-perplexity is the one tools/build_llama_server.py builds. The issue's budget: a
compare run costs at most 1.1x the sum of the llama-perplexity runs.
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", action="append", required=True, help="a GGUF model (twice or more; the first is the base)"
    )
    parser.add_argument("--text", required=True)
    parser.add_argument("--ctx", type=int, default=256)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--decode-tokens", type=int, default=32, help="compare's decode-speed probe (its default)")
    args = parser.parse_args()
    llama, ours = [], []
    for _ in range(args.rounds):
        llama.append(llama_perplexity_s(args.model, args.text, args.ctx, args.threads))
        ours.append(compare_s(args.model, args.text, args.ctx, args.threads, args.decode_tokens))
    print(f"{len(args.model)} models, --ctx {args.ctx}, {args.threads} threads, {args.rounds} rounds (median, min-max)")
    for which, index in (("wall", 0), ("CPU", 1)):
        theirs, mine = [run[index] for run in llama], [run[index] for run in ours]
        ratios = [m / t for m, t in zip(mine, theirs)]
        print(
            f"{which}: llama-perplexity runs  {statistics.median(theirs):7.2f} s  ({min(theirs):.2f}-{max(theirs):.2f})"
        )
        print(f"{which}: scriptorium compare    {statistics.median(mine):7.2f} s  ({min(mine):.2f}-{max(mine):.2f})")
        print(
            f"{which}: ratio                  {statistics.median(ratios):7.3f}  "
            f"({min(ratios):.3f}-{max(ratios):.3f}, per round; budget 1.1)"
        )


if __name__ == "__main__":
    main()
