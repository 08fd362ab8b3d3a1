"""Decode speed of scriptorium's generation (top-10 probabilities, byte ban, llama.cpp's
sampler) against plain llama.cpp at its best on this machine (reference.py: all cores,
flash attention on and off both measured, the faster is the reference), and the cost of
re-continuing a long draft after appending a sentence against continuing it cold. One
run, side by side, rounds interleaved.

scriptorium runs as `scriptorium continue` does: every core, flash attention chosen by
its own measurement at load (a fresh cache, so it is measured in this run).

    python bench/decode.py --model PATH [--tokens 128] [--rounds 5] [--ctx 4096]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
from pathlib import Path

from reference import Reference, machine_facts, ratio_summary

from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.events import GenerationDone, PrefillDone
from scriptorium.inference.core.settings import PRESETS, LogitBias

PROMPT = (
    "Era una sera d'autunno quando Lucia tornò al paese. Le strade erano vuote, "
    "e il vento portava l'odore delle castagne arrostite. "
)


def scriptorium_tokens_per_s(engine: Engine, prompt: str, n_tokens: int) -> float:
    engine.clear_cache()
    # EOS is banned so both loops decode the same number of tokens.
    eos = engine.handles.lib.llama_vocab_eos(engine.handles.vocab)
    bias = LogitBias(entries=((int(eos), -100.0),))
    settings = PRESETS["greedy"].with_changes(max_tokens=n_tokens)
    with contextlib.closing(engine.generate(prompt, settings, bias, top_n=10)) as events:
        done = [e for e in events if isinstance(e, GenerationDone)][0]
    engine.clear_cache()
    return done.decode_tokens_per_s


def time_to_first_token(engine: Engine, prompt: str) -> tuple[float, PrefillDone]:
    settings = PRESETS["greedy"].with_changes(max_tokens=1)
    with contextlib.closing(engine.generate(prompt, settings, LogitBias(), top_n=10)) as events:
        seen = list(events)
    prefill = next(e for e in seen if isinstance(e, PrefillDone))
    return seen[-1].ttft_ms, prefill


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ctx", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()

    print(machine_facts())
    reference = Reference.load(args.model, args.ctx)
    with tempfile.TemporaryDirectory() as cache:
        engine = Engine.load(
            LoadOptions(model_path=args.model, n_ctx=args.ctx, n_threads=args.threads),
            flash_cache=Path(cache) / "flash.json",
        )
    facts = engine.facts
    print(f"model: {facts.name} ({facts.architecture}, {facts.file_type}, vocabulary {engine.n_vocab:,})")
    print(f"scriptorium: {engine.arithmetic.describe()}")
    prompt_tokens = engine.tokenize(PROMPT)

    # Interleaved rounds, so drift of the machine hits every side alike.
    ours: list[float] = []
    reference.measure_round(prompt_tokens, 16)  # warm-up, not counted
    reference.rates = {True: [], False: []}
    for number in range(args.rounds):
        plain = reference.measure_round(prompt_tokens, args.tokens)
        ours.append(scriptorium_tokens_per_s(engine, PROMPT, args.tokens))
        print(
            f"round {number + 1}: plain FA on {plain[True]:7.1f}  FA off {plain[False]:7.1f}  "
            f"scriptorium {ours[-1]:7.1f} tok/s",
            flush=True,
        )
    best = reference.best_path
    print(reference.describe())
    print(
        f"decode, scriptorium (top-10 p, byte ban):  {statistics.median(ours):8.1f} tokens/s (median of {args.rounds})"
    )
    print(f"ratio scriptorium / reference:             {ratio_summary(ours, reference.rates[best])}")
    reference.close()

    # A long draft, then the same draft with one more sentence.
    budget = min(engine.n_ctx - 64, 1500)
    draft = PROMPT
    while len(engine.tokenize(draft + PROMPT)) < budget:
        draft += PROMPT
    sentence = "Nessuno sapeva che sarebbe rimasta."
    cold, warm = [], []
    for _ in range(max(1, args.rounds // 2)):
        engine.clear_cache()
        cold_ms, cold_prefill = time_to_first_token(engine, draft)
        warm_ms, warm_prefill = time_to_first_token(engine, draft + sentence)
        cold.append(cold_ms)
        warm.append(warm_ms)
    print(
        f"continue a {cold_prefill.prompt_tokens}-token draft cold:          "
        f"{statistics.median(cold):8.1f} ms to first token ({cold_prefill.prefill_tokens} tokens prefilled)"
    )
    print(
        f"re-continue after appending a sentence:    {statistics.median(warm):8.1f} ms to first token "
        f"({warm_prefill.prefill_tokens} tokens prefilled, {warm_prefill.reused_tokens} reused)"
    )
    print(f"ratio re-continue / cold:                  {statistics.median(warm) / statistics.median(cold):8.3f}")
    engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
