"""Speculative decoding (prompt lookup, or a draft model) against plain decoding, in one run on one machine:
(a) a revision, where the model continues a draft that repeats most of an earlier passage,
and (b) free prose, the Italian continuation bench/decode.py times. Both with the app's
instrument on: top-10 probabilities and the sampler trace for every token, accepted guesses
included. The text must be identical; the figures are tokens per second of decode (the
first token excluded), median of interleaved rounds, with the acceptance rate, and the same per
second of the process's CPU time (steadier on a shared machine, with --threads 1).

    python bench/speculative.py [--model PATH] [--tokens 128] [--rounds 3] [--threads N] [--draft-max N]
                                [--draft-model DRAFT.gguf] [--flash on|off|auto]
    python bench/speculative.py --identity [--tokens 48] [--seeds 2] [--prompts 24] [--flash on|off] ...

Without --model: the demo model (Gemma 3 270M) from the cache.

`--identity` times nothing (it may run on a busy machine): for each of IDENTITY_PROMPTS, one
greedy generation and one sampled (the "prose" preset) per seed, each decoded plainly and with
speculation from an empty cache, it counts the generations whose tokens differ, and at each
first difference says how close the two tokens were: greedy, the top two raw probabilities of
the plain run there; sampled, the two tokens drawn, with their probabilities after the chain.
A verifying pass evaluates its rows in one batch, and llama.cpp's batched arithmetic can give a
row other numbers than a one-token decode; only a near-tie (or a sampled draw near a boundary
between two tokens) can flip on that.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from reference import demo_model, machine_facts

from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.events import GenerationDone, TokenEvent
from scriptorium.inference.core.settings import PRESETS, LogitBias, SamplerSettings
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


IDENTITY_PROMPTS = (
    FREE_PROSE,
    REVISION,
    "C'era una volta, in un paese di montagna, un mugnaio che aveva tre figli. ",
    "«Non ti aspettavo così presto», disse la donna aprendo la porta. «Entra, fa freddo.» ",
    "Caro Paolo,\n\nti scrivo da Torino, dove piove da una settimana. ",
    "Il commissario Rinaldi accese una sigaretta e guardò il corpo disteso sul pavimento. ",
    "La ricetta della nonna era semplice: farina, uova, un pizzico di sale e tanta pazienza. ",
    "Quando il treno si fermò alla stazione di Bologna, Marta prese la valigia e ",
    "Il mare, quella mattina, era liscio come una lastra di vetro. I pescatori ",
    "Capitolo primo\n\nNessuno, in paese, ricordava l'inverno del 1947 senza un brivido. ",
    "«Hai visto Giulio?» chiese il maestro. «No», rispose il ragazzo, «ma so dove cercarlo.» ",
    "La biblioteca occupava tutto il secondo piano del palazzo, e vi si entrava da una scala ",
    "Ogni sera, alle sette in punto, il signor Ferri chiudeva il negozio e andava al caffè ",
    "Il vento soffiava dal lago e piegava le canne lungo la riva. Anna si strinse nel cappotto ",
    "Prima stesura:\n\nIl vecchio ponte di legno attraversava il fiume in tre campate. "
    "D'estate i ragazzi si tuffavano dalla campata centrale.\n\nSeconda stesura:\n\nIl vecchio ponte ",
    "Nel 1850 la città contava appena diecimila abitanti, quasi tutti contadini o artigiani. ",
    "Il medico posò lo stetoscopio e si sedette sul bordo del letto. «Signora», disse, ",
    "Sul tavolo della cucina c'era una lettera senza francobollo. Luca la rigirò tra le mani ",
    "La strada saliva tra i castagni fino al santuario, e a ogni curva si vedeva un po' più di valle. ",
    "Quella notte nessuno dormì alla fattoria. Il fienile bruciava ancora quando ",
    "«Domani partiamo», disse il padre. «Domani partiamo», ripeté la madre, e nessuno aggiunse altro. ",
    "Il professore entrò in aula con un pacco di compiti sotto il braccio e li posò sulla cattedra. ",
    "Era la prima volta che Sara vedeva la neve. Uscì in giardino a piedi nudi e ",
    "Il porto di Genova, all'alba, era un intrico di gru, di navi e di voci. ",
)
"""Italian openings of several kinds (narrative, dialogue, a letter, a recipe, two revisions, a
chronicle): the identity measurement's prompts, the speed benchmark's two first."""


class Run(NamedTuple):
    text: str
    done: GenerationDone
    events: list[TokenEvent]
    per_cpu_second: float
    """Decode tokens per second of the process's CPU time (every thread), counted as
    `decode_tokens_per_s` counts them: on a shared machine the wall clock moves with the load, the
    CPU time of one decode thread much less (a second thread's waits count as CPU while it spins)."""


def generate(
    engine: Engine,
    prompt: str,
    tokens: int,
    speculation: Speculation,
    settings: SamplerSettings = PRESETS["greedy"],
    top_n: int = 10,
) -> Run:
    engine.clear_cache()
    eos = engine.handles.lib.llama_vocab_eos(engine.handles.vocab)
    bias = LogitBias(entries=((int(eos), -100.0),))  # the same number of tokens every run
    settings = settings.with_changes(max_tokens=tokens)
    seen = []
    cpu = [0.0, 0.0]  # the process's CPU time at the first token and at the last
    with contextlib.closing(engine.generate(prompt, settings, bias, top_n=top_n, speculation=speculation)) as events:
        for event in events:
            seen.append(event)
            if isinstance(event, TokenEvent):
                cpu[event.index > 0] = time.process_time()
    done = seen[-1]
    assert isinstance(done, GenerationDone)
    events = [e for e in seen if isinstance(e, TokenEvent)]
    per_cpu_second = (len(events) - 1) / (cpu[1] - cpu[0]) if cpu[1] > cpu[0] else 0.0
    return Run("".join(e.text for e in events) + done.tail_text, done, events, per_cpu_second)


def parting(plain: list[TokenEvent], guessed: list[TokenEvent]) -> str:
    """Where two runs' tokens first differ (if they do), and how far apart their probabilities were
    before it: batched arithmetic against one token at a time."""
    same = 0
    while same < min(len(plain), len(guessed)) and plain[same].id == guessed[same].id:
        same += 1
    gap = max((abs(a.p - b.p) for a, b in zip(plain[:same], guessed[:same])), default=0.0)
    where = "never" if same == len(plain) == len(guessed) else f"at token {same}"
    return f"tokens part {where}; largest probability difference before that {gap * 100:.3f} points"


@dataclass(frozen=True)
class Flip:
    """Where a speculative generation first wrote another token than the plain one."""

    mode: str
    prompt: int
    index: int
    plain: TokenEvent
    guessed: TokenEvent

    def gap(self) -> tuple[float, float]:
        """How close the plain run's top two raw probabilities were (banned ones aside), in
        probability points and in logits: what a greedy flip needs to be a near-tie."""
        first, second = [c.p for c in self.plain.top if not c.banned][:2]
        return (first - second) * 100, math.log(first) - math.log(second)

    def moved(self) -> float:
        """The largest change, in probability points, of a candidate listed in both runs at that
        token: how far the batched row's numbers were from the one-token decode's."""
        theirs = {c.id: c.p for c in self.guessed.top}
        return max((abs(c.p - theirs[c.id]) * 100 for c in self.plain.top if c.id in theirs), default=math.nan)

    def describe(self) -> str:
        points, logits = self.gap()
        return (
            f"  {self.mode:7} prompt {self.prompt:2} token {self.index:3}: {self.plain.text!r} (p {self.plain.p:.4f}) "
            f"became {self.guessed.text!r} (p {self.guessed.p:.4f}); top two {points:.3f} points "
            f"({logits:.4f} logits) apart; the numbers moved by up to {self.moved():.3f} points"
        )


IDENTITY_TOP = 20
"""Candidates listed per token in --identity: the flipped tokens are among them."""


def identity(engine: Engine, args: argparse.Namespace, speculation: Speculation) -> int:
    """The share of generations whose text speculation changed, and how close the flips were."""
    prompts = IDENTITY_PROMPTS[args.first - 1 : args.first - 1 + args.prompts]
    modes = [("greedy", PRESETS["greedy"])] + [
        (f"sampled seed {seed}", PRESETS["prose"].with_changes(seed=seed)) for seed in range(1, args.seeds + 1)
    ]
    load = os.getloadavg()[0]
    print(f"identity: {len(prompts)} prompts x {len(modes)} modes, {args.tokens} tokens each, EOS banned")
    flips: list[Flip] = []
    counted = {"greedy": 0, "sampled": 0}
    passes = accepted = 0
    for number, prompt in enumerate(prompts, args.first):
        said = []
        for mode, settings in modes:
            plain = generate(engine, prompt, args.tokens, Speculation(), settings, IDENTITY_TOP).events
            _, done, guessed, _ = generate(engine, prompt, args.tokens, speculation, settings, IDENTITY_TOP)
            kind = mode.split()[0]
            counted[kind] += 1
            if done.speculation is not None:
                passes += done.speculation.passes
                accepted += done.speculation.accepted
            same = 0
            while same < min(len(plain), len(guessed)) and plain[same].id == guessed[same].id:
                same += 1
            said.append(f"{mode} " + ("same" if same == len(plain) else f"differs at {same}"))
            if same < len(plain):
                flips.append(Flip(kind, number, same, plain[same], guessed[same]))
                print(flips[-1].describe(), flush=True)
        print(f"prompt {number}: " + ", ".join(said), flush=True)
    print(f"date: {datetime.date.today()}; load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    print(f"{passes} verifying passes, {accepted} guesses accepted in all")
    for kind, total in counted.items():
        theirs = [flip for flip in flips if flip.mode == kind]
        said = f"{kind}: {len(theirs)} of {total} generations differ ({len(theirs) / max(total, 1):.0%})"
        if theirs:
            gaps = sorted(flip.gap()[0] for flip in theirs)
            moved = sorted(flip.moved() for flip in theirs)
            said += (
                f"; at the flip the top two {gaps[0]:.3f} to {gaps[-1]:.3f} points apart "
                f"(median {statistics.median(gaps):.3f}), the numbers moved by {moved[0]:.3f} to {moved[-1]:.3f} "
                f"points; first difference at token {min(f.index for f in theirs)}"
            )
        print(said)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=None, help="default: the demo model (Gemma 3 270M)")
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--threads", type=int, default=None, help="for every decode and batch (default: the app's choice)"
    )
    parser.add_argument("--draft-max", type=int, default=None, help="the app's default for the model unless given")
    parser.add_argument("--draft-model", type=Path, default=None, help="guess with this draft model, not lookup")
    parser.add_argument("--flash", choices=("on", "off", "auto"), default="auto", help="flash attention")
    parser.add_argument(
        "--repack",
        choices=("on", "off"),
        default="off",
        help="llama.cpp's repacked weights (use_extra_bufts); off as the app loads models",
    )
    parser.add_argument("--identity", action="store_true", help="count the texts speculation changed; time nothing")
    parser.add_argument("--prompts", type=int, default=len(IDENTITY_PROMPTS), help="--identity: how many prompts")
    parser.add_argument("--first", type=int, default=1, help="--identity: the first prompt (from 1)")
    parser.add_argument("--seeds", type=int, default=2, help="--identity: sampled generations per prompt")
    args = parser.parse_args()

    flash = {"on": True, "off": False, "auto": None}[args.flash]
    engine = Engine.load(
        LoadOptions(
            model_path=args.model or demo_model(),
            n_ctx=2048,
            n_threads=args.threads,
            n_threads_batch=args.threads,  # a verifying pass and a draft's batches too
            flash_attn=flash,
            repack_weights=args.repack == "on",
        )
    )
    guesser = "draft" if args.draft_model else "lookup"
    lookup = Speculation(guesser=guesser, draft_max=args.draft_max, draft_model=args.draft_model)
    lookup = lookup.for_model(engine.facts.tiled_weights)  # the length the app would draft with
    plain = Speculation()
    print(f"model: {engine.facts.name} ({engine.facts.file_type}, vocabulary {engine.n_vocab:,})")
    if args.identity:
        print(machine_facts())
        print(
            f"arithmetic: {engine.arithmetic.describe()}; {guesser}, draft max {lookup.draft_max}; "
            f"repacked weights {args.repack}; GGML_CPU_TILED_MM={os.environ.get('GGML_CPU_TILED_MM', 'unset')}"
        )
        try:
            return identity(engine, args, lookup)
        finally:
            engine.close()
    print(f"arithmetic: {engine.arithmetic.describe()}; draft max {lookup.draft_max}; {args.tokens} tokens, greedy")
    print(f"guesser: {lookup.describe()}; load average {os.getloadavg()[0]:.1f}")
    failed = False
    for name, prompt in (("(a) revision", REVISION), ("(b) free prose", FREE_PROSE)):
        generate(engine, prompt, 16, plain)  # warm-up
        rates: dict[str, list[float]] = {"plain": [], guesser: []}
        cpu_rates: dict[str, list[float]] = {"plain": [], guesser: []}
        texts: dict[str, str] = {}
        runs: dict[str, list[TokenEvent]] = {}
        counts = None
        for _ in range(args.rounds):  # interleaved, so drift of the machine hits both alike
            for label, speculation in (("plain", plain), (guesser, lookup)):
                text, done, events, per_cpu_second = generate(engine, prompt, args.tokens, speculation)
                runs.setdefault(label, events)
                rates[label].append(done.decode_tokens_per_s)
                cpu_rates[label].append(per_cpu_second)
                if texts.setdefault(label, text) != text:
                    print(f"  {label}: the text changed between rounds")
                if done.speculation is not None:
                    counts = done.speculation
        same = texts["plain"] == texts[guesser]
        failed |= not same
        base, fast = statistics.median(rates["plain"]), statistics.median(rates[guesser])
        ratios = sorted(a / b for a, b in zip(rates[guesser], rates["plain"]))  # round by round
        print(
            f"{name}: plain {base:.1f} tok/s, {guesser} {fast:.1f} tok/s: {fast / base:.2f}x "
            f"(rounds {ratios[0]:.2f}-{ratios[-1]:.2f}x); identical text: {same}"
        )
        base, fast = statistics.median(cpu_rates["plain"]), statistics.median(cpu_rates[guesser])
        ratios = sorted(a / b for a, b in zip(cpu_rates[guesser], cpu_rates["plain"]))
        print(
            f"  per CPU second: plain {base:.1f}, {guesser} {fast:.1f}: {fast / base:.2f}x "
            f"(rounds {ratios[0]:.2f}-{ratios[-1]:.2f}x)"
        )
        if counts is not None:
            print(f"  {counts.describe()}, {counts.passes} passes")
        print(f"  {parting(runs['plain'], runs[guesser])}")
        if not same:
            print(f"  plain:  {texts['plain']!r}\n  {guesser}: {texts[guesser]!r}")
    print(
        f"date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; load average {os.getloadavg()[0]:.1f}"
    )
    engine.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
