"""The sampler panel with every sampler: readable at 80 columns, what acts shown and the
rest on demand, the chain's order shown and changed with keys; the probabilities panel
saying what the chain kept and what each sampler did."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import generated, ready, typed

from scriptorium.app.tui.widgets.probabilities_panel import did_text
from scriptorium.inference.core.settings import preset

ANTI_LOOP = preset("anti-loop").with_changes(max_tokens=6, seed=3)


def shown(panel) -> list[str]:  # type: ignore[no-untyped-def]
    """What the panel draws, line by line, at the width it has."""
    return [line.plain for line in panel.lines(panel.content_size.width)]


async def test_at_80_columns_the_panel_shows_what_acts_and_the_order(random_model: Path) -> None:
    async with ready(random_model, sampler=ANTI_LOOP, size=(80, 40)) as (app, pilot):
        panel = app.main.sidebar.sampler
        lines = shown(panel)
        width = panel.content_size.width
        assert all(len(line) <= width for line in lines)
        text = "\n".join(lines)
        assert "DRY" in text and "0.80" in text  # it acts: shown
        assert "XTC" not in text and "mirostat" not in text  # off: left out
        assert "penalties" not in text
        assert "DRY › top-k › top-p › temp" in " ".join(
            line[6:].strip() for line in lines if line[:6].strip() in ("order", "")
        )
        await pilot.press("ctrl+t", "a")  # every sampler, on demand
        every = "\n".join(shown(panel))
        assert "XTC" in every and "mirostat" in every and "allowed" in every and "(XTC)" in every
        assert all(len(line) <= width for line in shown(panel))


async def test_keys_tune_the_new_samplers_and_move_one_in_the_chain(random_model: Path) -> None:
    async with ready(random_model, sampler=ANTI_LOOP, size=(80, 40)) as (app, pilot):
        await pilot.press("ctrl+t", "X", "X", "d", "Y", "y", "n", "N", "N", "E", "O", "O")
        s = app.engine_state.sampler
        assert (s.xtc_probability, s.dry_multiplier, s.typical_p, s.top_n_sigma) == (0.1, 0.7, 0.95, 1.0)
        assert (s.dynatemp_range, s.mirostat) == (0.05, 2)
        await pilot.press("o", "o")  # Mirostat off again
        # Temperature selected (the panel starts there): one place earlier, past XTC, which now acts.
        await pilot.press("less_than_sign")
        assert app.engine_state.sampler.samplers.index("temperature") < app.engine_state.sampler.samplers.index("xtc")
        assert app.engine_state.sampler.acting_samplers()[-1] == "xtc"
        await pilot.press("greater_than_sign")
        assert app.engine_state.sampler.acting_samplers()[-1] == "temperature"


async def test_the_probabilities_panel_says_what_the_chain_kept(random_model: Path) -> None:
    async with ready(
        random_model,
        sampler=preset("prose").with_changes(top_k=3, max_tokens=4, seed=5),
        size=(100, 40),
    ) as (app, pilot):
        await typed(pilot, "C'era una volta")
        await generated(pilot, "ctrl+g")
        await pilot.pause()
        panel = app.main.sidebar.probabilities
        event = panel.event
        assert event is not None and len(event.kept) == 3
        text = "\n".join(line.plain for line in panel.lines(panel.content_size.width))
        assert "→" in text and "✗top-k" in text  # the three kept, the rest cut by top-k
        assert "→ after the chain" in panel.border_subtitle


def test_what_each_mark_says() -> None:
    kept, removed, pushed = {1: 0.612}, {2: "xtc", 3: "top_k"}, {4: ("dry", -1.4)}
    assert [did_text(i, kept, removed, pushed) for i in (1, 2, 3, 4, 5)] == ["→  61%", "✗xtc", "✗top-k", "dry-1.4", ""]


def test_a_reopened_session_shows_what_the_chain_did_under_f4(tmp_path: Path) -> None:
    from scriptorium.app.sessions import SessionStore
    from scriptorium.app.sessions.records import BiasRecord, Generation, ModelRef, TokenRecord
    from scriptorium.app.tui.session_tokens import tokens_spelling

    generation = Generation(
        id="g1",
        kind="continue",
        started_at="2026-12-03T10:00:00",
        lora=None,
        model=ModelRef(
            path="/m.gguf", name="m", size=1, sha256="", quantization="F32", architecture="llama", parameters=1
        ),
        sampler=preset("anti-loop").as_dict(),
        bias=BiasRecord(ban_byte_tokens=True),
    )
    generation.tokens = [
        TokenRecord(
            id=5,
            text=" era",
            p=0.4,
            top=((5, " era", 0.4, False), (6, " fu", 0.3, False)),
            kept=((5, 0.7),),
            removed=((6, "xtc"),),
            pushed=((5, "dry", -0.8),),
        )
    ]
    store = SessionStore()
    session = store.create_draft(title="t", text="La casa")
    session.generations.append(generation)
    store.save(session)
    reopened = store.load(session.id).generations[0]
    event = tokens_spelling(reopened, " era")[0].as_event()
    assert (event.kept, event.removed, event.pushed) == (((5, 0.7),), ((6, "xtc"),), ((5, "dry", -0.8),))
