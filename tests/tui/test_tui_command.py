"""`scriptorium [DRAFT.md] [--model PATH] [--lora PATH --lora-scale F] [--ctx N] [--preset NAME]`:
bad arguments end with exit status 2 and one line, before any screen is drawn."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def scriptorium(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scriptorium.app.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ctx", "many"], "argument --ctx: invalid int value: 'many'"),
        (["--preset", "wild"], "unknown preset 'wild' (choose from greedy, prose, creative, anti-loop)"),
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["--lora-scale", "0.5"], "--lora-scale needs --lora PATH"),
        (["--resume", "a.md"], "--resume reopens the last session; give either it or DRAFT.md"),
        (["--model", "m.gguf", "--lora", "a.gguf", "--lora-scale", "9"], "--lora-scale must be between 0 and 4"),
        (["--model", "m.gguf", "--ctx", "8"], "--ctx must be a whole number from 64 to 1048576, not 8"),
        (["a.md", "b.md"], "unrecognized arguments: b.md"),
        (["--server", "ftp://box"], "server URL 'ftp://box' is not an http:// or https:// address"),
        (["--server", "http://box:8080", "--model", "m.gguf"], "--model is for a model run here: with --server"),
        (["--server", "http://box:8080", "--ctx", "4096"], "--ctx is for a model run here: with --server"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(args: list[str], message: str) -> None:
    result = scriptorium(*args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("scriptorium: ") and message in lines[0], result.stderr
    assert result.stdout == ""


def test_a_draft_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    result = scriptorium(str(tmp_path))
    assert result.returncode == 2
    assert result.stderr.strip() == f"scriptorium: draft {tmp_path} is a folder, not a file"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on Windows")
def test_a_draft_that_is_a_pipe_is_refused_not_waited_on(tmp_path: Path) -> None:
    """Read as a file, a pipe waited for a writer: the command hung before any screen."""
    pipe = tmp_path / "bozza.md"
    os.mkfifo(pipe)
    result = scriptorium(str(pipe))
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"scriptorium: draft {pipe} is not a regular file (a pipe, device or socket); scriptorium opens only files"
    )


def test_help_names_every_option() -> None:
    result = scriptorium("--help")
    assert result.returncode == 0
    for option in (
        "DRAFT.md",
        "--model PATH|NAME",
        "--lora PATH",
        "--lora-scale F",
        "--ctx N",
        "--preset",
        "--config FILE",
        "--resume",
        "--server URL",
        "--temperature T",
        "--seed N",
    ):
        assert option in result.stdout
