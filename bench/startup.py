"""How long from `scriptorium` to the first paint, and to the model ready to generate.

    .venv/bin/python bench/startup.py [--rounds 3] [-- ARGS FOR scriptorium ...]

Each round starts a fresh interpreter that builds the app exactly as the `scriptorium`
command does (`tui_cmd.build_app`, the demo model unless ARGS name one) and runs it
headless; the clock starts before the process is spawned, so interpreter start-up and
every import count. "First paint" is when Textual has composed and drawn the first
screen (the app's ready event); "model ready" is when the Model panel's status turns
ready (or failed). Which heavy modules were already imported at first paint is printed
too: llama_cpp, numpy and the GGUF reader should load after it, with the model.

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

    app = build_app(build_parser(None).parse_args(argv))

    def say(what: str, **extra: object) -> None:
        print(json.dumps({"event": what, "at": time.time(), **extra}), flush=True)

    async def watch(pilot) -> None:  # type: ignore[no-untyped-def]
        say("paint", heavy=[name for name in HEAVY if name in sys.modules])
        painted = time.monotonic()
        while app.model_status.state not in ("ready", "failed") and time.monotonic() - painted < 300:
            if app.model_status.state == "none" and time.monotonic() - painted > 5:
                break  # no model found to load
            await pilot.pause(0.01)
        say("model", state=app.model_status.state, error=app.model_status.error)
        app.exit()

    app.run(headless=True, size=(160, 48), auto_pilot=watch)
    return 0


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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("args", nargs="*", help="arguments for scriptorium (after --)")
    args = parser.parse_args()
    compile_package()
    paints, readies = [], []
    for number in range(args.rounds):
        started = time.time()
        result = subprocess.run(
            [sys.executable, __file__, "--child", *args.args], capture_output=True, text=True, timeout=600
        )
        events = {}
        for line in result.stdout.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and "event" in record:
                events[record["event"]] = record
        if "paint" not in events or "model" not in events:
            print(f"round {number + 1}: no measurement (exit {result.returncode})\n{result.stderr[-2000:]}")
            return 1
        paint = events["paint"]["at"] - started
        ready = events["model"]["at"] - started
        paints.append(paint)
        readies.append(ready)
        print(
            f"round {number + 1}: first paint {paint * 1000:6.0f} ms   model {events['model']['state']} "
            f"{ready * 1000:6.0f} ms   heavy modules at first paint: {events['paint']['heavy'] or 'none'}"
            + (f"   ({events['model']['error']})" if events["model"]["error"] else ""),
            flush=True,
        )
    print(
        f"first paint: median {statistics.median(paints) * 1000:.0f} ms "
        f"(range {min(paints) * 1000:.0f}-{max(paints) * 1000:.0f}) over {len(paints)} rounds"
    )
    print(
        f"model ready: median {statistics.median(readies) * 1000:.0f} ms "
        f"(range {min(readies) * 1000:.0f}-{max(readies) * 1000:.0f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
