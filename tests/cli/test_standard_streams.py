"""The command started with a standard stream closed (`<&-`, `>&-`, `2>&-`), as a
daemon, a cron job or an editor's spawn may leave it: the stream is gone, not empty."""

from __future__ import annotations

import subprocess
from pathlib import Path

from test_cli import DRAFT, SCRIPTORIUM


def run_with_closed(redirection: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`scriptorium ARGS` with `redirection` (e.g. "<&-") applied by a shell."""
    return subprocess.run(["sh", "-c", f'exec "$0" "$@" {redirection}', SCRIPTORIUM, *args],
                          capture_output=True, text=True, timeout=120)


def test_continue_a_file_with_stdin_closed(random_model: Path, tmp_path: Path) -> None:
    """The engine's request pipe took descriptor 0, which the child's own stdin then
    replaced: "the model's engine stopped (exit status 0) without a message"."""
    draft = tmp_path / "draft.md"
    draft.write_text(DRAFT, encoding="utf-8")
    result = run_with_closed("<&-", "continue", str(draft), "--model", str(random_model), "--preset", "greedy",
                             "--max-tokens", "4")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()
