"""How long a key typed in the draft takes to reach the screen, by the size of the draft.

    .venv/bin/python bench/typing_speed.py [--keys 48] [--size 120x40] [--cases empty,160w,...] [-- ARGS FOR scriptorium]

(Not bench/typing.py, as the issue names it: a script's folder comes first on sys.path, and
a typing.py there stands in for Python's own `typing` in every benchmark of the folder.)

What the author waits for is the terminal drawing the letter. So the real `scriptorium`
command runs in a pseudo-terminal of this script's own (the demo model unless ARGS name
another, as the author starts it), and this script plays the terminal: it writes each key
as a terminal sends it and reads every byte the app writes back. It answers Textual's
question whether the terminal supports synchronized output ("yes"), so the app brackets
every frame it writes between ESC[?2026h and ESC[?2026l and each frame arrives whole. A
frame ends with the cursor moved to where the editor's cursor is, and a typed letter moves
that cursor: the key's paint is the first frame after the key whose cursor differs from
the one before it. Key-to-paint runs from writing the key to reading that frame's last
byte: Textual reading and parsing the key, the edit, every handler it wakes, laying out
and rendering the frame, and writing it, all counted (a terminal emulator's own drawing is
not: it does not depend on the draft).

Each case opens a draft of its own in a fresh scriptorium home, waits for the model to be
ready and the screen to settle, moves to the end of the draft (where one writes on), and
types an Italian sentence one key at a time, a little over 100 ms apart (about a fast
typist's pace), pausing a second after every 12 keys so that what waits for a pause in
the typing (the word count, the window marker, the autosave) runs, and the keys typed
after it meet whatever it left. The app's own CPU time over the typing and its pauses,
divided by the keys, is printed too: the work each key causes, deferred work included.
On a loaded machine CPU time still means something where wall time does not; the engine's
child process (which counts tokens for the window marker) is reported apart.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

SYNC_QUERY = b"\x1b[?2026$p"
SYNC_ANSWER = b"\x1b[?2026;2$y"
SYNC_END = b"\x1b[?2026l"
CURSOR_MOVE = re.compile(rb"\x1b\[(\d+);(\d+)H")
READY = b"kv heads"  # the model panel's facts line: the model is loaded
CTRL_END = b"\x1b[1;5F"
TYPED = "e la sera scese piano sul porto, tra le barche e le voci dei pescatori "

WORDS = (
    "la sera scese piano sul porto e le barche tornavano una dopo l'altra verso il molo "
    "Lucia guardava il mare dalla finestra della cucina pensando a suo padre che non era "
    "più tornato da quella notte di novembre quando il vento aveva strappato le reti così "
    "diceva la nonna ma nessuno in paese ci credeva davvero perché città però già perché "
    "ancora una volta il faro si accese e la luce passò sulle case bianche e sulle scale"
).split()


def prose(characters: int, seed: int) -> str:
    """Italian-looking sentences, `characters` long at least, ending with a full stop."""
    chooser = random.Random(seed)
    words: list[str] = []
    length = 0
    while length < characters:
        sentence = [chooser.choice(WORDS) for _ in range(chooser.randint(8, 22))]
        sentence[0] = sentence[0].capitalize()
        if len(sentence) > 10:
            sentence[len(sentence) // 2] += ","
        sentence[-1] += "."
        words.extend(sentence)
        length += sum(map(len, sentence)) + len(sentence)
    return " ".join(words)


def draft_of(case: str) -> str:
    if case == "empty":
        return ""
    if case == "160w":
        return " ".join(prose(1_200, 1).split()[:160]) + ".\n"
    if case == "9400w":
        paragraphs = [" ".join(prose(700, seed).split()[:78]) + "." for seed in range(120)]
        return "\n\n".join(paragraphs) + "\n"
    characters = {"5k": 5_000, "15k": 15_000, "100k": 100_000}[case]
    return prose(characters, 7)[:characters].rsplit(" ", 1)[0] + ".\n"


CASES = {
    "empty": "an empty draft",
    "160w": "160 words",
    "9400w": "9,400 words in 120 paragraphs",
    "5k": "a 5,000-character paragraph",
    "15k": "a 15,000-character paragraph",
    "100k": "a 100,000-character paragraph",
}


@dataclass
class Frame:
    ended: float
    cursor: tuple[int, int] | None


@dataclass
class Screen:
    """The terminal's side of the pseudo-terminal: answers the sync query, cuts frames."""

    fd: int
    frames: list[Frame] = field(default_factory=list)
    seen: bytearray = field(default_factory=bytearray)
    _pending: bytearray = field(default_factory=bytearray)
    _lock: threading.Condition = field(default_factory=threading.Condition)
    closed: bool = False

    def read_forever(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.5)
                if not ready:
                    continue
                data = os.read(self.fd, 1 << 16)
            except OSError:
                data = b""
            now = time.perf_counter()
            if not data:
                with self._lock:
                    self.closed = True
                    self._lock.notify_all()
                return
            if SYNC_QUERY in data:
                os.write(self.fd, SYNC_ANSWER)
            with self._lock:
                if len(self.seen) < 1 << 22:
                    self.seen += data
                self._pending += data
                while (end := self._pending.find(SYNC_END)) >= 0:
                    frame, self._pending = self._pending[:end], self._pending[end + len(SYNC_END) :]
                    moves = CURSOR_MOVE.findall(frame)
                    cursor = (int(moves[-1][0]), int(moves[-1][1])) if moves else None
                    self.frames.append(Frame(now, cursor))
                self._lock.notify_all()

    def wait(self, condition, timeout: float) -> bool:  # type: ignore[no-untyped-def]
        deadline = time.perf_counter() + timeout
        with self._lock:
            while not condition():
                left = deadline - time.perf_counter()
                if left <= 0 or self.closed:
                    return False
                self._lock.wait(left)
            return True

    def cursor(self) -> tuple[int, int] | None:
        with self._lock:
            for frame in reversed(self.frames):
                if frame.cursor is not None:
                    return frame.cursor
        return None

    def paint_after(self, sent: float, before: tuple[int, int] | None, timeout: float) -> float | None:
        """Seconds from `sent` to the end of the first frame after it that moved the cursor."""
        found: list[float] = []

        def moved() -> bool:
            for frame in reversed(self.frames):
                if frame.ended < sent:
                    break
                if frame.cursor is not None and frame.cursor != before:
                    found.append(frame.ended)
            return bool(found)

        if not self.wait(moved, timeout):
            return None
        return min(found) - sent


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if parent == pid:
                found.append(int(entry.name))
    return found


