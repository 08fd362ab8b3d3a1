"""The TUI on a vocabulary without byte tokens: unencodable text is a notification and the
draft stays as it was; the Model panel names the tokenizer in use."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from textual.widgets import Input
from tui_helpers import model_ready, ready, typed

from scriptorium.app.tui.screens.load_model_screen import LoadModelScreen

from scriptorium.inference.local.engine import Engine, LoadOptions

HOSTILE = "Perché così? Città, caffè ☕ 東京 🍰"


def panel_text(app: Any) -> list[str]:
    return [line.plain for line in app.main.sidebar.model.lines(60)]


async def test_unencodable_text_is_a_notification_and_the_draft_is_intact(no_bytes_gguf: Path) -> None:
    async with ready(no_bytes_gguf, size=(120, 40)) as (app, pilot):
        assert panel_text(app)[-1].startswith("tokenizer llama.cpp: no byte tokens")
        app.main.draft.editor.load_text(HOSTILE)
        for key in ("ctrl+g", "f9"):  # continue, then score the draft
            app.notices.clear()
            await pilot.press(key)
            await app.workers.wait_for_complete()
            await pilot.pause()
            messages = [n.message for n in app.notices]
            assert any("cannot encode '☕' (U+2615 HOT BEVERAGE) at character 27" in m for m in messages), messages
            assert app.main.draft.editor.text == HOSTILE
        assert app.engine_state.backend is not None  # still loaded, still usable


def with_spm(spm: Path) -> Callable[..., Engine]:
    def load(options: LoadOptions, on_progress: Callable[[float], None]) -> Engine:
        return Engine.load(replace(options, spm_path=spm), on_progress)

    return load


async def test_the_model_panel_names_the_sentencepiece_tokenizer(unigram_gguf: Path, unigram_spm: Path) -> None:
    async with ready(unigram_gguf, loader=with_spm(unigram_spm), size=(120, 40)) as (app, pilot):
        assert panel_text(app)[-1] == f"tokenizer SentencePiece ({unigram_spm.name})"


async def test_a_model_that_does_not_match_is_named_in_the_panel_and_a_notification(
    unigram_gguf: Path, bpe_spm: Path
) -> None:
    async with ready(unigram_gguf, loader=with_spm(bpe_spm), size=(120, 40)) as (app, pilot):
        assert panel_text(app)[-1].startswith(f"tokenizer llama.cpp: {bpe_spm.name} does not match")
        assert any("does not match" in n.message for n in app.notices)


async def test_chat_on_a_model_that_cannot_encode_its_turns_says_why(no_bytes_gguf: Path) -> None:
    """No byte tokens and no newline piece: sending "ciao" said the vocabulary cannot encode
    '\\n' "at character 93 (line 1, column 93)" and to remove it, of a line break the
    author never wrote (the chat format's, between the turns)."""

    async with ready(no_bytes_gguf, mode="chat", size=(120, 40)) as (app, pilot):
        app.notices.clear()
        await typed(pilot, "ciao")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await app.main.wait_until_idle()
        await pilot.pause()
        [said] = [n for n in app.notices]
        assert said.title == "Model" and said.message.startswith("this model cannot chat: its chat format writes '\\n'")
        # Asked again it fails the same way: the message goes back into the input, not
        # left as a turn with no reply (ctrl+r refused it again and again).
        chat = app.main.chat
        assert chat.messages == [] and not chat.transcript.query(".message")
        assert chat.input.value == "ciao" and app.focused is chat.input
        assert app.engine_state.backend is not None


async def test_a_sentencepiece_model_not_found_is_put_right_in_the_load_dialog(
    unigram_gguf: Path, unigram_spm: Path, tmp_path: Path
) -> None:
    """A mistyped --spm (or config tokenizer) failed the load with 'press ^l to load another
    model', but the load dialog had no place for the .model and kept the missing one: every
    model typed there failed the same way until scriptorium was started again."""
    missing = tmp_path / "tokeniser.model"

    async with ready(unigram_gguf, spm=missing, size=(120, 40)) as (app, pilot):
        assert (
            app.engine_state.backend is None and "SentencePiece model not found" in app.engine_state.model_status.error
        )
        await pilot.press("ctrl+l")
        assert isinstance(app.screen, LoadModelScreen)
        field = app.screen.query_one("#spm-path", Input)
        assert field.value == str(missing)
        field.value = str(unigram_spm)
        await pilot.press("enter")
        await model_ready(pilot)
        assert app.engine_state.backend is not None and app.engine_state.backend.options.spm_path == unigram_spm
        assert panel_text(app)[-1] == f"tokenizer SentencePiece ({unigram_spm.name})"
        # Emptied, the model loads with llama.cpp's own tokenizer.
        await pilot.press("ctrl+l")
        app.screen.query_one("#spm-path", Input).value = ""
        await pilot.press("enter")
        await model_ready(pilot)
        assert app.engine_state.backend is not None and app.engine_state.backend.options.spm_path is None
        assert panel_text(app)[-1].startswith("tokenizer llama.cpp")
