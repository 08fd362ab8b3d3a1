"""Speculative decoding in the app: F7 (and the palette) switches it, the generation writes the
same tokens with the same numbers, the Speed panel says what was guessed, F8 marks the guessed
tokens (F4 says it of one), and the session records it, the mark included."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tui_helpers import drawn_lines, generated, make_app, ready, typed

from scriptorium.app.i18n.language import Language
from scriptorium.app.tui.token_spans import GUESSED
from scriptorium.app.tui.widgets.token_text import TokenLegend

_TESTS = str(Path(__file__).resolve().parent.parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from gguf_loop import PROMPT as LOOP_PROMPT  # noqa: E402
from gguf_loop import loop_transitions  # noqa: E402
from gguf_models import write_llama_model  # noqa: E402
from italian_vocab import italian_vocab  # noqa: E402

DRAFT = "Il cane aspettava sulla porta. Il cane aspettava sulla porta della casa, e poi il cane aspettava"


@pytest.fixture(scope="module")
def loop_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Repeats one phrase, each word winning by 0.3 logits or more (gguf_loop.py): far above what
    a verifying pass's batched arithmetic moves, so speculation must write plain decoding's tokens.
    The random model has near-ties, where that arithmetic may flip a token (docs/guide/speculative.md)."""
    transitions, default_next = loop_transitions()
    return write_llama_model(
        tmp_path_factory.mktemp("loop") / "loop.gguf", kind="markov", transitions=transitions, default_next=default_next
    )


def speed_text(app) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(line.plain for line in app.main.sidebar.speed.lines(40))


async def test_f7_speculates_and_the_speed_panel_shows_what_was_guessed(loop_model: Path) -> None:
    runs = {}

    async def scenario(speculate: bool) -> None:
        async with ready(loop_model, size=(160, 48)) as (app, pilot):
            await typed(pilot, (LOOP_PROMPT * 2).strip())
            if speculate:
                await pilot.press("f7")
                await pilot.pause()
                assert app.engine_state.speculation.guesser == "lookup"
            done = await generated(pilot, "ctrl+g")
            _, tokens, _ = app.main.last_generation
            runs[speculate] = (tokens, done, speed_text(app))
            if speculate:
                await pilot.press("f7")  # off again: lookup is the last guesser without a draft model
                assert not app.engine_state.speculation.on

    await scenario(False)
    await scenario(True)
    (plain, plain_done, plain_speed), (guessed, done, speed) = runs[False], runs[True]
    assert [t.id for t in guessed] == [t.id for t in plain]
    assert plain_done.speculation is None and "guessed" not in plain_speed
    counts = done.speculation
    assert counts is not None and counts.accepted > 0
    assert f"{counts.accepted:,}/{counts.drafted:,} guessed {counts.acceptance:.0%}" in speed
    assert sum(t.drafted for t in guessed) == counts.accepted


async def test_speculation_that_guessed_nothing_says_so_on_the_speed_panel(tmp_path: Path) -> None:
    """A model that walks a chain of words once, never repeating two in a row: lookup finds nothing
    to guess, and the Speed panel says speculation was on and guessed nothing, rather than look
    like plain decoding."""
    words = "casa notte giorno sera mattina tempo anno vita mondo uomo donna bambino".split()
    ids = [italian_vocab().id_of("▁" + word) for word in words]
    chain = write_llama_model(tmp_path / "chain.gguf", kind="markov", transitions=dict(zip(ids, ids[1:])))
    async with ready(chain, size=(160, 48)) as (app, pilot):
        await typed(pilot, words[0])
        await pilot.press("f7")
        await pilot.pause()
        done = await generated(pilot, "ctrl+g")
        speed = speed_text(app)
    assert done.speculation is not None and done.speculation.drafted == 0
    assert "speculating, nothing guessed" in speed


def guessed_characters(editor) -> set[int]:  # type: ignore[no-untyped-def]
    """The draft's characters F8 marks as guessed (every line's styled stretches, as offsets)."""
    marked, offset = set(), 0
    for index, line in enumerate(editor.document.lines):
        marked |= {
            offset + c for start, end, name in editor.row_styles(index) if name == GUESSED for c in range(start, end)
        }
        offset += len(line) + 1
    return marked


