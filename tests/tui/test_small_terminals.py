"""The app in small and resized terminals: what matters (the draft, the suggestion, the
keys) stays reachable."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Awaitable, Callable

import pytest
from textual.pilot import Pilot
from textual.screen import ModalScreen
from textual.widgets import Button
from tui_helpers import candidates_written, drawn_lines, Gate, generated, GREEDY, make_app, ready, typed

from scriptorium.app.sessions.opening import DraftFile
from scriptorium.app.tui.screens.alternatives_screen import AlternativesScreen
from scriptorium.app.tui.screens.load_model_screen import LoadModelScreen
from scriptorium.app.tui.screens.lore_entry_screen import LoreEntryScreen
from scriptorium.app.tui.screens.pinned_screen import PinnedScreen
from scriptorium.app.tui.screens.unsaved_screen import UnsavedScreen
from scriptorium.app.tui.token_spans import TokenRecord, TokenSource
from scriptorium.app.tui.widgets.suggestion_view import SuggestionView
from scriptorium.inference.core.events import Candidate, GenerationDone
from scriptorium.inference.window.lore import LoreEntry
from scriptorium.inference.window.window import Pinned

DISK_FULL = "[Errno 28] No space left on device: '/home/someone/writing/novel/chapter-one.md'"


def _shown(view: SuggestionView) -> list[str]:
    return [view.render_line(y).text.rstrip() for y in range(view.content_size.height)]


async def _with_a_tall_suggestion(
    model: Path, check: Callable[[Pilot[Any], GenerationDone], Awaitable[None]], tokens: int = 150, height: int = 24
) -> None:
    """Run `check` at 80 columns after the model wrote a suggestion (by default, at 24 lines,
    three times taller than its view)."""

    async with ready(model, sampler=GREEDY.with_changes(max_tokens=tokens), size=(80, height)) as (app, pilot):
        await typed(pilot, "C'era una volta")
        done = await generated(pilot, "ctrl+g")
        await pilot.pause()
        await check(pilot, done)


async def test_a_suggestion_taller_than_its_view_shows_its_end_and_scrolls_back_to_its_start(
    random_model: Path,
) -> None:
    async def check(pilot: Pilot[Any], done: GenerationDone) -> None:
        view = pilot.app.main.draft.suggestion
        last_word = done.text.split()[-1]
        assert view.virtual_size.height > view.content_size.height  # it does not fit
        assert [line for line in _shown(view) if line][-1].endswith(last_word)
        await pilot.resize_terminal(60, 15)
        await pilot.pause()
        await pilot.pause()
        assert [line for line in _shown(view) if line][-1].endswith(last_word)
        view.scroll_home(animate=False)
        await pilot.pause()
        assert _shown(view)[0].startswith("C'era una volta")

    await _with_a_tall_suggestion(random_model, check)


def _dialogs(folder: Path) -> dict[str, ModalScreen[object]]:
    return {
        # Four buttons in two rows, with two lines of question and the reason.
        "quit, named": UnsavedScreen(
            DraftFile(folder / "chapter-one.md"), {"draft file": DISK_FULL, "chat": DISK_FULL}
        ),
        # Three buttons in one row: wider than a 60-column terminal.
        "quit, unnamed": UnsavedScreen(DraftFile(None), {"draft": DISK_FULL}),
        "load": LoadModelScreen(None, error=f"Could not load the model: {DISK_FULL}"),
        # The note's depth beside Keep and Cancel was wider than the dialog at 80 columns.
        "note": PinnedScreen("note", Pinned("", "Piove.", 3)),
        "lore entry": LoreEntryScreen(LoreEntry("Lucia", ("Lucia", "la ragazza"), "Lucia ha sedici anni.")),
    }


@pytest.mark.parametrize("size", [(80, 24), (60, 24), (60, 15)])
@pytest.mark.parametrize("which", ["quit, named", "quit, unnamed", "load", "note", "lore entry"])
async def test_every_button_of_a_dialog_can_be_reached_on_a_small_terminal(
    random_model: Path, tmp_path: Path, size: tuple[int, int], which: str
) -> None:
    async with ready(random_model, size=size) as (app, pilot):
        dialog = _dialogs(tmp_path)[which]
        app.push_screen(dialog)
        await pilot.pause()
        box = dialog.query_one(".dialog")
        for button in dialog.query(Button):
            button.focus()  # as Tab does: the dialog scrolls to it, after a refresh or two
            for _ in range(100):  # a guard against hanging; under load the scroll takes more frames
                await pilot.pause(0.01)
                visible = box.scrollable_content_region.intersection(dialog.region)
                if visible.contains_region(button.region):
                    break
            assert visible.contains_region(button.region), (button.id, button.region, visible)


@pytest.mark.parametrize("size", [(80, 24), (60, 15), (160, 48)])
async def test_a_suggestion_under_a_long_draft_fits_with_its_keys_while_written_and_after(
    random_model: Path, tmp_path: Path, size: tuple[int, int]
) -> None:
    draft = tmp_path / "long.md"
    draft.write_text(
        "\n\n".join(f"Paragrafo {n}: la casa era buia e il lago era fermo." for n in range(30)), encoding="utf-8"
    )

    gate = Gate(after_tokens=40)
    async with ready(
        random_model,
        draft=draft,
        loader=gate.loader,
        sampler=GREEDY.with_changes(max_tokens=150),
        size=size,
    ) as (app, pilot):
        pane, view = app.main.draft, app.main.draft.suggestion
        await pilot.press("ctrl+end", "ctrl+g")
        await gate.wait_reached()
        try:
            await pilot.pause()
            await pilot.pause()
            assert view.has_class("-streaming")
            assert pane.region.contains_region(view.region), (pane.region, view.region)
        finally:
            gate.release()
        await app.main.wait_until_idle()
        await pilot.pause()
        await pilot.pause()
        assert not view.has_class("-streaming")
        assert pane.region.contains_region(view.region), (pane.region, view.region)


async def test_the_inspected_token_stays_in_view_when_moved_back_through_a_tall_suggestion(random_model: Path) -> None:
    async def check(pilot: Pilot[Any], done: GenerationDone) -> None:
        view = pilot.app.main.draft.suggestion
        await pilot.press("f4", *["left"] * 60)
        await pilot.pause()
        await pilot.pause()
        assert pilot.app.main.draft.inspection.inspected == 89
        assert view.max_scroll_y > 0
        shown = [view.render_line(y) for y in range(view.content_size.height)]
        assert any(segment.style is not None and segment.style.reverse for strip in shown for segment in strip)

    await _with_a_tall_suggestion(random_model, check)


async def test_the_candidates_dialog_keys_line_wraps_within_a_60_column_dialog(random_model: Path) -> None:
    async with ready(random_model, sampler=GREEDY.with_changes(max_tokens=20), size=(60, 24)) as (app, pilot):
        await typed(pilot, "C'era una volta")
        await pilot.press("ctrl+n")
        await candidates_written(pilot)
        dialog = app.screen.query_one("#candidates-dialog")
        hints = app.screen.query_one("#candidates-hints")
        assert dialog.scrollable_content_region.contains_region(hints.region), hints.region
        await pilot.press("escape")


async def test_the_panels_give_way_on_a_narrow_terminal_and_come_back_unless_hidden() -> None:
    """At 60 columns the panels took half the width; now they go by themselves below 80
    columns and come back when it is wide again, unless the author hid them with F3."""

    app = make_app(None)
    async with app.run_test(size=(60, 24)) as pilot:
        sidebar, editor = app.main.sidebar, app.main.draft.editor
        await pilot.pause()
        assert not sidebar.display and editor.size.width >= 50
        await pilot.resize_terminal(120, 30)
        await pilot.pause()
        assert sidebar.display
        await pilot.press("ctrl+t")  # the focus in the panels, then the terminal narrows
        await pilot.resize_terminal(60, 24)
        await pilot.pause()
        assert not sidebar.display and app.focused is editor
        await pilot.press("f3")  # asked for on a narrow terminal: shown all the same
        assert sidebar.display
        await pilot.press("f3")
        await pilot.resize_terminal(120, 30)
        await pilot.pause()
        assert not sidebar.display  # the author hid them: wide again, they stay hidden


@pytest.mark.parametrize("width", [120, 140])
async def test_the_panels_side_by_side_are_as_wide_as_stacked_and_cut_no_value(random_model: Path, width: int) -> None:
    """From 120 columns the panels stand in two columns of 46% of the terminal: below 150
    each column was narrower than the one stacked column of narrower terminals, and the
    values the panels are written for were cut ("context 256 (trained 2…", "seed  new each")."""

    async with ready(random_model, size=(100, 40)) as (app, pilot):
        await typed(pilot, "Era notte")
        await generated(pilot, "ctrl+g")
        sidebar = app.main.sidebar
        stacked = sidebar.sampler.content_size.width
        await pilot.resize_terminal(width, 40)
        await pilot.pause()
        await pilot.pause()
        for panel in sidebar.panels():
            assert panel.content_size.width >= stacked, (panel.PANEL_NAME, panel.content_size)
        assert any(line.startswith("context ") and line.endswith(")") for line in drawn_lines(sidebar.model)), (
            drawn_lines(sidebar.model)
        )
        assert any(line.endswith("new each time") for line in drawn_lines(sidebar.sampler))


async def test_a_short_suggestion_shows_whole_at_every_width(random_model: Path) -> None:
    """A suggestion of four lines at 88 columns was laid out four lines high, wrapped for the
    width left beside a scroll bar into five, and scrolled: its first line, with the model's
    first words, hidden behind a scroll bar while the pane had room to spare."""

    async def check(pilot: Pilot[Any], done: GenerationDone) -> None:
        whole = " ".join(f"C'era una volta{done.text}".split())
        view = pilot.app.main.draft.suggestion
        for width in range(80, 126):  # each wraps it otherwise; one in a few was cut
            await pilot.resize_terminal(width, 40)
            await pilot.pause()
            await pilot.pause()
            assert " ".join(" ".join(drawn_lines(view)).split()) == whole, (width, drawn_lines(view))

    await _with_a_tall_suggestion(random_model, check, tokens=30, height=40)


async def test_the_alternatives_dialogs_question_wraps_beside_its_scroll_bar() -> None:
    """At 80x24 the alternatives dialog is taller than the terminal: the scroll bar that came
    covered the question's last letters, "…and continue from the" (there)."""

    app = make_app(None)
    async with app.run_test(size=(80, 24)) as pilot:
        top = tuple(Candidate(n, f" parola{n}", 0.05, False) for n in range(12))
        record = TokenRecord(0, " banida", 3, 0.05, top, TokenSource("generated"))
        dialog = AlternativesScreen(record)
        app.push_screen(dialog)
        await pilot.pause()
        await pilot.pause()
        question = dialog.query_one(".dialog-title")
        assert " ".join(" ".join(drawn_lines(question)).split()) == (
            "Write something else instead of “␣banida”, and continue from there"
        )


async def test_a_long_draft_name_leaves_the_model_and_its_state_in_the_status_line(tmp_path: Path) -> None:
    """The status line wrote the draft's name whole, and what the model is doing ('writing…',
    'loading 40%', 'model failed to load') went past the right edge at 80 columns."""
    draft = tmp_path / "the-lighthouse-keeper-chapter-one-second-draft-with-notes.md"
    draft.write_text("Il faro.\n", encoding="utf-8")

    app = make_app(None, draft=draft)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+end", "x")
        await pilot.pause()
        line = drawn_lines(app.main.status)[0]
        assert line.endswith("no model") and "the-lighthouse-keeper-chapter" in line, line
        assert "● " in line, line  # unsaved, as the name says when it shows whole
