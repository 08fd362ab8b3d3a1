"""The model a session reopened at start was written with: `scriptorium --resume` (or a
draft with its session) goes on with it, as the author left it, unless the command line
names another. The config's model is a default for new writing, not a switch for old."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scriptorium.app.sessions.records import Generation


@dataclass(frozen=True, slots=True)
class SessionModel:
    """The model file, adapter and scale a session reopened at start was last written with."""

    path: Path
    lora: Path | None
    lora_scale: float
    unlike_config: bool
    """The config (or the demo default) would have chosen another: the author is told."""
    lora_gone: Path | None = None
    """The adapter the session ran with, gone or another file now: the model runs without it,
    and the author is told (the demo, loaded instead, said nothing of it)."""


def session_model(named: bool, configured: str | None, last: Generation | None) -> SessionModel | None:
    """What to load instead of the config's model (or the demo) for the session reopened
    at start: the author goes on with the model they left it with. `configured` is the
    config's model (None: the demo). None when the command line named a model (`named`),
    the session never ran one on this machine, or its model file or adapter is gone or
    no longer the size it was (another model converted to the path). An adapter gone or
    replaced is left out (`lora_gone`): the base model is still the one written with."""
    if named or last is None or last.origin:
        return None
    model, lora = Path(last.model.path), Path(last.lora.path) if last.lora else None
    if not _still_there(model, last.model.size):
        return None
    lora_gone = lora if lora is not None and last.lora is not None and not _still_there(lora, last.lora.size) else None
    if configured:
        unlike_config = not _same_file(Path(configured).expanduser(), model)
    else:
        from scriptorium.app.models import choice as model_choice  # when first used: see ModelLifecycle.chose

        unlike_config = not model_choice.is_demo_model(model)
    if lora_gone is not None:
        return SessionModel(model, None, 1.0, unlike_config, lora_gone)
    return SessionModel(model, lora, last.lora.scale if last.lora else 1.0, unlike_config)


def _still_there(path: Path, size: int) -> bool:
    try:
        return path.is_file() and path.stat().st_size == size
    except OSError:
        return False


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False
