"""The no-op marker for strings defined before any language is chosen (binding descriptions,
section titles): Babel's extraction finds them, and they are translated where shown."""

from __future__ import annotations


def N_(message: str) -> str:  # noqa: N802  (the name gettext's tools look for)
    return message
