"""Saving a long session: the file as it was encoded before (json.dumps with indent=1 of
the whole session, every token record included, by json's pure-Python encoder) against
the layout written now (token records one compact line each, by json's C encoder) on a
first save, and on the next save after one more generation, when only its tokens are
encoded and the others come from the store's cache. One run, side by side.

The app saves as a generation ends, as one starts when an edit waits for its save, and
0.5 s after the typing pauses (while a model streams if the author types meanwhile); the
old save encoded the session twice, on the interface's thread, and wrote it there too.
Now the interface's thread only encodes: an autosave hands the file to the store's
writing thread ("in the background" below: what the caller waits for, then the write).

    python bench/session_save.py [--generations 200] [--tokens 256] [--alternatives 10] [--rounds 3]

The store figures add the write (temp file, fsync, rename) to a folder under /tmp.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from scriptorium.app.sessions import format as session_format
from scriptorium.app.sessions import (
    BiasRecord,
    DraftSession,
    Generation,
    ModelRef,
    SessionStore,
    TokenRecord,
)
from scriptorium.app.sessions.encoding import TokenLines

WORDS = (
    "il gatto nero dorme sul tetto e la casa era buia nella notte più lunga poi il cane corre verso la "
    "porta mentre Lucia torna al paese con il vento che porta odore di castagne"
).split()
MODEL = ModelRef(
    path="/models/author-256.gguf",
    name="author",
    size=250_000_000,
    sha256="ab" * 32,
    quantization="Q4_K_M",
    architecture="llama",
    parameters=268_098_176,
)


def generation(number: int, tokens: int, alternatives: int, rng: random.Random) -> Generation:
    g = Generation(
        id=f"g{number}",
        kind="continue",
        started_at="2025-03-14T09:39:58+01:00",
        model=MODEL,
        lora=None,
        sampler={"temperature": 0.8, "top_k": 50, "top_p": 0.95, "stop": []},
        seed=number,
        bias=BiasRecord(ban_byte_tokens=True, summary="byte tokens banned (256)"),
        anchor=number * 100,
        finished_at="2025-03-14T09:40:01+01:00",
        stop_reason="length",
        prompt_tokens=500,
        completion_tokens=tokens,
        outcome="partly_accepted",
        tokens=[],
    )
    for _ in range(tokens):
        top = tuple(
            (rng.randrange(32000), " " + rng.choice(WORDS), round(rng.random() / 10, 6), rng.random() < 0.05)
            for _ in range(alternatives)
        )
        g.tokens.append(TokenRecord(id=top[0][0], text=top[0][1], p=round(rng.random(), 6), top=top))
    g.text = g.accepted_text = "".join(t.text for t in g.tokens)
    return g


def timed_ms(call) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--generations", type=int, default=200)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--alternatives", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(7)
    session = DraftSession(
        id="bench",
        title="Bench",
        created_at="2025-03-14T09:15:02+01:00",
        updated_at="2025-03-14T09:15:02+01:00",
        text=" ".join(rng.choice(WORDS) for _ in range(60_000)),
        generations=[generation(n, args.tokens, args.alternatives, rng) for n in range(1, args.generations + 1)],
    )
    extra = generation(args.generations + 1, args.tokens, args.alternatives, rng)
    old_size = len(json.dumps(session_format.to_dict(session), ensure_ascii=False, indent=1).encode())
    new_size = len(session_format.dumps(session).encode())
    print(
        f"session: {args.generations} generations x {args.tokens} tokens x {args.alternatives} alternatives; "
        f"file {old_size / 1e6:.1f} MB before, {new_size / 1e6:.1f} MB now"
    )

    before, first, nxt, store_first, store_next, handed, written = [], [], [], [], [], [], []
    with tempfile.TemporaryDirectory() as folder:
        for round_ in range(args.rounds):
            before.append(timed_ms(lambda: json.dumps(session_format.to_dict(session), ensure_ascii=False, indent=1)))
            cache = TokenLines()
            first.append(timed_ms(lambda: session_format.encode(session, cache)))
            session.generations.append(extra)
            nxt.append(timed_ms(lambda: session_format.encode(session, cache)))
            session.generations.pop()
            store = SessionStore(Path(folder) / str(round_))
            store_first.append(timed_ms(lambda: store.save(session)))
            session.generations.append(extra)
            store_next.append(timed_ms(lambda: store.save(session)))
            session.generations.append(generation(args.generations + 2, args.tokens, args.alternatives, rng))
            handed.append(timed_ms(lambda: store.save(session, in_background=True)))
            written.append(timed_ms(store.flush))
            del session.generations[-2:]

    b, f, n = statistics.median(before), statistics.median(first), statistics.median(nxt)
    sf, sn = statistics.median(store_first), statistics.median(store_next)
    print(f"encode, before (indent=1, whole session): {b:9.1f} ms   (the old save encoded twice: {2 * b:.1f} ms)")
    print(f"encode, first save now:                   {f:9.1f} ms   before / now {b / f:6.1f}x")
    print(f"encode, next save, +1 generation:         {n:9.1f} ms   before / now {b / n:6.1f}x")
    print(f"store.save, first:                        {sf:9.1f} ms   2 x before / now {2 * b / sf:6.1f}x")
    print(f"store.save, next, +1 generation:          {sn:9.1f} ms   2 x before / now {2 * b / sn:6.1f}x")
    h, w = statistics.median(handed), statistics.median(written)
    print(
        f"store.save in the background, +1 more:    {h:9.1f} ms   the caller's, then {w:.1f} ms on the writing thread"
    )
    print(f"(median of {args.rounds} rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
