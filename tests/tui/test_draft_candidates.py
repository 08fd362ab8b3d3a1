"""The draft pane's candidates part on its own: which candidates' generations the choice
rejects (the Pilot tests in test_candidates.py drive the dialog)."""

from __future__ import annotations

from types import SimpleNamespace

from scriptorium.app.tui.widgets.draft_candidates import not_taken


def candidate(request_id: int, usable: bool) -> SimpleNamespace:
    return SimpleNamespace(request=SimpleNamespace(id=request_id), usable=usable)


def test_closing_the_dialog_without_a_choice_rejects_every_candidate_started() -> None:
    assert not_taken([4, 5, 6], None) == (4, 5, 6)


def test_a_choice_keeps_the_usable_candidates_as_versions_and_rejects_the_rest() -> None:
    choice = SimpleNamespace(candidates=[candidate(4, True), candidate(5, False), candidate(6, True)], chosen=0)
    assert not_taken([4, 5, 6, 7], choice) == (5, 7)  # 7 started, but never reached the dialog's list
