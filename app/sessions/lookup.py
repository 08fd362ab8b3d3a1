"""Which session file the author means by what they typed: `scriptorium export REF`."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from scriptorium.app.sessions.model import SessionError

SUFFIX = ".json"


def session_file(text: str, directory: Path, session_files: Callable[[], list[Path]]) -> Path:
    """A session file from an id, a unique id prefix or a path to a session file."""
    candidate = Path(text).expanduser()
    if (os.sep in text or text.endswith(SUFFIX)) and candidate.is_file():
        return candidate
    exact = directory / f"{text}{SUFFIX}"
    if exact.is_file():
        return exact
    matches = [path for path in session_files() if path.stem.startswith(text)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        names = ", ".join(sorted(path.stem for path in matches)[:5])
        raise SessionError(f"'{text}' matches several sessions ({names}); give more of the id")
    if candidate.is_file():  # `scriptorium export novel.md`: the draft, not its session
        raise SessionError(
            f"{text} is not a session: give a session's id or its {SUFFIX} file (`scriptorium sessions` lists them)"
        )
    if os.sep in text or text.endswith(SUFFIX):
        raise SessionError(f"session file not found: {text}")
    raise SessionError(f"no session '{text}' (`scriptorium sessions` lists them)")
