"""The compare screen (issue 35): models compared on the draft itself, each in a child
process, with a progress bar, a table, bits per character paragraph by paragraph (figures
and a sparkline per row), and Esc or ctrl+c stopping the run with the finished rows kept."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any, Callable

from textual.command import CommandList
from textual.widgets import Button, DataTable, Input, ProgressBar, Sparkline, Static
from tui_helpers import ready, typed

from scriptorium.app.tui.screens.compare_screen import CompareScreen

PARAGRAPH = " ".join(["La casa era buia, e la notte più lunga. Il gatto dorme sul letto."] * 10)
DRAFT = "\n\n".join([PARAGRAPH] * 3)
"""Three paragraphs, well over one 256-token window of the short-context model: perplexity and KLD too."""


async def waited(pilot: Any, condition: Callable[[], bool], what: str, seconds: float = 180.0) -> None:
    """Let the app run until `condition` holds; the children load models on a busy machine."""
    for _ in range(int(seconds / 0.1)):
        if condition():
            return
        await pilot.pause(0.1)
    raise AssertionError(f"never happened: {what}")


async def opened(pilot: Any) -> CompareScreen:
    pilot.app.main.draft.editor.load_text(DRAFT)
    await pilot.press("f11")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, CompareScreen)
    return screen


async def sweep_started(pilot: Any) -> CompareScreen:
    """The compare screen running the loaded adapter at 31 scales: a run long enough to stop."""
    screen = await opened(pilot)
    screen.query_one("#compare-scales", Input).value = " ".join(str(s / 10) for s in range(31))
    await pilot.click("#compare-start")
    return screen


def scoring_children() -> list[int]:
    """Our child processes scoring for compare (inference/process/compare_worker.py), by /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == os.getpid() and b"compare_worker" in command:
            found.append(int(entry.name))
    return found


def cells(table: DataTable, column: int) -> list[str]:
    return [str(table.get_row_at(row)[column]) for row in range(table.row_count)]


async def test_a_model_against_itself_on_the_draft(short_context_model: Path) -> None:
    async with ready(short_context_model, size=(160, 50)) as (app, pilot):
        screen = await opened(pilot)
        models = screen.query_one("#compare-models", Input)
        assert shlex.split(models.value) == [str(short_context_model)]  # the loaded model comes first
        models.value += " " + shlex.quote(str(short_context_model))
        await pilot.press("enter")
        await pilot.pause()
        assert screen.running and screen.query_one("#compare-progress", ProgressBar).display
        await waited(pilot, lambda: not screen.running, "the comparison's end")
        table = screen.query_one("#compare-table", DataTable)
        assert table.row_count == 2
        bits = cells(table, 1)
        assert bits[0] == bits[1] != "-"
        assert cells(table, 3) == ["-", "0.000000"]  # KLD: the first is the reference
        assert cells(table, 4) == ["-", "100.00%"]  # top-1 agreement
        assert not screen.query_one("#compare-progress", ProgressBar).display
        # Where in the text: a line per paragraph with each row's figure and the difference.
        paragraphs = screen.query_one("#compare-paragraphs", DataTable)
        assert paragraphs.row_count == 3 and len(paragraphs.columns) == 2 + 2 + 1
        assert cells(paragraphs, 1)[0].startswith("La casa era buia")
        assert cells(paragraphs, 4) == ["+0.000"] * 3
        plots = list(screen.query(Sparkline))
        assert len(plots) == 2 and all(len(plot.data or ()) == 3 for plot in plots)
        await pilot.press("escape")  # nothing running: Esc closes
        await pilot.pause()
        assert app.screen is app.main


async def test_esc_stops_a_lora_sweep_and_keeps_the_finished_rows(random_model: Path, lora_adapter: Path) -> None:
    async with ready(random_model, lora=lora_adapter, size=(160, 50)) as (app, pilot):
        screen = await sweep_started(pilot)
        assert screen.query_one("#compare-lora", Input).value == str(lora_adapter)
        table = screen.query_one("#compare-table", DataTable)
        await waited(pilot, lambda: table.row_count >= 1, "a first row")
        assert len(scoring_children()) == 1  # one model at a time, in a process of its own
        await pilot.press("escape")
        await waited(pilot, lambda: not screen.running, "the stop")
        assert 1 <= table.row_count < 31
        status = str(screen.query_one("#compare-status", Static).render())
        assert status.startswith("Stopped: ") and "finished" in status
        assert app.screen is screen  # the first Esc stops, it does not close
        await app.workers.wait_for_complete()
        assert scoring_children() == []  # the scoring child is ended, not left running
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.main