@dataclass
class Result:
    delays: list[float]
    missed: int
    app_cpu_per_key: float
    engine_cpu_per_key: float


def run_case(case: str, keys: int, size: tuple[int, int], extra: list[str]) -> Result:
    import fcntl
    import termios

    command = shutil.which("scriptorium", path=str(Path(sys.executable).parent)) or "scriptorium"
    with tempfile.TemporaryDirectory() as home:
        draft = Path(home) / "draft.md"
        draft.write_text(draft_of(case), encoding="utf-8")
        master, slave = os.openpty()
        columns, rows = size
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        env = {**os.environ, "SCRIPTORIUM_HOME": home, "TERM": "xterm-256color", "COLORTERM": "truecolor"}
        process = subprocess.Popen(
            [command, str(draft), *extra], stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
        )
        os.close(slave)
        screen = Screen(master)
        threading.Thread(target=screen.read_forever, daemon=True).start()
        try:
            if not screen.wait(lambda: READY in screen.seen, 180):
                raise SystemExit(f"typing_speed.py: the model never showed as ready ({case})")
            time.sleep(2.0)  # the load's follow-ups: the first window marker, the first autosave
            return type_keys(screen, process.pid, master, keys)
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            os.close(master)


def type_keys(screen: Screen, pid: int, master: int, keys: int) -> Result:
    def press(key: bytes) -> float | None:
        before = screen.cursor()
        sent = time.perf_counter()
        os.write(master, key)
        return screen.paint_after(sent, before, 10.0)

    press(CTRL_END)
    time.sleep(1.0)
    engines = children_of(pid)
    app_before, engine_before = cpu_seconds(pid), sum(map(cpu_seconds, engines))
    delays: list[float] = []
    missed = 0
    jitter = random.Random(3)
    for number in range(keys):
        delay = press(TYPED[number % len(TYPED)].encode("utf-8"))
        if delay is None:
            missed += 1
        else:
            delays.append(delay)
        time.sleep(1.0 if (number + 1) % 12 == 0 else 0.1 + jitter.random() * 0.03)
    time.sleep(1.0)  # the last pause's deferred work
    return Result(
        delays,
        missed,
        (cpu_seconds(pid) - app_before) / keys,
        (sum(map(cpu_seconds, engines)) - engine_before) / keys,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=48)
    parser.add_argument("--size", default="120x40", help="terminal COLUMNSxROWS")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES))
    parser.add_argument("args", nargs="*", help="arguments for scriptorium (after --)")
    args = parser.parse_args()
    columns, rows = (int(part) for part in args.size.lower().split("x"))
    print(f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f} at the start; terminal {columns}x{rows}")
    print(f"{'draft':32} {'median':>8} {'worst':>8} {'app CPU/key':>12} {'engine CPU/key':>15}")
    for case in args.cases.split(","):
        result = run_case(case, args.keys, (columns, rows), args.args)
        if not result.delays:
            print(f"{CASES[case]:32} no key reached the screen")
            continue
        print(
            f"{CASES[case]:32} {statistics.median(result.delays) * 1000:6.1f} ms {max(result.delays) * 1000:6.1f} ms "
            f"{result.app_cpu_per_key * 1000:9.1f} ms {result.engine_cpu_per_key * 1000:12.1f} ms"
            + (f"   ({result.missed} keys never painted)" if result.missed else ""),
            flush=True,
        )
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
