"""The chat pane's reply inspection on its own: which of its keys are enabled, and the
tokens it keeps for a reply as they stream (the Pilot tests in test_chat_tokens.py draw them)."""

from __future__ import annotations

from types import SimpleNamespace

from scriptorium.inference.core.events import TokenEvent
from scriptorium.inference.core.settings import SamplerSettings

from scriptorium.app.i18n.language import ENGLISH
from scriptorium.app.tui.widgets.chat_inspect import ReplyInspection


def test_the_inspection_keys_are_enabled_only_while_inspecting() -> None:
    inspection = ReplyInspection(SimpleNamespace(language=ENGLISH))  # type: ignore[arg-type]
    assert inspection.check_action("inspect_reply") is False
    inspection.inspected = 3
    assert inspection.check_action("inspect_move") is True and inspection.check_action("leave_inspect") is True
    assert inspection.check_action("regenerate") is None  # the pane's own


def test_a_new_request_starts_its_tokens_after_the_branch_prefix() -> None:
    inspection = ReplyInspection(SimpleNamespace(language=ENGLISH))  # type: ignore[arg-type]
    inspection.expect_reply("Ciao", [])
    request = SimpleNamespace(id=5, settings=SamplerSettings())
    inspection.stream_tokens(request, (TokenEvent(0, 1, " a", 0.9, (), 1.0, 5),))  # type: ignore[arg-type]
    assert inspection._records is not None and [(r.start, r.text) for r in inspection._records] == [(4, " a")]
