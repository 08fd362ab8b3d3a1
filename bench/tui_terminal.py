"""The real `scriptorium` command in a real terminal, against plain llama.cpp at its best.

    .venv/bin/python bench/tui_terminal.py --model PATH [--tokens 256] [--rounds 5]

tui_stream.py runs the app headless: Textual composes its frames there but writes none
to a terminal. Here the command runs in tmux (200x50, a terminal emulator of its own),
so every frame is also turned into escape sequences, written, and drawn by the
terminal, all on the cores llama.cpp's threads use, as on the author's machine.

Each round, back to back:
  - reference: plain llama.cpp at its best (reference.py), in this process, while the
    app waits idle in its terminal;
  - app: Ctrl+G continues the draft (greedy, the same prompt); the decode speed is read
    from the app's Speed panel once it finishes, the figure the author reads (llama.cpp's
    loop's own, GenerationDone's); Escape rejects the suggestion for the next round.
The screen is read only when the generation should be over (from the reference's speed),
so watching it costs the decode nothing. The CPU the app's process and the terminal
(the tmux server) used while the app streamed is reported too.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from reference import Reference, machine_facts, parse_run_arguments, ratio_summary, run_arguments

from scriptorium import prompts
from scriptorium.app.config import prompt_templates
from scriptorium.app import paths
from scriptorium.app.config.tui_settings import TuiSettings

DRAFT = (
    "La mattina del primo giorno di scuola, Marta uscì di casa prima del solito. "
    "Il cielo era ancora grigio e le strade erano vuote. "
)
DECODE = re.compile(r"decode\s+([\d,]+\.\d) tok/s")
FINISHED = re.compile(r"Speed · (length|eos|stop|context)")


class Terminal:
    """A tmux server of our own (its own socket) with one session."""

    def __init__(self, tmux: str) -> None:
        self._tmux = tmux
        self._socket = f"scriptorium-bench-{os.getpid()}"

    def run(self, *args: str) -> str:
        return subprocess.run(
            [self._tmux, "-L", self._socket, *args], check=True, capture_output=True, text=True, timeout=30
        ).stdout

    def start(self, command: str, env: dict[str, str], width: int, height: int) -> None:
        exports = " ".join(f"{name}={shlex.quote(value)}" for name, value in env.items())
        self.run("new-session", "-d", "-x", str(width), "-y", str(height), "-s", "main", f"env {exports} {command}")

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", "main", *keys)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "main")

    def wait_for(self, condition: Callable[[str], bool], what: str, timeout: float, every: float = 0.2) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if condition(screen):
                return screen
            time.sleep(every)
        raise SystemExit(f"tui_terminal.py: the screen never showed {what}:\n{screen}")

    def pids(self) -> tuple[int, int]:
        """(the command's process, the tmux server)."""
        return int(self.run("list-panes", "-t", "main", "-F", "#{pane_pid}").split()[0]), int(
            self.run("display-message", "-p", "#{pid}").strip()
        )

    def close(self) -> None:
        subprocess.run([self._tmux, "-L", self._socket, "kill-server"], capture_output=True, timeout=30)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench(model: Path, tokens: int, rounds: int, n_ctx: int, size: tuple[int, int]) -> int:
    tmux = shutil.which("tmux")
    if tmux is None:
        raise SystemExit("tui_terminal.py: tmux is not installed")
    print(machine_facts())
    reference = Reference.load(model, n_ctx)
    prompt = prompts.render_continue(DRAFT, prompt_templates.load(prompts.CONTINUE, paths.prompts_dir()))
    prompt_tokens = reference.engines[True].tokenize(prompt)
    reference.measure_round(prompt_tokens, 16)  # warm-up
    reference.rates = {True: [], False: []}
    command = Path(sys.executable).parent / "scriptorium"
    app_rates: list[float] = []
    app_cpu: list[float] = []
    terminal_cpu: list[float] = []
    with tempfile.TemporaryDirectory() as home:
        draft = Path(home) / "draft.md"
        draft.write_text(DRAFT, encoding="utf-8")
        terminal = Terminal(tmux)
        try:
            # A fresh home: flash attention is measured at this first load, as for a new author.
            terminal.start(
                f"{shlex.quote(str(command))} {shlex.quote(str(draft))} --model {shlex.quote(str(model))} "
                f"--preset greedy --max-tokens {tokens} --ctx {n_ctx}",
                {"SCRIPTORIUM_HOME": home, "TERM": "xterm-256color"},
                *size,
            )
            terminal.wait_for(lambda s: "Probabilities" in s and "flash attention" in s, "the loaded model", 120)
            time.sleep(1.0)  # the first paint's follow-ups and the model's settling
            app_pid, tmux_pid = terminal.pids()
            for round_number in range(rounds):
                plain = reference.measure_round(prompt_tokens, tokens)
                expected = tokens / max(plain.values())
                app_before, tmux_before, started = cpu_seconds(app_pid), cpu_seconds(tmux_pid), time.perf_counter()
                terminal.keys("C-g")
                time.sleep(expected * 0.95)
                screen = terminal.wait_for(
                    lambda s: FINISHED.search(s) is not None and "writing…" not in s,
                    "the generation's end",
                    60 + expected * 4,
                    every=0.05,
                )
                wall = time.perf_counter() - started
                app_cpu.append((cpu_seconds(app_pid) - app_before) / wall)
                terminal_cpu.append((cpu_seconds(tmux_pid) - tmux_before) / wall)
                found = DECODE.search(screen)
                if found is None:
                    raise SystemExit(f"tui_terminal.py: no decode speed on the screen:\n{screen}")
                app_rates.append(float(found.group(1).replace(",", "")))
                print(
                    f"round {round_number + 1}: plain FA on {plain[True]:6.1f}  off {plain[False]:6.1f}   "
                    f"app in a terminal {app_rates[-1]:6.1f} (app {app_cpu[-1] * 100:4.1f}%, "
                    f"terminal {terminal_cpu[-1] * 100:4.1f}% of a core)",
                    flush=True,
                )
                terminal.keys("Escape")
                terminal.wait_for(lambda s: "suggestion from" not in s, "the suggestion rejected", 30)
                time.sleep(0.7)  # the autosave after a generation, before the next reference round
            terminal.keys("C-q")
        finally:
            terminal.close()
    reference.close()

    best = reference.rates[reference.best_path]
    print(
        f"\nmodel: {model.name}   tokens per run: {tokens}   rounds: {rounds}   terminal: tmux {size[0]}x{size[1]}   "
        f"llama.cpp threads (the app's default): {TuiSettings().generation_threads()} of {os.cpu_count()} cores"
    )
    print(reference.describe())
    print(
        f"app in a terminal: {statistics.median(app_rates):7.1f} tok/s   "
        f"app / reference {ratio_summary(app_rates, best)}   while streaming: the app's process "
        f"{statistics.median(app_cpu) * 100:.1f}% of a core, the terminal {statistics.median(terminal_cpu) * 100:.1f}%"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = run_arguments(__doc__.splitlines()[0], tokens=256, rounds=5)
    parser.add_argument("--size", default="200x50", help="terminal columns x rows (default 200x50)")
    args = parse_run_arguments(parser, argv)
    try:
        width, height = (int(value) for value in args.size.lower().split("x"))
    except ValueError:
        parser.exit(2, f"tui_terminal.py: --size takes COLUMNSxROWS, such as 200x50, not {args.size!r}\n")
    return bench(args.model.resolve(), args.tokens, args.rounds, args.ctx, (width, height))


if __name__ == "__main__":
    sys.exit(main())
