"""The suggestion left undecided beside a draft when it was last saved (the author quit
mid-thought): kept in the session so reopening the draft shows it again, where it was.

Its versions (re-rolls, branches) are kept with it, by their text and writers. Its place is checked against the draft's text on reopening: the
draft file may have been changed by another program since, and a suggestion put back
where its words no longer fit would be worse than none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CONTEXT = 80
"""Characters on each side of the anchor that must be as they were for the suggestion to come back."""


Writers = list[tuple[str | None, int]]
"""(a generation's id, or None for the author's own word, where in a text its writing starts), in order."""


@dataclass(kw_only=True)
class KeptVersion:
    """One of a suggestion's versions: 'first', 're-roll', 'branch at “word”'."""

    text: str
    label: str = ""
    writers: Writers = field(default_factory=list)


@dataclass(kw_only=True)
class Suggestion:
    anchor: int
    """The draft offset the suggestion would be inserted at."""
    text: str
    writers: Writers = field(default_factory=list)
    from_cursor: bool = False
    replaces: int = 0
    """Characters after the anchor accepting it replaces (a branch taken inside the draft)."""
    before: str = ""
    after: str = ""
    """The draft's text just before the anchor, and from it on, when it was saved."""
    versions: list[KeptVersion] = field(default_factory=list)
    """All its versions, the one on screen (`version`) included; none while there is only the one."""
    version: int = 0

    @classmethod
    def in_draft(
        cls,
        draft: str,
        anchor: int,
        text: str,
        writers: Writers,
        *,
        from_cursor: bool = False,
        replaces: int = 0,
        versions: list[KeptVersion] | None = None,
        version: int = 0,
    ) -> "Suggestion":
        return cls(
            anchor=anchor,
            text=text,
            writers=writers,
            from_cursor=from_cursor,
            replaces=replaces,
            versions=versions or [],
            version=version,
            before=draft[max(anchor - CONTEXT, 0) : anchor],
            after=draft[anchor : anchor + replaces + CONTEXT],
        )

    def fits(self, draft: str) -> bool:
        """The draft around the anchor is as it was: the suggestion can go back there."""
        return (
            len(self.before) <= self.anchor <= len(draft)
            and draft.startswith(self.after, self.anchor)
            and draft[self.anchor - len(self.before) : self.anchor] == self.before
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "anchor": self.anchor,
            "text": self.text,
            "writers": [list(w) for w in self.writers],
            "from_cursor": self.from_cursor,
            "replaces": self.replaces,
            "before": self.before,
            "after": self.after,
            **(
                {
                    "versions": [
                        {"text": v.text, "label": v.label, "writers": [list(w) for w in v.writers]}
                        for v in self.versions
                    ],
                    "version": self.version,
                }
                if self.versions
                else {}
            ),
        }


def read_suggestion(data: Any) -> Suggestion | None:
    """The suggestion of a session file's `draft.suggestion`; None when absent or not
    valid (losing it loses only an undecided suggestion, never the author's text)."""
    if not isinstance(data, dict):
        return None
    try:
        versions = [
            KeptVersion(text=v["text"], label=v.get("label", ""), writers=_read_writers(v.get("writers")))
            for v in data.get("versions", [])
        ]
        suggestion = Suggestion(
            anchor=data["anchor"],
            text=data["text"],
            writers=_read_writers(data.get("writers")),
            from_cursor=bool(data.get("from_cursor", False)),
            replaces=data.get("replaces", 0),
            before=data.get("before", ""),
            after=data.get("after", ""),
            versions=versions,
            version=data.get("version", 0),
        )
    except (KeyError, TypeError, AttributeError):
        return None
    fields = (
        suggestion.anchor,
        suggestion.replaces,
        suggestion.text,
        suggestion.before,
        suggestion.after,
        suggestion.version,
    )
    if not all(isinstance(v, t) for v, t in zip(fields, (int, int, str, str, str, int))) or not suggestion.text:
        return None
    if not all(isinstance(v.text, str) and isinstance(v.label, str) for v in versions) or (
        versions and not 0 <= suggestion.version < len(versions)
    ):
        suggestion.versions, suggestion.version = [], 0  # the one on screen still comes back
    return suggestion


def _read_writers(data: Any) -> Writers:
    return [
        (w[0], w[1])
        for w in data or []
        if isinstance(w, list)
        and len(w) == 2
        and isinstance(w[1], int)
        and not isinstance(w[1], bool)
        and isinstance(w[0], (str, type(None)))
    ]
