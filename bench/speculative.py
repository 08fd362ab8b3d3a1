"""Speculative decoding (prompt lookup) against plain decoding, in one run on one machine:
(a) a revision, where the model continues a draft that repeats most of an earlier passage,
and (b) free prose, the Italian continuation bench/decode.py times. Both with the app's
instrument on: top-10 probabilities and the sampler trace for every token, accepted guesses
included. The text must be identical; the figures are tokens per second of decode (the
first token excluded), median of interleaved rounds, with the acceptance rate.

    python bench/speculative.py [--model PATH] [--tokens 128] [--rounds 3] [--threads N] [--draft-max 8]
                                [--draft-model DRAFT.gguf] [--flash on|off|auto]

Without --model: the demo model (Gemma 3 270M) from the cache.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
from pathlib import Path

from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.events import GenerationDone, TokenEvent
from scriptorium.inference.core.settings import PRESETS, LogitBias
from scriptorium.inference.core.speculation import Speculation

PASSAGE = (
    "Era una sera d'autunno quando Lucia tornò al paese. Le strade erano vuote, e il vento portava "
    "l'odore delle castagne arrostite. Sulla piazza, davanti alla chiesa, il vecchio Bortolo chiudeva "
    "la sua bottega e la salutò con un cenno, come se non fosse mai partita. Lucia sentì la valigia "
    "pesarle sulla mano e per un momento non seppe se andare verso casa o tornare alla corriera. "
    "Poi vide la luce accesa alla finestra di sua madre, e si mise a camminare."
)
REVISION = (
    "Prima stesura:\n\n" + PASSAGE + "\n\nSeconda stesura, con poche correzioni:\n\n" + PASSAGE.split(". ")[0] + "."
)
FREE_PROSE = (
    "Era una sera d'autunno quando Lucia tornò al paese. Le strade erano vuote, "
    "e il vento portava l'odore delle castagne arrostite. "
)
DEMO_MODEL = Path.home() / ".cache" / "scriptorium" / "demo-model" / "gemma-3-270m-q4_k_m.gguf"


def generate(
    engine: Engine, prompt: str, tokens: int, speculation: Speculation
) -> tuple[str, GenerationDone, list[TokenEvent]]:
    engine.clear_cache()
    eos = engine.handles.lib.llama_vocab_eos(engine.handles.vocab)
    bias = LogitBias(entries=((int(eos), -100.0),))  # the same number of tokens every run
    settings = PRESETS["greedy"].with_changes(max_tokens=tokens)
    with contextlib.closing(engine.generate(prompt, settings, bias, top_n=10, speculation=speculation)) as events:
        seen = list(events)
    done = seen[-1]
    assert isinstance(done, GenerationDone)
    events = [e for e in seen if isinstance(e, TokenEvent)]
    return "".join(e.text for e in events) + done.tail_text, done, events


def parting(plain: list[TokenEvent], guessed: list[TokenEvent]) -> str:
    """Where two runs' tokens first differ (if they do), and how far apart their probabilities were
    before it: batched arithmetic against one token at a time."""
    same = 0
    while same < min(len(plain), len(guessed)) and plain[same].id == guessed[same].id:
        same += 1
    gap = max((abs(a.p - b.p) for a, b in zip(plain[:same], guessed[:same])), default=0.0)
    where = "never" if same == len(plain) == len(guessed) else f"at token {same}"
    return f"tokens part {where}; largest probability difference before that {gap * 100:.3f} points"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=DEMO_MODEL)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--draft-max", type=int, default=8)
    parser.add_argument("--draft-model", type=Path, default=None, help="guess with this draft model, not lookup")
    parser.add_argument("--flash", choices=("on", "off", "auto"), default="auto", help="flash attention")
    args = parser.parse_args()

    flash = {"on": True, "off": False, "auto": None}[args.flash]
    engine = Engine.load(LoadOptions(model_path=args.model, n_ctx=2048, n_threads=args.threads, flash_attn=flash))
    guesser = "draft" if args.draft_model else "lookup"
    lookup = Speculation(guesser=guesser, draft_max=args.draft_max, draft_model=args.draft_model)
    plain = Speculation()
    print(f"model: {engine.facts.name} ({engine.facts.file_type}, vocabulary {engine.n_vocab:,})")
    print(f"arithmetic: {engine.arithmetic.describe()}; draft max {args.draft_max}; {args.tokens} tokens, greedy")
    failed = False
    for name, prompt in (("(a) revision", REVISION), ("(b) free prose", FREE_PROSE)):
        generate(engine, prompt, 16, plain)  # warm-up
        rates: dict[str, list[float]] = {"plain": [], "lookup": []}
        texts: dict[str, str] = {}
        runs: dict[str, list[TokenEvent]] = {}
        counts = None
        for _ in range(args.rounds):  # interleaved, so drift of the machine hits both alike
            for label, speculation in (("plain", plain), ("lookup", lookup)):
                text, done, events = generate(engine, prompt, args.tokens, speculation)
                runs.setdefault(label, events)
                rates[label].append(done.decode_tokens_per_s)
                if texts.setdefault(label, text) != text:
                    print(f"  {label}: the text changed between rounds")
                if done.speculation is not None:
                    counts = done.speculation
        same = texts["plain"] == texts["lookup"]
        failed |= not same
        base, fast = statistics.median(rates["plain"]), statistics.median(rates["lookup"])
        print(f"{name}: plain {base:.1f} tok/s, lookup {fast:.1f} tok/s: {fast / base:.2f}x; identical text: {same}")
        if counts is not None:
            print(f"  {counts.describe()}, {counts.passes} passes")
        print(f"  {parting(runs['plain'], runs['lookup'])}")
        if not same:
            print(f"  plain:  {texts['plain']!r}\n  lookup: {texts['lookup']!r}")
    engine.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
