"""The command started with a standard stream closed (`<&-`, `>&-`, `2>&-`), as a
daemon, a cron job or an editor's spawn may leave it: the stream is gone, not empty."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cli_runs import SCRIPTORIUM
from test_cli import DRAFT, assert_one_line_error


def run_with_closed(redirection: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`scriptorium ARGS` with `redirection` (e.g. "<&-") applied by a shell."""
    return subprocess.run(
        ["sh", "-c", f'exec "$0" "$@" {redirection}', SCRIPTORIUM, *args], capture_output=True, text=True, timeout=120
    )


def test_continue_a_file_with_stdin_closed(random_model: Path, tmp_path: Path) -> None:
    """The engine's request pipe took descriptor 0, which the child's own stdin then
    replaced: "the model's engine stopped (exit status 0) without a message"."""
    draft = tmp_path / "draft.md"
    draft.write_text(DRAFT, encoding="utf-8")
    result = run_with_closed(
        "<&-", "continue", str(draft), "--model", str(random_model), "--preset", "greedy", "--max-tokens", "4"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()


def test_continue_from_a_closed_stdin_is_no_draft(random_model: Path) -> None:
    """sys.stdin is None then: an AttributeError traceback."""
    for draft in ([], ["-"]):
        result = run_with_closed("<&-", "continue", *draft, "--model", str(random_model), "--max-tokens", "2")
        assert_one_line_error(result, "standard input is closed")


def test_output_to_a_closed_stdout_is_one_line(random_model: Path, tmp_path: Path) -> None:
    """sys.stdout is None then: `continue` wrote with a traceback; `info` printed nothing and exited 0."""
    draft = tmp_path / "draft.md"
    draft.write_text(DRAFT, encoding="utf-8")
    for command in (["continue", str(draft), "--max-tokens", "2"], ["info"]):
        result = run_with_closed(">&-", *command, "--model", str(random_model))
        assert_one_line_error(result, "cannot write the output: standard output is closed")


def test_a_closed_stderr_is_no_failure(random_model: Path, tmp_path: Path) -> None:
    """sys.stderr is None then: the model's progress line failed with a traceback (to
    nowhere) and exit status 1."""
    draft = tmp_path / "draft.md"
    draft.write_text(DRAFT, encoding="utf-8")
    result = run_with_closed(
        "2>&-", "continue", str(draft), "--model", str(random_model), "--preset", "greedy", "--max-tokens", "4"
    )
    assert result.returncode == 0
    assert result.stdout.strip()


def test_the_editor_with_stderr_closed_exits_at_once(random_model: Path, tmp_path: Path) -> None:
    """Textual draws on the stderr the process started with: closed, the editor hung
    half-started (or ran blind), and ignored kill. The subprocess timeout is the hang guard."""
    draft = tmp_path / "draft.md"
    draft.write_text(DRAFT, encoding="utf-8")
    result = run_with_closed("2>&-", "--model", str(random_model), str(draft))
    assert result.returncode == 2
    assert draft.read_text(encoding="utf-8") == DRAFT
