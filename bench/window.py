"""Re-continuing a draft that fills the model's window, against the cost of the appended
tokens alone, and against continuing cold. One run, side by side.

The window slides by a sentence when a sentence is appended: the cache keeps the memory
where it is and moves the rest back (context.py), so only the appended sentence (and a
token or two where it joins) is evaluated. The reference is the same window with its prompt
cached up to the new sentence, where plain prefix reuse applies: the same tokens
evaluated at the same positions, nothing moved.

    python bench/author_model.py /tmp/author-256.gguf 256
    python bench/window.py --model /tmp/author-256.gguf [--rounds 9] [--threads 1]

With a lorebook: re-continuing after an entry fires (the sentence appended names it),
and after it leaves (the scan depth has moved past it), against continuing cold. The
entry sits right after the memory, which stays cached: an entry that arrives has the
draft after it evaluated again; one that leaves lets the cache move the draft back.

It also builds the window of a ~500 KB draft (a book in Italian), against counting that
draft once: the search before it was bounded counted it whole at least twice (the fit
check, the tokens before the window) and then a suffix per bisection step.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path

from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.events import GenerationDone, PrefillDone
from scriptorium.inference.window.lore import LoreEntry, Lorebook
from scriptorium.inference.core.settings import PRESETS, LogitBias
from scriptorium.inference.window.window import build_window, prompt_budget

WORDS = (
    "il gatto nero dorme sul tetto e la casa era buia nella notte più lunga poi il cane corre verso la "
    "porta mentre Lucia torna al paese con il vento che porta odore di castagne"
).split()
MEMORY = "Lucia torna al paese dopo vent'anni. Il gatto si chiama Nero."
SETTINGS = PRESETS["greedy"].with_changes(max_tokens=32)
LORE = Lorebook(
    (
        LoreEntry("Marco", ("Marco",), "Marco è il fratello di Lucia: fa il pescatore e non parla mai del padre."),
        LoreEntry("Torre", ("torre",), "La torre sul porto è crollata nell'inverno del 1902."),
    ),
    scan_depth=24,
    budget=48,
)
NAMING = "Poi arrivò Marco, con la barca. "


def sentence(i: int) -> str:
    return " ".join(WORDS[(i * 5 + k) % len(WORDS)] for k in range(10 + i % 6)).capitalize() + ". "


def draft(n: int) -> str:
    return "".join(sentence(i) + ("\n\n" if i % 4 == 3 else "") for i in range(n))


def window_prompt(engine: Engine, text: str, lorebook: Lorebook | None = None) -> str:
    return build_window(
        text,
        budget=prompt_budget(engine.n_ctx, SETTINGS.max_tokens),
        count=engine.count_tokens,
        longest_piece=engine.longest_piece_chars,
        memory=MEMORY,
        lorebook=lorebook,
    ).prompt


def timed_ms(call) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def continue_once(
    engine: Engine, text: str, prompt: str | None = None, lorebook: Lorebook | None = None
) -> tuple[float, PrefillDone]:
    prompt = prompt if prompt is not None else window_prompt(engine, text, lorebook)
    with contextlib.closing(engine.generate(prompt, SETTINGS.with_changes(max_tokens=1), LogitBias())) as events:
        seen = list(events)
    prefill = next(e for e in seen if isinstance(e, PrefillDone))
    done = next(e for e in seen if isinstance(e, GenerationDone))
    return done.ttft_ms, prefill


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    engine = Engine.load(LoadOptions(model_path=Path(args.model), n_threads=args.threads, n_threads_batch=args.threads))
    print(
        f"model {engine.facts.name}: n_ctx {engine.n_ctx} (trained {engine.facts.context_length}), "
        f"{args.threads} thread(s)"
    )
    long_draft = draft(400)
    cold, shifted, appended, how, evaluated, appended_tokens = [], [], [], [], [], []
    for r in range(args.rounds):
        base, extra = long_draft + sentence(1000 + r), sentence(2000 + r)
        engine.clear_cache()
        ms, _ = continue_once(engine, base + extra)
        cold.append(ms)
        engine.clear_cache()
        continue_once(engine, base)
        ms, prefill = continue_once(engine, base + extra)  # the window slides by the new sentence
        shifted.append(ms)
        how.append(prefill.cache_reuse)
        evaluated.append(prefill.prefill_tokens)
        # The reference: the same window, its prompt cached up to the new sentence (plain
        # prefix reuse), so the same tokens are evaluated at the same positions.
        engine.clear_cache()
        full = window_prompt(engine, base + extra)
        continue_once(engine, "", full[: -len(extra)])
        ms, prefill = continue_once(engine, "", full)
        appended.append(ms)
        appended_tokens.append(prefill.prefill_tokens)
    lore_cold, cold_tokens, entered, left, entered_tokens, left_tokens, left_how = [], [], [], [], [], [], []
    for r in range(args.rounds):
        base = long_draft + sentence(3000 + r)
        named = base + NAMING
        moved_on = named + sentence(4000 + r) + sentence(5000 + r) + sentence(6000 + r)
        assert LORE.entries[0].text in window_prompt(engine, named, LORE)
        assert LORE.entries[0].text not in window_prompt(engine, moved_on, LORE)
        engine.clear_cache()
        ms, prefill = continue_once(engine, named, lorebook=LORE)
        lore_cold.append(ms)
        cold_tokens.append(prefill.prefill_tokens)
        engine.clear_cache()
        continue_once(engine, base, lorebook=LORE)
        ms, prefill = continue_once(engine, named, lorebook=LORE)  # the entry fires
        entered.append(ms)
        entered_tokens.append(prefill.prefill_tokens)
        ms, prefill = continue_once(engine, moved_on, lorebook=LORE)  # past the scan depth: it leaves
        left.append(ms)
        left_tokens.append(prefill.prefill_tokens)
        left_how.append(prefill.cache_reuse)
    book = draft(8000)  # ~500 KB
    engine.longest_piece_chars  # found once per model, before timing
    built = [timed_ms(lambda: window_prompt(engine, book)) for _ in range(args.rounds)]
    counted = [timed_ms(lambda: engine.count_tokens(book)) for _ in range(args.rounds)]
    engine.close()
    med = statistics.median
    print(f"cold continue at a full window:   TTFT {med(cold):7.1f} ms")
    print(
        f"re-continue after a sentence:     TTFT {med(shifted):7.1f} ms  ({med(evaluated):.0f} tokens evaluated; "
        f"cache {', '.join(sorted(set(how)))})"
    )
    print(
        f"the appended tokens alone:        TTFT {med(appended):7.1f} ms  ({med(appended_tokens):.0f} tokens evaluated)"
    )
    print(
        f"re-continue / appended alone: {med(shifted) / med(appended):.2f} (target at most 1.5); "
        f"re-continue / cold: {med(shifted) / med(cold):.2f}"
    )
    print(f"lore: cold continue, entry in:    TTFT {med(lore_cold):7.1f} ms  ({med(cold_tokens):.0f} tokens evaluated)")
    print(
        f"lore: re-continue, entry fired:   TTFT {med(entered):7.1f} ms  ({med(entered_tokens):.0f} tokens evaluated; "
        f"/ cold {med(entered) / med(lore_cold):.2f})"
    )
    print(
        f"lore: re-continue, entry left:    TTFT {med(left):7.1f} ms  ({med(left_tokens):.0f} tokens evaluated; "
        f"cache {', '.join(sorted(set(left_how)))}; / cold {med(left) / med(lore_cold):.2f})"
    )
    print(
        f"window of a {len(book.encode()) // 1000} KB draft:   {med(built):7.1f} ms; counting it whole once "
        f"{med(counted):7.1f} ms (window / whole count: {med(built) / med(counted):.3f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
