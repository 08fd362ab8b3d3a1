"""The lorebook with the real `scriptorium` command in a real 80x24 terminal (tmux): an
entry written in the app's editor, shared as a lorebook file, fired by the draft; then
`scriptorium continue --lore` on that file says which entry fired."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

from test_tmux import TMUX, Terminal, pytestmark, terminal  # noqa: F401  (the fixture, the skip without tmux)

LOOK = 0.3
"""Seconds between a screen showing and the next key, as a person looks before typing:
keys sent while a dialog is drawn (or an Escape and the key after it, in one read) reached
the screen under it."""
SCRIPTORIUM = shlex.quote(str(Path(sys.executable).parent / "scriptorium"))


def test_a_lorebook_entry_written_in_the_app_fires_there_and_in_continue(
    terminal: Terminal, random_model: Path, tmp_path: Path, scriptorium_home: Path
) -> None:
    draft, shared = tmp_path / "draft.md", tmp_path / "mondo.toml"
    env = {"SCRIPTORIUM_HOME": str(scriptorium_home), "TERM": "xterm-256color"}
    model = shlex.quote(str(random_model))
    terminal.start(f"{SCRIPTORIUM} {shlex.quote(str(draft))} --model {model} --preset greedy --ctx 512", env, (80, 24))
    terminal.wait_for(lambda s: "scriptorium-test-random" in s, "the loaded model")

    terminal.keys("M-l")
    terminal.wait_for(lambda s: "Lorebook" in s and "No entries yet" in s, "the lorebook screen")
    time.sleep(LOOK)
    terminal.text("a")
    terminal.wait_for(lambda s: "regular expression" in s and "Keep" in s, "the entry editor")
    # As a person types, a field at a time: "Lucia" and a Tab sent in one write reached the
    # terminal's reader together, and the Tab was read as typed text of the name.
    for keys in (["Lucia"], ["Tab"], ["Lucia, la ragazza"], *[["Tab"]] * 6, ["Lucia ha sedici anni."]):
        time.sleep(LOOK)
        if keys == ["Tab"]:
            terminal.keys(*keys)
        else:
            terminal.text(*keys)
    time.sleep(LOOK)
    terminal.keys("C-s")
    terminal.wait_for(lambda s: "Lucia, la ragazza" in s and "regular expression" not in s, "the entry listed")
    time.sleep(LOOK)
    terminal.text("f")
    terminal.wait_for(lambda s: "shared by several drafts" in s, "the file prompt")
    time.sleep(LOOK)
    terminal.text(str(shared))
    time.sleep(LOOK)
    terminal.keys("Enter")
    # Its path wraps; the prompt, which shows it too, closed.
    terminal.wait_for(
        lambda s: "mondo.tom" in s and "shared by several" not in s and "kept in this" not in s, "the file in use"
    )
    assert "Lucia ha sedici anni." in shared.read_text(encoding="utf-8")
    terminal.keys("Escape")
    terminal.wait_for(lambda s: "Lorebook ·" not in s, "the draft again")
    time.sleep(LOOK)
    terminal.text("Poi arrivò Lucia.")
    terminal.keys("C-g")
    terminal.wait_for(lambda s: "tab accept" in s and "writing…" not in s, "a finished suggestion")
    # Rejected (a first Esc only asks): the window is then the draft's again, whose end names Lucia.
    terminal.keys("Escape")
    time.sleep(LOOK)
    terminal.keys("Escape")
    time.sleep(LOOK)  # an Escape and the alt+l after it, read together, are one key
    terminal.keys("M-l")
    # The summary line comes with the screen, the table's rows a frame later: both are waited for.
    terminal.wait_for(
        lambda s: "lore: Lucia (Lucia, " in s and "in, " in s, "the lore the prompt held, in the summary and its row"
    )
    terminal.keys("Escape")
    time.sleep(LOOK)
    terminal.keys("C-q")
    deadline = time.monotonic() + 15
    while terminal.running() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not terminal.running(), "scriptorium did not quit on ctrl+q"


def test_continue_with_a_lorebook_says_what_fired_in_a_real_terminal(
    terminal: Terminal, random_model: Path, tmp_path: Path, scriptorium_home: Path
) -> None:
    draft, lore = tmp_path / "draft.md", tmp_path / "mondo.toml"
    draft.write_text("Poi arrivò Lucia.\n", encoding="utf-8")
    lore.write_text(
        "[[entry]]\nkeys = ['Lucia']\ntext = 'Lucia ha sedici anni.'\n\n"
        "[[entry]]\nkeys = ['Marco']\ntext = 'Marco è il fratello.'\n",
        encoding="utf-8",
    )
    terminal.start_kept(
        f"{SCRIPTORIUM} continue {shlex.quote(str(draft))} --model {shlex.quote(str(random_model))} "
        f"--preset greedy --max-tokens 4 --lore {shlex.quote(str(lore))}",
        {"SCRIPTORIUM_HOME": str(scriptorium_home), "TERM": "xterm-256color"},
        (80, 24),
    )
    assert terminal.exit_status(timeout=60) == 0
    left = "".join(terminal.screen().split("\n"))  # a long line wraps at the terminal's width
    assert "scriptorium: lore: Lucia (Lucia, " in left and "Marco" not in left and "Traceback" not in left
