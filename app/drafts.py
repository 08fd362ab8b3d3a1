"""The author's draft file: read once at start, written atomically (app/atomic.py) on save.

A draft named on the command line that does not exist yet is not an error: the editor
opens empty and the first save creates it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scriptorium.inference.errors import ScriptoriumError

from . import atomic


class DraftFileError(ScriptoriumError):
    """The draft cannot be read or written; the message names the file and the reason."""


@dataclass(slots=True)
class DraftFile:
    """Where the draft lives on disk (None: an unnamed draft, kept only in the editor)."""

    path: Path | None

    @property
    def display_name(self) -> str:
        return self.path.name if self.path else "untitled"

    def read(self) -> str:
        """The draft's text; '' for a file that will be created on save."""
        if self.path is None or not self.path.exists():
            return ""
        if self.path.is_dir():
            raise DraftFileError(f"draft {self.path} is a folder, not a file")
        try:
            # Bytes, not read_text: the editor keeps the file's own line endings.
            return self.path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as error:
            raise DraftFileError(f"draft {self.path} is not UTF-8 text (byte {error.start})") from None
        except OSError as error:
            raise DraftFileError(f"cannot read draft {self.path}: {error.strerror or error}") from None

    def write(self, text: str) -> None:
        if self.path is None:
            raise DraftFileError("this draft has no file name yet")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise DraftFileError(f"draft not saved: cannot create {self.path.parent}: "
                                 f"{error.strerror or error}") from None
        try:
            atomic.write_text(self.path, text)
        except atomic.WriteError as error:
            raise DraftFileError(f"draft not saved: {error}") from None
