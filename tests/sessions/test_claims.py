"""A session one scriptorium has open is claimed (claims.py): another process cannot claim
it, the same process always can, and a process killed with -9 leaves nothing held."""

from __future__ import annotations

import signal
import sys

import pytest
from claim_holder import claimed_elsewhere

from scriptorium.app.sessions import SessionStore, claims

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="claims are flock locks, which Windows lacks")


def test_a_session_claimed_by_another_process_is_refused_until_that_process_dies() -> None:
    store = SessionStore()
    session = store.create_draft("Bozza", "Il testo")
    with claimed_elsewhere(store.directory, session.id) as holder:
        assert not claims.claim(store.directory, session.id)
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        assert claims.claim(store.directory, session.id)  # the system dropped the dead process's lock
    assert claims.claim(store.directory, session.id)  # held here already: claimed again at once
    claims.release(store.directory, session.id)


def test_a_copy_holds_everything_under_a_new_id_and_the_original_is_untouched() -> None:
    store = SessionStore()
    session = store.create_draft("Bozza", "Il testo")
    session.memory = "Una sinossi"
    store.save(session)
    before = store.path_for(session.id).read_bytes()
    copy = store.create_copy(session)
    assert copy.id != session.id and copy.title == "Bozza (copy)"
    loaded = store.load(copy.id)
    assert (loaded.text, loaded.memory) == ("Il testo", "Una sinossi")
    assert store.path_for(session.id).read_bytes() == before
    assert claims.claim(store.directory, copy.id)
    claims.release(store.directory, copy.id)
    store.delete(copy.id)  # its lock file goes with it
    assert not claims.lock_path(store.directory, copy.id).exists()
