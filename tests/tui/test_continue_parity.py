"""`scriptorium continue` and the app read a draft file alike: a file's final newline is the
file's convention, and both continue the author's text before it (end_of_writing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tui_helpers import generated, ready, spying_loader

SCRIPTORIUM = str(Path(sys.executable).with_name("scriptorium"))
TEXT = "La casa"
"""On sentence_model " casa" is followed by " era" and a newline by " La", each by a wide margin."""


def continued(draft: Path, model: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """`continue --json` on `draft`: its first token line and its done line."""
    result = subprocess.run(
        [
            SCRIPTORIUM,
            "continue",
            str(draft),
            "--model",
            str(model),
            "--preset",
            "greedy",
            "--max-tokens",
            "2",
            "--ctx",
            "512",
            "--threads",
            "1",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return next(line for line in lines if line["type"] == "token"), lines[-1]


async def test_continue_reads_a_file_ending_in_a_newline_as_the_app_does(sentence_model: Path, tmp_path: Path) -> None:
    """With the final newline an editor adds, `continue --json` ranked the candidates after
    that newline (a new line's " La" first), while the app continues before it (" era")."""
    bare, ended = tmp_path / "bare.md", tmp_path / "ended.md"
    bare.write_text(TEXT, encoding="utf-8")
    ended.write_text(TEXT + "\n", encoding="utf-8")
    (bare_token, bare_done), (token, done) = continued(bare, sentence_model), continued(ended, sentence_model)
    assert done["prompt_tokens"] == bare_done["prompt_tokens"]
    assert [c["id"] for c in token["top"][:1]] == [c["id"] for c in bare_token["top"][:1]]
    assert token["text"] == " era"

    loader, spies = spying_loader()

    async with ready(sentence_model, draft=ended, loader=loader, size=(120, 40)) as (app, pilot):
        assert app.main.draft.editor.text == TEXT + "\n"
        app_done = await generated(pilot, "ctrl+g")
        assert spies[0].last["prompt"].endswith(TEXT)
        assert app_done.prompt_tokens == done["prompt_tokens"]
        first = app.main.draft.editor.ghost.tokens[0]
        assert (first.id, first.top[0].id) == (token["id"], token["top"][0]["id"])
