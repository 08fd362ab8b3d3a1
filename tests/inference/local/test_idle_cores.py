"""The idle cores read from /proc/stat's per-core lines, between two readings."""

from __future__ import annotations

import sys
import time

import pytest

from scriptorium.inference.core.load_options import usable_cores
from scriptorium.inference.local.idle_cores import IdleCores


def stat(*cores: tuple[int, int, int]) -> str:
    """A /proc/stat with each core's (busy, idle, steal) ticks, as the kernel writes it."""
    lines = ["cpu  1 2 3 4 5 6 7 8 0 0"]
    for number, (busy, idle, steal) in enumerate(cores):
        # user nice system idle iowait irq softirq steal guest guest_nice
        lines.append(f"cpu{number} {busy} 0 0 {idle} 0 0 0 {steal} 0 0")
    lines.append("intr 12345 0 0")
    return "\n".join(lines) + "\n"


def readings(*texts: str | None):
    queue = list(texts)
    return lambda: queue.pop(0)


def test_a_core_idle_beside_a_busy_one_reads_one() -> None:
    idle = IdleCores([0, 1], readings(stat((100, 0, 0), (0, 100, 0)), stat((200, 0, 0), (0, 200, 0))))
    assert idle.sample() == pytest.approx(1.0)


def test_only_the_process_s_own_cores_count() -> None:
    # Core 2, idle throughout, is not one this process may run on.
    idle = IdleCores(
        [0, 1], readings(stat((0, 0, 0), (0, 0, 0), (0, 0, 0)), stat((75, 25, 0), (100, 0, 0), (0, 100, 0)))
    )
    assert idle.sample() == pytest.approx(0.25)


def test_time_a_virtual_machine_s_neighbours_took_is_not_idle() -> None:
    idle = IdleCores([0], readings(stat((0, 0, 0)), stat((20, 30, 50))))
    assert idle.sample() == pytest.approx(0.3)


@pytest.mark.parametrize(
    "second",
    [None, stat((0, 0, 0)), "cpu0 a b c\n"],
    ids=["unreadable", "no tick passed", "garbled"],
)
def test_no_reading_says_none(second: str | None) -> None:
    assert IdleCores([0], readings(stat((0, 0, 0)), second)).sample() is None


def test_a_core_missing_from_the_file_says_none() -> None:
    assert IdleCores([0, 5], readings(stat((0, 0, 0)), stat((10, 10, 0)))).sample() is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/stat is Linux's")
def test_on_linux_this_process_s_cores_are_read() -> None:
    reading = IdleCores.of_this_process()
    started = time.monotonic()
    while time.monotonic() - started < 0.1:  # ten of /proc/stat's hundredths, on one core
        pass
    value = reading.sample()
    assert value is not None and 0.0 <= value <= usable_cores()
