"""Every binding has an id and a description; F1 lists them all; the command palette
reaches every action; a keymap moves keys by id."""

from __future__ import annotations

import gc
import sys
import weakref
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

import pytest
from textual.scroll_view import ScrollView
from textual.widgets import Footer, OptionList
from tui_helpers import generated, make_app, ready, typed

from scriptorium.app.config.text import DEFAULT_CONFIG_TEXT
from scriptorium.app.tui.bindings import keymap_problems
from scriptorium.app.tui.screens.help_screen import HelpScreen
from scriptorium.app.tui.screens.main_screen import MainScreen


async def test_every_binding_has_a_unique_id_and_a_description() -> None:
    app = make_app(None)
    async with app.run_test():
        ids = []
        for section in app.keys.sections:
            for binding in section.bindings:
                assert binding.id and binding.description and binding.tooltip, binding
                ids.append(binding.id)
        assert len(ids) == len(set(ids))
        assert {
            "draft.continue",
            "draft.accept",
            "draft.accept_word",
            "draft.reject",
            "draft.stop",
            "draft.reroll",
            "chat.regenerate",
            "chat.edit_last",
            "sampler.temperature_up",
            "sampler.top_k_down",
            "sampler.top_p_up",
            "sampler.min_p_up",
            "sampler.repeat_penalty_up",
            "sampler.preset",
            "sampler.ban",
            "sampler.new_seed",
            "sampler.fix_seed",
            "sampler.lora_up",
            "panels.probabilities",
            "app.sidebar",
            "app.help",
        } <= set(ids)


async def test_every_binding_id_names_the_area_its_key_works_in() -> None:
    """The ids are what an author writes in the config's [keymap]; the chat's branch and
    reply-version keys were listed by F1 as 'self.branch', 'self.version_previous' (a
    rename gone too far), so 'chat.version_previous' from an older config named nothing."""
    prefixes = {
        "General": "app.",
        "Focus": "focus.",
        "Draft": "draft.",
        "Find": "find.",
        "Chat": "chat.",
        "Panels": "panels.",
        "Sampler panel": "sampler.",
    }

    app = make_app(None)
    async with app.run_test():
        misnamed = [
            (section.title, binding.id)
            for section in app.keys.sections
            for binding in section.bindings
            if not (binding.id or "").startswith(prefixes[section.title])
        ]
        assert misnamed == []


@pytest.mark.parametrize("width", [60, 80, 160])
async def test_f1_lists_every_binding_without_scrolling_sideways(width: int) -> None:
    """The five-column table scrolled sideways even at 160 columns (and at 60 the id too)."""

    app = make_app(None)
    async with app.run_test(size=(width, 24)) as pilot:
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        listing = app.screen.query_one("#help-table", ScrollView)
        await pilot.pause()
        assert listing.max_scroll_x == 0, listing.virtual_size
        assert listing.virtual_size.width <= listing.scrollable_content_region.width
        options = app.screen.query_one(OptionList).options
        expected = {b.id for section in app.keys.sections for b in section.bindings}
        assert {option.id for option in options if option.id} == expected
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_the_command_palette_reaches_every_action() -> None:
    """Every action is in the palette of one mode or the other; the hidden mode's are not,
    as they would act unseen on the pane the author is not looking at."""

    app = make_app(None)
    async with app.run_test() as pilot:
        titles = {}
        for mode in ("draft", "chat"):
            if app.main.mode != mode:
                await pilot.press("f2")
            titles[mode] = {command.title for command in app.get_system_commands(app.main)}
        assert not {title for title in titles["draft"] if title.startswith("Chat: ")}
        assert not {title for title in titles["chat"] if title.startswith("Draft: ")}
        for section in app.keys.sections:
            mode = "chat" if section.title == "Chat" else "draft"
            for binding in section.bindings:
                if binding.id.split(".")[-1] in {
                    "select_up",
                    "select_down",
                    "adjust_up",
                    "adjust_down",
                    "leave",
                    "next",
                    "previous",
                    "palette",
                    "help_quit",
                    "ask_reject",
                }:
                    continue  # moving within a panel, the palette itself, or Esc's first press
                assert f"{section.title}: {binding.description}" in titles[mode], binding.id


