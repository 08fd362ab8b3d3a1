"""Decode speed with every sampler on against today's chain (the prose preset: top-k 50,
top-p 0.95, temperature 0.8), both through scriptorium's generation (top-10
probabilities, byte ban, what the chain did recorded at every step). One run, rounds
interleaved so that drift of the machine hits both alike.

    python bench/samplers.py [--model PATH] [--tokens 128] [--rounds 5] [--ctx 2048]

Without --model: the Gemma 3 270M demo model (262k vocabulary), where a pass over the
vocabulary costs most.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
from pathlib import Path

from reference import demo_model, machine_facts

from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.events import GenerationDone
from scriptorium.inference.core.settings import PRESETS, LogitBias, SamplerSettings

PROMPT = (
    "Era una sera d'autunno quando Lucia tornò al paese. Le strade erano vuote, "
    "e il vento portava l'odore delle castagne arrostite. "
)
TODAY = PRESETS["prose"]
EVERY = TODAY.with_changes(
    repeat_penalty=1.1,
    frequency_penalty=0.1,
    presence_penalty=0.1,
    dry_multiplier=0.8,
    top_n_sigma=3.0,
    typical_p=0.95,
    min_p=0.02,
    xtc_probability=0.5,
    xtc_threshold=0.1,
    dynatemp_range=0.3,
)


def tokens_per_s(engine: Engine, settings: SamplerSettings, n_tokens: int, seed: int) -> float:
    engine.clear_cache()
    # EOS is banned so both chains decode the same number of tokens.
    eos = engine.handles.lib.llama_vocab_eos(engine.handles.vocab)
    bias = LogitBias(entries=((int(eos), -100.0),))
    with contextlib.closing(
        engine.generate(PROMPT, settings.with_changes(max_tokens=n_tokens, seed=seed), bias, top_n=10)
    ) as events:
        done = [e for e in events if isinstance(e, GenerationDone)][0]
    return done.decode_tokens_per_s


def chain_cpu_ms(engine: Engine, settings: SamplerSettings, steps: int, traced: bool) -> float:
    """CPU time (this thread's, so other work on the machine does not count) of one step
    of the sampler chain on the last logits of a prompt: filling the candidates, every
    sampler, the draw and, `traced`, following the top 10 through it (sampler_trace.py);
    untraced and for today's chain, llama_sampler_sample as before this chain was stepped.
    Traced, it also says how many steps ran on a short array (sampler_shortlist.py)."""
    import time

    from scriptorium.inference.local.sampler_trace import ChainTrace

    context = engine.context
    engine.clear_cache()
    with context.claim():
        list(context.decode(engine.tokenize(PROMPT)))
        bias = LogitBias().resolve(engine.byte_token_ids)
        chain = context.sampler(engine.n_vocab, settings, bias, 1)
        address = context.last_logits()()
        lib = engine.handles.lib
        if traced:
            trace = ChainTrace()
            trace.follow(list(range(10)))
            chain.observer = trace
        started = time.thread_time()
        for _ in range(steps):
            if traced:
                chain.sample(address)
            else:
                plain = lib.llama_sampler_sample(chain._chain, context.handle, -1)  # noqa: F841
        spent = time.thread_time() - started
        if traced:
            print(f"  {' → '.join(chain.stage_names)}: {chain.short_steps} of {steps} steps on a short array")
        chain.close()
        context.clear()
    return spent / steps * 1000.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ctx", type=int, default=2048)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()

    print(machine_facts())
    engine = Engine.load(LoadOptions(model_path=args.model or demo_model(), n_ctx=args.ctx, n_threads=args.threads))
    print(f"model: {engine.facts.name} (vocabulary {engine.n_vocab:,}); {engine.arithmetic.describe()}")
    print(f"every sampler: {' → '.join(EVERY.applied_chain())}")
    # The chain's own cost, in CPU time: what the machine's other work cannot blur.
    before = chain_cpu_ms(engine, TODAY, 200, traced=False)
    today_ms, every_ms = chain_cpu_ms(engine, TODAY, 200, traced=True), chain_cpu_ms(engine, EVERY, 200, traced=True)
    print(
        f"sampling CPU per token: today's chain as before (llama_sampler_sample) {before:.2f} ms, "
        f"stepped and traced {today_ms:.2f} ms, every sampler {every_ms:.2f} ms"
    )
    tokens_per_s(engine, TODAY, 16, 0)  # warm-up, not counted
    today: list[float] = []
    every: list[float] = []
    for number in range(args.rounds):
        today.append(tokens_per_s(engine, TODAY, args.tokens, number))
        every.append(tokens_per_s(engine, EVERY, args.tokens, number))
        print(f"round {number + 1}: today's chain {today[-1]:7.1f} tok/s   every sampler {every[-1]:7.1f} tok/s")
    best_today, best_every = max(today), max(every)
    print(
        f"best: today's chain {best_today:.1f} tok/s, every sampler {best_every:.1f} tok/s: "
        f"{(1 - best_every / best_today) * 100:+.1f}% slower"
    )
    print(f"median: today's chain {statistics.median(today):.1f}, every sampler {statistics.median(every):.1f} tok/s")
    # Each round's pair ran back to back: their ratio is what a busy neighbour blurs least.
    ratios = [e / t for e, t in zip(every, today)]
    print(
        f"every sampler / today's chain, round by round: median {statistics.median(ratios):.3f} "
        f"(range {min(ratios):.3f}-{max(ratios):.3f}): {(1 - statistics.median(ratios)) * 100:+.1f}% slower"
    )
    engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
