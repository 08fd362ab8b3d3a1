"""The tree keeps one layout and one complexity bound, both ruff's (pyproject.toml's
[tool.ruff]): `ruff format` decides how long a line is, so a module cannot be squeezed
to look smaller, and `ruff check` holds each function to a complexity (mccabe) instead
of holding a module to a count of physical lines. To mend a failure, run
`.venv/bin/python -m ruff format .` and read what `ruff check` says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True)


def test_the_tree_is_formatted_by_ruff() -> None:
    result = ruff("format", "--check", ".")
    assert result.returncode == 0, f"run `ruff format .`:\n{result.stdout}{result.stderr}"


def test_ruff_check_passes() -> None:
    result = ruff("check", "--output-format", "concise", ".")
    assert result.returncode == 0, result.stdout + result.stderr
