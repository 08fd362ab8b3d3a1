"""The lorebook screen at 80×24: entries listed, added, edited, switched and deleted (each
kept at once in the session, and given to the draft), a regular expression that does not
compile said in one line, a lorebook file shared by several drafts, and the palette."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Button, Checkbox, DataTable, Input, TextArea

from tui_helpers import generated, ready, spying_loader, typed

from scriptorium.app.sessions import SessionStore
from scriptorium.app.sessions.lorebook_file import read_lorebook
from scriptorium.app.tui.screens.confirm_screen import ConfirmScreen, TextPromptScreen
from scriptorium.app.tui.screens.lore_entry_screen import LoreEntryScreen, split_keys
from scriptorium.app.tui.screens.lore_screen import LoreScreen
from scriptorium.inference.window.lore import LoreEntry, Lorebook

SIZE = (80, 24)


async def open_lorebook(pilot, key: str = "alt+l") -> LoreScreen:
    await pilot.press(key)
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, LoreScreen)
    return screen


async def write_entry(
    pilot, *, name: str = "", keys: str = "", text: str = "", priority: str | None = None, always: bool | None = None
) -> None:
    """Fill the entry editor on screen and keep it (ctrl+s)."""
    screen = pilot.app.screen
    assert isinstance(screen, LoreEntryScreen)
    screen.query_one("#lore-name", Input).value = name
    screen.query_one("#lore-keys", Input).value = keys
    screen.query_one("#lore-text", TextArea).text = text
    if priority is not None:
        screen.query_one("#lore-priority", Input).value = priority
    if always is not None:
        screen.query_one("#lore-always", Checkbox).value = always
    await pilot.press("ctrl+s")
    await pilot.pause()


def inside_the_screen(widget) -> bool:
    region = widget.region
    return region.width > 0 and region.height > 0 and region.right <= SIZE[0] and region.bottom <= SIZE[1]


def rows(screen: LoreScreen) -> list[list[str]]:
    table = screen.query_one(DataTable)
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


async def test_entries_are_added_edited_switched_and_deleted_at_80_by_24(random_model: Path) -> None:
    load, spies = spying_loader()
    async with ready(random_model, loader=load, size=SIZE) as (app, pilot):
        await typed(pilot, "Una casa sul lago. Poi arrivò Lucia.")
        screen = await open_lorebook(pilot)
        assert rows(screen) == [["", "No entries yet: a adds one", "", "", ""]]
        await pilot.press("a")
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, LoreEntryScreen)
        # Every field and both buttons on an 80x24 terminal, with lines for the text.
        for widget in (*editor.query(Input), *editor.query(Checkbox), *editor.query(Button)):
            assert inside_the_screen(widget), widget
        assert editor.query_one("#lore-text", TextArea).region.height >= 5
        await pilot.press("tab")  # from the name to the keys: the app's keys have no tab of their own
        assert editor.focused is editor.query_one("#lore-keys", Input)
        await pilot.press("shift+tab")
        assert editor.focused is editor.query_one("#lore-name", Input)
        await write_entry(pilot, keys="Lucia, la ragazza", text="Lucia ha sedici anni.", priority="5")
        assert app.screen is screen
        assert rows(screen) == [["✓", "Lucia", "Lucia, la ragazza", "5", ""]]
        session = app.sessions.draft
        assert session.lore.entries == (
            LoreEntry("Lucia", ("Lucia", "la ragazza"), "Lucia ha sedici anni.", priority=5),
        )
        assert SessionStore().load(session.id).lore == session.lore  # saved at once
        await pilot.press("a")
        await pilot.pause()
        await write_entry(pilot, name="Stile", text="Frasi brevi.", always=True)
        assert [row[1:3] for row in rows(screen)] == [["Lucia", "Lucia, la ragazza"], ["Stile", "always"]]
        # Enter edits the highlighted entry; Space switches it off; d deletes it.
        await pilot.press("up", "enter")
        await pilot.pause()
        assert app.screen.query_one("#lore-text", TextArea).text == "Lucia ha sedici anni."
        app.screen.query_one("#lore-text", TextArea).text = "Lucia ha diciassette anni."
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert session.lore.entries[0].text == "Lucia ha diciassette anni."
        await pilot.press("down", "space")
        assert rows(screen)[1][0] == "·" and not session.lore.entries[1].enabled
        await pilot.press("escape")
        await pilot.pause()
        # The draft is given the lorebook: its next prompt holds Lucia, not the switched-off style.
        assert app.main.draft.lorebook == session.lore
        await generated(pilot, "ctrl+g")
        assert spies[-1].last["prompt"] == "Lucia ha diciassette anni.\n\nUna casa sul lago. Poi arrivò Lucia."
        await pilot.press("escape")  # the suggestion
        screen = await open_lorebook(pilot)
        assert rows(screen)[0][4].startswith("in, ")  # what the last prompt held
        assert screen.query_one("#lore-fired").render().plain.startswith("lore: Lucia (Lucia, ")
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await pilot.pause()
        assert [entry.name for entry in session.lore.entries] == ["Stile"]


async def test_a_key_that_does_not_compile_is_one_line_and_the_entry_stays_open(random_model: Path) -> None:
    async with ready(random_model, size=SIZE) as (app, pilot):
        await open_lorebook(pilot)
        await pilot.press("a")
        await pilot.pause()
        await write_entry(pilot, name="Torre", keys="/torr(e/", text="La torre.")
        assert isinstance(app.screen, LoreEntryScreen)  # nothing lost: the author corrects it
        said = [n.message for n in app.notices if "regular expression" in n.message]
        assert said == [
            "the key /torr(e/ of lore entry 'Torre' is not a valid regular expression: "
            "missing ), unterminated subpattern at position 4"
        ]
        await write_entry(pilot, name="Torre", keys="/torr[ei]/, torretta", text="La torre.")
        assert app.sessions.draft.lore.entries[0].keys == ("/torr[ei]/", "torretta")


async def test_a_shared_lorebook_file_is_used_written_and_left(random_model: Path, tmp_path: Path) -> None:
    shared = tmp_path / "mondo.toml"

    async with ready(random_model, size=SIZE) as (app, pilot):
        await typed(pilot, "Una casa.")
        await open_lorebook(pilot)
        await pilot.press("a")
        await pilot.pause()
        await write_entry(pilot, keys="Lucia", text="Lucia ha sedici anni.")
        await pilot.press("f")
        await pilot.pause()
        assert isinstance(app.screen, TextPromptScreen)
        app.screen.query_one(Input).value = str(shared)
        await pilot.press("enter")
        await pilot.pause()
        session = app.sessions.draft
        assert session.lore_path == str(shared) and session.lore == Lorebook()
        assert read_lorebook(shared).entries[0].name == "Lucia"  # written with the session's entries
        await pilot.press("a")
        await pilot.pause()
        await write_entry(pilot, keys="Marco", text="Marco è il fratello.")
        assert [e.name for e in read_lorebook(shared).entries] == ["Lucia", "Marco"]  # kept in the file
        assert SessionStore().load(session.id).lore_path == str(shared)
        # Leaving it: the session keeps a copy, the file stays.
        await pilot.press("f")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await pilot.pause()
        assert session.lore_path is None and [e.name for e in session.lore.entries] == ["Lucia", "Marco"]
        assert shared.exists()


async def test_the_scan_depth_and_the_budget_are_set_and_checked(random_model: Path) -> None:
    async with ready(random_model, size=SIZE) as (app, pilot):
        await typed(pilot, "Una casa.")
        screen = await open_lorebook(pilot)
        for key, value in (("b", "12"), ("s", "zero")):
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, TextPromptScreen)
            app.screen.query_one(Input).value = value
            await pilot.press("enter")
            await pilot.pause()
        assert app.screen is screen
        session = app.sessions.draft
        assert (session.lore.budget, session.lore.scan_depth) == (12, 64)
        assert app.main.draft.lorebook.budget == 12
        assert "scans the last 64 tokens · budget 12 tokens" in screen.query_one("#lore-where").render().plain
        said = [n.message for n in app.notices if "scan_depth" in n.message]
        assert said == ["lorebook scan_depth must be a whole number from 1 to 100,000, not 'zero'"]


async def test_the_palette_reaches_the_lorebook_and_chat_points_to_the_memory(random_model: Path) -> None:
    async with ready(random_model, size=SIZE) as (app, pilot):
        commands = {c.title: c for c in app.get_system_commands(app.main)}
        await commands["General: Lorebook"].callback()
        await pilot.pause()
        assert isinstance(app.screen, LoreScreen)
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("f2")  # chat
        await pilot.pause()
        await pilot.press("alt+l")
        await pilot.pause()
        assert app.screen is app.main
        assert any("The lorebook is for the draft" in n.message for n in app.notices)


def test_keys_are_split_on_commas_but_a_regular_expression_is_whole() -> None:
    assert split_keys("Lucia, la ragazza ,, /a{1,3}/, b") == ("Lucia", "la ragazza", "/a{1,3}/", "b")
