"""The real `scriptorium` command in a real terminal (tmux): type, continue, read the
screen, tune a setting, accept, save, quit."""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest
from textual.binding import Binding

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


class Terminal:
    """A tmux server of our own (its own socket), one 100x30 session (or of the size asked)."""

    def __init__(self, socket: str) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> str:
        assert TMUX is not None
        return subprocess.run(
            [TMUX, "-L", self.socket, *args], check=True, capture_output=True, text=True, timeout=30
        ).stdout

    def start(self, command: str, env: dict[str, str], size: tuple[int, int] = (100, 30)) -> None:
        exports = " ".join(f"{name}={shlex.quote(value)}" for name, value in env.items())
        self.tmux("new-session", "-d", "-x", str(size[0]), "-y", str(size[1]), "-s", "main", f"env {exports} {command}")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "main", *keys)

    def text(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "main", "-l", *keys)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "main")

    def wait_for(self, condition: Callable[[str], bool], what: str, timeout: float = 30.0) -> str:
        # A real terminal can only be watched: read the screen until it shows `what`.
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if condition(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"the screen never showed {what}:\n{screen}")

    def start_kept(self, command: str, env: dict[str, str], size: tuple[int, int] = (100, 30)) -> None:
        """Start `command`, then keep the pane to show what it left and its exit status."""
        self.start(f'{command}; echo "[exit status $?]"; sleep 60', env, size)

    def exit_status(self, timeout: float = 15.0) -> int:
        """The exit status of the command started with start_kept, once it has ended."""
        screen = self.wait_for(lambda s: "[exit status " in s, "the command's end", timeout)
        return int(screen.split("[exit status ", 1)[1].split("]", 1)[0])

    def running(self) -> bool:
        assert TMUX is not None
        return (
            subprocess.run(
                [TMUX, "-L", self.socket, "has-session", "-t", "main"], capture_output=True, timeout=30
            ).returncode
            == 0
        )


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    # A socket of its own for each test: kill-server returns before the server has gone, and
    # the next test's new-session on the same socket met it dying ("server exited unexpectedly").
    term = Terminal(f"scriptorium-test-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        yield term
    finally:
        subprocess.run([TMUX or "tmux", "-L", term.socket, "kill-server"], capture_output=True, timeout=30)
        # tmux leaves the socket's file behind: one a test would pile up.
        socket_dir = Path(os.environ.get("TMUX_TMPDIR", "/tmp")) / f"tmux-{os.getuid()}"
        (socket_dir / term.socket).unlink(missing_ok=True)


def test_the_scriptorium_command_in_a_real_terminal(
    terminal: Terminal, random_model: Path, tmp_path: Path, scriptorium_home: Path
) -> None:
    draft = tmp_path / "draft.md"
    command = (
        f"{shlex.quote(str(Path(sys.executable).parent / 'scriptorium'))} "
        f"{shlex.quote(str(draft))} --model {shlex.quote(str(random_model))} --preset greedy --ctx 512"
    )
    terminal.start(command, {"SCRIPTORIUM_HOME": str(scriptorium_home), "TERM": "xterm-256color"})

    terminal.wait_for(lambda s: "scriptorium-test-random" in s and "Probabilities" in s, "the loaded model")
    terminal.text("C'era una volta")
    terminal.keys("C-g")
    # "tab accept" is offered while it streams too: finished is when nothing says "writing…".
    screen = terminal.wait_for(
        lambda s: "suggestion from the end" in s and "tab accept" in s and "writing…" not in s, "a finished suggestion"
    )
    suggestion = screen[screen.index("suggestion from the end") :].splitlines()
    # Finished and taller than its view, it shows its end: the streamed words, not the line it continues.
    assert any(line.startswith("│ ") and line[2:].split("│")[0].strip() for line in suggestion[1:])
    assert "Probabilities · token" in screen and "▶ chosen" in screen
    assert "Speed · length" in screen and "tok/s" in screen and "TTFT" in screen
    assert "/ 512 tokens" in screen and "per token" in screen

    terminal.keys("C-t")
    # As a person does: the sampler's keys in the footer first. A key sent within the same
    # millisecond can still be on its way to the draft (Textual routes each key to the
    # widget focused when it arrives, and Ctrl+T reaches the app by bubbling).
    terminal.wait_for(lambda s: "Adjust" in s, "the sampler panel focused")
    terminal.text("T")  # an upper-case letter, as a real terminal sends it
    terminal.wait_for(lambda s: "Sampler · custom" in s, "the sampler change")
    terminal.keys("Escape")
    # A key sent before the app has read the Escape reaches it in the same read, as alt+tab:
    # the panels kept the focus and the suggestion was never accepted. The draft's keys back
    # in the footer say it took the Escape alone.
    terminal.wait_for(lambda s: "tab Accept" in s and "esc Back" not in s, "the draft focused again")

    terminal.keys("Tab")
    terminal.keys("C-s")
    terminal.wait_for(lambda s: "Saved draft.md" in s, "the save notice")
    saved = draft.read_text(encoding="utf-8")
    assert saved.startswith("C'era una volta") and len(saved.split()) > 3

    terminal.keys("C-q")
    deadline = time.monotonic() + 15
    while terminal.running() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not terminal.running(), "scriptorium did not quit on ctrl+q"


def test_quitting_while_the_model_writes_leaves_no_traceback(
    terminal: Terminal, random_model: Path, tmp_path: Path, scriptorium_home: Path
) -> None:
    draft = tmp_path / "draft.md"
    command = (
        f"{shlex.quote(str(Path(sys.executable).parent / 'scriptorium'))} "
        f"{shlex.quote(str(draft))} --model {shlex.quote(str(random_model))} --preset greedy "
        "--ctx 2048 --max-tokens 1900"
    )
    terminal.start_kept(command, {"SCRIPTORIUM_HOME": str(scriptorium_home), "TERM": "xterm-256color"})
    terminal.wait_for(lambda s: "scriptorium-test-random" in s and "Probabilities" in s, "the loaded model")
    terminal.text("C'era una volta")
    terminal.keys("C-g")
    terminal.wait_for(lambda s: "Probabilities · token" in s and "writing…" in s, "the suggestion streaming")
    terminal.keys("C-q")  # 1,900 tokens take seconds: the model is still writing
    assert terminal.exit_status() == 0
    left = terminal.screen()
    assert "Traceback" not in left and "Error" not in left, left
    assert draft.read_text(encoding="utf-8") == "C'era una volta"


def test_quitting_after_the_draft_file_was_moved_away_says_so_in_the_terminal(
    terminal: Terminal, random_model: Path, tmp_path: Path, scriptorium_home: Path
) -> None:
    """Quitting without typing wrote the moved file again at its old path, and the
    notification saying so went with the screen."""
    draft = tmp_path / "draft.md"
    draft.write_text("Scritto prima.\n", encoding="utf-8")
    command = (
        f"{shlex.quote(str(Path(sys.executable).parent / 'scriptorium'))} "
        f"{shlex.quote(str(draft))} --model {shlex.quote(str(random_model))} --ctx 512"
    )
    terminal.start_kept(command, {"SCRIPTORIUM_HOME": str(scriptorium_home), "TERM": "xterm-256color"})
    terminal.wait_for(lambda s: "Scritto prima." in s and "Probabilities" in s, "the draft")
    draft.rename(tmp_path / "capitolo-1.md")
    terminal.keys("C-q")
    assert terminal.exit_status() == 0
    left = "".join(terminal.screen().split())  # the line wraps at the terminal's width, mid-word
    for words in (f"scriptorium: {draft} was deleted or moved by another program", "it was not written there again"):
        assert "".join(words.split()) in left, left
    assert not draft.exists()


IN_TMUX = {"ctrl+j": "C-j", "alt+enter": "M-Enter", "shift+enter": "Enter", "ctrl+enter": "Enter"}
"""Textual's name of a key a chat message's new line could be bound to -> the key tmux
passes on to the app for it. Shift+enter and ctrl+enter have no encoding but the kitty
protocol's (which Textual asks for and tmux 3.3 does not speak) or modifyOtherKeys'
(which Textual does not ask for): tmux passes them on as Enter, as a terminal without
either does (send-keys S-Enter then types the key's name)."""


def test_every_key_offered_for_a_new_line_in_a_chat_message_types_one_in_tmux(
    terminal: Terminal, random_model: Path, scriptorium_home: Path
) -> None:
    """Under tmux shift+enter reaches the app as a plain Enter, and alt+enter as ESC Enter,
    which Textual reads as Enter too (textual#6663): the keys (F1) offered shift+enter for
    a new line in a chat message, and it sent the message half written."""
    from scriptorium.app.sessions import ChatSession, SessionStore
    from scriptorium.app.tui.widgets.chat_input import ChatInput

    [binding] = [b for b in ChatInput.BINDINGS if isinstance(b, Binding) and b.id == "chat.new_line"]
    offered = [key.strip() for key in binding.key.split(",")]
    command = (
        f"{shlex.quote(str(Path(sys.executable).parent / 'scriptorium'))} "
        f"--model {shlex.quote(str(random_model))} --preset greedy --ctx 512 --max-tokens 4"
    )
    terminal.start(command, {"SCRIPTORIUM_HOME": str(scriptorium_home), "TERM": "xterm-256color"})
    terminal.wait_for(lambda s: "scriptorium-test-random" in s and "Probabilities" in s, "the loaded model")
    terminal.keys("F2")
    terminal.wait_for(lambda s: "Message the model" in s, "the chat's message field")
    lines = [f"verso {number}" for number in range(len(offered) + 1)]
    terminal.text(lines[0])
    for key, line in zip(offered, lines[1:]):
        terminal.keys(IN_TMUX[key])
        terminal.text(line)
    terminal.wait_for(lambda s: lines[-1] in s, "the last line typed")
    terminal.keys("C-q")
    deadline = time.monotonic() + 15
    while terminal.running() and time.monotonic() < deadline:
        time.sleep(0.1)
    [chat] = [SessionStore().load(s.id) for s in SessionStore().list() if s.kind == "chat"]
    assert isinstance(chat, ChatSession)
    assert chat.turns == [] and chat.unsent == "\n".join(lines)
