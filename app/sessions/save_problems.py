"""What the app could not save, per thing saved ("draft file", "draft" (its session),
"chat"), until it is saved: each failure shown once, however often autosave meets it, and
asked about when the author quits or leaves the text."""

from __future__ import annotations

import threading
from typing import Callable


class SaveProblems:
    """The failures shown, per thing saved; `notify` shows one line. Told from the writing thread too."""

    def __init__(self, notify: Callable[..., object]) -> None:
        self._notify = notify
        self._shown: dict[str, str] = {}
        self._lock = threading.Lock()

    def saved(self, about: str) -> None:
        with self._lock:
            self._shown.pop(about, None)

    def failed(self, message: str, *, about: str = "", also: str = "") -> None:
        """Show `message` unless it is already shown for `about`; `also`: another thing
        the same failure left unsaved, which the same line said."""
        with self._lock:
            if also:
                self._shown[also] = message
            if self._shown.get(about) == message:
                return  # autosave runs every few seconds: the same failure is shown once
            self._shown[about] = message
        self._notify(message, title="Not saved", severity="error", timeout=15)

    def unsaved(self) -> dict[str, str]:
        """What the last saves could not write ('draft file', 'draft' (its session), 'chat'), and why."""
        with self._lock:
            return {about: message for about, message in self._shown.items() if about}