async def test_a_palette_command_runs_the_action(random_model: Path) -> None:
    async with ready(random_model) as (app, pilot):
        commands = {c.title: c for c in app.get_system_commands(app.main)}
        # The sampler panel asks the app for the change (a message): it lands a moment later.
        await commands["Sampler panel: temperature +"].callback()
        await pilot.pause()
        assert app.engine_state.sampler.temperature == 0.05
        await commands["Sampler panel: Byte ban"].callback()
        await pilot.pause()
        assert not app.engine_state.bias.ban_byte_tokens
        await typed(pilot, "Era")
        await commands["Draft: Continue"].callback()
        await app.main.wait_until_idle()
        assert app.main.draft.editor.ghost is not None


async def test_a_keymap_moves_a_binding_by_id(random_model: Path) -> None:
    async with ready(random_model, keymap={"draft.continue": "f13", "draft.accept": "ctrl+y"}) as (app, pilot):
        await typed(pilot, "Era")
        await pilot.press("ctrl+g")
        assert app.main.draft.editor.ghost is None  # ctrl+g no longer continues
        done = await generated(pilot, "f13")
        assert app.main.draft.editor.ghost is not None
        assert "^y accept" in app.main.draft.suggestion.border_subtitle
        await pilot.press("ctrl+y")
        assert app.main.draft.editor.text == "Era" + done.text
        rows = {row[4]: row[1] for row in app.keys.rows()}
        assert rows["draft.continue"] == "f13"


async def test_an_unknown_keymap_id_is_reported() -> None:
    app = make_app(None, keymap={"draft.nope": "f9"})
    async with app.run_test():
        assert any("draft.nope" in n.message for n in app.notices)


async def test_a_key_the_keymap_gives_to_two_bindings_is_reported() -> None:
    app = make_app(None, keymap={"draft.continue": "ctrl+q"})
    async with app.run_test():
        assert any("keymap.draft.continue: ctrl+q is already app.quit's key" in n.message for n in app.notices)


async def test_the_starter_configs_keymap_example_works_as_written(random_model: Path) -> None:
    """Uncommented as the starter file shows it, the example moves a real binding to keys
    nothing else answers first, and each of them runs it (its F6 was the draft editor's own
    key, select line, so it never continued anything)."""
    section = DEFAULT_CONFIG_TEXT.split("[keymap]\n", 1)[1].split("\n[", 1)[0]
    example = next(line[2:] for line in section.splitlines() if line.startswith('# "'))
    keymap = tomllib.loads(example)
    assert keymap_problems(keymap) == []
    ((binding_id, keys),) = keymap.items()
    assert binding_id == "draft.continue"

    async with ready(random_model, keymap=keymap) as (app, pilot):
        assert not app.notices
        await typed(pilot, "Era")
        for key in keys.split(","):
            await generated(pilot, key)
            assert app.main.draft.editor.ghost is not None, key
            await pilot.press("escape", "escape")
            assert app.main.draft.editor.ghost is None


async def test_the_palette_opens_with_ctrl_p_and_runs_a_command(random_model: Path) -> None:
    async with ready(random_model) as (app, pilot):
        await pilot.press("ctrl+p")
        await typed(pilot, "Byte ban")
        await app.workers.wait_for_complete()  # the palette searches in a worker
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert not app.engine_state.bias.ban_byte_tokens
        assert isinstance(app.screen, MainScreen)


async def test_the_footers_rebuilds_free_the_keys_they_replace(random_model: Path) -> None:
    """The footer rebuilds its keys when a generation starts and ends; the keys it replaced
    are freed, not kept alive by the footer's watchers (Textual issue 6666)."""

    async with ready(random_model) as (app, pilot):
        await typed(pilot, "Era")
        await generated(pilot, "ctrl+g")
        await pilot.press("escape")  # the suggestion goes: the footer shows the writing keys again
        await pilot.pause()
        footer = app.main.query_one(Footer)
        # Keys built after the app settled (its objects frozen out of the collector then).
        replaced = [weakref.ref(key) for key in footer.query("FooterKey")]
        assert replaced
        await generated(pilot, "ctrl+g")
        await pilot.pause()
        assert not any(key() in footer.query("FooterKey") for key in replaced)  # rebuilt
        gc.collect()
        assert [key for key in replaced if key() is not None] == []


