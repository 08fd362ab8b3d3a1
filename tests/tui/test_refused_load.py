"""A load whose files cannot load (a mistyped path, not a model, an adapter for another
model) leaves everything running as it was: the model, a generation streaming, a draft
being scored; one notification says why."""

from __future__ import annotations

from pathlib import Path

from scoring_helpers import TEXT, HeldScoring
from tui_helpers import Gate, ready, until

from scriptorium.app.tui.screens.load_model_screen import LoadModelScreen


async def refused_in_the_dialog(pilot, missing: Path) -> list[str]:  # type: ignore[no-untyped-def]
    """Type `missing` in the load dialog (ctrl+l) and wait for its refusal: what was said."""
    app = pilot.app
    app.notices.clear()
    await pilot.press("ctrl+l")
    assert isinstance(app.screen, LoadModelScreen)
    app.screen.query_one("#model-path").value = str(missing)
    await pilot.press("enter")
    await until(pilot, lambda: any(n.title == "Model not loaded" for n in app.notices), "the refusal")
    await pilot.pause()
    return [n.message for n in app.notices]


async def test_a_refused_file_leaves_the_scoring_running(random_model: Path, tmp_path: Path) -> None:
    """F9 on a long draft, then ctrl+l to a missing path: the scoring was stopped before the
    path was even looked at ("Scoring stopped: another model is loading"), then "Model not
    loaded … still writing with" came, the scores gone for nothing."""
    held = HeldScoring()

    async with ready(random_model, loader=held.loader, size=(120, 40)) as (app, pilot):
        running = app.engine_state.backend
        await held.scoring(pilot, " ".join([TEXT] * 6))
        said = await refused_in_the_dialog(pilot, tmp_path / "non-esiste.gguf")
        assert len(said) == 1 and "Still writing with" in said[0], said
        assert (
            app.main.draft.scoring
            and app.engine_state.backend is running
            and app.engine_state.model_status.state == "ready"
        )
        held.open.set()
        await until(pilot, lambda: not app.main.draft.scoring, "the scoring's end")
        await pilot.pause()
        assert not any(n.message.startswith("Scoring stopped") for n in app.notices)


async def test_a_refused_file_leaves_the_generation_streaming(random_model: Path, tmp_path: Path) -> None:
    """ctrl+l to a missing path while a suggestion streamed: the suggestion was stopped first."""
    gate = Gate(after_tokens=2)

    async with ready(random_model, loader=gate.loader, size=(120, 40)) as (app, pilot):
        app.main.draft.editor.load_text(TEXT)
        await pilot.press("ctrl+g")
        await gate.wait_reached()
        said = await refused_in_the_dialog(pilot, tmp_path / "non-esiste.gguf")
        assert len(said) == 1 and "Still writing with" in said[0], said
        gate.release()
        await app.main.wait_until_idle()
        await pilot.pause()
        _, tokens, done = app.main.last_generation
        assert done.stop_reason != "cancelled" and len(tokens) > gate.after_tokens, done
