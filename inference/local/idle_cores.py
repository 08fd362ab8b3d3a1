"""How many of the process's cores the machine left idle lately, read from Linux's /proc/stat.

The thread chooser (thread_choice.py) learns of load that comes from its own steps slowing
down. Load that leaves while it runs fewer threads than cores it cannot see that way: one
thread decoded as fast beside one competing process as on a quiet machine, so when the
process ended nothing changed for it, and only a probe of two threads, due after the doubled
waits of the busy minutes, found the free core (bench/busy.py, 2026-12-04: the interface's
rounds after the busy ones ran 243 steps on one thread, 0.74 of two). The cores' idle time
says it at once.

Where there is no /proc/stat (macOS, Windows) `IdleCores.sample` says None, and the chooser
probes as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Collection

from ..core.load_options import usable_cpus

PROC_STAT = Path("/proc/stat")
IDLE_FIELDS = (3, 4)
"""idle and iowait, of user nice system idle iowait irq softirq steal: time no process had the core."""
COUNTED_FIELDS = 8
"""The fields up to steal (time a virtual machine's neighbours took) make up the core's time."""


def _read_proc_stat() -> str | None:
    try:
        return PROC_STAT.read_text()
    except OSError:
        return None


class IdleCores:
    """The idle cores among `cpus` between one `sample` and the next."""

    def __init__(self, cpus: Collection[int], read: Callable[[], str | None] = _read_proc_stat) -> None:
        self._names = {f"cpu{cpu}" for cpu in cpus}
        self._read = read
        self._last: tuple[int, int] | None = self._totals()

    @classmethod
    def of_this_process(cls) -> "IdleCores":
        """The cores this process may run on, as "every core" counts them."""
        return cls(usable_cpus())

    def _totals(self) -> tuple[int, int] | None:
        """(idle, all) ticks summed over the cores, or None where /proc/stat cannot be read."""
        text = self._read()
        if text is None:
            return None
        idle = total = 0
        seen = 0
        for line in text.splitlines():
            name, _, rest = line.partition(" ")
            if name not in self._names:
                continue
            try:
                ticks = [int(field) for field in rest.split()[:COUNTED_FIELDS]]
            except ValueError:
                return None
            idle += sum(ticks[i] for i in IDLE_FIELDS if i < len(ticks))
            total += sum(ticks)
            seen += 1
        return (idle, total) if seen == len(self._names) else None

    def sample(self) -> float | None:
        """Cores idle on average since the last sample (0 to len(cpus)); None when unknown or
        when no tick has passed."""
        now, before = self._totals(), self._last
        self._last = now
        if now is None or before is None or now[1] <= before[1]:
            return None
        return (now[0] - before[0]) / (now[1] - before[1]) * len(self._names)
