"""Every sampler key: the panel shows the change at once, and the next generation is what
the engine receives with it. Plus the byte ban and the LoRA scale, seen in the text."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from textual import events
from tui_helpers import generated, make_app, ready, spying_loader, typed

from scriptorium.app.tui.tuning import next_preset, nudge
from scriptorium.inference.core.settings import preset

PROSE = preset("prose").with_changes(max_tokens=6, preset="prose")


def panel_text(app) -> str:  # type: ignore[no-untyped-def]
    panel = app.main.sidebar.sampler
    return "\n".join(line.plain for line in panel.lines(60))


@pytest.mark.parametrize(
    ("key", "field", "value", "shown"),
    [
        ("T", "temperature", 0.85, "0.85"),
        ("t", "temperature", 0.75, "0.75"),
        ("K", "top_k", 80, "80"),
        ("k", "top_k", 40, "40"),
        ("P", "top_p", 1.0, "1.00"),
        ("p", "top_p", 0.9, "0.90"),
        ("M", "min_p", 0.01, "0.01"),
        ("R", "repeat_penalty", 1.05, "1.05"),
        ("r", "repeat_penalty", 0.95, "0.95"),
    ],
)
async def test_a_nudge_shows_at_once_and_the_next_generation_uses_it(
    random_model: Path, key: str, field: str, value: float, shown: str
) -> None:
    load, spies = spying_loader()
    async with ready(random_model, loader=load, sampler=PROSE) as (app, pilot):
        await typed(pilot, "Era notte")
        await generated(pilot, "ctrl+g")
        assert getattr(spies[0].last["settings"], field) == getattr(PROSE, field)
        await pilot.press("escape", "ctrl+t", key)
        assert getattr(app.engine_state.sampler, field) == value
        assert shown in panel_text(app)
        assert app.main.sidebar.sampler.border_title == "Sampler · custom"
        await pilot.press("escape")  # back to the draft
        assert app.focused is app.main.draft.editor
        await generated(pilot, "ctrl+g")
        assert getattr(spies[0].last["settings"], field) == value


async def test_arrows_select_a_setting_and_adjust_it(random_model: Path) -> None:
    load, spies = spying_loader()
    async with ready(random_model, loader=load, sampler=PROSE) as (app, pilot):
        await pilot.press("ctrl+t", "down", "right", "right")  # top-k: 50 -> 80 -> 100
        assert app.engine_state.sampler.top_k == 100
        await pilot.press("escape")
        await typed(pilot, "Era")
        await pilot.press("ctrl+g")
        await app.main.wait_until_idle()
        assert spies[0].last["settings"].top_k == 100


async def test_presets_cycle_and_keep_the_seed(random_model: Path) -> None:
    load, spies = spying_loader()
    async with ready(random_model, loader=load, sampler=PROSE) as (app, pilot):
        await pilot.press("ctrl+t", "s")  # a fixed seed first
        seed = app.engine_state.sampler.seed
        assert seed is not None and f"{seed} (fixed)" in panel_text(app)
        await pilot.press("c")
        assert app.engine_state.sampler.preset == "creative" and app.engine_state.sampler.xtc_probability == 0.5
        assert app.engine_state.sampler.seed == seed
        await pilot.press("c")
        assert app.engine_state.sampler.preset == "anti-loop" and app.engine_state.sampler.dry_multiplier == 0.8
        await pilot.press("c")
        assert app.engine_state.sampler.preset == "greedy" and app.engine_state.sampler.temperature == 0.0
        await pilot.press("escape")
        await typed(pilot, "Era")
        await generated(pilot, "ctrl+g")
        received = spies[0].last["settings"]
        assert (received.preset, received.temperature, received.seed) == ("greedy", 0.0, seed)


async def test_fixing_the_seed_reproduces_the_last_generation(phrases_model: Path) -> None:
    # The re-roll reuses the cached prompt and the first run did not, so float32 rounds
    # differently: on the phrases model no sample is near enough to a boundary to move.
    async with ready(phrases_model, sampler=PROSE) as (app, pilot):
        await typed(pilot, "Era notte")
        first = await generated(pilot, "ctrl+g")
        await pilot.press("ctrl+t", "f", "escape")
        assert app.engine_state.sampler.seed == first.seed
        again = await generated(pilot, "ctrl+r")
        assert again.seed == first.seed and again.text == first.text
        await pilot.press("ctrl+t", "f", "escape")  # unfixed: a fresh seed each time
        assert app.engine_state.sampler.seed is None


async def test_the_byte_ban_is_shown_and_toggling_it_changes_what_the_model_writes(byte_loop_model: Path) -> None:
    async with ready(byte_loop_model) as (app, pilot):
        summary = " ".join(panel_text(app).split())
        assert "byte tokens 16000–16255 banned (256)" in summary
        await typed(pilot, "La notte")
        banned = await generated(pilot, "ctrl+g")
        assert "\\x" not in banned.text and banned.text.strip()  # plain words
        probabilities = app.main.sidebar.probabilities
        assert probabilities.event is not None
        assert any(c.banned for c in probabilities.event.top)  # byte tokens rank high, shown banned
        rendered = "\n".join(line.plain for line in probabilities.lines(40))
        assert "⊘ <0xFF>" in rendered and "not in top" in rendered
        await pilot.press("escape", "ctrl+t", "b", "escape")
        assert not app.engine_state.bias.ban_byte_tokens and "byte tokens allowed" in panel_text(app)
        allowed = await generated(pilot, "ctrl+g")
        assert allowed.text.startswith("\ufffd")  # <0xFF> is not UTF-8: the replacement character
        assert not any(c.banned for c in app.main.sidebar.probabilities.event.top)


async def test_with_the_byte_ban_lifted_half_a_character_never_reaches_the_draft(utf8_model: Path) -> None:
    """The utf8 model writes <0xC3> <0xA8> ("è") over and over; cut after three tokens it
    showed "è\\xc3", and Tab wrote the escape into the draft and the session."""

    async with ready(utf8_model, sampler=preset("greedy").with_changes(max_tokens=3, preset="greedy")) as (app, pilot):
        await pilot.press("ctrl+t", "b", "escape")
        assert not app.engine_state.bias.ban_byte_tokens
        await typed(pilot, "La casa")
        done = await generated(pilot, "ctrl+g")
        editor = app.main.draft.editor
        assert done.completion_tokens == 3 and editor.ghost is not None and editor.ghost.text == "è"
        await pilot.press("tab")
        await pilot.pause()
        assert editor.text == "La casaè"
        session = app.sessions.draft
        assert session is not None and [g.text for g in session.generations] == ["è"]


async def test_with_the_byte_ban_lifted_a_byte_that_is_no_text_reaches_the_draft_as_the_replacement_character(
    byte_loop_model: Path, tmp_path: Path
) -> None:
    """The byte-loop model writes <0xFF> over and over: it showed "\\xff\\xff...", and Tab wrote
    those escapes into the draft, the session and the export, four characters a time the
    author could have typed. The panel still names the token by its byte."""
    from scriptorium.app.sessions.export import export_session

    async with ready(byte_loop_model, sampler=preset("greedy").with_changes(max_tokens=3, preset="greedy")) as (
        app,
        pilot,
    ):
        await pilot.press("ctrl+t", "b", "escape")
        await typed(pilot, "La notte")
        await generated(pilot, "ctrl+g")
        rendered = "\n".join(line.plain for line in app.main.sidebar.probabilities.lines(40))
        assert "chosen <0xFF>" in rendered
        await pilot.press("tab")
        await pilot.pause()
        assert app.main.draft.editor.text == "La notte" + "\ufffd" * 3
        session = app.sessions.draft
        assert session is not None and [g.text for g in session.generations] == ["\ufffd" * 3]
        exported = export_session(session, tmp_path / "export.md").read_text(encoding="utf-8")
        assert exported.endswith("La notte" + "\ufffd" * 3 + "\n") and "\\x" not in exported


async def test_the_lora_scale_keys_change_the_adapter_the_next_generation_uses(
    random_model: Path, lora_adapter: Path
) -> None:
    load, spies = spying_loader()
    async with ready(random_model, lora=lora_adapter, loader=load) as (app, pilot):
        assert app.engine_state.lora_scale == 1.0
        await typed(pilot, "Era notte")
        with_adapter = await generated(pilot, "ctrl+g")
        assert with_adapter.text.split()[0] == "gatto"  # the adapter's favourite word
        await pilot.press("escape", "ctrl+t", *"l" * 10)
        assert app.engine_state.lora_scale == 0.0 and "0.00" in panel_text(app)
        assert "× 0.00" in "\n".join(line.plain for line in app.main.sidebar.model.lines(40))
        await pilot.press("escape")
        without = await generated(pilot, "ctrl+g")
        assert spies[0].last["lora_scale"] == 0.0
        assert "gatto" not in without.text.split()[:1]
        await pilot.press("escape", "ctrl+t", "L", "escape")
        assert app.engine_state.lora_scale == 0.1


async def test_a_change_while_streaming_is_marked_for_the_next_generation(random_model: Path) -> None:
    from tui_helpers import Gate, drawn_border

    gate = Gate(after_tokens=2)
    async with ready(random_model, loader=gate.loader, sampler=PROSE.with_changes(max_tokens=50)) as (app, pilot):
        await typed(pilot, "Era")
        await pilot.press("ctrl+g")
        await gate.wait_reached()
        await pilot.press("ctrl+t", "T")
        await pilot.pause()
        # Whole at 80 columns, where "applies to the next generation" was cut to "…generat…".
        assert drawn_border(app.main.sidebar.sampler, bottom=True) == "for the next generation"
        gate.release()
        await app.main.wait_until_idle()
        await pilot.pause()
        assert app.main.sidebar.sampler.border_subtitle == ""


async def test_keys_pressed_faster_than_the_panel_redraws_each_take_effect() -> None:
    """A burst as a held key or quick fingers send it: every key is queued before the app
    has applied the first. Each change builds on the one before, and none undoes another."""

    app = make_app(None, sampler=PROSE)
    async with app.run_test() as pilot:
        await pilot.press("ctrl+t")
        for key in ("T", "T", "T", "k", "b", "c", "b"):
            event = events.Key(key, key)
            event.set_sender(app)
            app.post_message(event)
        await pilot.pause()
        await pilot.pause()
        # Three raises, top-k lowered, the ban off and on again, and the preset after
        # 'custom' (a preset is whole: it keeps none of the nudges).
        expected = PROSE
        for knob, direction in (("temperature", 1), ("temperature", 1), ("temperature", 1), ("top_k", -1)):
            expected = nudge(expected, knob, direction)
        assert expected.preset == "custom"
        assert app.engine_state.sampler == next_preset(expected)
        assert app.engine_state.bias.ban_byte_tokens
        app.engine_state = replace(app.engine_state, sampler=PROSE)
        await pilot.pause()
        for key in ("T", "T", "T", "k", "b"):
            event = events.Key(key, key)
            event.set_sender(app)
            app.post_message(event)
        await pilot.pause()
        await pilot.pause()
        assert app.engine_state.sampler.temperature == pytest.approx(PROSE.temperature + 0.15)
        assert app.engine_state.sampler.top_k == 40 and not app.engine_state.bias.ban_byte_tokens
        assert f"{PROSE.temperature + 0.15:.2f}" in panel_text(app)


async def test_a_key_never_moves_a_value_beyond_its_range_against_its_direction() -> None:
    """The config and the flags allow values the keys' steps do not reach (temperature 3,
    top-k 5000): raising such a value must not lower it to the range's end, nor lowering
    a top-p below the range raise it."""
    beyond = PROSE.with_changes(temperature=3.0, top_k=5000, top_p=0.01, min_p=0.8, repeat_penalty=4.0)

    app = make_app(None, sampler=beyond)
    async with app.run_test() as pilot:
        await pilot.press("ctrl+t", "T", "K", "p", "M", "R")
        assert app.engine_state.sampler == beyond
        await pilot.press("t", "k", "P", "m", "r")
        assert (
            app.engine_state.sampler.temperature,
            app.engine_state.sampler.top_k,
            app.engine_state.sampler.top_p,
        ) == (2.0, 1000, 0.06)
        assert (app.engine_state.sampler.min_p, app.engine_state.sampler.repeat_penalty) == (0.5, 2.0)


async def test_the_byte_ban_is_shown_on_or_off_for_a_vocabulary_without_byte_tokens() -> None:
    """A GPT-2-style vocabulary has no <0xNN> tokens: the ban key must still show its
    effect (and the author's own entries stay listed), not 'none' either way."""
    from scriptorium.app.tui.widgets.sampler_panel import SamplerView
    from scriptorium.inference.core.settings import LogitBias

    app = make_app(None, sampler=PROSE)
    async with app.run_test():
        panel = app.main.sidebar.sampler
        panel.view = SamplerView(PROSE, LogitBias(ban_byte_tokens=True, entries=((42, 2.5),)), ())
        banned = panel_text(app)
        panel.view = SamplerView(PROSE, LogitBias(ban_byte_tokens=False, entries=((42, 2.5),)), ())
        allowed = panel_text(app)
        assert "banned" in banned and "allowed" in allowed and "+2.5" in allowed  # the entry is still listed


async def test_raising_a_lora_scale_beyond_the_keys_range_keeps_it(random_model: Path, lora_adapter: Path) -> None:
    """--lora-scale takes up to 4, the keys step up to 2: L on 3 must not lower it to 2."""

    async with ready(random_model, lora=lora_adapter) as (app, pilot):
        app.engine_state = replace(app.engine_state, lora_scale=3.0)
        await pilot.press("ctrl+t", "L")
        assert app.engine_state.lora_scale == 3.0
        await pilot.press("l")
        assert app.engine_state.lora_scale == 2.0


async def test_a_nudge_redraws_the_panel_alone_and_only_a_new_row_lays_the_screen_out_again() -> None:
    """A new layout redraws the whole screen (the draft, every panel): a nudge that changes a
    value in place needs none, and a key pressed while tokens stream waited behind one. A
    change that adds a row (DRY turned on) still gets one, or the row would be cut."""

    app = make_app(None, sampler=PROSE)
    async with app.run_test(size=(140, 50)) as pilot:
        await pilot.press("ctrl+t")
        await pilot.pause()
        panel = app.main.sidebar.sampler
        layouts: list[bool] = []
        redraw = panel.refresh

        def recording(*regions, **options):  # type: ignore[no-untyped-def]
            layouts.append(bool(options.get("layout")))
            return redraw(*regions, **options)

        panel.refresh = recording  # type: ignore[method-assign]
        await pilot.press("T", "t", "K")
        await pilot.pause()
        assert layouts and not any(layouts), layouts
        assert app.engine_state.sampler.top_k == 80 and "80" in panel_text(app)
        layouts.clear()
        await pilot.press("D")  # DRY on: its row appears
        await pilot.pause()
        assert app.engine_state.sampler.dry_multiplier > 0 and "DRY" in panel_text(app)
        assert any(layouts), layouts
