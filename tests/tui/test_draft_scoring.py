"""The draft pane's scoring part on its own: a scoring's messages are told apart by its id,
and a stop with nothing running says nothing (the Pilot tests in test_scoring_runs.py and
test_scoring_tui.py run real scorings)."""

from __future__ import annotations

from types import SimpleNamespace

from scriptorium.app.i18n.language import ENGLISH
from scriptorium.app.tui.scoring import ScoringFailed
from scriptorium.app.tui.widgets.draft_scoring import Scorer
from scriptorium.app.tui.widgets.mode_pane import ModePane


class FakePane:
    """What Scorer asks of the draft pane (ScoringPane), recorded."""

    def __init__(self) -> None:
        self.language = ENGLISH
        self.key_display = lambda binding_id: f"<{binding_id}>"
        self.generating = False
        self.notes: list[tuple[str, str]] = []
        self.posted: list[object] = []
        self.cancelled: list[str] = []
        self.workers = SimpleNamespace(cancel_group=lambda node, group: self.cancelled.append(group))

    def notify(self, message: str, *, title: str = "", **kwargs: object) -> None:
        self.notes.append((title, message))

    def post_message(self, message: object) -> bool:
        self.posted.append(message)
        return True

    def refresh_bindings(self) -> None:
        pass


def scorer_running(pane: FakePane, score_id: int) -> Scorer:
    scorer = Scorer(pane, SimpleNamespace(colouring=False, set_colouring=lambda on: None))  # type: ignore[arg-type]
    scorer._score_id = score_id  # as score() leaves it once its worker started
    return scorer


def test_a_stop_with_no_scoring_running_says_nothing() -> None:
    pane = FakePane()
    scorer = Scorer(pane, SimpleNamespace(colouring=False, set_colouring=lambda on: None))  # type: ignore[arg-type]
    scorer.stop("the text changed")
    scorer.cancel()
    assert not scorer.running and pane.notes == [] and pane.cancelled == []


def test_a_stop_cancels_the_worker_and_says_why() -> None:
    pane = FakePane()
    scorer = scorer_running(pane, 7)
    scorer.stop("the model is writing")
    assert not scorer.running and pane.cancelled == ["scoring"]
    assert pane.notes == [
        ("", "Scoring stopped: the model is writing; what was scored stays coloured (<draft.score> scores it again).")
    ]
    assert [m.text for m in pane.posted if isinstance(m, ModePane.ActivityShown)] == [""]


def test_the_failure_of_an_earlier_scoring_is_not_this_ones() -> None:
    pane = FakePane()
    scorer = scorer_running(pane, 8)
    scorer.failed(ScoringFailed(7, "the engine stopped"))
    assert scorer.running and pane.notes == []
    scorer.failed(ScoringFailed(8, "the engine stopped"))
    assert not scorer.running and pane.notes == [("Scoring failed", "the engine stopped")]
