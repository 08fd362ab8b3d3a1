"""How many threads llama.cpp runs, chosen by measurement while it writes.

llama.cpp's threads wait for each other at every step of a token's graph: when one of
them loses its core to another process (a browser, a compile, the app's own drawing), all
of them wait. On a busy 2-core machine two threads then decode at a third of the speed of
one (issue 33's figures: 0.5-17 tok/s against 22-23). llama.cpp lets a context change its
thread counts between two decodes (`llama_set_n_threads`), so the engine keeps the count
that is faster now, and keeps checking, because load comes and goes.

`ThreadChooser` is that decision, a plain object fed seconds per token: it exploits the
best known count, and now and then tries a neighbouring count for a few steps, keeping
it only when it was clearly faster than the count in use just before. A probe starts
when its period has passed (the period doubles each time the probe loses, up to a
ceiling) and the count it tries is no longer barred (a count that lost waits for its cost
to fall under PROBE_BUDGET, and twice as long at each loss in a row: on a steady machine
the probes thin out to one every max_period) or sooner, when the count in use
suddenly runs slower (load came: fewer threads are tried) or faster (it left: more are)
than it settled at, but never sooner than the shortest period after the last probe: the
count can never change more often than that. Two probe steps twice as slow as the count
in use end the probe, since on a busy machine the count tried can be many times slower, and
two kept steps both slower by the margin end it too: it has lost. A
probe and the count in use are compared by their mean step without the slowest few
(`pace`): the mean is the speed, and under load several threads' steps come in two kinds
that a median hides; a probe that wins is measured a few steps longer before its count is
kept (`confirm`), since a short run of lucky steps also wins. Below every core, a core the
machine leaves idle (idle_cores.py, read every IDLE_EVERY steps) sets off a probe of more
threads as soon as the shortest period allows: load that left cannot slow or speed the
count in use. Decode (one token per llama_decode, `n_threads`) and prompt batches
(`n_threads_batch`) have a chooser each, since prefill is compute-bound and decode
memory-bound. `ThreadTuner` holds both, applies a change through a callback, and says
what is in use as a `ThreadsChosen` event. A fixed count (`threads = N`, `--threads N`)
makes both choosers fixed: they never probe.
"""

from __future__ import annotations

import statistics
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable, Sequence

from ..core.events import ThreadsChosen


@dataclass(frozen=True, slots=True)
class Probe:
    """One probe as it ended: what bench/busy.py prints to say why auto kept the count it kept."""

    sample: int
    """The chooser's sample count when it ended."""
    tried: int
    best: int
    """The count in use it was measured against."""
    tried_seconds: float
    """Per sample: the median of its kept samples, or its fastest step when abandoned."""
    best_seconds: float
    """The count in use's speed before the probe (the median of its recent samples)."""
    abandoned: bool
    won: bool


PROBES_KEPT = 64
"""Probes a chooser remembers (Probe): a few hundred tokens' worth on a machine whose load swings."""


@dataclass(frozen=True, slots=True)
class ProbeSchedule:
    """When and how long a chooser tries another count, in samples (decode steps or batches)."""

    min_period: int
    """Samples at the count in use between the end of one probe and the start of the next,
    at the least: the count never changes more often than every `min_period + warmup + length`."""
    max_period: int
    """The longest wait between two probes, reached by doubling after each lost probe."""
    length: int
    """Samples a probe keeps to judge the count it tries."""
    confirm: int
    """Samples more a probe that is winning keeps before the count it tries is kept; it ends,
    lost, at the first of them after which it no longer wins."""
    warmup: int
    """Samples a probe throws away first (OpenMP resizing its team of threads)."""
    recent: int
    """Samples at the count in use that its speed now is judged from (their median)."""
    margin: float
    """How much faster a tried count must be to be kept: noise never moves the choice."""
    change: float
    """The count in use running this much slower or faster than it settled at (median of
    `recent`) means the load changed: a probe starts as soon as `min_period` allows."""


