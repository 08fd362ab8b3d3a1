"""The headless commands run as a user runs them: the real `scriptorium` executable, in a
process of its own, for the tests of any folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SCRIPTORIUM = str(Path(sys.executable).with_name("scriptorium"))

GIVES_UP_S = 120
"""A guard against a hanging command, not a time a test asserts: a loaded machine is slow."""


def scriptorium(*args: object, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`scriptorium ARGS...` with `stdin` on its standard input: its exit status, output and errors."""
    return subprocess.run(
        [SCRIPTORIUM, *map(str, args)], input=stdin, capture_output=True, text=True, timeout=GIVES_UP_S
    )


def json_lines(result: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    """What a `--json` command that succeeded wrote: one JSON object a line of its output."""
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]
