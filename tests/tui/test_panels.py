"""The side panels show exactly what the engine reported, update while tokens stream,
and hide and show from the keyboard."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

from rich.cells import cell_len

from tui_helpers import drawn_lines, Gate, generated, loader_failing_after, make_app, model_ready, ready, typed

from scriptorium.app.tui.widgets.kv_panel import _window_split
from scriptorium.app.tui.widgets.formatting import format_bytes, format_ms, format_rate, visible_token
from scriptorium.app.tui.widgets.probabilities_panel import CHAIN_NOTE
from scriptorium.app.tui.widgets.sidebar import NUMBERS_INTERVAL_S
from scriptorium.inference.core.events import Candidate, KVCacheUsage, TokenEvent
from scriptorium.inference.core.settings import preset


def text_of(panel, width: int = 40) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(line.plain for line in panel.lines(width))


async def test_after_a_generation_every_panel_shows_the_engines_numbers(random_model: Path) -> None:
    async with ready(random_model, size=(160, 48)) as (app, pilot):
        await typed(pilot, "Era notte")
        done = await generated(pilot, "ctrl+g")
        _, tokens, _ = app.main.last_generation
        sidebar = app.main.sidebar

        last = tokens[-1]
        assert sidebar.probabilities.event == last
        chosen = next(c for c in last.top if c.id == last.id)
        assert f"▶ {visible_token(chosen.text)}" in text_of(sidebar.probabilities)
        assert f"{chosen.p * 100:.1f}%" in text_of(sidebar.probabilities)
        # The bars are raw probabilities: a bias can pick a token they rank lower, so say so.
        assert sidebar.probabilities.border_subtitle == CHAIN_NOTE  # and what the chain kept beside them

        assert sidebar.kv.usage == done.kv_cache
        kv = text_of(sidebar.kv)
        assert f"{done.kv_cache.tokens:,} / {done.kv_cache.n_ctx:,} tokens" in kv
        assert format_bytes(done.kv_cache.bytes_used) in kv
        assert f"{format_bytes(done.kv_cache.bytes_per_token)} per token" in kv
        assert f"reused {done.reused_tokens:,} of {done.prompt_tokens:,} tok" in kv

        speed = text_of(sidebar.speed)
        # From the key: the engine's own TTFT is only the part after the prompt was made.
        assert sidebar.speed.waited_ms is not None and sidebar.speed.waited_ms >= done.ttft_ms
        assert "TTFT from key" in speed and format_ms(sidebar.speed.waited_ms) in speed
        assert format_rate(done.decode_tokens_per_s) in speed
        assert format_rate(done.prefill_tokens_per_s) in speed
        assert sidebar.speed.border_title == "Speed · length"

        model = text_of(sidebar.model)
        engine = app.engine_state.backend
        assert engine is not None
        assert engine.facts.name in model and "GQA 2:1" in model and "4 q / 2 kv heads" in model
        assert "2.15M params" in model and "F32" in model and "LoRA none" in model


async def test_panels_update_while_tokens_stream(random_model: Path) -> None:
    gate = Gate(after_tokens=5)
    async with ready(
        random_model,
        loader=gate.loader,
        sampler=preset("greedy").with_changes(max_tokens=40),
        size=(160, 48),
    ) as (app, pilot):
        await typed(pilot, "Era notte")
        await pilot.press("ctrl+g")
        await gate.wait_reached()
        # The first token is posted at once, before the worker reaches the gate.
        await pilot.pause()
        sidebar = app.main.sidebar
        shown = sidebar.probabilities.event
        assert shown is not None and 0 <= shown.index < 5
        assert sidebar.speed.border_title == "Speed · decoding"
        assert sidebar.kv.usage is not None and sidebar.kv.usage.tokens == shown.kv_tokens
        assert app.main.draft.suggestion.border_title.endswith("writing…")
        gate.release()
        await app.main.wait_until_idle()
        await pilot.pause()
        assert sidebar.probabilities.event.index == 39


async def test_the_panels_numbers_change_at_most_five_times_a_second(random_model: Path) -> None:
    def token(index: int) -> TokenEvent:
        return TokenEvent(
            index=index, id=index, text=f" t{index}", p=0.5, top=(), elapsed_ms=10.0 * index, kv_tokens=10 + index
        )

    async with ready(random_model, size=(160, 48)) as (app, pilot):
        sidebar = app.main.sidebar
        usage = KVCacheUsage(tokens=0, n_ctx=512, bytes_allocated=None, bytes_used=None, bytes_per_token=None)
        sidebar.generation_started()
        sidebar.token(token(0), replace(usage, tokens=10))
        assert sidebar.probabilities.event == token(0)  # the first at once
        sidebar.token(token(1), replace(usage, tokens=11))
        sidebar.token(token(2), replace(usage, tokens=12))
        assert sidebar.probabilities.event == token(0) and sidebar.kv.usage.tokens == 10
        await asyncio.sleep(NUMBERS_INTERVAL_S)
        sidebar.token(token(3), replace(usage, tokens=13))
        assert sidebar.probabilities.event == token(3) and sidebar.speed.last_token == token(3)
        sidebar.token(token(4), replace(usage, tokens=14))
        sidebar.stream_ended()  # the last token is drawn when the stream ends
        assert sidebar.probabilities.event == token(4) and sidebar.kv.usage.tokens == 14


async def test_panels_hide_and_show_by_key(random_model: Path) -> None:
    async with ready(random_model) as (app, pilot):
        sidebar = app.main.sidebar
        await pilot.press("ctrl+t")  # the panels take the keys now
        for number, name in enumerate(("probabilities", "speed", "kv", "sampler", "model"), 1):
            await pilot.press(str(number))
            assert not sidebar.panel(name).display, name
            await pilot.press(str(number))
            assert sidebar.panel(name).display, name
        await pilot.press("escape", "f3")
        assert not sidebar.display and app.focused is app.main.draft.editor
        await pilot.press("f3")
        assert sidebar.display


async def test_the_layout_fits_80x24_and_uses_a_large_terminal(random_model: Path) -> None:
    async def scenario(size: tuple[int, int]) -> tuple[int, int, bool]:
        async with ready(random_model, size=size) as (app, pilot):
            editor = app.main.draft.editor.region
            sidebar = app.main.sidebar
            side_by_side = sidebar.probabilities.region.y == sidebar.kv.region.y
            return editor.width, sidebar.region.width, side_by_side

    small: list[tuple[int, int, bool]] = []
    large: list[tuple[int, int, bool]] = []

    small.append(await scenario((80, 24)))
    large.append(await scenario((200, 50)))
    (editor_small, side_small, columns_small), (editor_large, side_large, columns_large) = small[0], large[0]
    assert editor_small >= 40 and editor_small + side_small <= 80
    assert not columns_small and columns_large  # one stack when small, two columns when large
    assert editor_large > editor_small and side_large > side_small


async def test_a_very_narrow_terminal_still_shows_the_draft() -> None:
    app = make_app(None)
    async with app.run_test(size=(30, 10)) as pilot:
        await typed(pilot, "Era notte")
        editor = app.main.draft.editor
        assert editor.size.width >= 12 and app.main.sidebar.size.width <= 15
        assert "Era notte" in "".join(strip.text for strip in editor.render_lines(editor.region.reset_offset))


async def test_a_generation_that_fails_midway_is_not_shown_decoding(random_model: Path) -> None:
    async with ready(random_model, loader=loader_failing_after(5)) as (app, pilot):
        await typed(pilot, "Era notte")
        await pilot.press("ctrl+g")
        await app.main.wait_until_idle()
        await pilot.pause()
        assert app.main.sidebar.speed.border_title == "Speed · failed"


async def test_the_kv_panel_says_what_a_token_costs_past_the_sliding_window(random_model: Path) -> None:
    # Gemma 3 270M's figures at 4,096 tokens: 18 KiB a token for all 18 layers, 3 KiB for the
    # 3 dense ones once the 15 window layers' 1,024 cells are full (27 MiB, not 72, in all).
    async with ready(random_model, size=(160, 48)) as (app, pilot):
        kv = app.main.sidebar.kv
        kv.show_usage(
            KVCacheUsage(
                tokens=2000,
                n_ctx=4096,
                bytes_allocated=27 << 20,
                bytes_used=21888000,
                bytes_per_token=18 << 10,
                window_tokens=1024,
                bytes_per_token_past_window=3 << 10,
            )
        )
        assert "18.0 KiB/tok, 3.0 KiB past 1,024" in text_of(kv)
        # As drawn, in the panel's own width: it was cut to "past 1,…" at every size but
        # the widest, a window of any number of thousands.
        for size in ((80, 24), (160, 48)):
            await pilot.resize_terminal(*size)
            await pilot.pause()
            assert any(
                line.startswith("18.0 KiB/tok, 3.0") and line.endswith(" past 1,024") for line in drawn_lines(kv)
            ), (size, drawn_lines(kv))


async def test_candidates_line_up_whatever_their_characters_width() -> None:
    """Labels were clipped and padded by characters: a Japanese token takes two cells a
    character, so its bar and percentage were pushed out of the panel ('33.' for 33.9%);
    a zero-width joiner or a combining mark alone left its label blank or drew it on the
    marker before it."""

    app = make_app(None)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        panel = app.main.sidebar.probabilities
        pieces = ["彼女", "東京の夜は静かだった", "\u200d", "\u0300", "🇮🇹", " casa"]
        top = tuple(Candidate(id=i, text=t, p=0.3 - i * 0.04, banned=False) for i, t in enumerate(pieces))
        panel.show_token(TokenEvent(index=0, id=0, text="彼女", p=0.3, top=top, elapsed_ms=1.0, kv_tokens=1))
        width = 32
        rows = [line.plain for line in panel.lines(width)][: len(pieces)]
        percentages = [f"{c.p * 100:.1f}%" for c in top]
        assert all(row.endswith(percent) for row, percent in zip(rows, percentages)), rows
        assert len({cell_len(row) for row in rows}) == 1  # every bar starts in the same column
        assert "U+200D" in rows[2] and "◌\u0300" in rows[3] and "東京の夜…" in rows[1]


async def test_a_small_probability_is_shown_as_small_not_as_nothing() -> None:
    """The cursor on a byte token of the author's scored Japanese (p 3.2e-7) said
    '▶ chosen <0xE3> 0.0%', as if the model had ruled it out."""

    app = make_app(None)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        panel = app.main.sidebar.probabilities
        top = (
            Candidate(id=1, text=" casa", p=0.6, banned=False),
            Candidate(id=2, text=" notte", p=0.2, banned=False),
        )
        panel.show_token(TokenEvent(index=0, id=16227, text="<0xE3>", p=3.2e-7, top=top, elapsed_ms=1.0, kv_tokens=1))
        summary = [line.plain for line in panel.lines(60)][-1]
        assert "3e-05%" in summary and "0.0%" not in summary, summary
        panel.show_token(TokenEvent(index=0, id=1, text=" casa", p=0.000321, top=top, elapsed_ms=1.0, kv_tokens=1))
        assert "0.03%" in [line.plain for line in panel.lines(60)][-1]


async def test_a_streamed_byte_token_outside_the_candidates_is_named_by_its_byte() -> None:
    """At a high temperature the sampler can draw <0xC3> from outside the top candidates:
    while its character was still open the panel said '▶ chosen ∅'."""

    app = make_app(None)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        panel = app.main.sidebar.probabilities
        top = (Candidate(id=1, text=" casa", p=0.6, banned=False),)
        panel.show_token(
            TokenEvent(index=0, id=16195, text="", p=0.01, top=top, elapsed_ms=1.0, kv_tokens=1, piece=b"\xc3")
        )
        assert "chosen <0xC3>" in [line.plain for line in panel.lines(60)][-1]


async def test_a_generation_that_fails_in_its_prompt_is_not_shown_evaluating_it() -> None:
    # The engine killed during a long prefill: the last progress stays, said as where it stopped.
    from scriptorium.inference.core.events import PrefillProgress

    app = make_app(None)
    async with app.run_test() as pilot:
        sidebar = app.main.sidebar
        sidebar.generation_started()
        sidebar.prefill_progress(PrefillProgress(done=2048, total=3000))
        assert "evaluating the prompt" in text_of(sidebar.speed)
        sidebar.stream_ended(failed=True)
        await pilot.pause()
        speed = text_of(sidebar.speed)
        assert "2,048 / 3,000" in speed and "evaluating" not in speed and "failed" in speed


async def test_the_kv_panel_lets_go_of_a_model_that_is_gone(random_model: Path) -> None:
    # The reload after an engine's death (or a switch) failed: no model, so no cache to show;
    # the last model's '0 / 512 tokens' and its prompt's split read as the state of a model.
    from scriptorium.inference.local.engine import Engine
    from scriptorium.inference.core.errors import ModelLoadError

    loads: list[object] = []

    def loader(options, on_progress=None):  # type: ignore[no-untyped-def]
        loads.append(options)
        if len(loads) > 1:
            raise ModelLoadError("llama.cpp could not load it")
        return Engine.load(options, on_progress)

    async with ready(random_model, loader=loader, size=(160, 48)) as (app, pilot):
        await typed(pilot, "Era notte")
        await generated(pilot, "ctrl+g")
        kv = app.main.sidebar.kv
        assert "/ 512 tokens" in text_of(kv) and kv.reused is not None
        app.load_model(app.engine_state.backend.options)
        await model_ready(pilot)
        assert app.engine_state.model_status.state == "failed"
        assert text_of(kv).split("\n")[0] == "no model loaded" and kv.reused is None and kv.window is None


async def test_the_panels_show_the_mode_shown_and_the_last_request(random_model: Path) -> None:
    """F2 left the draft's last numbers in the panels beside the chat, and after F9 the KV
    split was the last generation's window, not the one scored."""

    async with ready(random_model, size=(160, 48)) as (app, pilot):
        await typed(pilot, "Era notte. La casa era buia.")
        await generated(pilot, "ctrl+g")
        sidebar = app.main.sidebar
        generated_window = sidebar.kv.window
        assert generated_window is not None and sidebar.kv.reused is not None
        await pilot.press("escape")  # a longer draft scored
        await typed(pilot, " Il gatto dorme.")
        await pilot.press("f9")
        await app.workers.wait_for_complete()
        await pilot.pause()
        shown, scored = sidebar.kv.window, app.main.draft.scorer.window
        assert shown is not None and scored is not None and sidebar.kv.reused is None
        assert shown.draft_tokens == scored.draft_tokens > generated_window.draft_tokens
        await generated(pilot, "ctrl+g")
        assert sidebar.kv.window is not None and sidebar.probabilities.event is not None
        await pilot.press("f2")
        await pilot.pause()
        assert sidebar.kv.window is None and sidebar.kv.reused is None
        assert sidebar.probabilities.event is None and sidebar.speed.done is None
        assert "send a message" in text_of(sidebar.probabilities)


