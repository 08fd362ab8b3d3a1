"""Find and replace in the draft (ctrl+f): each place selected in turn, replaced one by one
or all at once as one undo step, with or without matching case, and nothing replaced while
the model writes into a suggestion."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input

from tui_helpers import drawn_lines, Gate, make_app, ready, typed

from scriptorium.app.tui.text_search import Match, following, occurrences

TEXT = "La casa era vuota. Una Casa sul fiume. Le case e la casa."


def test_occurrences_follow_the_case_rule_and_go_round() -> None:
    assert occurrences(TEXT, "casa", match_case=True) == [Match(3, 7), Match(52, 56)]
    assert len(occurrences(TEXT, "casa", match_case=False)) == 3
    assert occurrences(TEXT, "", match_case=False) == []
    found = occurrences(TEXT, "casa", match_case=True)
    assert following(found, 3, forward=True) == (1, False)
    assert following(found, 52, forward=True) == (0, True)  # round from the end
    assert following(found, 3, forward=False) == (1, True)


def selected(app) -> str:  # noqa: ANN001 - the app of the scenario
    return app.main.draft.editor.selected_text


async def test_ctrl_f_finds_each_place_and_replaces_one() -> None:
    app = make_app(None)
    async with app.run_test(size=(100, 30)) as pilot:
        editor = app.main.draft.editor
        editor.load_text(TEXT)
        editor.move_cursor((0, 0))
        await pilot.press("ctrl+f")
        await pilot.pause()
        bar = app.main.draft.find_bar
        assert bar.display and isinstance(app.focused, Input)
        await typed(pilot, "casa")
        await pilot.press("enter")
        await pilot.pause()
        assert editor.selection == ((0, 3), (0, 7))
        assert "1 of 3" in str(bar.count.render())
        await pilot.press("down")
        assert selected(app) == "Casa" and "2 of 3" in str(bar.count.render())
        await pilot.press("up", "up")  # back past the first: round to the last
        assert editor.selection == ((0, 52), (0, 56))
        await pilot.press("tab")  # Enter in the replace field replaces the selected place
        await typed(pilot, "villa")
        await pilot.press("enter")
        await pilot.pause()
        assert editor.text == TEXT[:52] + "villa."
        assert editor.selection == ((0, 3), (0, 7))  # the next, round from the end
        await pilot.press("escape")
        await pilot.pause()
        assert not bar.display and app.focused is editor
        await pilot.press("ctrl+z")
        assert editor.text == TEXT


async def test_replace_all_is_one_undo_step_and_minds_the_case() -> None:
    app = make_app(None)
    async with app.run_test(size=(100, 30)) as pilot:
        editor = app.main.draft.editor
        await typed(pilot, "La casa e la Casa")  # typed: the undo history holds the typing first
        await pilot.press("ctrl+f")
        await typed(pilot, "casa")
        await pilot.press("tab")
        await typed(pilot, "villa")
        await pilot.press("ctrl+t", "ctrl+g")  # same case only, then all
        await pilot.pause()
        assert editor.text == "La villa e la Casa"
        await pilot.press("ctrl+t", "ctrl+g")  # any case
        await pilot.pause()
        assert editor.text == "La villa e la villa"
        assert any("Replaced 1 place" in n.message for n in app.notices)
        await pilot.press("escape", "ctrl+z")
        assert editor.text == "La villa e la Casa"
        await pilot.press("ctrl+z")
        assert editor.text == "La casa e la Casa"  # each replace-all was one step, the typing is left
        await pilot.press("ctrl+y")
        assert editor.text == "La villa e la Casa"


async def test_replace_all_of_many_places_is_still_one_undo_step() -> None:
    """More places than the undo history keeps steps (50): each replacement joined the step as
    it was made, or the history's bound pushed the first of them out."""

    app = make_app(None)
    async with app.run_test(size=(100, 30)) as pilot:
        editor = app.main.draft.editor
        text = "mare " * 120
        editor.load_text(text)
        await pilot.press("ctrl+f")
        await typed(pilot, "mare")
        await pilot.press("tab")
        await typed(pilot, "onda")
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert editor.text == "onda " * 120
        await pilot.press("escape", "ctrl+z")
        assert editor.text == text


async def test_the_palette_finds_find_and_replace() -> None:
    app = make_app(None)
    async with app.run_test(size=(100, 30)) as pilot:
        titles = {command.title for command in app.get_system_commands(app.main)}
        assert {"Draft: Find", "Find: Next", "Find: Replace", "Find: Replace all", "Find: Match case"} <= titles
        commands = {c.title: c for c in app.get_system_commands(app.main)}
        await commands["Find: Replace all"].callback()  # nothing to find yet: the bar opens and asks
        await pilot.pause()
        assert app.main.draft.find_bar.display
        assert any("Type what to find" in n.message for n in app.notices)


async def test_nothing_is_replaced_while_the_model_writes(random_model: Path) -> None:
    gate = Gate(after_tokens=2)
    async with ready(random_model, loader=gate.loader, size=(100, 30)) as (app, pilot):
        editor = app.main.draft.editor
        await typed(pilot, "Era la casa sul mare")
        await pilot.press("ctrl+g")
        await gate.wait_reached()
        await pilot.press("ctrl+f")
        await typed(pilot, "casa")
        await pilot.press("tab")
        await typed(pilot, "villa")
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert editor.text == "Era la casa sul mare"
        assert any("The model is writing" in n.message for n in app.notices)
        gate.release()
        await app.main.wait_until_idle()
        await pilot.pause()
        await pilot.press("ctrl+g")  # stopped: now it replaces, and the suggestion stays after the text
        await pilot.pause()
        assert editor.text == "Era la villa sul mare"
        assert editor.ghost is not None and editor.ghost.anchor == (0, len("Era la villa sul mare"))


async def test_the_replace_field_has_room_at_80_columns() -> None:
    """Beside the panels at 80 columns the keys' hints took the replace field's whole row: what
    was typed there did not show. The key bar says the keys there instead."""

    app = make_app(None)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+f")
        await typed(pilot, "casa")
        await pilot.press("tab")
        await typed(pilot, "villa")
        await pilot.pause()
        bar = app.main.draft.find_bar
        assert bar.replacement.size.width >= 12
        assert "villa" in drawn_lines(bar.replacement)[0]
        keys = {binding.binding.id for binding in app.active_bindings.values() if binding.binding.show}
        assert {"find.replace", "find.replace_all"} <= keys
