"""Files that never end, named where a text file is read: a FIFO waited for a writer for
ever, /dev/zero and /dev/urandom were read until the memory ran out (`config --config
/dev/zero show` reached 3.2 GB in 6 s). Every read of a file the author names goes
through one reader (errors.read_regular_file): anything but a regular file is refused
before a byte is read, and a file past the size bound is refused naming the bound."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli_runs import SCRIPTORIUM
from test_cli import DRAFT

from scriptorium import prompts

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and /dev/zero")

ENDLESS = ["fifo", "/dev/zero", "/dev/urandom", "too large"]
TOO_LARGE_BYTES = 64_000_001


def _endless(kind: str, folder: Path) -> Path:
    if kind == "fifo":
        os.mkfifo(folder / "pipe")
        return folder / "pipe"
    if kind == "too large":
        path = folder / "large.txt"
        with open(path, "wb") as handle:
            handle.truncate(TOO_LARGE_BYTES)  # sparse: no disk is written
        return path
    return Path(kind)


def _assert_refused(arguments: list[str], kind: str, named: Path, stdin: str | None = None) -> None:
    # A hang fails here after 60 s, not the whole run.
    result = subprocess.run([SCRIPTORIUM, *arguments], input=stdin, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert "Traceback" not in line and str(named) in line
    assert ("larger than 64 MB, the most scriptorium reads" if kind == "too large" else "not a regular file") in line


@pytest.mark.parametrize("kind", ENDLESS)
def test_an_endless_draft_or_memory_or_note_is_refused(kind: str, random_model: Path, tmp_path: Path) -> None:
    named = _endless(kind, tmp_path)
    model = ["--model", str(random_model), "--max-tokens", "2"]
    _assert_refused(["continue", str(named), *model], kind, named)
    _assert_refused(["continue", "--memory", str(named), *model], kind, named, stdin=DRAFT)
    _assert_refused(["continue", "--note", str(named), *model], kind, named, stdin=DRAFT)


@pytest.mark.parametrize("kind", ENDLESS)
def test_an_endless_config_is_refused(kind: str, tmp_path: Path) -> None:
    named = _endless(kind, tmp_path)
    _assert_refused(["config", "--config", str(named), "show"], kind, named)


@pytest.mark.parametrize("kind", ENDLESS)
def test_an_endless_prompt_template_is_refused(kind: str, random_model: Path, scriptorium_home: Path) -> None:
    folder = scriptorium_home / "config" / "prompts"
    folder.mkdir(parents=True)
    source = _endless(kind, folder)
    copy = folder / prompts.CONTINUE
    copy.symlink_to(source) if kind.startswith("/dev") else source.rename(copy)
    _assert_refused(["continue", "--model", str(random_model), "--max-tokens", "2"], kind, copy, stdin=DRAFT)


@pytest.mark.parametrize("kind", ENDLESS)
def test_an_endless_vocab_text_is_refused(kind: str, unigram_gguf: Path, unigram_spm: Path, tmp_path: Path) -> None:
    named = _endless(kind, tmp_path)
    _assert_refused(
        ["vocab", "--model", str(unigram_gguf), "--spm", str(unigram_spm), "--text", str(named)], kind, named
    )
