"""Token healing in the draft (inference/local/healing.py), on a model that learned "molo" as the
one token "▁molo" (gguf_healing.py): the suggestion shows only what follows the cursor,
the author's text is never changed, and the panel shows the healed step as what it is."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from gguf_models import PHRASES_GREEDY
from tui_helpers import generated, ready, spying_loader, typed, window_marked


async def continued(model: Path, text: str, *keys: str) -> tuple[str, str, Any, str]:
    """(the suggestion, the draft once it is accepted, the panel's last event, its note)
    after typing `text`, pressing `keys` first (the sampler panel's), then ctrl+g."""
    seen: list[Any] = []

    async with ready(model, size=(120, 40)) as (app, pilot):
        await pilot.press(*keys)
        await typed(pilot, text)
        await generated(pilot, "ctrl+g")
        editor = app.main.draft.editor
        panel = app.main.sidebar.probabilities
        suggestion = editor.ghost.text if editor.ghost is not None else ""
        event, note = panel.event, str(panel.border_subtitle)
        await pilot.press("tab")
        await pilot.pause()
        seen.extend([suggestion, editor.text, event, note])
    return seen[0], seen[1], seen[2], seen[3]


async def test_lungo_il_mo_is_continued_with_lo_and_the_panel_shows_the_healed_step(molo_model: Path) -> None:
    suggestion, accepted, event, note = await continued(molo_model, "lungo il mo")
    assert (suggestion, accepted) == ("lo", "lungo il molo")
    assert event is not None and event.healing is not None and event.healing.rest == " mo"
    assert "healed ' mo'" in note and "allowed" in note


async def test_a_trailing_space_is_healed_and_stays_the_authors(molo_model: Path) -> None:
    suggestion, accepted, _event, _note = await continued(molo_model, "lungo il ")
    assert (suggestion, accepted) == ("molo", "lungo il molo")


async def test_healing_switched_off_in_the_sampler_panel(molo_model: Path) -> None:
    # ctrl+t: the sampler panel; h: healing off; Esc: back to the draft.
    suggestion, accepted, event, _note = await continued(molo_model, "lungo il mo", "ctrl+t", "h", "escape")
    assert (suggestion, accepted) == ("etto", "lungo il moetto")
    assert event is not None and event.healing is None


async def inserted(model: Path, loader: Any = None) -> tuple[str, int | None, int]:
    """The suggestion ctrl+o writes after "Lucia." in "Lucia. Poi scese dalla salita.", where
    the window marker then ends in the draft (None: at its end), and the characters after the
    cursor its prompt carried as the session records them."""
    seen: list[str] = []
    marked: list[int | None] = []
    recorded: list[int] = []

    async with ready(model, **({"loader": loader} if loader else {}), size=(120, 40)) as (app, pilot):
        await typed(pilot, "Lucia. Poi scese dalla salita.")
        await pilot.press(*["left"] * len(" Poi scese dalla salita."))
        await generated(pilot, "ctrl+o")
        editor = app.main.draft.editor
        ghost = editor.ghost
        seen.append(ghost.text if ghost is not None else "")
        await window_marked(pilot)
        marked.append(editor.window_end)
        recorded.append(app.sessions.draft.generations[-1].fim_after)
    return seen[0], marked[0], recorded[0]


async def test_an_insert_with_fim_tokens_carries_the_text_after_the_cursor(fim_model: Path) -> None:
    loader, spies = spying_loader()
    suggestion, window_end, fim_after = await inserted(fim_model, loader)
    assert suggestion == " La casa era buia."
    assert fim_after == len(" Poi scese dalla salita.")  # the session says what the prompt carried
    assert window_end == len("Lucia. Poi scese dalla salita.")  # the marker: the text after the cursor is seen
    call = spies[-1].last
    assert call["prompt"].endswith("Lucia.<|fim_suffix|> Poi scese dalla salita.<|fim_middle|>")
    assert call["special"] is True


async def test_an_insert_without_fim_tokens_stops_at_the_end_of_its_sentence(phrases_model: Path) -> None:
    # Unbounded, the phrases model writes sentence after sentence up to max tokens.
    suggestion, window_end, fim_after = await inserted(phrases_model)
    assert suggestion == PHRASES_GREEDY
    assert window_end == len("Lucia.")  # nothing after the cursor is seen
    assert fim_after == 0


async def test_healing_and_the_length_mode_are_in_the_palette_and_the_panel(molo_model: Path) -> None:
    async with ready(molo_model, size=(140, 50)) as (app, pilot):
        commands = {c.title: c for c in app.get_system_commands(app.main)}
        await commands["Sampler panel: Healing"].callback()
        await commands["Sampler panel: Stop at"].callback()
        await pilot.pause()
        assert (app.engine_state.sampler.heal, app.engine_state.sampler.length) == (False, "sentence")
        text = "\n".join(line.plain for line in app.main.sidebar.sampler.lines(60))
        assert re.search(r"healing\s+off", text), text  # shown once it is not the default
        assert re.search(r"max tokens\s+\d+ · or sentence end", text), text
