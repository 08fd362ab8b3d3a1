"""The author's writing as it is kept: the draft file, its sessions and the autosave, one owner
(`Manuscript`, manuscript.py) that the app and its screens ask, and the parts it composes: what the
sessions record and how they are saved (session_keeper.py), when to save by itself (autosave.py),
the suggestion on screen kept in the draft's session (suggestion.py)."""

from scriptorium.app.tui.manuscript.manuscript import Manuscript, Page, SaveFailed

__all__ = ["Manuscript", "Page", "SaveFailed"]
