"""Keys on a Mac keyboard: a stock Terminal sends Option+letter as a character (Option is
not Meta there), so alt+e and alt+n never arrived. Every alt-bound action has another way in
(the palette, or a key without alt), and Option+← and Option+→, which a stock Terminal sends
as Esc b and Esc f (its word moves), go through the suggestion's versions as alt+← and alt+→ do."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import generated, GREEDY, make_app, ready, typed

PROMPT = "C'era una volta una casa sul lago."


async def test_every_alt_key_has_a_palette_entry_or_another_key() -> None:
    app = make_app(None)
    async with app.run_test(size=(120, 40)) as pilot:
        titles = {command.title for command in app.get_system_commands(app.main)}
        await pilot.press("f2")
        titles |= {command.title for command in app.get_system_commands(app.main)}
        alt_only = []
        for section in app.keys.sections:
            for binding in section.bindings:
                keys = [key.strip() for key in binding.key.split(",")]
                if not any(key.startswith("alt+") for key in keys):
                    continue
                if all(key.startswith("alt+") for key in keys) and (
                    f"{section.title}: {binding.description}" not in titles
                ):
                    alt_only.append(binding.id)
        assert alt_only == []


async def test_option_arrows_of_a_stock_mac_terminal_go_through_the_versions(random_model: Path) -> None:
    varied = GREEDY.with_changes(temperature=1.5, top_k=0, top_p=1.0, seed=None, preset="custom")

    async with ready(random_model, sampler=varied, size=(120, 40)) as (app, pilot):
        await typed(pilot, PROMPT)
        await generated(pilot, "ctrl+g")
        await generated(pilot, "ctrl+r")
        ghost = app.main.draft.editor.ghost
        assert ghost is not None and len(ghost.versions) == 2 and ghost.version == 1
        await pilot.press("alt+b")  # Option+← in Terminal.app: Esc b
        assert ghost.version == 0
        await pilot.press("alt+f")  # Option+→: Esc f
        assert ghost.version == 1
        assert app.main.draft.editor.text == PROMPT  # not typed into the draft either
