"""Max tokens and stop strings on screen in the Sampler panel and settable from the
palette; the preset cycle comes back to the author's own values ('custom')."""

from __future__ import annotations

import re
from pathlib import Path

from textual.widgets import Input
from tui_helpers import ready

from scriptorium.app.tui.screens.confirm_screen import TextPromptScreen
from scriptorium.inference.core.settings import preset

MINE = preset("prose").with_changes(temperature=1.3, max_tokens=37, stop=("\n\n", "FINE"), repeat_window=128)


def panel_text(app) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(line.plain for line in app.main.sidebar.sampler.lines(60))


async def test_length_and_stops_set_on_the_command_line_show_in_the_panel(random_model: Path) -> None:
    async with ready(random_model, sampler=MINE, size=(140, 50)) as (app, pilot):
        text = panel_text(app)
        assert app.engine_state.sampler.preset == "custom"
        assert re.search(r"max tokens\s+37", text), text
        assert re.search(r"stops\s+'\\n\\n' 'FINE'", text), text
        assert "last 128" in text  # the repeat window
        commands = {c.title: c for c in app.get_system_commands(app.main)}
        await commands["Sampler panel: max tokens +"].callback()
        await pilot.pause()
        assert app.engine_state.sampler.max_tokens == 50
        assert re.search(r"max tokens\s+50", panel_text(app))


async def test_cycling_presets_comes_back_to_the_authors_own_values(random_model: Path) -> None:
    async with ready(random_model, sampler=MINE, size=(140, 50)) as (app, pilot):
        await pilot.press("ctrl+t")
        seen = []
        for _ in range(len(app.config.all_presets()) + 1):
            await pilot.press("c")
            await pilot.pause()
            seen.append(app.engine_state.sampler.preset)
        assert seen[-1] == "custom", seen
        assert app.engine_state.sampler.temperature == 1.3 and app.engine_state.sampler.stop == ("\n\n", "FINE")


async def test_stop_strings_are_set_and_cleared_from_the_palette_and_the_panel(random_model: Path) -> None:
    async with ready(random_model, sampler=MINE, size=(140, 50)) as (app, pilot):

        async def write(text: str) -> None:
            prompt = app.screen
            assert isinstance(prompt, TextPromptScreen), prompt
            prompt.query_one(Input).value = text
            await pilot.press("enter")
            await pilot.pause()

        commands = {c.title: c for c in app.get_system_commands(app.main)}
        await commands["Sampler panel: Stop strings"].callback()
        await pilot.pause()
        # The dialog starts from the stops in force, written as the panel shows them.
        assert app.screen.query_one(Input).value == "'\\n\\n' 'FINE'"
        await write("'THE END' '\\n'")
        assert app.engine_state.sampler.stop == ("THE END", "\n")
        assert re.search(r"stops\s+'THE END' '\\n'", panel_text(app)), panel_text(app)

        # Unquoted, the line is refused with the way to write it, and the stops stay.
        await pilot.press("ctrl+t", "S")
        await write("FINE")
        assert app.engine_state.sampler.stop == ("THE END", "\n")
        assert any("stop strings: write each in quotes" in n.message for n in app.notices)

        # An empty line clears them.
        await pilot.press("S")
        await write("")
        assert app.engine_state.sampler.stop == ()
        assert re.search(r"stops\s+none", panel_text(app)), panel_text(app)


async def test_dry_sequence_breakers_are_set_from_the_panel_like_the_stops(random_model: Path) -> None:
    async with ready(random_model, sampler=MINE.with_changes(dry_multiplier=0.8), size=(140, 50)) as (app, pilot):
        await pilot.press("ctrl+t", "a", "B")
        await pilot.pause()
        prompt = app.screen
        assert isinstance(prompt, TextPromptScreen), prompt
        assert prompt.query_one(Input).value == "'\\n' ':' '\"' '*'"  # llama.cpp's own
        prompt.query_one(Input).value = "'\\n' '.'"
        await pilot.press("enter")
        await pilot.pause()
        assert app.engine_state.sampler.dry_sequence_breakers == ("\n", ".")
        assert re.search(r"breakers\s+'\\n' '\.'", panel_text(app)), panel_text(app)


async def test_every_sampler_setting_has_a_key_and_every_key_a_palette_entry(random_model: Path) -> None:
    from dataclasses import fields

    from scriptorium.app.tui import tuning
    from scriptorium.app.tui.widgets.sampler_panel import SamplerPanel
    from scriptorium.inference.core.settings import SamplerSettings

    own = {"samplers": "move_in_order", "seed": "new_seed", "stop": "edit_stops", "preset": "cycle_preset"}
    own["dry_sequence_breakers"] = "edit_breakers"
    own.update(heal="toggle_heal", length="cycle_length")
    actions = {binding.action.split("(")[0] for binding in SamplerPanel.BINDINGS}
    for setting in fields(SamplerSettings):
        assert setting.name in tuning.KNOBS or own.get(setting.name) in actions, setting.name

    async with ready(random_model, size=(140, 50)) as (app, pilot):
        titles = {c.title for c in app.get_system_commands(app.main)}
        described = {binding.description for binding in SamplerPanel.BINDINGS if binding.id}
        # The arrows act on the selected row, which the palette has none of.
        arrows = {"Sampler panel: Select", "Sampler panel: Lower", "Sampler panel: Adjust"}
        assert {f"Sampler panel: {d}" for d in described} - titles <= arrows
