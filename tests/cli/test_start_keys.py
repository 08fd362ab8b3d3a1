"""Keys typed while the editor starts reach it: a ctrl+q pressed 0.3 s after launch was
taken by the terminal itself (XON flow control) before Textual had set the terminal up."""

from __future__ import annotations

import os
import select
import termios
from pathlib import Path
from typing import Callable

import pytest

from scriptorium.app.cli import start_keys, tui_cmd
from scriptorium.app.cli.main import main

CTRL_Q = b"\x11"


def _readable(descriptor: int) -> bytes:
    ready, _, _ = select.select([descriptor], [], [], 1.0)
    return os.read(descriptor, 16) if ready else b""


def test_a_ctrl_q_typed_before_the_app_reads_the_terminal_reaches_it(monkeypatch: pytest.MonkeyPatch) -> None:
    at_exit: list[Callable[[], None]] = []
    monkeypatch.setattr(start_keys.atexit, "register", lambda function, *args: at_exit.append(lambda: function(*args)))
    master, terminal = os.openpty()  # a terminal in its ordinary mode, as a shell leaves it
    stream = os.fdopen(terminal, "r")  # standard input, as the process has it
    try:
        found = termios.tcgetattr(terminal)
        os.write(master, CTRL_Q)
        assert _readable(terminal) == b""  # the terminal driver took it: what the app never saw
        start_keys.keep_keys_typed_at_start(stream)
        os.write(master, CTRL_Q)
        assert _readable(terminal) == CTRL_Q
        assert _readable(master) == b""  # and it was not echoed over the screen
        assert len(at_exit) == 1
        at_exit[0]()
        assert termios.tcgetattr(terminal) == found  # as the process found it, once it ends
    finally:
        os.close(master)
        stream.close()


def test_only_the_editor_changes_the_terminal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`continue` streams to the terminal: ctrl+s still pauses its output there."""
    kept: list[bool] = []
    monkeypatch.setattr(start_keys, "keep_keys_typed_at_start", lambda: kept.append(True))
    monkeypatch.setattr(tui_cmd, "run", lambda args: 0)
    assert main([str(tmp_path / "draft.md")]) == 0
    assert kept == [True]
    assert main(["sessions"]) == 0
    assert kept == [True]
