"""The Speed panel's judge of a collapse: a rate far below this model's usual one in this run."""

from __future__ import annotations

from scriptorium.app.tui.widgets.usual_rate import MIN_TOKENS, UsualRate


def test_a_collapse_is_a_rate_under_half_the_usual_one() -> None:
    usual = UsualRate()
    assert usual.collapsed(1.0, 100) is None  # nothing to compare with yet
    for rate in (35.0, 37.0, 36.0):
        usual.add(rate, 100)
    assert usual.collapsed(30.0, 100) is None  # the noise between runs
    assert usual.collapsed(0.9, 100) == 37.0
    assert usual.collapsed(0.9, MIN_TOKENS - 1) is None  # too few steps to judge


def test_slow_runs_do_not_lower_the_usual_rate_and_another_model_starts_afresh() -> None:
    usual = UsualRate()
    for rate in (36.0, 2.0, 3.0, 35.0, 2.5):
        usual.add(rate, 100)
    assert usual.usual is not None and usual.usual >= 35.0
    usual.add(500.0, 3)  # a three-token run says nothing of the usual rate
    assert usual.usual < 100
    usual.forget()
    assert usual.usual is None
