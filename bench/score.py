"""Scoring a 2,000-token draft (every position's probabilities) against a plain prefill of
the same draft, in one run; and, between the two, llama.cpp alone computing the logits of
every position (the output layer at each token, nothing read): the floor for scoring.

    python bench/score.py --model PATH [--tokens 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path

from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.events import PrefillDone, ScoreDone
from scriptorium.inference.local.scoring import chunk_size
from scriptorium.inference.core.settings import PRESETS, LogitBias

PARAGRAPH = (
    "Il treno arrivò in ritardo, come sempre d'inverno. Marta scese per ultima, con la valigia "
    "che le batteva contro le ginocchia, e cercò con gli occhi la figura di suo padre tra la folla. "
)


def plain_prefill_ms(engine: Engine, draft: str) -> float:
    engine.clear_cache()
    with contextlib.closing(
        engine.generate(draft, PRESETS["greedy"].with_changes(max_tokens=1), LogitBias(), top_n=0)
    ) as events:
        return next(e for e in events if isinstance(e, PrefillDone)).prefill_ms


def all_logits_decode_ms(engine: Engine, draft: str) -> float:
    """llama_decode with logits wanted at every position, in scoring's chunks, no reading."""
    lib, ctx = engine.handles.lib, engine.context.handle
    tokens = engine.tokenize(draft)
    chunk = chunk_size(engine.n_vocab, engine.context.n_batch)
    engine.clear_cache()
    batch = lib.llama_batch_init(chunk, 0, 1)
    start = time.perf_counter()
    for begin in range(0, len(tokens), chunk):
        part = tokens[begin : begin + chunk]
        batch.n_tokens = len(part)
        for i, token in enumerate(part):
            batch.token[i], batch.pos[i], batch.n_seq_id[i], batch.logits[i] = token, begin + i, 1, 1
            batch.seq_id[i][0] = 0
        if lib.llama_decode(ctx, batch) != 0:
            raise SystemExit("decode failed")
    elapsed = (time.perf_counter() - start) * 1000.0
    lib.llama_batch_free(batch)
    engine.clear_cache()
    return elapsed


def scoring_ms(engine: Engine, draft: str) -> float:
    start = time.perf_counter()
    with contextlib.closing(engine.score(draft, top_n=10)) as events:
        done = [e for e in events if isinstance(e, ScoreDone)][0]
    assert not done.cancelled
    return (time.perf_counter() - start) * 1000.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    engine = Engine.load(LoadOptions(model_path=args.model, n_ctx=max(2048, args.tokens + 256), n_threads=args.threads))
    draft = PARAGRAPH
    while len(engine.tokenize(draft + PARAGRAPH)) <= args.tokens:
        draft += PARAGRAPH
    n = len(engine.tokenize(draft))
    print(f"model: {engine.facts.name} ({engine.facts.architecture}, vocabulary {engine.n_vocab:,}); draft {n} tokens")
    prefill, floor, scored = [], [], []
    for _ in range(args.rounds):  # interleaved, so drift of the machine hits all three alike
        prefill.append(plain_prefill_ms(engine, draft))
        floor.append(all_logits_decode_ms(engine, draft))
        scored.append(scoring_ms(engine, draft))
    p, f, s = statistics.median(prefill), statistics.median(floor), statistics.median(scored)
    print(f"plain prefill:                      {p:9.1f} ms ({n / p * 1000:7.1f} tokens/s)")
    print(f"llama.cpp, logits at every position:{f:9.1f} ms ({n / f * 1000:7.1f} tokens/s)")
    print(f"scoring (all positions, top-10):    {s:9.1f} ms ({n / s * 1000:7.1f} tokens/s)")
    print(f"ratio scoring / prefill:            {s / p:9.2f}")
    print(f"ratio all-position logits / prefill:{f / p:9.2f}  (llama.cpp's own floor for scoring)")
    print(f"ratio scoring / all-position logits:{s / f:9.2f}  (what scriptorium adds)")
    engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
