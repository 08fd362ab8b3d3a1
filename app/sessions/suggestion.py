"""The suggestion left undecided beside a draft when it was last saved (the author quit
mid-thought): kept in the session so reopening the draft shows it again, where it was.

Only the version on screen is kept (a re-roll's or branch's other versions stay in the
generations, undecided). Its place is checked against the draft's text on reopening: the
draft file may have been changed by another program since, and a suggestion put back
where its words no longer fit would be worse than none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CONTEXT = 80
"""Characters on each side of the anchor that must be as they were for the suggestion to come back."""


@dataclass(kw_only=True)
class Suggestion:
    anchor: int
    """The draft offset the suggestion would be inserted at."""
    text: str
    writers: list[tuple[str | None, int]] = field(default_factory=list)
    """(a generation's id, or None for the author's own word, where in `text` its writing starts)."""
    from_cursor: bool = False
    replaces: int = 0
    """Characters after the anchor accepting it replaces (a branch taken inside the draft)."""
    before: str = ""
    after: str = ""
    """The draft's text just before the anchor, and from it on, when it was saved."""

    @classmethod
    def in_draft(cls, draft: str, anchor: int, text: str, writers: list[tuple[str | None, int]], *,
                 from_cursor: bool = False, replaces: int = 0) -> "Suggestion":
        return cls(anchor=anchor, text=text, writers=writers, from_cursor=from_cursor, replaces=replaces,
                   before=draft[max(anchor - CONTEXT, 0):anchor], after=draft[anchor:anchor + replaces + CONTEXT])

    def fits(self, draft: str) -> bool:
        """The draft around the anchor is as it was: the suggestion can go back there."""
        return (len(self.before) <= self.anchor <= len(draft) and draft.startswith(self.after, self.anchor)
                and draft[self.anchor - len(self.before):self.anchor] == self.before)

    def as_dict(self) -> dict[str, Any]:
        return {"anchor": self.anchor, "text": self.text, "writers": [list(w) for w in self.writers],
                "from_cursor": self.from_cursor, "replaces": self.replaces, "before": self.before, "after": self.after}


def read_suggestion(data: Any) -> Suggestion | None:
    """The suggestion of a session file's `draft.suggestion`; None when absent or not
    valid (losing it loses only an undecided suggestion, never the author's text)."""
    if not isinstance(data, dict):
        return None
    try:
        writers = [(w[0], w[1]) for w in data.get("writers", [])
                   if isinstance(w, list) and len(w) == 2 and isinstance(w[1], int) and isinstance(w[0], (str, type(None)))]
        suggestion = Suggestion(anchor=data["anchor"], text=data["text"], writers=writers,
                                from_cursor=bool(data.get("from_cursor", False)), replaces=data.get("replaces", 0),
                                before=data.get("before", ""), after=data.get("after", ""))
    except (KeyError, TypeError):
        return None
    fields = (suggestion.anchor, suggestion.replaces, suggestion.text, suggestion.before, suggestion.after)
    if not all(isinstance(v, t) for v, t in zip(fields, (int, int, str, str, str))) or not suggestion.text:
        return None
    return suggestion
