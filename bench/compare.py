"""`scriptorium compare A B --text FILE` against the llama-perplexity runs that give the same
numbers (A's perplexity saving its distributions, then B's KL divergence against them), on
the same text, context and threads, in one run, alternating, wall clock from spawning each
command to its exit.

    python bench/compare.py --model A.gguf --model B.gguf --text FILE [--ctx 256] [--rounds 3]

llama-perplexity is the one tools/build_llama_server.py builds. The issue's budget: a
compare run costs at most 1.1x the sum of the llama-perplexity runs.
"""

from __future__ import annotations

import argparse
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


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"bench/compare.py: {' '.join(command[:2])} failed:\n{result.stderr[-1500:]}")
    return elapsed


def llama_perplexity_s(models: list[str], text: str, ctx: int, threads: int) -> float:
    binary = str(perplexity_binary())
    common = ["-f", text, "-c", str(ctx), "-b", str(ctx), "-t", str(threads), "-fa", "on"]
    with tempfile.TemporaryDirectory() as scratch:
        base = str(Path(scratch) / "base.kld")
        total = timed([binary, "-m", models[0], *common, "--kl-divergence-base", base])
        for model in models[1:]:
            total += timed([binary, "-m", model, *common, "--kl-divergence-base", base, "--kl-divergence"])
    return total


def compare_s(models: list[str], text: str, ctx: int, threads: int, decode_tokens: int) -> float:
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
    print(f"llama-perplexity runs  {statistics.median(llama):7.2f} s  ({min(llama):.2f}-{max(llama):.2f})")
    print(f"scriptorium compare    {statistics.median(ours):7.2f} s  ({min(ours):.2f}-{max(ours):.2f})")
    print(f"ratio                  {statistics.median(ours) / statistics.median(llama):7.3f}  (budget 1.1)")


if __name__ == "__main__":
    main()