async def test_ctrl_c_stops_the_comparison(random_model: Path, lora_adapter: Path) -> None:
    async with ready(random_model, lora=lora_adapter, size=(160, 50)) as (app, pilot):
        screen = await sweep_started(pilot)
        await waited(pilot, lambda: "scoring" in str(screen.query_one("#compare-status", Static).render()), "a row")
        await pilot.press("ctrl+c")
        await waited(pilot, lambda: not screen.running, "the stop")
        assert str(screen.query_one("#compare-status", Static).render()).startswith("Stopped: ")
        assert app.screen is screen and app.is_running


async def test_a_missing_file_or_a_bad_scale_is_one_notification(random_model: Path, tmp_path: Path) -> None:
    async with ready(random_model, size=(160, 50)) as (app, pilot):
        screen = await opened(pilot)
        screen.query_one("#compare-models", Input).value = shlex.quote(str(tmp_path / "none here.gguf"))
        await pilot.click("#compare-start")
        await waited(pilot, lambda: not screen.running, "the check")
        assert any("not found" in n.message and n.severity == "error" for n in app.notices)
        screen.query_one("#compare-models", Input).value = shlex.quote(str(random_model))
        screen.query_one("#compare-scales", Input).value = "0 mezzo"
        # Textual's Button ignores a click while its pressed look lasts (0.2 s, by a timer that a
        # loaded machine fires late): a second click in it was lost, and the notice never came.
        start = screen.query_one("#compare-start", Button)
        await waited(pilot, lambda: not start.has_class("-active"), "the first press's look to end")
        await pilot.click("#compare-start")
        # The press bubbles from the button to the screen: on a busy machine, after one pause.
        await waited(pilot, lambda: any("'mezzo' is not a number" in n.message for n in app.notices), "the notice")
        assert not screen.running
        assert screen.query_one("#compare-table", DataTable).row_count == 0


async def test_the_palette_and_the_keys_list_know_the_compare_screen(random_model: Path) -> None:
    async with ready(random_model, size=(160, 50)) as (app, pilot):
        commands = [command.title for command in app.get_system_commands(app.main)]
        assert "General: Compare" in commands
        assert ("f11", "app.compare") in [(row[1], row[4]) for row in app.keys.rows()]
        await pilot.press("ctrl+p")
        await pilot.pause(0.5)
        await typed(pilot, "Compare")
        await waited(pilot, lambda: app.screen.query_one(CommandList).option_count > 0, "the palette's match", 10)
        await pilot.pause(0.5)
        await pilot.press("enter")
        await waited(pilot, lambda: isinstance(app.screen, CompareScreen), "the compare screen", 10)
        # F11 on a dialog opens no second compare screen.
        await pilot.press("f11")
        await pilot.pause()
        assert len([s for s in app.screen_stack if isinstance(s, CompareScreen)]) == 1


async def test_enter_on_a_row_colours_the_draft_compared_with_it(random_model: Path, lora_adapter: Path) -> None:
    """The adapter pushes "gatto" to the top: at scale 1 the model finds that word far less
    surprising than without it, and the draft says so where the word is."""

    async with ready(random_model, lora=lora_adapter, size=(160, 50)) as (app, pilot):
        screen = await opened(pilot)
        assert screen.query_one("#compare-scales", Input).value == "0 1"
        await pilot.click("#compare-start")
        await waited(pilot, lambda: not screen.running, "the comparison's end")
        table = screen.query_one("#compare-table", DataTable)
        assert table.row_count == 2
        table.focus()
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.screen is app.main
        editor = app.main.draft.editor
        gatto = DRAFT.index("gatto")
        marks = {start: name for start, _, name in editor.compared}
        assert marks[gatto] == "compared-less2"
        editor.move_cursor(editor.document.get_location_from_index(gatto + 2))
        await pilot.pause()
        activity = app.main.status.activity
        assert "lora-gatto.gguf x1" in activity and "(much less surprised)" in activity
        # The text changed: the words' offsets are the old text's, so the colours go.
        await pilot.press("end", "x")
        await pilot.pause()
        assert editor.compared == [] and app.main.status.activity == ""