DECODE_SCHEDULE = ProbeSchedule(
    min_period=32, max_period=512, length=4, warmup=1, confirm=8, recent=9, margin=0.10, change=1.3
)
"""Decode steps. On the quiet 2-core machine scriptorium's engine decodes Gemma 3 270M on one
thread at about 0.62 of two (30 tok/s against 48): a probe of it, beaten on its first two kept
steps, ends after 3, and one every 512 costs 0.6 x 3 / 515, about 0.35%; the waits get there
by doubling (PROBE_BUDGET).

Why `confirm`: with one competing process on 2 cores, two threads' steps are fast while the
other process is off the cores and several times slower while a thread waits for one; four
steps that fell mostly fast won now and then (25.3 against one thread's 28.7 ms), and some
37 steps at two threads passed before a probe brought one back (bench/busy.py, 2026-12-04:
auto at 0.76 of one thread). Eight steps more, while it still wins, catch most such draws
for the cost of the slow steps among them. A losing probe ends as before, so a quiet machine
pays nothing, nor does a count that is really faster: its extra steps run at its speed."""
PREFILL_SCHEDULE = ProbeSchedule(
    min_period=4, max_period=64, length=1, warmup=0, confirm=0, recent=3, margin=0.10, change=1.3
)
"""Prompt batches (only those of PREFILL_MIN_TOKENS or more count): one batch tried, since
a prompt is a few batches. Prefill is compute-bound, so a batch on half the cores takes
about twice as long: one in 64 costs about 1.5%."""
ABANDON = 2.0
"""A probe whose steps were all this many times slower than the count in use ends: lost."""
ABANDON_AFTER = 2
"""Steps a probe takes before it can be abandoned: one alone may have lost its core for a moment."""
CHANGED_LOAD_BAR = 4 * DECODE_SCHEDULE.min_period
"""Samples a count above the one in use, barred by its probing budget, still waits once the
load has left, at most (fewer threads, once load has come, wait no more); and no longer than
its last loss alone barred it for: the doubled wait of losses in a
row (PROBE_BUDGET) was earned under the old load, and is cut short. The losses stay counted:
a probe that the change set off and that loses again says the change did not favour that
count (noise moved the median, or load that slows every count alike), so its next wait
doubles on; a probe that wins forgets them all."""
FIRST_PROBE_AFTER = 3
"""Steps at the starting count (every core) before the first probe."""
PROBE_BUDGET = 0.02
"""The share of time one lost probe may cost: a count that lost by a factor r over s steps
is not tried again for (r - 1) x s / PROBE_BUDGET steps, and each further loss in a row at
the same load doubles that wait (up to max_period, or the single wait if that is longer).
On a machine where every core is taken, two threads ran 13 times slower than one: each
probe of them costs 12 steps' time.

Why the doubling: the wait alone spends exactly PROBE_BUDGET, for ever, on a machine that
never changes. On the quiet 2-core machine scriptorium's engine decodes Gemma 3 270M 1.5-1.6x
slower on one thread than on two (30 tok/s against 46-49 in bench/busy.py), so each probe of
one thread (5 steps) costs 2.5-3 steps and was repeated every 125-150 steps: 2-3% of every
generation of a hundred tokens (bench/busy.py read 0.92 of the engine fixed at 2 threads;
issue 33 asks for 0.97). Doubled, the probes
came at about 3, 160, 450, 970 and then every max_period steps: about 0.6% for good, and
one probe in the 300 steps after the first hundred. Now that a beaten probe ends after three
steps and the first, a hint, is tried again (`_retry`), they come at 3, 40, 170, 430 and then
every max_period: replayed, 0.4% of the time after the first hundred steps. A change of load cuts a doubled wait
short (CHANGED_LOAD_BAR), so load that comes or goes is still tried for as soon as before."""
FREE_CORE = 0.7
"""Idle cores (of the process's own, on average since the last reading) that say one is free:
below every core, more threads are then tried at once (idle_cores.py says why). Not 1: the
app's interface and the machine's daemons take a few percent of it."""
IDLE_EVERY = 16
"""Decode steps between two readings of the idle cores: /proc/stat counts in hundredths of a
second, so a reading spans a few dozen of them."""
DECODING_SHARE = 1.25
"""A reading of the idle cores counts when the time since the last one was at most this many
times its decode steps' (plus 50 ms): the sampling and the interface's work between steps."""
PACE_STEPS = 32
"""Steps of the count in use a probe is measured against: enough that dropping the slowest
sixteenth (`pace`) leaves a load that slows a third of the steps in the mean."""
PREFILL_MIN_TOKENS = 32
"""Smaller batches (re-continuing after a few words) are timed mostly by their overhead."""


