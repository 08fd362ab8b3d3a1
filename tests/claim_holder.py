"""Another process holding a session's claim (app/sessions/claims.py), as a second
scriptorium with the session open would: for the claims tests of sessions and the TUI."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HOLDER = """
import sys
from pathlib import Path
from scriptorium.app.sessions import claims
print(claims.claim(Path(sys.argv[1]), sys.argv[2]), flush=True)
sys.stdin.read()
"""


@contextmanager
def claimed_elsewhere(directory: Path, session_id: str) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the claim until the block ends (or it is killed)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(directory), session_id],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "True"
        yield holder
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(timeout=30)
