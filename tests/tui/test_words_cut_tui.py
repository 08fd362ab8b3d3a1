"""Words cut at 120×40 and covered at 80×24 (issue 37, "Words on screen"): the Model panel's
tokenizer file, the sampler's byte-ban count, and a notice over a dialog's buttons."""

from __future__ import annotations

import shutil
from pathlib import Path

from textual.widgets import Button
from textual.widgets._toast import Toast
from tui_helpers import drawn_lines, make_app, ready, until

from scriptorium.app.tui.screens.pinned_screen import PinnedScreen


async def test_the_tokenizers_file_reads_whole_at_120_columns(
    unigram_gguf: Path, unigram_spm: Path, tmp_path: Path
) -> None:
    """ "tokenizer SentencePiece (spm_i…": the file's name was cut where a second line was free."""
    spm = shutil.copy(unigram_spm, tmp_path / "spm_italiano_porto.model")

    async with ready(unigram_gguf, spm=Path(spm), size=(120, 40)) as (app, pilot):
        await pilot.pause()
        shown = [line.strip() for line in drawn_lines(app.main.sidebar.model)]
        at = next(i for i, line in enumerate(shown) if line.startswith("tokenizer"))
        assert "(spm_italiano_porto.model)" in " ".join(shown[at : at + 2]), shown
        assert not any("…" in line for line in shown[at : at + 2]), shown


async def test_the_byte_bans_count_is_not_alone_on_a_line_at_120_columns(unigram_gguf: Path) -> None:
    """ "(256)" alone on a line: the count of banned byte tokens (500–755, a SentencePiece
    conversion's) wrapped away from what it counts."""

    async with ready(unigram_gguf, size=(120, 40)) as (app, pilot):
        await pilot.press("ctrl+t")
        await pilot.pause()
        shown = [line.strip(" │") for line in drawn_lines(app.main.sidebar.sampler)]
        assert any("banned" in line for line in shown), shown
        assert not any(line.startswith("(") and line.rstrip(")").strip("(").isdigit() for line in shown), shown


async def test_a_notice_leaves_the_note_dialogs_buttons_free_at_80x24() -> None:
    """At 80×24 the "Sessions" notice of the start covered the note dialog's Keep and Cancel."""

    app = make_app(None)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        app.notify(
            "The session 'Il porto di Lucia' is open in another scriptorium: this is a copy of it, "
            "so neither saves over the other.",
            title="Sessions",
            timeout=15,
        )
        await pilot.press("alt+n")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PinnedScreen)
        await until(pilot, lambda: bool(screen.query(Toast)), "the notice shown over the dialog")
        await pilot.pause()
        toasts = list(screen.query(Toast))
        for button in screen.query(Button):
            assert all(not toast.region.overlaps(button.region) for toast in toasts), (button, toasts)