def test_the_kv_split_of_a_large_context_keeps_the_room_left_whole() -> None:
    """Memory and note on a context of thousands of tokens: 'mem150·note30·draft1,500·fr…'
    at the panel's 28 cells, the room left cut off."""
    window = SimpleNamespace(
        memory_tokens=150, note_tokens=30, draft_tokens=1500, prompt_tokens=1680, lore_tokens=0, lore=()
    )
    split = _window_split(window, 4096, 28)  # type: ignore[arg-type]
    assert "…" not in split and split.endswith("free 2,416") and "mem 150" in split and "note 30" in split, split
    assert _window_split(window, 4096, 60) == "mem 150·note 30·draft 1,500·free 2,416"
    # With a lorebook, the entries in the prompt are counted apart from the draft.
    window.lore_tokens, window.lore, window.draft_tokens = 40, ("an entry",), 1460
    assert _window_split(window, 4096, 60) == "mem 150·note 30·lore 40·draft 1,460·free 2,416"


async def test_a_message_refused_before_the_model_ran_keeps_the_last_speed_figures(sentence_model: Path) -> None:
    """A chat message too long for the context is refused while its prompt is made: the
    Speed panel said "failed" with every figure gone, though nothing in the model failed."""

    async with ready(sentence_model, mode="chat") as (app, pilot):
        await typed(pilot, "Ciao")
        done = await generated(pilot, "enter")
        speed = app.main.sidebar.speed
        title, figures = speed.border_title, text_of(speed)
        assert format_rate(done.decode_tokens_per_s) in figures
        app.main.chat.input.value = " ".join(["parola"] * 600)
        await pilot.press("enter")
        await app.main.wait_until_idle()
        await pilot.pause()
        assert app.main.chat.input.value  # refused before the engine was asked
        assert (speed.border_title, text_of(speed)) == (title, figures)
