"""Where each part of a window's prompt is (Window.parts): what the context viewer shows,
read off the prompt the generation sends, so its parts put together are that prompt."""

from __future__ import annotations

import pytest

from scriptorium.inference.window.lore import Lorebook, LoreEntry
from scriptorium.inference.window.window import Fim, build_window

PARAGRAPHS = [f"Paragrafo {i}: Lucia scese al porto, e il mare era calmo." for i in range(30)]
DRAFT = "\n\n".join(PARAGRAPHS)


def words(text: str) -> int:
    return 1 + len(text.split())


def named(window, what: str) -> list[str]:  # noqa: ANN001 - a Window
    return [window.prompt[start:end] for name, start, end in window.parts if name == what]


@pytest.mark.parametrize("depth", [0, 2])
def test_the_parts_put_together_are_the_prompt(depth: int) -> None:
    lorebook = Lorebook(entries=(LoreEntry(name="Lucia", keys=("Lucia",), text="Lucia è la figlia del pescatore."),))
    window = build_window(
        DRAFT,
        budget=120,
        count=words,
        memory="Un romanzo sul mare.",
        note="[Tono: calmo.]",
        note_depth=depth,
        lorebook=lorebook,
        wrap=lambda draft: f"Testo:\n{draft}\nFine.",
    )
    assert window.start > 0  # cut: the window is not the whole draft
    assert "".join(window.prompt[start:end] for _, start, end in window.parts) == window.prompt
    assert [start for _, start, _ in window.parts] == sorted(start for _, start, _ in window.parts)
    assert named(window, "memory") == ["Un romanzo sul mare.\n\n"]
    assert named(window, "lore") and "Lucia è la figlia" in named(window, "lore")[0]
    assert [note.strip() for note in named(window, "note")] == ["[Tono: calmo.]"]
    assert named(window, "template") == ["Testo:\n", "\nFine."]
    drafts = named(window, "draft")
    assert "".join(drafts) == DRAFT[window.start : window.end]
    assert len(drafts) == (1 if depth == 0 else 2)


def test_a_window_of_draft_only_is_one_part() -> None:
    window = build_window("Una casa sul lago.", budget=100, count=words)
    assert window.parts == (("draft", 0, len("Una casa sul lago.")),)


def test_a_fill_in_the_middle_prompt_names_the_text_after_the_cursor() -> None:
    draft = "Lucia scese al porto. Il mare era calmo, e le barche dormivano."
    cursor = draft.index(" Il mare")
    fim = Fim.at(("<PRE>", "<SUF>", "<MID>"), draft, cursor)
    window = build_window(draft[:cursor], budget=200, count=words, fim=fim)
    assert window.prompt.endswith("<SUF> Il mare era calmo, e le barche dormivano.<MID>")
    assert "".join(window.prompt[start:end] for _, start, end in window.parts) == window.prompt
    assert named(window, "after") == [" Il mare era calmo, e le barche dormivano."]
    assert named(window, "draft") == ["Lucia scese al porto."]
    assert named(window, "template") == ["<PRE>", "<SUF>", "<MID>"]
