"""The prompt templates in the author's prompts folder: an edited template is what the
model is given, and one that cannot be read is a notification, never a crash."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_helpers import generated, ready, spying_loader, typed

from scriptorium import prompts
from scriptorium.app import paths

OPENING = "C'era una volta"


async def test_the_author_can_edit_the_prompt_template(random_model: Path) -> None:
    paths.prompts_dir().mkdir(parents=True)
    (paths.prompts_dir() / prompts.CONTINUE).write_text("Racconto breve.\n\n{draft}", encoding="utf-8")
    load, spies = spying_loader()
    async with ready(random_model, loader=load) as (app, pilot):
        await typed(pilot, OPENING)
        await generated(pilot, "ctrl+g")
        assert spies[0].last["prompt"] == "Racconto breve.\n\n" + OPENING


@pytest.mark.parametrize("damage", ["not-utf8", "dangling-link"])
async def test_a_prompt_template_that_cannot_be_read_is_a_notification(random_model: Path, damage: str) -> None:
    """It raised out of ctrl+g (and the other prompt users) and took the app, and the
    words just typed, with it."""

    paths.prompts_dir().mkdir(parents=True)
    for name in prompts.NAMES:
        copy = paths.prompts_dir() / name
        if damage == "not-utf8":
            copy.write_bytes(b"Racconto \xe8 breve.\n\n{draft}")  # Latin-1, not UTF-8
        else:
            copy.symlink_to(paths.prompts_dir() / "gone" / name)
    async with ready(random_model) as (app, pilot):
        await typed(pilot, OPENING)
        for key in ("ctrl+g", "ctrl+n"):
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is app.main and not app.main.is_generating
            assert app.main.draft.editor.text == OPENING and app.main.draft.editor.ghost is None
        await pilot.press("f2")  # chat mode
        await pilot.pause()
        await typed(pilot, "Ciao")
        await pilot.press("enter")
        await pilot.pause()
        assert not app.main.is_generating
        messages = [n.message for n in app.notices]
        assert any(f"{prompts.CONTINUE}" in m and ("is not UTF-8 text" in m or "not found" in m) for m in messages)
        assert any(prompts.CHAT_SYSTEM in m for m in messages)
        assert app.manuscript.save_everything()
