"""Typing in a very long paragraph: the rows on screen are the paragraph's own, wrapped as
Textual wraps it, drawn from the row's text (not the whole paragraph's at every row), and
the window marker dims exactly the characters before the window, accents and all."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from textual.document._document import Document
from textual.document._wrapped_document import WrappedDocument
from textual.widgets import TextArea
from tui_helpers import drawn_lines, make_app, typed

WORDS = "la sera scese piano sul porto e le barche tornavano così già città perché più".split()


def long_paragraph(characters: int) -> str:
    chooser = random.Random(11)
    words: list[str] = []
    while sum(map(len, words)) + len(words) < characters:
        words.append(chooser.choice(WORDS))
    return " ".join(words) + "."


def expected_rows(editor: Any) -> list[str]:
    """The rows Textual's own wrapping gives the editor's text, as the screen shows them."""
    whole = WrappedDocument(Document(editor.text), width=editor.wrap_width, tab_width=editor.indent_width)
    rows = [section for line in range(editor.document.line_count) for section in whole.get_sections(line)]
    top = editor.scroll_offset.y
    return [row.rstrip() for row in rows[top : top + editor.content_region.height]]


def italic_cells(strip: Any) -> list[bool]:
    return [bool(segment.style and segment.style.italic) for segment in strip for _ in segment.text]


async def test_typing_at_the_end_of_a_long_paragraph_draws_its_own_rows(tmp_path: Path, monkeypatch: Any) -> None:
    draft = tmp_path / "lungo.md"
    draft.write_text(long_paragraph(60_000), encoding="utf-8")
    whole_lines: list[int] = []
    real_get_line = TextArea.get_line

    def get_line(self: TextArea, line_index: int) -> Any:
        whole_lines.append(line_index)
        return real_get_line(self, line_index)

    app = make_app(None, draft=draft)
    async with app.run_test(size=(100, 30)) as pilot:
        editor = app.main.draft.editor
        await pilot.press("ctrl+end")
        monkeypatch.setattr(TextArea, "get_line", get_line)
        await typed(pilot, " e poi la nottx")
        await pilot.press("backspace", "e")
        await pilot.pause()
        assert editor.text.endswith(". e poi la notte")
        assert drawn_lines(editor) == expected_rows(editor)
        assert " e poi la notte" in "".join(drawn_lines(editor))
        # Every row was drawn from its own characters: Textual's whole-line path never ran.
        assert whole_lines == []
        # Back at the top, typing in the middle of the first rows wraps them as Textual would.
        await pilot.press("ctrl+home", "right", "right", "right")
        await typed(pilot, "parola ")
        await pilot.pause()
        assert editor.text.startswith(draft.read_text(encoding="utf-8")[:3] + "parola ")
        assert drawn_lines(editor) == expected_rows(editor)


async def test_the_window_marker_dims_the_characters_before_the_window_in_a_long_paragraph(tmp_path: Path) -> None:
    draft = tmp_path / "lungo.md"
    text = long_paragraph(20_000)
    draft.write_text(text, encoding="utf-8")

    app = make_app(None, draft=draft)
    async with app.run_test(size=(100, 30)) as pilot:
        editor = app.main.draft.editor
        await pilot.press("ctrl+end")
        await pilot.pause()
        # The window starts in a row on screen, after some accented letters.
        top = editor.scroll_offset.y + 3
        line, section = editor.wrapped_document._offset_to_line_info[top]
        since, until = editor.wrapped_document.section_bounds(line, section)
        start = since + 7
        editor.show_window(start)
        await pilot.pause()
        assert editor.row_styles(0)[0] == (0, start, "outside")
        strips = editor.screen._compositor.render_strips()
        region = editor.content_region
        row = strips[region.y + 3].crop(region.x, region.right)
        assert row.text.rstrip() == text[since:until].rstrip()
        cells = italic_cells(row)
        assert cells[:7] == [True] * 7 and not any(cells[7 : until - since])
        above = strips[region.y + 2].crop(region.x, region.right)
        assert all(italic_cells(above)[: len(above.text.rstrip())])
        below = strips[region.y + 4].crop(region.x, region.right)
        assert not any(italic_cells(below))
