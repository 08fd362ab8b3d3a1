"""Every Python module of the project stays within the house limit of 400 lines: past it a
module holds more than one responsibility, and merges pushed several over it unnoticed.
The fix is a split by responsibility, never a squeeze."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("app", "inference", "bench", "prompts", "tools", "tests")
LIMIT = 400


def python_files() -> list[Path]:
    """The .py files git tracks under FOLDERS; without git (or outside a checkout), every
    .py file found under them."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--", *FOLDERS], cwd=ROOT, capture_output=True,
                                check=True).stdout.decode("utf-8")
    except (OSError, subprocess.CalledProcessError):
        return sorted(path for folder in FOLDERS for path in (ROOT / folder).rglob("*.py"))
    # A file deleted but not yet committed is still listed: there is nothing of it to measure.
    return sorted(ROOT / name for name in listed.split("\0") if name.endswith(".py") and (ROOT / name).is_file())


def test_no_module_is_over_the_line_limit() -> None:
    files = python_files()
    assert files, f"no Python files found under {', '.join(FOLDERS)} in {ROOT}"
    counts = {path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines()) for path in files}
    over = [f"{name}: {count} lines" for name, count in counts.items() if count > LIMIT]
    assert not over, f"over the {LIMIT}-line limit (split by responsibility):\n" + "\n".join(over)
