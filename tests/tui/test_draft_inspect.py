"""The draft pane's inspection part on its own: the token cursor's arithmetic and which of
its keys are enabled, with a stand-in for the pane (the Pilot tests drive it in the app)."""

from __future__ import annotations

from types import SimpleNamespace

from scriptorium.app.i18n.language import ENGLISH
from scriptorium.app.tui.branches import Ghost, Version
from scriptorium.app.tui.widgets.draft_inspect import Inspection


class FakePane:
    """What Inspection asks of the draft pane (InspectionPane), recorded."""

    def __init__(self, ghost: Ghost | None) -> None:
        self.editor = SimpleNamespace(ghost=ghost, token_at_cursor=lambda: None)
        self.shown: list[object] = []
        self.drawn: list[tuple[bool, int | None]] = []
        self.suggestion = SimpleNamespace(
            set_inspection=lambda colour, inspected: self.drawn.append((colour, inspected))
        )
        self.language = ENGLISH
        self.key_display = lambda binding_id: f"<{binding_id}>"
        self.generating = False
        self.notes: list[str] = []
        self.bindings_refreshed = 0

    def notify(self, message: str, **kwargs: object) -> None:
        self.notes.append(message)

    def refresh_bindings(self) -> None:
        self.bindings_refreshed += 1

    def show_record(self, record: object, *, asked: bool = False) -> None:
        self.shown.append(record)


def ghost_with(tokens: int, *, streaming: bool = False) -> Ghost:
    return Ghost((0, 0), False, text="x" * tokens, streaming=streaming, tokens=[f"t{i}" for i in range(tokens)])  # type: ignore[misc]


def test_f4_starts_at_the_last_token_of_a_finished_suggestion_and_the_arrows_stay_inside_it() -> None:
    pane = FakePane(ghost_with(3))
    inspection = Inspection(pane)
    inspection.inspect()
    assert inspection.inspected == 2 and pane.shown == ["t2"]
    inspection.move(1)
    assert inspection.inspected == 2
    inspection.move(-5)
    assert inspection.inspected == 0 and pane.shown[-1] == "t0"
    assert pane.drawn[-1] == (False, 0)
    inspection.inspect()  # F4 again leaves
    assert inspection.inspected is None and pane.drawn[-1] == (False, None)


def test_f4_on_a_suggestion_still_being_written_starts_at_its_first_token() -> None:
    pane = FakePane(ghost_with(4, streaming=True))
    inspection = Inspection(pane)
    inspection.inspect()
    assert inspection.inspected == 0


def test_f4_before_the_first_token_says_to_press_it_again() -> None:
    pane = FakePane(ghost_with(0, streaming=True))
    inspection = Inspection(pane)
    inspection.inspect()
    assert inspection.inspected is None
    assert pane.notes == ["The model has not written a token yet: press <draft.inspect> again once it has."]


def test_the_inspection_keys_are_enabled_only_while_inspecting_and_versions_only_with_another() -> None:
    ghost = ghost_with(2)
    pane = FakePane(ghost)
    inspection = Inspection(pane)
    assert inspection.check_action("leave_inspect") is False
    assert inspection.check_action("version") is False
    ghost.versions = [Version("a", [], "first"), Version("b", [], "re-roll")]
    assert inspection.check_action("version") is True
    inspection.inspect()
    assert inspection.check_action("inspect_move") is True
    assert inspection.check_action("accept") is None  # the pane's own


def test_no_suggestion_means_no_version_to_show_and_nothing_drawn() -> None:
    pane = FakePane(None)
    inspection = Inspection(pane)
    inspection.version(-1)
    inspection.move(1)
    assert pane.drawn == [] and pane.notes == []
    assert inspection.check_action("version") is True  # bringing back the one thrown away (the pane's)
