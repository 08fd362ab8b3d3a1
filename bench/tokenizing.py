"""Tokenizing a ~2,000-token draft with the author's SentencePiece model against
llama.cpp's own tokenizer for the same GGUF, in one run (paired, interleaved rounds).

Tokenizing happens once per request (continue, chat, scoring), before the prefill; the
per-token path (decode, probabilities, sampling) never tokenizes, so naming a .model
costs only this, once per request.

    python bench/tokenizing.py --model MODEL.gguf --spm tokenizer.model [--tokens 2000] [--rounds 15]
"""

from __future__ import annotations

import argparse
import sys
import statistics
import time
from pathlib import Path

from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.vocab.tokenizer import LlamaTokenizer

PARAGRAPH = (
    "Il treno arrivò in ritardo, come sempre d'inverno. Marta scese per ultima, con la valigia "
    "che le batteva contro le ginocchia, e cercò con gli occhi la figura di suo padre tra la folla. "
)


def timed_ms(tokenize, draft: str) -> tuple[float, int]:
    start = time.perf_counter()
    count = len(tokenize(draft, add_bos=True, special=False))
    return (time.perf_counter() - start) * 1000.0, count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--spm", type=Path, required=True)
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    engine = Engine.load(LoadOptions(model_path=args.model, n_ctx=256, n_threads=1, spm_path=args.spm))
    if engine.tokenizer_note:
        print(f"bench: {engine.tokenizer_note}", file=sys.stderr)
        return 2
    spm = engine.tokenizer
    # The same vocabulary handle, without the .model: what the engine does when none is named.
    llama = LlamaTokenizer(engine.handles.lib, engine.handles.vocab, guard=None)
    draft = PARAGRAPH
    while len(engine.tokenize(draft + PARAGRAPH)) <= args.tokens:
        draft += PARAGRAPH
    print(f"model: {engine.facts.name} (vocabulary {engine.n_vocab:,}); {spm.name}; draft {len(draft):,} characters")
    spm_ms, llama_ms, ratios = [], [], []
    for _ in range(args.rounds):
        s, n_spm = timed_ms(spm.tokenize, draft)
        lc, n_llama = timed_ms(llama.tokenize, draft)
        spm_ms.append(s)
        llama_ms.append(lc)
        ratios.append(s / lc)
    s, lc, r = statistics.median(spm_ms), statistics.median(llama_ms), statistics.median(ratios)
    print(f"SentencePiece: {s:8.2f} ms ({n_spm:,} tokens)")
    print(f"llama.cpp:     {lc:8.2f} ms ({n_llama:,} tokens)")
    print(
        f"ratio SentencePiece / llama.cpp: {r:.2f} (median of {args.rounds} paired rounds, "
        f"range {min(ratios):.2f}-{max(ratios):.2f})"
    )
    engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