def drafted_characters(text: str, start: int, tokens) -> set[int]:  # type: ignore[no-untyped-def]
    """The characters of `text` the drafted ones of `tokens` (placed at `start`) cover, line breaks aside."""
    return {
        start + c for token in tokens if token.drafted for c in range(token.start, token.end) if text[start + c] != "\n"
    }


async def guessed_suggestion(pilot, app) -> list:  # type: ignore[no-untyped-def]
    """DRAFT typed, speculation on (F7), the suggestion written: its tokens, some of them guessed."""
    await typed(pilot, DRAFT)
    await pilot.press("f7")
    await pilot.pause()
    await generated(pilot, "ctrl+g")
    tokens = list(app.main.draft.editor.ghost.tokens)
    assert any(t.drafted for t in tokens) and not tokens[0].drafted  # the first comes from the prompt's pass
    return tokens


async def test_f8_marks_the_guessed_tokens_and_the_legend_and_f4_say_so(random_model: Path) -> None:
    """llama.cpp's lookup example paints the tokens it accepted from a draft: F8 underlines
    them over their probability's colour, in the suggestion and once accepted, the legend
    names the mark, and F4 on one says it was guessed."""

    async with ready(random_model, size=(160, 48)) as (app, pilot):
        tokens = await guessed_suggestion(pilot, app)
        draft = app.main.draft
        panel = app.main.sidebar.probabilities
        await pilot.press("f4")  # the last token; ← walks back to each in turn
        for index in reversed(range(len(tokens))):
            await pilot.pause()
            assert ("· guessed" in panel.border_title) == tokens[index].drafted, (index, panel.border_title)
            await pilot.press("left")
        await pilot.press("escape", "f8")
        await pilot.pause()
        rendered = draft.suggestion._text()
        offset = len(rendered.plain) - len(draft.editor.ghost.text)
        for token in tokens:
            if token.text:
                style = rendered.get_style_at_offset(app.console, offset + token.start)
                assert bool(style.underline) == token.drafted, token
        legend = draft.query_one(TokenLegend)
        assert legend.guessed and "guessed" in drawn_lines(legend)[0]
        await pilot.press("tab")
        await pilot.pause()
        editor = draft.editor
        marked = guessed_characters(editor)
        assert marked and marked == drafted_characters(editor.text, len(DRAFT), tokens)
        await pilot.press("f8")
        await pilot.pause()
        assert not legend.display and not guessed_characters(editor)


async def test_the_guessed_mark_survives_reopening_the_session(random_model: Path, tmp_path: Path) -> None:
    draft = tmp_path / "bozza.md"
    marked: list[set[int]] = []

    async def written() -> None:
        async with ready(random_model, draft=draft, size=(160, 48)) as (app, pilot):
            tokens = await guessed_suggestion(pilot, app)
            await pilot.press("tab")
            await pilot.pause()
            marked.append(drafted_characters(app.main.draft.editor.text, len(DRAFT), tokens))
            await pilot.press("ctrl+q")
            await pilot.pause()

    async def reopened() -> None:
        app = make_app(None, draft=draft)
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.pause()
            await pilot.press("f8")
            await pilot.pause()
            assert guessed_characters(app.main.draft.editor) == marked[0]
            legend = app.main.draft.query_one(TokenLegend)
            assert legend.guessed and "guessed" in drawn_lines(legend)[0]

    await written()
    assert marked[0]
    await reopened()


async def test_the_guessed_mark_is_named_in_italian(random_model: Path) -> None:
    async with ready(random_model, language=Language.load("it"), size=(160, 48)) as (app, pilot):
        tokens = await guessed_suggestion(pilot, app)
        await pilot.press("f8")
        await pilot.pause()
        legend = app.main.draft.query_one(TokenLegend)
        assert "indovinato" in drawn_lines(legend)[0] and "guessed" not in drawn_lines(legend)[0]
        last_guessed = max(i for i, t in enumerate(tokens) if t.drafted)
        await pilot.press("f4", *["left"] * (len(tokens) - 1 - last_guessed))
        await pilot.pause()
        assert app.main.sidebar.probabilities.border_title.endswith("· indovinato")
