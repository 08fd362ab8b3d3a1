"""Decode speed of scriptorium's generation (top-10 probabilities, byte ban, llama.cpp's
sampler) against a plain llama.cpp decode loop, and the cost of re-continuing a long
draft after appending a sentence against continuing it cold. One run, side by side.

    python bench/decode.py --model PATH [--tokens 128] [--rounds 5] [--ctx 4096]
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import statistics
import sys
import time
from pathlib import Path

from scriptorium.inference.engine import Engine, LoadOptions
from scriptorium.inference.events import GenerationDone, PrefillDone
from scriptorium.inference.settings import PRESETS, LogitBias

PROMPT = (
    "Era una sera d'autunno quando Lucia tornò al paese. Le strade erano vuote, "
    "e il vento portava l'odore delle castagne arrostite. "
)


def plain_decode_tokens_per_s(engine: Engine, prompt: list[int], n_tokens: int) -> float:
    """llama_decode + llama.cpp's greedy sampler, nothing else: the ceiling."""
    lib, ctx = engine.handles.lib, engine.context.handle
    engine.clear_cache()
    batch_tokens = (ctypes.c_int32 * len(prompt))(*prompt)
    if lib.llama_decode(ctx, lib.llama_batch_get_one(batch_tokens, len(prompt))) != 0:
        raise SystemExit("prompt decode failed")
    chain = lib.llama_sampler_chain_init(lib.llama_sampler_chain_default_params())
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

    engine = Engine.load(LoadOptions(model_path=args.model, n_ctx=args.ctx, n_threads=args.threads))
    facts = engine.facts
    print(f"model: {facts.name} ({facts.architecture}, {facts.file_type}, vocabulary {engine.n_vocab:,})")
    prompt_tokens = engine.tokenize(PROMPT)

    # Interleaved rounds, so drift of the machine hits both sides alike.
    plain, ours = [], []
    plain_decode_tokens_per_s(engine, prompt_tokens, 16)  # warm-up
    for _ in range(args.rounds):
        plain.append(plain_decode_tokens_per_s(engine, prompt_tokens, args.tokens))
        ours.append(scriptorium_tokens_per_s(engine, PROMPT, args.tokens))
    plain_median, ours_median = statistics.median(plain), statistics.median(ours)
    # Each round's two runs are back to back: their ratio is what the shared machine's
    # drift disturbs least.
    ratios = sorted(o / p for o, p in zip(ours, plain))
    print(f"decode, plain llama.cpp loop:              {plain_median:8.1f} tokens/s (median of {args.rounds})")
    print(f"decode, scriptorium (top-10 p, byte ban):  {ours_median:8.1f} tokens/s")
    print(f"ratio scriptorium / plain:                 {statistics.median(ratios):8.3f} "
          f"(median of the rounds' ratios; they ranged {ratios[0]:.3f}-{ratios[-1]:.3f})")

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
    print(f"continue a {cold_prefill.prompt_tokens}-token draft cold:          "
          f"{statistics.median(cold):8.1f} ms to first token ({cold_prefill.prefill_tokens} tokens prefilled)")
    print(f"re-continue after appending a sentence:    {statistics.median(warm):8.1f} ms to first token "
          f"({warm_prefill.prefill_tokens} tokens prefilled, {warm_prefill.reused_tokens} reused)")
    print(f"ratio re-continue / cold:                  {statistics.median(warm) / statistics.median(cold):8.3f}")
    engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
