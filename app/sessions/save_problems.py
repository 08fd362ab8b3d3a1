"""What the app could not save, per thing saved ("draft file", "draft" (its session),
"chat"), until it is saved: each failure shown once, however often autosave meets it, and
asked about when the author quits or leaves the text."""

from __future__ import annotations

import threading
from typing import Callable


class SaveProblems:
    """The failures shown, per thing saved; `notify` shows one line. Told from the writing thread too."""

    def __init__(self, notify: Callable[..., object], gettext: Callable[[str], str] = str) -> None:
        """`gettext`: the app's language's, for the notice's title (babel.cfg extracts the strings here)."""
        self._notify = notify
        self._gettext = gettext
        self._shown: dict[str, tuple[str, str]] = {}
        """Per thing saved: the failure (what tells it from another) and the line shown."""
        self._lock = threading.Lock()

    def saved(self, about: str) -> None:
        with self._lock:
            if self._shown.pop(about, None) and about == "draft" and "draft file" in self._shown:
                # Its session failed since the draft file's failure was said: said again, with the session saved now.
                self._shown["draft file"] = ("", self._shown["draft file"][1])

    def failed(self, message: str, *, about: str = "", also: str = "", failure: str = "") -> None:
        """Show `message` unless the same `failure` (by default the message) is already shown
        for `about`; `also`: another thing the same failure left unsaved, which the same line said."""
        shown = (failure or message, message)
        with self._lock:
            if also:
                self._shown[also] = shown
            if self._shown.get(about, ("", ""))[0] == shown[0]:
                return  # autosave runs every few seconds: the same failure is shown once
            self._shown[about] = shown
        gettext = self._gettext
        self._notify(message, title=gettext("Not saved"), severity="error", timeout=15)

    def repeat_next(self, asked: bool) -> None:
        """`asked`: the author asked for the save about to run (ctrl+s, the quit dialog), so its
        failures are said even if said before: silence would read as the key doing nothing."""
        if asked:
            with self._lock:
                self._shown = {about: ("", message) for about, (_, message) in self._shown.items()}

    def unsaved(self) -> dict[str, str]:
        """What the last saves could not write ('draft file', 'draft' (its session), 'chat'), and why."""
        with self._lock:
            return {about: message for about, (_, message) in self._shown.items() if about}
