"""kill -9 loses nothing accepted: the real `scriptorium` in a real terminal (tmux) is
killed during a generation, and the session and the draft file still hold the accepted
suggestion and the text typed before the last autosave."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import Any

from test_tmux import Terminal, terminal  # noqa: F401 - the fixture, used by name

from scriptorium.app.tui.manuscript.session_keeper import AUTOSAVE_SECONDS


def test_kill_9_during_a_generation_keeps_the_accepted_suggestion_and_the_typing(
    terminal: Terminal,
    random_model: Path,
    tmp_path: Path,
    scriptorium_home: Path,  # noqa: F811
) -> None:
    draft = tmp_path / "romanzo.md"
    executable = Path(sys.executable).parent / "scriptorium"
    # A long generation (thousands of tokens) so that the kill lands while the model writes.
    command = (
        f"{shlex.quote(str(executable))} {shlex.quote(str(draft))} --model {shlex.quote(str(random_model))}"
        " --preset greedy --ctx 8192 --max-tokens 6000"
    )
    terminal.start(command, {"SCRIPTORIUM_HOME": str(scriptorium_home), "TERM": "xterm-256color"})
    terminal.wait_for(lambda s: "scriptorium-test-random" in s and "Probabilities" in s, "the loaded model")

    terminal.text("C'era una volta")
    terminal.keys("C-g")
    # "writing…" shows from the moment the prompt is sent, before any token: wait for one.
    terminal.wait_for(lambda s: "writing" in s and "Probabilities · token" in s, "the model writing")
    terminal.keys("Tab")  # accept what is on screen; the rest is not waited for
    terminal.wait_for(lambda s: "writing" not in s and "tab accept" not in s, "the accepted suggestion")
    terminal.text(" FINE")
    # Autosaved AUTOSAVE_SECONDS after the first key; a busy machine can take longer to
    # deliver the keys, so wait for the files rather than for a fixed time. Both: the draft
    # file is written first, the session on the store's own thread after it, and a kill
    # between the two left a session without the typing.
    deadline = time.monotonic() + AUTOSAVE_SECONDS + 30
    while time.monotonic() < deadline and not (
        _ends_with(draft, " FINE") and _session_ends_with(scriptorium_home, " FINE")
    ):
        time.sleep(0.1)

    terminal.keys("C-g")
    terminal.wait_for(lambda s: "writing" in s, "a new generation")
    pid = int(terminal.tmux("list-panes", "-t", "main", "-F", "#{pane_pid}").split()[0])
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while terminal.running() and time.monotonic() < deadline:
        time.sleep(0.1)

    session = _the_session(scriptorium_home)
    text = draft.read_text(encoding="utf-8")
    assert session["kind"] == "draft" and session["draft"]["text"] == text
    accepted = [g for g in session["generations"] if g["outcome"] in ("accepted", "partly_accepted")]
    assert accepted, session["generations"]
    kept = accepted[0]["accepted_text"]
    assert kept and text.startswith("C'era una volta" + kept), (text, kept)
    assert text.endswith(" FINE"), text
    start, end, generation = session["draft"]["model_spans"][0]
    assert text[start:end] == kept and generation == accepted[0]["id"]


def _the_session(home: Path) -> dict[str, Any]:
    sessions = [p for p in (home / "data" / "sessions").iterdir() if p.suffix == ".json"]
    assert len(sessions) == 1, sessions
    return json.loads(sessions[0].read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _ends_with(draft: Path, end: str) -> bool:
    return draft.exists() and draft.read_text(encoding="utf-8").endswith(end)


def _session_ends_with(home: Path, end: str) -> bool:
    folder = home / "data" / "sessions"
    return (
        folder.is_dir()
        and any(p.suffix == ".json" for p in folder.iterdir())
        and _the_session(home)["draft"]["text"].endswith(end)
    )