def probe_ladder(cores: int) -> tuple[int, ...]:
    """The counts a chooser moves between: every count up to 4 cores, then a few steps
    (a quarter, half, three quarters, all but one, all), so that moving from every core to
    half of them takes a few probes, not dozens."""
    if cores <= 4:
        return tuple(range(1, cores + 1))
    return tuple(sorted({1, 2, cores // 4, cores // 2, 3 * cores // 4, cores - 1, cores} - {0}))


class ThreadChooser:
    """Which thread count runs the next samples, from the time the last ones took.

    Feed it with `record(seconds)` after each sample, run at `threads`; when it returns
    True, `threads` changed and the caller applies it before the next sample."""

    def __init__(self, cores: int, *, fixed: int | None = None, schedule: ProbeSchedule = DECODE_SCHEDULE) -> None:
        self.cores = max(1, cores)
        self.fixed = fixed
        self._schedule = schedule
        self._ladder = probe_ladder(self.cores)
        self._best = fixed or self.cores
        self._recent: deque[float] = deque(maxlen=schedule.recent)
        self._pace: deque[float] = deque(maxlen=PACE_STEPS)
        """The count in use's last steps, for its speed against a probe's (`pace`)."""
        self._settled: float | None = None
        self._period = schedule.min_period
        self._since_probe = 0
        self._retry: bool | None = None
        """A side to try once the shortest period has passed, whatever the period (True: fewer
        threads, False: more): a probe lost narrowly against a few steps of the count in use,
        or a core that became free."""
        self._free: bool | None = None
        """Below every core, whether the last reading of the idle cores found one free (None: no
        reading). Where none is free, more threads are not tried."""
        self._probed_since_reading = False
        """A probe ran since the last reading of the idle cores: its own threads are in it."""
        self._probing: int | None = None
        self._probe_seen = 0
        self._probe_samples: list[float] = []
        self._probe_fastest = 0.0
        self._probes = 0
        self._not_before: dict[int, int] = {}
        """Per count, the sample before which it is not tried again (PROBE_BUDGET)."""
        self._single_bar: dict[int, int] = {}
        """Per count, the sample its last loss alone barred it until (no doubling)."""
        self._losses: dict[int, int] = {}
        """Per count, the probes it lost in a row at the load of now: its wait doubles with each."""
        self.samples = 0
        self.switches: list[int] = []
        """The sample numbers at which the count in use changed (tests read its spacing)."""
        self.probes: deque[Probe] = deque(maxlen=PROBES_KEPT)
        """The last probes, as they ended."""
        self.reason = "set" if fixed else ("one core" if self.cores == 1 else "measuring")
        """Why the count in use is the count: 'set', 'measuring', '2 were slower while other work ran'..."""

    @property
    def auto(self) -> bool:
        return self.fixed is None and self.cores > 1

    @property
    def threads(self) -> int:
        """The count for the next sample."""
        return self._probing if self._probing is not None else self._best

    @property
    def best(self) -> int:
        """The count chosen (not the one being tried)."""
        return self._best

    def record(self, seconds: float, idle: float | None = None) -> bool:
        """One sample, run at `threads`, took `seconds` (per token); True when `threads` changed.
        `idle`: the cores the machine left idle since the last reading (None: no reading)."""
        self.samples += 1
        if not self.auto or seconds <= 0:
            return False
        if idle is not None:
            self._saw_idle(idle)
        if self._probing is not None:
            return self._probe_sample(seconds)
        self._recent.append(seconds)
        self._pace.append(seconds)
        self._since_probe += 1
        if not self._probes:
            # The first probe comes as soon as the speed in use is roughly known: on a machine
            # whose cores are all taken, every step of a wrong start costs many.
            return len(self._recent) >= min(FIRST_PROBE_AFTER, self._schedule.recent) and self._start_probe()
        if len(self._recent) < self._recent.maxlen or self._since_probe < self._schedule.min_period:
            return False
        now = statistics.median(self._recent)
        if self._settled is None:
            self._settled = now
        # Slower than it settled at: load came, fewer threads may do better; faster: it
        # left, more may. Only that side is tried: the other would be slower still, and a
        # probe of an overloaded count costs the most (2 threads ran 8x slower than 1 here).
        slower, faster = now >= self._settled * self._schedule.change, now * self._schedule.change <= self._settled
        if slower or faster:
            # The load changed: what a count on that side lost before was measured under the
            # old load. Kept whole, its bar held the count that became the faster off for up
            # to a thousand tokens: after every core was taken, two threads were not tried
            # again once the load left (bench/busy.py read 0.60 of the best). When the load
            # left, more threads are cut short, not lifted: on a machine whose load swings, each
            # swing would try an overloaded count again (abandoned after a step, but a step many
            # times slower). When it came, fewer threads are lifted: they were slower on a quiet
            # machine, by less than 2x, and a probe of them costs little, while a quiet probe lost
            # just before the load came barred one thread for up to 90 steps of it.
            for count, until in self._not_before.items():
                if slower and count < self._best:
                    self._not_before[count] = self.samples
                elif faster and count > self._best:
                    self._not_before[count] = min(until, self._single_bar[count], self.samples + CHANGED_LOAD_BAR)
            # The probe is judged against the speed under the new load, not a mean with the old.
            self._pace.clear()
            self._pace.extend(self._recent)
            if self._start_probe(fewer=slower):
                return True
            if not any((n < self._best) == slower for n in self._ladder if n != self._best):
                self._settled = now  # no side to try: this speed is the one changes are judged from
            return False
        if self._retry is not None:
            fewer, self._retry = self._retry, None
            return self._start_probe(fewer=fewer)
        return self._since_probe >= self._period and self._start_probe()

    def _saw_idle(self, idle: float) -> None:
        """A core that became free, below every core: more threads are tried as soon as the
        shortest period allows, their bars lifted (they were earned while it was taken). Only
        as it becomes free: a machine where more threads lose with a core idle is not probed
        again for it. While no core is free, more threads are not tried at all: every core is
        someone's, and a probe of two threads beside two competing processes took 0.9 and 2.2 s
        a step (bench/busy.py, 2026-12-04: auto at 0.50 of one thread). A reading that a probe
        ran through holds the probe's own threads: it says nothing."""
        if self._probing is not None or self._probed_since_reading:
            self._probed_since_reading = self._probing is not None
            return
        free = self._best < self.cores and idle >= FREE_CORE
        if free and self._free is False:
            for count in self._not_before:
                if count > self._best:
                    self._not_before[count] = self.samples
            self._retry = False
        self._free = free

    def _ceiling(self) -> int:
        """The longest a doubled wait grows: max_period at every core, half of it below.

        Below every core, a probe looks for load that has left, and the count in use cannot see
        it: one thread decoded as fast beside one competing process as on a quiet machine, so
        no change of speed set off a probe when the process ended, and after the doubled waits
        of its narrow losses under that load two threads came back 181 steps into the quiet
        (bench/busy.py, 2026-12-04: auto at 0.87 of them). A probe of more threads on a loaded
        machine costs little (two slow steps end it), and an overloaded count's single wait,
        many times longer, is still kept whole. Not shorter: under one competing process a
        probe of two threads now and then wins on lucky steps, and a quarter of max_period let
        such draws cost up to a tenth of one thread's speed in the replays."""
        schedule = self._schedule
        return schedule.max_period if self._best >= self.cores else max(schedule.min_period, schedule.max_period // 2)

    def _candidates(self) -> list[int]:
        """The counts a probe may try from `best`, in turn: one step fewer (load is what
        there usually is to find), one step more, and half as many. The jump matters on
        many cores: with half of them busy, every count above the free ones collapses
        alike, and a step at a time would find no neighbour faster."""
        ladder, best = self._ladder, self._best
        if self._free is False:
            ladder = tuple(n for n in ladder if n <= best)  # no core free for more (`_saw_idle`)
        place = ladder.index(best) if best in ladder else len(ladder) - 1
        half = min(ladder, key=lambda n: abs(n - best / 2))
        steps = [ladder[place - 1] if place > 0 else None, ladder[place + 1] if place + 1 < len(ladder) else None, half]
        return list(
            dict.fromkeys(
                n for n in steps if n is not None and n != best and self._not_before.get(n, 0) <= self.samples
            )
        )

    def _start_probe(self, *, fewer: bool | None = None) -> bool:
        candidates = [n for n in self._candidates() if fewer is None or (n < self._best) == fewer]
        if not candidates:
            return False
        self._probing = candidates[self._probes % len(candidates)]
        self._probed_since_reading = True
        self._probes += 1
        self._probe_seen = 0
        self._probe_samples = []
        return True

    def _probe_sample(self, seconds: float) -> bool:
        self._probe_seen += 1
        before_time = pace(self._pace)
        # Every step so far twice as slow as the count in use (the warm-up's too), two at the
        # least, ends the probe: an overloaded count is not waited on for the rest of its
        # steps, while one step that lost its core for a moment (they come on any machine)
        # ends nothing, the first one included: alone, it ended a quiet machine's probe and
        # barred the count it tried for some 800 steps.
        self._probe_fastest = min(self._probe_fastest, seconds) if self._probe_seen > 1 else seconds
        abandoned = self._probe_seen >= ABANDON_AFTER and self._probe_fastest > ABANDON * before_time
        if not abandoned and self._probe_seen <= self._schedule.warmup:
            return False
        self._probe_samples.append(seconds)
        kept = len(self._probe_samples)
        # Its kept steps all slower than the count in use by the margin, two at the least: it has
        # lost, and its other steps would only cost more. On the quiet 2-core machine a probe of
        # one thread (1.8x slower a step) so costs 2.4 steps' time instead of 4.
        beaten = kept >= ABANDON_AFTER and min(self._probe_samples) > before_time * (1.0 + self._schedule.margin)
        if not (abandoned or beaten) and kept < self._schedule.length:
            return False
        tried, before = self._probing, self._best
        assert tried is not None
        tried_time = self._probe_fastest if abandoned else pace(self._probe_samples)
        won = not abandoned and tried_time < before_time * (1.0 - self._schedule.margin)
        if won and kept < self._schedule.length + self._schedule.confirm:
            return False  # winning: measured longer before it is kept (`confirm`)
        self._probing = None
        self._since_probe = 0
        self.probes.append(Probe(self.samples, tried, before, tried_time, before_time, abandoned, won))
        if won:
            self._best = tried
            self._recent.clear()
            self._recent.extend(self._probe_samples)
            self._pace.clear()
            self._pace.extend(self._probe_samples)
            self._settled = None  # settles again at the new count
            self._period = self._schedule.min_period
            self._losses.clear()  # lost against another count, or under another load
            self.switches.append(self.samples)
            self.reason = _slower(before, tried)
        else:
            self._settled = before_time
            self._period = min(self._period * 2, self._ceiling())
            lost = max(0.0, tried_time / before_time - 1.0) * self._probe_seen
            bar = min(int(lost / PROBE_BUDGET), 2 * self._schedule.max_period)
            losses = self._losses.get(tried, 0)
            if not abandoned and len(self._pace) < PACE_STEPS:
                # Judged against a few steps of the count in use (at the start, or since the load
                # changed), a narrow loss is a hint, not a loss: with one competing process two
                # threads' first three steps fell fast, one thread lost to them by 1.7x and was
                # barred for some 170 steps of two threads averaging 1.5x its time. It is tried
                # again once, as soon as the shortest period allows (`_retry`), against the count
                # in use known by then. A count twice as slow (abandoned) is barred as it earned.
                bar, losses = min(bar, self._schedule.min_period), 0
                self._retry = tried < before
            else:
                # Lost again at the same load: the count is no better than it was, and the wait
                # doubles (PROBE_BUDGET says why), up to max_period; a single wait longer than that
                # (an overloaded count, many times slower) is kept as it is, never doubled.
                self._losses[tried] = losses + 1
            self._single_bar[tried] = self.samples + bar
            self._not_before[tried] = self.samples + min(bar << min(losses, 16), max(bar, self._ceiling()))
            self.reason = _slower(tried, before)
        return True  # back to the count in use, or on at the tried one: either way a change from the probe's


def pace(seconds: Sequence[float]) -> float:
    """A count's time per step, as a probe and the count in use are compared: the mean of its
    steps but the slowest sixteenth (at least the slowest one).

    The mean, because it is the speed. With one competing process two threads' steps on 2
    cores come in two kinds, about 17 ms while the other process is off the cores and several
    times that while a thread waits for its core: the median of nine read 24-32 ms where they
    averaged over 45, and one thread's steady 28 ms lost to it for 276 steps (bench/busy.py,
    2026-12-04: auto at 0.69 of one thread). Without the slowest steps, because a step that
    lost its core for a moment comes on any machine and would move a mean of a few steps by
    much: dropped, it moves nothing, while steps that are slow a third of the time stay."""
    if len(seconds) < 2:
        return sum(seconds) / max(len(seconds), 1)
    dropped = max(1, len(seconds) // 16)
    kept = sorted(seconds)[: len(seconds) - dropped]
    return sum(kept) / len(kept)


def _slower(slower: int, kept: int) -> str:
    """The reason a count is kept: another one measured slower."""
    verb = "was" if slower == 1 else "were"
    if slower > kept:
        return f"{slower} {verb} slower while other work ran"
    return f"{slower} {verb} slower"


class ThreadTuner:
    """The thread counts of one llama.cpp context: a chooser for decode steps, one for
    prompt batches, and `apply(n_threads, n_threads_batch)` to set both between decodes."""

    def __init__(
        self,
        apply: Callable[[int, int], None],
        cores: int,
        *,
        fixed: int | None = None,
        fixed_batch: int | None = None,
        idle: Callable[[], float | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._apply = apply
        self._idle = idle
        """Reads the cores the machine left idle since its last call (idle_cores.py), or None."""
        self._clock = clock
        self._steps = 0
        self._stepped = 0.0
        """Seconds of decode steps since the last reading of the idle cores."""
        self._read_at = clock()
        self.decode = ThreadChooser(cores, fixed=fixed, schedule=DECODE_SCHEDULE)
        self.prefill = ThreadChooser(cores, fixed=fixed_batch, schedule=PREFILL_SCHEDULE)
        self._applied = (self.decode.threads, self.prefill.threads)
        self._announced = self.chosen()

    def decoded(self, seconds: float) -> ThreadsChosen | None:
        """A decode step took `seconds`: a ThreadsChosen when the choice in use changed."""
        self._steps += 1
        self._stepped += seconds
        idle = self._read_idle() if self._idle is not None and self._steps % IDLE_EVERY == 0 else None
        if not self.decode.record(seconds, idle):
            return None
        return self._changed()

    def _read_idle(self) -> float | None:
        """The idle cores since the last reading, or None where the reading spans more than
        decoding (a pause between generations, a prompt): the engine's own cores were idle
        then, or both busy with a prompt's batch, and neither says what the machine leaves
        to decoding. Decoding is the steps' time and a little between them."""
        assert self._idle is not None
        idle, now = self._idle(), self._clock()
        decoding = now - self._read_at <= DECODING_SHARE * self._stepped + 0.05
        self._read_at, self._stepped = now, 0.0
        return idle if decoding else None

    def prefilled(self, tokens: int, seconds: float) -> ThreadsChosen | None:
        """A prompt batch of `tokens` took `seconds`."""
        if tokens < PREFILL_MIN_TOKENS or not self.prefill.record(seconds / tokens):
            return None
        return self._changed()

    def _changed(self) -> ThreadsChosen | None:
        """Apply what the choosers run next (a probe's count too); announce only a new choice."""
        wanted = (self.decode.threads, self.prefill.threads)
        if wanted != self._applied:
            self._apply(*wanted)
            self._applied = wanted
        chosen = self.chosen()
        if chosen == self._announced:
            return None
        self._announced = chosen
        return chosen

    def chosen(self) -> ThreadsChosen:
        """What is in use now, and why: the chosen counts (a probe under way is not a choice)."""
        return ThreadsChosen(
            n_threads=self.decode.best,
            n_threads_batch=self.prefill.best,
            cores=self.decode.cores,
            auto=self.decode.auto,
            reason=self.decode.reason,
            reason_batch=self.prefill.reason,
        )