async def test_remapping_one_of_the_keys_esc_serves_leaves_esc_to_the_others(random_model: Path) -> None:
    """Esc stops the model, rejects a suggestion or leaves inspection, as each allows.
    Textual drops every binding of a key when one of them is remapped: moving the stop to
    F11 took Esc from rejecting too."""
    from tui_helpers import Gate

    gate = Gate(after_tokens=3)

    try:
        async with ready(random_model, keymap={"draft.stop": "f13"}, loader=gate.loader) as (app, pilot):
            await typed(pilot, "Era")
            await pilot.press("ctrl+g")
            await gate.wait_reached()
            await pilot.press("escape")  # no longer the stop key
            assert app.main.is_generating
            await pilot.press("f13")
            gate.release()
            await app.main.wait_until_idle()
            await pilot.pause()
            ghost = app.main.draft.editor.ghost
            assert ghost is not None and not ghost.streaming
            await pilot.press("escape")  # still rejects
            assert app.main.draft.editor.ghost is None and app.main.draft.editor.text == "Era"
    finally:
        gate.release()


async def test_format_characters_typed_reach_the_text() -> None:
    """ZWNJ (a Persian keyboard's Shift+Space), ZWJ (in an emoji the picker types), the
    direction marks and the soft hyphen are not str.isprintable(): Textual's TextArea and
    Input dropped them, so 'می‌خواهم' was written 'میخواهم' and a family emoji fell apart."""
    from textual import events
    from textual.keys import _character_to_key

    async def typed(app: Any, pilot: Any, text: str) -> None:
        for character in text:  # as the terminal's input parser makes them
            app.post_message(events.Key(_character_to_key(character), character))
            await pilot.pause()

    app = make_app(None)
    async with app.run_test() as pilot:
        await pilot.pause()
        word = "می\u200cخواهم \U0001f468\u200d\U0001f469 \u200eok\u00ad"
        await typed(app, pilot, word)
        assert app.main.draft.editor.text == word
        await pilot.press("f2")
        await typed(app, pilot, word)
        assert app.main.chat.input.value == word
        await pilot.press("alt+e")  # the memory: a TextArea of its own dialog
        await pilot.pause()
        await typed(app, pilot, word)
        assert app.screen.query_one("#pinned-text").text.endswith(word)


async def test_a_paragraph_pasted_into_the_chat_field_is_kept_whole_with_its_line_breaks() -> None:
    """Textual's Input kept a paste's first line only: the rest of a pasted paragraph was
    dropped without a word. Then its lines were joined by spaces: a pasted poem lost its
    lines. The field holds several lines now, and a Windows paste's \\r\\n is one break."""
    from textual import events

    app = make_app(None)
    async with app.run_test() as pilot:
        await pilot.press("f2")
        await pilot.pause()
        app.post_message(events.Paste("Riassumi questo:\r\nla casa era buia.\n\ne il gatto dormiva."))
        await pilot.pause()
        assert app.main.chat.input.value == "Riassumi questo:\nla casa era buia.\n\ne il gatto dormiva."


@pytest.mark.parametrize(
    "mode, keys, wanted",
    [
        ("draft", ("E", "r", "a", "ctrl+g"), {"Reject…", "Continue", "Accept"}),
        ("chat", ("E", "r", "a", "enter"), {"Send", "Regenerate"}),
    ],
)
async def test_a_narrow_key_bar_drops_lesser_keys_whole(
    random_model: Path, mode: str, keys: tuple[str, ...], wanted: set[str]
) -> None:
    """At 80 and 60 columns with a suggestion or a reply shown, the key bar keeps the mode's
    main keys, Keys, Mode (at 80 it had dropped the key to switch modes) and Quit, each
    whole, none under another; lesser keys go, and come back when wide."""

    async with ready(random_model, mode=mode, size=(80, 24)) as (app, pilot):
        await generated(pilot, *keys)
        footer = app.main.query_one(Footer)
        for width in (80, 60):
            await pilot.resize_terminal(width, 24)
            await pilot.pause()
            shown = [key for key in footer.query("FooterKey") if key.display]
            assert wanted | {"Keys", "Mode", "Quit"} <= {key.description for key in shown}, width
            for key in shown:
                assert footer.region.contains_region(key.region), key.description
                assert key.region.width == key.render().cell_len + key.styles.gutter.width, key.description
                assert not any(key.region.overlaps(other.region) for other in shown if other is not key)
        await pilot.resize_terminal(120, 24)
        await pilot.pause()
        assert all(key.display for key in footer.query("FooterKey"))
