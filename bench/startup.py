"""How long from `scriptorium` to the first paint, and to the model ready to generate.

    .venv/bin/python bench/startup.py [--rounds 3] [-- ARGS FOR scriptorium ...]

Each round starts a fresh interpreter that builds the app exactly as the `scriptorium`
command does (`tui_cmd.build_app`, the demo model unless ARGS name one) and runs it
headless; the clock starts before the process is spawned, so interpreter start-up and
every import count. "First paint" is when Textual has composed and drawn the first
screen (the app's ready event); "model ready" is when the Model panel's status turns
ready (or failed). Which heavy modules were already imported at first paint is printed
too: llama_cpp, numpy and the GGUF reader should load after it, with the model.

Each round also starts a bare Textual app (one Static, the same size, timed the same way)
just before: Python's and Textual's floor on this machine, under the same load, so that
the app's figure can be read on any machine as so much above the floor.

The CPU time the process has used by the first paint (all its threads, interpreter
start-up included) is printed beside the wall clock, for both: on a machine that other
work keeps busy the wall clock says more about that work than about the app, while the
CPU time moves much less.

The first round after a new model or llama.cpp build also times flash attention both
ways (flash_choice.py); later rounds read the remembered choice.

Before the rounds the package's sources are compiled to bytecode, so that each round
starts as an installed copy does: pip compiles a wheel's modules when it installs them,
and an editable copy writes its bytecode at its first start. Where that writing is off
(PYTHONDONTWRITEBYTECODE, as in some sandboxes) a source changed since its last compile
would otherwise be compiled again at every start (about 50 ms for all of them).
"""

from __future__ import annotations

import argparse
import compileall
import json
import statistics
import subprocess
import sys
import time

HEAVY = ("llama_cpp", "numpy", "gguf")


def child(argv: list[str]) -> int:
    """Run inside the measured process: print one JSON line per milestone (wall clock)."""
    from scriptorium.app.cli.main import build_parser
    from scriptorium.app.cli.tui_cmd import build_app
    from scriptorium.app.tui.process_tuning import pause_collector_for_start_up

    pause_collector_for_start_up()  # as tui_cmd.run does, before the app's modules are imported
    app = build_app(build_parser(None).parse_args(argv))

    def say(what: str, **extra: object) -> None:
        print(json.dumps({"event": what, "at": time.time(), **extra}), flush=True)

    async def watch(pilot) -> None:  # type: ignore[no-untyped-def]
        say("paint", heavy=[name for name in HEAVY if name in sys.modules], cpu=time.process_time())
        painted = time.monotonic()
        while app.engine_state.model_status.state not in ("ready", "failed") and time.monotonic() - painted < 300:
            if app.engine_state.model_status.state == "none" and time.monotonic() - painted > 5:
                break  # no model found to load
            await pilot.pause(0.01)
        say("model", state=app.engine_state.model_status.state, error=app.engine_state.model_status.error)
        app.exit()

    app.run(headless=True, size=(160, 48), auto_pilot=watch)
    return 0


def bare_child() -> int:
    """A bare Textual app (one Static) timed the same way: Python's and Textual's floor here."""
    from textual.app import App, ComposeResult
    from textual.widgets import Static

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield Static("scriptorium")

    app = Bare()

    async def watch(pilot) -> None:  # type: ignore[no-untyped-def]
        print(json.dumps({"event": "paint", "at": time.time(), "heavy": [], "cpu": time.process_time()}), flush=True)
        print(json.dumps({"event": "model", "at": time.time(), "state": "none", "error": ""}), flush=True)
        app.exit()

    app.run(headless=True, size=(160, 48), auto_pilot=watch)
    return 0


def measure(arguments: list[str]) -> dict[str, dict[str, object]] | str:
    """One round in a fresh process: its milestones, or what went wrong."""
    started = time.time()
    result = subprocess.run([sys.executable, __file__, *arguments], capture_output=True, text=True, timeout=600)
    events: dict[str, dict[str, object]] = {}
    for line in result.stdout.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and "event" in record:
            record["after"] = record["at"] - started
            events[record["event"]] = record
    if "paint" not in events or "model" not in events:
        return f"no measurement (exit {result.returncode})\n{result.stderr[-2000:]}"
    return events


def compile_package() -> None:
    """Bytecode for every module of the package that is missing or older than its source."""
    import scriptorium.app
    import scriptorium.inference
    import scriptorium.prompts

    for package in (scriptorium.app, scriptorium.inference, scriptorium.prompts):
        for folder in package.__path__:
            compileall.compile_dir(folder, quiet=1)


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        return child(sys.argv[2:])
    if sys.argv[1:2] == ["--bare"]:
        return bare_child()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("args", nargs="*", help="arguments for scriptorium (after --)")
    args = parser.parse_args()
    compile_package()
    paints, readies, bare, cpus, bare_cpus = [], [], [], [], []
    for number in range(args.rounds):
        floor = measure(["--bare"])  # back to back, so that both meet the same load
        events = measure(["--child", *args.args])
        if isinstance(events, str) or isinstance(floor, str):
            print(f"round {number + 1}: {events if isinstance(events, str) else floor}")
            return 1
        paint, ready = float(events["paint"]["after"]), float(events["model"]["after"])  # type: ignore[arg-type]
        paints.append(paint)
        readies.append(ready)
        bare.append(float(floor["paint"]["after"]))  # type: ignore[arg-type]
        cpus.append(float(events["paint"]["cpu"]))  # type: ignore[arg-type]
        bare_cpus.append(float(floor["paint"]["cpu"]))  # type: ignore[arg-type]
        print(
            f"round {number + 1}: first paint {paint * 1000:6.0f} ms (bare Textual app {bare[-1] * 1000:4.0f} ms)   "
            f"CPU {cpus[-1] * 1000:4.0f} ms (bare {bare_cpus[-1] * 1000:3.0f} ms)   "
            f"model {events['model']['state']} {ready * 1000:6.0f} ms   "
            f"heavy modules at first paint: {events['paint']['heavy'] or 'none'}"
            + (f"   ({events['model']['error']})" if events["model"]["error"] else ""),
            flush=True,
        )
    for name, values in (
        ("first paint", paints),
        ("bare Textual app", bare),
        ("CPU time at first paint", cpus),
        ("bare Textual app's CPU time", bare_cpus),
        ("model ready", readies),
    ):
        print(
            f"{name}: median {statistics.median(values) * 1000:.0f} ms "
            f"(range {min(values) * 1000:.0f}-{max(values) * 1000:.0f}) over {len(values)} rounds"
        )
    print(
        f"first paint / bare Textual app: {statistics.median(paints) / statistics.median(bare):.2f} "
        f"(wall clock), {statistics.median(cpus) / statistics.median(bare_cpus):.2f} (CPU time)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
