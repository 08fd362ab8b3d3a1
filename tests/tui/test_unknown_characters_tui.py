"""The app on a SentencePiece model that never saw «, ?, — or a digit: it says once per
draft which characters the model reads as <unk>, and shows that token as <unk>, dimmed,
never as the author's characters it stood for ("?»" read as one <unk> was labelled "?»")."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from rich.style import Style
from scoring_helpers import scored
from tui_helpers import generated, ready, typed

from scriptorium.app.tui.token_spans import TokenRecord, TokenSource
from scriptorium.app.tui.widgets.token_text import token_text
from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.vocab.spm_model import load_spm

DIALOGUE = "«Sei sveglia?» chiese la nonna."


def with_spm(spm: Path) -> Callable[..., Engine]:
    def load(options: LoadOptions, on_progress: Callable[[float], None]) -> Engine:
        return Engine.load(replace(options, spm_path=spm), on_progress)

    return load


def warnings(app: Any) -> list[str]:
    return [n.message for n in app.notices if n.title == "Vocabulary"]


async def test_the_app_names_the_unknown_characters_once_per_draft(prose_spm: Path, prose_gguf: Path) -> None:
    async with ready(prose_gguf, loader=with_spm(prose_spm), size=(120, 40)) as (app, pilot):
        app.main.draft.editor.insert(DIALOGUE)  # «» are no keys Pilot can press
        await generated(pilot, "ctrl+g")
        assert warnings(app) == [
            "SentencePiece (prosa.model) has no piece for '«', '?' and '»': the model reads each as <unk>, the "
            "same token for any unknown character, not as what you wrote. Said once for this draft."
        ]
        await generated(pilot, "ctrl+r")  # the same characters: not said again
        assert len(warnings(app)) == 1
        await pilot.press("escape", "escape")
        await typed(pilot, " Erano le 7.")
        await generated(pilot, "ctrl+g")  # a new one: only it is named
        assert len(warnings(app)) == 2 and "has no piece for '7':" in warnings(app)[1]


async def test_the_probabilities_panel_names_the_unknown_token(prose_spm: Path, prose_gguf: Path) -> None:
    async with ready(prose_gguf, loader=with_spm(prose_spm), size=(120, 40)) as (app, pilot):
        records = await scored(pilot, "La nonna disse «Sei sveglia?»")
        assert len(warnings(app)) == 1 and "no piece for '«', '?' and '»'" in warnings(app)[0]  # scoring says it too
        unk = load_spm(prose_spm).unk_id
        start = next(start for start, record in records if record.id == unk)
        app.main.draft.editor.move_cursor((0, start))
        await pilot.pause()
        panel = app.main.sidebar.probabilities
        assert panel.event is not None and panel.event.id == unk
        chosen = panel.lines(40)[-1]
        assert chosen.plain.startswith("▶ chosen <unk>")
        label = next(span for span in chosen.spans if chosen.plain[span.start : span.end] == "<unk>")
        assert label.style.dim and label.style.italic  # drawn as a name, not as text


def test_inspected_tokens_draw_the_unknown_one_by_name() -> None:
    """F4 in a suggestion and a chat reply's tokens draw text token by token (token_text): a
    generated <unk> writes no text, and one scored stands for the author's characters."""
    unknown = Style(dim=True, italic=True)
    records = [
        TokenRecord(0, "La ", 5, 0.5, (), TokenSource("generated")),
        TokenRecord(3, "?»", 0, 0.01, (), TokenSource("scored")),
    ]
    drawn = token_text("La ?» casa", records, Style(), None, unknown=(frozenset({0}), unknown))
    assert drawn.plain == "La <unk> casa"
    assert [drawn.plain[s.start : s.end] for s in drawn.spans if s.style == unknown] == ["<unk>"]
