"""Versions of one suggestion: every re-roll and every branch from a token keeps the
text it replaces, so the author can go back to it (alt+← / alt+→ in the draft).

The ghost's own `text` and `tokens` are the version on screen; the others wait in
`ghost.versions`, the current one's slot refreshed whenever the author moves away.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scriptorium.app.tui.token_spans import TokenRecord

if TYPE_CHECKING:
    from scriptorium.app.tui.widgets.draft_editor import Ghost


@dataclass(slots=True)
class Version:
    text: str
    tokens: list[TokenRecord] = field(default_factory=list)
    label: str = ""
    """How it came about: 'first', 're-roll', 'branch at “word”'."""


def _save_current(ghost: "Ghost") -> None:
    if not ghost.versions:
        ghost.versions.append(Version(ghost.text, list(ghost.tokens), "first"))
        ghost.version = 0
    else:
        slot = ghost.versions[ghost.version]
        slot.text, slot.tokens = ghost.text, list(ghost.tokens)


def start_version(ghost: "Ghost", label: str, text: str = "", tokens: list[TokenRecord] | None = None) -> None:
    """Keep what is on screen as a version and start a new one with `text`."""
    if ghost.text or ghost.versions:
        _save_current(ghost)
    ghost.versions.append(Version(text, list(tokens or []), label))
    ghost.version = len(ghost.versions) - 1
    ghost.text, ghost.tokens = text, list(tokens or [])


def move_version(ghost: "Ghost", step: int) -> bool:
    """Show the previous (-1) or next (+1) version; False when there is none that way."""
    target = ghost.version + step
    if not ghost.versions or not 0 <= target < len(ghost.versions):
        return False
    _save_current(ghost)
    ghost.version = target
    chosen = ghost.versions[target]
    ghost.text, ghost.tokens = chosen.text, list(chosen.tokens)
    return True


def version_label(ghost: "Ghost") -> str:
    """'version 2/3 · re-roll', or '' while there is only one."""
    if len(ghost.versions) < 2:
        return ""
    return f"version {ghost.version + 1}/{len(ghost.versions)} · {ghost.versions[ghost.version].label}"
