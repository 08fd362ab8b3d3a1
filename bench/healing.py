"""Token healing against a prompt cut inside a word: the mean log-probability the model gives
the true rest of the word, with and without healing (inference/local/healing.py).

    python bench/healing.py [MODEL.gguf ...] [--cuts N] [--seed S]

Without a model: Gemma 3 270M (the demo model) and a SentencePiece model trained here on
tests/data/italiano.txt (random weights: its figure shows the tokenizer's part, not prose).

Italian text (tests/data/italiano.txt) is cut at N random points inside words; the prompt
is the 300 characters before the cut, from a word start. Measured, by teacher forcing:
- without healing: the prompt as tokenized, then the rest of the word spelled in the
  vocabulary's longest pieces (what the model must write after the cut token);
- with healing: the prompt backed up over the cut token(s) (healing.plan_healing), then
  the backed-up text and the rest of the word as the tokenizer spells them together, each
  constrained step's probability renormalised over the tokens healing allows (what the
  sampler draws from).
Both are the probability of the continuation the author meant, under the distribution
the model is sampled from; the figure is their mean natural log over the cuts.
"""

from __future__ import annotations

import argparse
import ctypes
import math
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from scriptorium.inference.local.engine import Engine, LoadOptions  # noqa: E402
from scriptorium.inference.local.healing import plan_healing  # noqa: E402
from reference import demo_model  # noqa: E402  (this folder is on sys.path when run as a script)

TEXT = ROOT / "tests" / "data" / "italiano.txt"
CONTEXT_CHARS = 300


def log_softmax(engine: Engine) -> np.ndarray:
    address = engine.context.last_logits()()
    logits = np.frombuffer((ctypes.c_float * engine.n_vocab).from_address(address), dtype=np.float32).astype(np.float64)
    top = logits.max()
    return logits - top - math.log(np.exp(logits - top).sum())


def forced(engine: Engine, prompt: list[int], targets: list[int], allowed_for: list[np.ndarray | None]) -> float:
    """Sum of the log-probabilities of `targets` after `prompt`; a step with an allowed set
    is renormalised over it."""
    context = engine.context
    total = 0.0
    with context.claim():
        context.clear()
        for _ in context.decode(prompt):
            pass
        for target, allowed in zip(targets, allowed_for):
            lp = log_softmax(engine)
            if allowed is not None:
                kept = lp[allowed]
                total += lp[target] - (kept.max() + math.log(np.exp(kept - kept.max()).sum()))
            else:
                total += lp[target]
            for _ in context.decode([target]):
                pass
    return total


def longest_pieces(engine: Engine, text: bytes) -> list[int]:
    """`text` spelled greedily in the vocabulary's longest pieces."""
    prefixes = engine.vocabulary.prefixes
    tokens, at = [], 0
    while at < len(text):
        for end in range(len(text), at, -1):
            if len(spelled := prefixes.spelling(text[at:end])):
                tokens.append(int(spelled[0]))
                at = end
                break
        else:
            raise ValueError(f"no piece spells {text[at:]!r}")
    return tokens


def cuts(text: str, count: int, seed: int) -> list[tuple[int, int]]:
    """(cut, end of its word) for `count` random points strictly inside words of letters."""
    rng = random.Random(seed)
    inside = [i for i in range(CONTEXT_CHARS, len(text) - 1) if text[i - 1].isalpha() and text[i].isalpha()]
    chosen = []
    for cut in rng.sample(inside, count):
        end = cut
        while end < len(text) and text[end].isalpha():
            end += 1
        chosen.append((cut, end))
    return chosen


def measure(engine: Engine, text: str, points: list[tuple[int, int]]) -> tuple[float, float, int]:
    vocabulary = engine.vocabulary
    plain_total = healed_total = 0.0
    backed_up = 0
    for cut, end in points:
        start = text.index(" ", cut - CONTEXT_CHARS) + 1
        prompt = text[start:cut]
        rest = text[cut:end].encode()
        tokens = vocabulary.tokenize(prompt)
        plain_targets = longest_pieces(engine, rest)
        plain_total += forced(engine, tokens, plain_targets, [None] * len(plain_targets))

        plan = plan_healing(tokens, vocabulary.token_bytes, vocabulary.prefixes)
        kept = tokens[: plan.kept]
        whole = vocabulary.tokenize(text[start:end])
        if plan.removed and whole[: plan.kept] == kept:
            targets = whole[plan.kept :]
        else:  # the tokenizer spells the whole word's start otherwise: the healed text in longest pieces
            targets = longest_pieces(engine, plan.removed + rest)
        allowed_for: list[np.ndarray | None] = []
        still = plan.removed
        for target in targets:
            allowed_for.append(vocabulary.prefixes.allowed(still) if still else None)
            piece = vocabulary.token_bytes(target)
            still = b"" if piece.startswith(still) else still[len(piece) :]
        backed_up += bool(plan.removed)
        healed_total += forced(engine, kept, targets, allowed_for)
    return plain_total / len(points), healed_total / len(points), backed_up


def spm_model(folder: Path) -> Path:
    import spm_models

    spm = spm_models.train_spm(folder / "italiano.model", vocab_size=900)
    return spm_models.convert_to_gguf(spm, folder / "italiano-spm.gguf")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--cuts", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    text = " ".join(line.strip() for line in TEXT.read_text(encoding="utf-8").splitlines() if line.strip())
    points = cuts(text, args.cuts, args.seed)
    with tempfile.TemporaryDirectory() as folder:
        models = args.models or [demo_model(), spm_model(Path(folder))]
        for model in models:
            engine = Engine.load(LoadOptions(model_path=Path(model), n_ctx=512))
            try:
                started = time.perf_counter()
                engine.vocabulary.prefixes  # noqa: B018 - built once per vocabulary: timed on its own
                index_s = time.perf_counter() - started
                plain, healed, backed_up = measure(engine, text, points)
            finally:
                engine.close()
            print(
                f"{Path(model).name}: {args.cuts} cuts inside words, mean log p of the rest of the word: "
                f"without healing {plain:.3f}, with healing {healed:.3f} (backed up at {backed_up} cuts; "
                f"prefix index of {engine.n_vocab:,} tokens built in {index_s:.2f} s)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
