"""Two scriptoriums on one session (`--resume` in a second terminal): the second works on
a copy and says so, and neither saves over the other's text."""

from __future__ import annotations

import sys

import pytest
from claim_holder import claimed_elsewhere
from tui_helpers import make_app, typed

from scriptorium.app.sessions import DraftSession, SessionStore

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="claims are flock locks, which Windows lacks")


async def test_resuming_a_session_open_in_another_scriptorium_works_on_a_copy() -> None:
    """Both wrote the same session file, each over the other: an unnamed draft, with no
    other copy, lost the text of whichever window saved first."""
    store = SessionStore()
    first = store.create_draft("Bozza", "Scritto nella prima finestra.")

    with claimed_elsewhere(store.directory, first.id):
        app = make_app(None, resume=True)
        async with app.run_test() as pilot:
            await pilot.pause()
            copy = app.sessions.draft
            assert isinstance(copy, DraftSession) and copy.id != first.id
            assert app.main.draft.editor.text == "Scritto nella prima finestra."
            assert any("open in another scriptorium" in n.message for n in app.notices)
            await typed(pilot, "Seconda. ")
            assert app.manuscript.save_everything()
        assert store.load(first.id).text == "Scritto nella prima finestra."
        assert store.load(copy.id).text == "Seconda. Scritto nella prima finestra."
