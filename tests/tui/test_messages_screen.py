"""alt+h: what the app said this run, read again after the toasts have gone."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from scriptorium.app.tui.app import NOTICES_KEPT
from scriptorium.app.tui.screens.messages_screen import MessagesScreen
from tui_helpers import ready, until


async def test_every_notification_of_the_run_can_be_read_again_after_its_toast_has_gone(random_model: Path) -> None:
    async with ready(random_model, size=(100, 30)) as (app, pilot):
        app.notices.clear()
        app.notify("Kept the file's text at porto.md.disk-20261203-101500", title="Draft file", timeout=0.1)
        app.notify("the vocabulary has no «, —", title="Vocabulary", severity="warning", timeout=0.1)
        await until(pilot, lambda: len(app.notices) == 2, "both said")
        await pilot.pause(0.3)  # the toasts time out; what they said stays
        await pilot.press("alt+h")
        await until(pilot, lambda: isinstance(app.screen, MessagesScreen), "the messages screen")
        messages = app.screen.query_one(OptionList)
        shown = [str(messages.get_option_at_index(i).prompt) for i in range(messages.option_count)]
        assert len(shown) == 2
        assert "Draft file" in shown[0] and "porto.md.disk-20261203-101500" in shown[0]
        assert "Vocabulary" in shown[1] and "«, —" in shown[1]
        assert messages.highlighted == 1  # the newest, at the bottom
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, MessagesScreen), "closed")


async def test_the_record_is_bounded_and_keeps_the_newest(random_model: Path) -> None:
    async with ready(random_model) as (app, pilot):
        for n in range(NOTICES_KEPT + 5):
            app.notify(f"message {n}", timeout=0.1)
        await until(
            pilot,
            lambda: bool(app.notices) and app.notices[-1].message == f"message {NOTICES_KEPT + 4}",
            "all posted",
        )
        assert len(app.notices) == NOTICES_KEPT
        assert app.notices[0].message == "message 5"


def test_messages_are_in_the_palette() -> None:
    from scriptorium.app.tui.bindings import APP_BINDINGS

    assert any(getattr(b, "id", None) == "app.messages" for b in APP_BINDINGS)
