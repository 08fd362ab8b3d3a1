"""Starting the app from the command line and the config file: keymap and theme from the
config, problems as notifications, the demo model with visible progress, and the
welcome screen when there is no model at all."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from tui_helpers import generated, model_ready, notifications, typed

from scriptorium.app.models import choice as model_choice
from scriptorium.app.cli.main import build_parser
from scriptorium.app.cli.tui_cmd import build_app
from scriptorium.app.tui.screens.model_picker import WelcomeScreen
from scriptorium.app.tui.app import ScriptoriumApp

OPENING = "C'era una volta"


def app_for(*argv: str) -> Any:
    return build_app(build_parser(None).parse_args(list(argv)))


async def test_a_keymap_theme_and_frame_rate_from_the_config_file_apply(random_model: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[keymap]\n"draft.continue" = "f13"\n[ui]\ntheme = "nord"\nframes_per_second = 4\n', encoding="utf-8"
    )

    app = app_for(
        "--config",
        str(config),
        "--model",
        str(random_model),
        "--ctx",
        "512",
        "--preset",
        "greedy",
        "--max-tokens",
        "8",
    )
    async with app.run_test() as pilot:
        await model_ready(pilot)
        assert app.theme == "nord" and app.settings.frame_interval == 0.25
        await typed(pilot, OPENING)
        done = await generated(pilot, "f13")  # the remapped key continues the draft
        assert done.completion_tokens > 0 and app.main.last_generation[0].settings.max_tokens == 8
        assert app.keys.key_display("draft.continue") == "f13"


async def test_a_bad_config_is_shown_and_the_app_still_starts(random_model: Path, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[sampler]\ntemprature = 0.5\n[ui]\ntheme = "no-such-theme"\n', encoding="utf-8")

    app = app_for("--config", str(config), "--model", str(random_model), "--ctx", "512")
    async with app.run_test() as pilot:
        await model_ready(pilot)
        shown = notifications(app)
        assert any("temprature" in message and str(config) in message for message in shown), shown
        assert any('ui.theme: unknown theme "no-such-theme"' in message for message in shown)
        assert app.theme == "textual-dark" and app.engine_state.backend is not None


async def test_the_demo_model_is_prepared_with_progress_and_named(
    random_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = random_model  # stands in for Gemma 3 270M: the real one is not assembled in tests
    seen: list[float] = []

    def fake_demo(progress: Any = None) -> Path:
        for done in (0, 50, 100):
            progress(done, 100)
        return demo

    def spy(self: Any, message: Any) -> None:
        seen.append(message.done / message.total)

    # Handlers are looked up on the class; the mixin's own handler still runs after this one.
    monkeypatch.setattr(ScriptoriumApp, "on_demo_progressed", spy, raising=False)

    monkeypatch.setattr(model_choice, "demo_available", lambda: True)
    monkeypatch.setattr(model_choice, "demo_model_path", fake_demo)
    monkeypatch.setattr(model_choice, "is_demo_model", lambda path: Path(path) == demo)

    app = app_for("--ctx", "512")
    async with app.run_test() as pilot:
        await model_ready(pilot)
        await model_ready(pilot)
        assert app.engine_state.backend is not None and app.engine_state.backend.options.model_path == demo
        assert seen and seen[-1] == 1.0
        assert any("small demo model" in message for message in notifications(app))


async def test_no_model_at_all_shows_the_welcome_screen_and_a_found_model_loads(
    random_model: Path, models_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(random_model, models_dir / "mio-modello.gguf")
    # As without the demo extra: the demo is neither available nor listed.
    monkeypatch.setattr(model_choice, "demo_available", lambda: False)
    monkeypatch.setattr(model_choice.demo_model, "demo_entry", lambda cache_dir: None)

    app = app_for("--ctx", "512")
    async with app.run_test(size=(110, 40)) as pilot:
        await model_ready(pilot)
        assert isinstance(app.screen, WelcomeScreen)
        intro = str(app.screen.query_one("#picker-intro").render())
        assert "--model FILE.gguf" in intro and str(models_dir) in intro and "config.toml" in intro
        assert "mio-modello" in str(app.screen.query_one("#picker-models").get_option_at_index(0).prompt)
        await pilot.press("enter")
        await model_ready(pilot)
        assert (
            app.engine_state.backend is not None
            and app.engine_state.backend.options.model_path.name == "mio-modello.gguf"
        )
        assert app.engine_state.backend.n_ctx == 512  # the command line's settings apply to the chosen model


async def test_the_welcome_screen_can_be_left_and_the_editor_works(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_choice, "demo_available", lambda: False)
    monkeypatch.setattr(model_choice.demo_model, "demo_entry", lambda cache_dir: None)

    app = app_for()
    async with app.run_test() as pilot:
        await model_ready(pilot)
        assert isinstance(app.screen, WelcomeScreen)
        assert "No GGUF models found" in str(app.screen.query_one("#picker-models").get_option_at_index(0).prompt)
        await pilot.press("escape")
        await typed(pilot, "Scrivo")
        await pilot.press("ctrl+g")
        assert app.main.draft.editor.text == "Scrivo" and app.engine_state.backend is None
        assert any("No model is loaded" in message for message in notifications(app))


async def test_the_preset_key_cycles_through_the_authors_own_presets_from_the_config(
    random_model: Path, tmp_path: Path
) -> None:
    """[presets.NAME] from the config are reached by the sampler panel's preset key, and a
    redefined built-in comes with the author's values, not the built-in ones."""
    config = tmp_path / "config.toml"
    config.write_text(
        '[presets.prose]\nbase = "prose"\ntemperature = 0.7\n'
        '[presets.dialogue]\nbase = "creative"\ntemperature = 0.9\n',
        encoding="utf-8",
    )

    app = app_for("--config", str(config), "--model", str(random_model), "--ctx", "512", "--preset", "creative")
    async with app.run_test() as pilot:
        await model_ready(pilot)
        await pilot.press("ctrl+t")
        reached = {}
        # Once round the cycle (the shipped presets, then the author's), whatever its order.
        for _ in range(len(app.config.all_presets()) + 1):
            await pilot.press("c")
            reached[app.engine_state.sampler.preset] = app.engine_state.sampler.temperature
            if app.engine_state.sampler.preset == "prose":
                assert app.main.sidebar.sampler.border_title == "Sampler · prose"
        assert (reached["dialogue"], reached["prose"]) == (0.9, 0.7)
