"""The author's words are redrawn where they wrap when the editor's width changes: a
draft opened as the side panels took their room showed its second line as wrapped at
the wider width, words hidden, until the next key."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import drawn_lines, ready, until

SENTENCE = "Era una sera di novembre, e la pioggia batteva sui vetri della vecchia casa. Lucia guardava la strada."


def words_drawn(widget: object) -> list[str]:
    return " ".join(drawn_lines(widget)).split()


async def test_a_draft_opened_beside_the_panels_shows_every_word(random_model: Path, tmp_path: Path) -> None:
    draft = tmp_path / "racconto.txt"
    draft.write_text(SENTENCE + "\n", encoding="utf-8")

    async with ready(random_model, draft=draft, size=(130, 40)) as (app, pilot):
        assert words_drawn(app.main.draft.editor) == SENTENCE.split()


async def test_the_draft_and_the_chat_field_rewrap_on_screen_when_the_terminal_narrows(random_model: Path) -> None:
    async with ready(random_model, size=(200, 40)) as (app, pilot):
        app.main.draft.editor.load_text(SENTENCE * 2)
        await pilot.pause()
        for width in (180, 170):  # the same number of lines, broken elsewhere
            await pilot.resize_terminal(width, 40)
            # The resize, the layout and the repaint are a few messages apart: on a loaded
            # machine one pause may end before the last. Without the fix they never come.
            await until(
                pilot, lambda: words_drawn(app.main.draft.editor) == (SENTENCE * 2).split(), f"draft at {width}"
            )
        await pilot.press("f2")
        await pilot.pause()
        chat_input = app.main.chat.input
        chat_input.load_text(SENTENCE)
        await pilot.pause()
        for width in (160, 150):
            await pilot.resize_terminal(width, 40)
            await until(pilot, lambda: words_drawn(chat_input) == SENTENCE.split(), f"chat field at {width}")
