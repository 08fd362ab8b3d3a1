"""What `scriptorium compare` must compute that llama-perplexity does not, in llama.cpp alone:
compare's windows with the logits of every position (bits per character counts every
character), against llama-perplexity's, the logits of each full window's second half only
(no tail). Same context, threads and flash attention, interleaved, nothing read: the CPU
time (process_time, every thread) of the llama_decode calls alone.

    python bench/compare_floor.py --model PATH --text FILE [--ctx 256] [--threads 1] [--rounds 3]

The ratio is the floor of bench/compare.py's ratio for the decoding (model loads and
process starts aside); compare's decode-speed probe comes on top of it.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.inference.local.comparison import windows
from scriptorium.inference.local.engine import Engine
from scriptorium.inference.local.scoring import chunk_size


def decode_s(engine: Engine, tokens: list[int], n_ctx: int, every_position: bool) -> float:
    lib, ctx = engine.handles.lib, engine.context.handle
    plan = windows(len(tokens), n_ctx)
    # compare's chunks (at most n_batch rows, its logits budget); llama-perplexity's one batch a window.
    step = chunk_size(engine.n_vocab, engine.context.n_batch) if every_position else n_ctx
    batch = lib.llama_batch_init(max(step, n_ctx), 0, 1)
    started = time.process_time()
    for window in plan:
        if not (every_position or window.full):
            continue
        part = tokens[window.start : window.end]
        if engine.vocabulary.add_bos:
            part[0] = engine.vocabulary.bos_id
        lib.llama_memory_clear(lib.llama_get_memory(ctx), True)
        for begin in range(0, len(part), step):
            chunk = part[begin : begin + step]
            batch.n_tokens = len(chunk)
            for i, token in enumerate(chunk):
                position = begin + i
                batch.token[i], batch.pos[i], batch.n_seq_id[i] = token, position, 1
                batch.seq_id[i][0] = 0
                batch.logits[i] = 1 if every_position or position >= n_ctx // 2 else 0
            if lib.llama_decode(ctx, batch) != 0:
                raise SystemExit("bench/compare_floor.py: llama_decode failed")
    elapsed = time.process_time() - started
    lib.llama_batch_free(batch)
    engine.clear_cache()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--text", required=True)
    parser.add_argument("--ctx", type=int, default=256)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    options = LoadOptions(
        model_path=Path(args.model),
        n_ctx=args.ctx,
        n_threads=args.threads,
        n_threads_batch=args.threads,
        flash_attn=True,
    ).validated()
    engine = Engine.load(options)
    try:
        tokens = engine.tokenize(Path(args.text).read_text(encoding="utf-8"))
        n_ctx = engine.context.n_ctx
        half, every = [], []
        for _ in range(args.rounds):
            half.append(decode_s(engine, tokens, n_ctx, every_position=False))
            every.append(decode_s(engine, tokens, n_ctx, every_position=True))
    finally:
        engine.close()
    ratios = [e / h for e, h in zip(every, half)]
    print(
        f"{Path(args.model).name}: {len(tokens)} tokens, --ctx {n_ctx}, {args.threads} threads, CPU (median, min-max)"
    )
    print(
        f"  second half of full windows (llama-perplexity): {statistics.median(half):.2f} s ({min(half):.2f}-{max(half):.2f})"
    )
    print(
        f"  every position, tail too (compare):             {statistics.median(every):.2f} s ({min(every):.2f}-{max(every):.2f})"
    )
    print(f"  ratio: {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}, per round)")


if __name__ == "__main__":
    main()
