"""A chat reply as drawn: Markdown, with the single line breaks the model wrote kept."""

from __future__ import annotations

from tui_helpers import drawn_lines, make_app

from scriptorium.app.tui.widgets.chat_reply import AssistantMessage

POEM = "Roses are red,\nviolets are blue.\n\n- one\n  more\n\n```\ncode a\ncode b\n```\n\nA `code\nspan` and\nits line."
SHOWN = ["Roses are red,", "violets are blue.", "one", "more", "code a", "code b", "A code span and its line."]
"""How POEM reads on screen: a poem's lines as lines (a list item's too); a paragraph
whose code span spans lines is read as Markdown, as the export leaves it (export_breaks)."""


def shown_lines(reply: AssistantMessage) -> list[str]:
    """The reply's text as drawn on screen, line by line, without blank lines and bullets."""
    lines = [line.strip(" •▪‣⁃-▎▌│") for line in drawn_lines(reply)]
    return [line for line in lines if line]


async def test_a_replys_single_line_breaks_stay_breaks_reopened_and_streamed() -> None:
    """A poem the model wrote line by line showed as one paragraph: Textual's Markdown
    draws a single newline as a space. Chat UIs keep the lines, and so does the export."""

    app = make_app(None, mode="chat")
    async with app.run_test(size=(100, 50)) as pilot:
        chat = app.main.chat
        await chat.restore([{"role": "user", "content": "A poem?"}, {"role": "assistant", "content": POEM}])
        await pilot.pause()
        assert shown_lines(chat.transcript.query(AssistantMessage).last()) == SHOWN
        # Streamed in as the chat streams a reply, a few characters a write.
        reply = AssistantMessage(classes="message")
        await chat.transcript.mount(reply)
        stream = reply.stream()
        for start in range(0, len(POEM), 3):
            await stream.write(POEM[start : start + 3])
        await stream.stop()
        await pilot.pause()
        assert shown_lines(reply) == SHOWN


async def test_html_in_a_reply_shows_as_typed() -> None:
    """Textual draws no HTML: "use <br>" lost its tag, and a <think> or <div> alone on its
    line hid every line after it up to a blank one."""

    app = make_app(None, mode="chat")
    async with app.run_test(size=(100, 40)) as pilot:
        chat = app.main.chat
        reply = "<think>\nragiono\n</think>\n\nUsa <br> e <b>forte</b>, <!-- nota -->.\n\n<div>Ciao</div>"
        await chat.restore([{"role": "user", "content": "HTML?"}, {"role": "assistant", "content": reply}])
        await pilot.pause()
        assert shown_lines(chat.transcript.query(AssistantMessage).last()) == [
            "<think>",
            "ragiono",
            "</think>",
            "Usa <br> e <b>forte</b>, <!-- nota -->.",
            "<div>Ciao</div>",
        ]
