"""A model or LoRA file replaced in place while the app runs (the author converted their
GGUF again, or trained the adapter further, to the same path): the next load of that path,
by the load key or after the engine died, loads another model than the one the author was
writing with. Noticed here, by the file's header at the load and by its content hash once
that is computed, so the author is told what the file now holds."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from scriptorium.app.i18n.marker import N_

REPLACED_TITLE = N_("Model file changed")
"""Marked: translated where a notification shows it."""
SHORT_HASH = 12
"""Hex digits of a SHA-256 shown: enough to tell two files apart at a glance."""


@dataclass(slots=True)
class _Seen:
    """The model a file held at its last load here, and its hash once known."""

    facts: Any
    """inference.core.model_facts.ModelFacts, or AdapterFacts"""
    sha256: str | None = None
    before: "_Seen | None" = None
    """The model the file held before this load, while the hash has not yet said whether it is another."""


_HEADER_FIELDS = ("name", "architecture", "parameters", "file_type", "file_size", "vocab_size", "alpha")


def _identity(facts: Any) -> tuple[object, ...]:
    # What the header says of the model (or adapter); the weights themselves only the hash tells apart.
    return tuple(getattr(facts, field, None) for field in _HEADER_FIELDS)


def _label(seen: _Seen, other: _Seen, gettext: Callable[[str], str]) -> str:
    name, other_name = getattr(seen.facts, "name", ""), getattr(other.facts, "name", "")
    label = name if name != other_name else " ".join(filter(None, (name, getattr(seen.facts, "file_type", ""))))
    if seen.sha256:
        return f"{label} (sha256 {seen.sha256[:SHORT_HASH]})" if label else f"sha256 {seen.sha256[:SHORT_HASH]}"
    # An adapter has no name: its size tells them apart.
    return label or gettext("{count} bytes").format(count=f"{seen.facts.file_size:,}")


class ReplacedModelFiles:
    """Remembers, per model and adapter file loaded on this machine, what it held. `gettext`:
    the app's language's, which what the author is told is said in (babel.cfg extracts it here)."""

    def __init__(self, gettext: Callable[[str], str] = str) -> None:
        self._seen: dict[str, _Seen] = {}
        self._gettext = gettext

    def loaded(self, facts: Any) -> str | None:
        """The file at `facts.path` (a model's or an adapter's) was loaded: what to tell the author
        when its header shows another than it held at its last load here (else None; the hash may say later)."""
        path = str(facts.path)
        before, now = self._seen.get(path), _Seen(facts)
        self._seen[path] = now
        if before is None:
            return None
        if _identity(before.facts) != _identity(facts):
            return _said(path, before, now, self._gettext)
        now.before = before  # the same header: the hash will tell
        return None

    def hashed(self, path: str, sha256: str) -> str | None:
        """The hash of the file as last loaded: what to tell the author when it shows another
        model than the one the file held before, with the same header (else None)."""
        now = self._seen.get(path)
        if now is None:
            return None
        before, now.before, now.sha256 = now.before, None, sha256
        if before is None or before.sha256 is None or before.sha256 == sha256:
            return None
        return _said(path, before, now, self._gettext)


def _said(path: str, before: _Seen, now: _Seen, gettext: Callable[[str], str]) -> str:
    said = gettext(
        "{name} changed on disk since it was last loaded: {before} → {now}; the session records the new one from now on."
    )
    return said.format(name=Path(path).name, before=_label(before, now, gettext), now=_label(now, before, gettext))


MappedFileStamp = tuple[int, int, int]
"""A file's (inode, size, mtime in ns): written again in place, or replaced, it changes."""


def file_stamp(path: Path) -> MappedFileStamp | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def changed_under_the_engine(
    path: Path, loaded: MappedFileStamp | None, load_key: str, gettext: Callable[[str], str] = str
) -> str | None:
    """What to tell the author, before a generation, when the model file is no longer as it
    was loaded: llama.cpp maps it, so a file written again in place is read by the running
    engine under the old model's layout, and the text would be recorded as the old model's."""
    now = file_stamp(path)
    if loaded is None or now is None or now == loaded:
        return None  # deleted or moved away, the file the engine maps stays whole until it lets go
    return gettext(
        "{name} changed on disk since it was loaded, so the model loaded may not match it any "
        "more: press {key} to load what it holds now."
    ).format(name=path.name, key=load_key)
