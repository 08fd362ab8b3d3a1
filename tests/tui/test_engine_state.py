"""The engine state on its own: what a watcher learns changed, and that it is declared once
(the Pilot tests drive it through the sampler keys, the palette and model loads)."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, fields, replace

import pytest
from textual.reactive import Reactive

from scriptorium.inference.core.settings import LogitBias, preset
from scriptorium.inference.core.speculation import Speculation

from scriptorium.app.models.status import ModelStatus
from scriptorium.app.tui.app import ScriptoriumApp
from scriptorium.app.tui.engine_state import EngineState
from scriptorium.app.tui.screens.main_screen import SHOWN_IN_PANELS, MainScreen
from scriptorium.app.tui.widgets.chat_pane import ChatPane
from scriptorium.app.tui.widgets.draft_pane import DraftPane
from scriptorium.app.tui.widgets.mode_pane import ModePane


class FakeBackend:
    """A backend as the state compares it: no equality of its own, so only itself."""


def reactive_names(owner: type) -> set[str]:
    return {name for klass in owner.__mro__ for name, value in vars(klass).items() if isinstance(value, Reactive)}


def test_an_equal_state_has_nothing_changed() -> None:
    state = EngineState(sampler=preset("prose"), bias=LogitBias(ban_byte_tokens=True), last_seed=7)
    assert state.changed_from(replace(state)) == frozenset()
    assert state == replace(state)  # a reactive holding it fires no watcher for an equal one


def test_the_changed_parts_are_named_together() -> None:
    old = EngineState()
    new = replace(old, sampler=preset("greedy"), lora_scale=0.5, speculation=Speculation(guesser="lookup"))
    assert new.changed_from(old) == {"sampler", "lora_scale", "speculation"}
    assert replace(old, model_status=ModelStatus("loading", progress=0.4)).changed_from(old) == {"model_status"}


def test_the_same_model_loaded_again_is_another_backend() -> None:
    first, again = FakeBackend(), FakeBackend()
    state = EngineState(backend=first)  # type: ignore[arg-type]
    assert replace(state, backend=again).changed_from(state) == {"backend"}  # type: ignore[arg-type]
    assert replace(state, backend=first).changed_from(state) == frozenset()  # type: ignore[arg-type]


def test_it_is_replaced_never_changed_in_place() -> None:
    with pytest.raises(FrozenInstanceError):
        EngineState().last_seed = 3  # type: ignore[misc]


def test_its_parts_are_declared_once_not_mirrored_by_the_app_screen_or_panes() -> None:
    parts = {part.name for part in fields(EngineState)}
    for owner in (ScriptoriumApp, MainScreen, ModePane, DraftPane, ChatPane):
        assert "engine_state" in reactive_names(owner)
        assert parts.isdisjoint(reactive_names(owner)), owner.__name__
    assert SHOWN_IN_PANELS < parts  # the screen's watcher names parts that exist
