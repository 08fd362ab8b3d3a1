"""EngineState: the model the next generation runs on and the settings it takes, as one value.

The app owns it (one reactive, `ScriptoriumApp.engine_state`) and replaces it whole, with
`dataclasses.replace`, when the model loads or a sampler key is pressed; the main screen and
each mode pane receive it bound (`data_bind`), never change it, and ask for a change with a
message up (SamplerPanel.Tuned, ModePane.SeedChosen). Frozen, so a reactive holding it
compares by value: replacing it with an equal one fires no watcher and draws nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

from scriptorium.inference.core.settings import LogitBias, SamplerSettings
from scriptorium.inference.core.speculation import Speculation

from scriptorium.app.models.status import ModelStatus

if TYPE_CHECKING:
    from scriptorium.inference.core.backend import Backend


@dataclass(frozen=True, slots=True)
class EngineState:
    """What the app gives its screen and panes: the model and how it samples next."""

    backend: Backend | None = None
    """The model ready to generate (owned by the model lifecycle, models/lifecycle.py); None
    while none is loaded, or another is loading. A backend defines no equality: two are equal
    only if they are the same engine, so a reload (the same model again) is a change."""
    model_status: ModelStatus = field(default_factory=lambda: ModelStatus("none"))
    """What the model panel and the status bar say of the model."""
    sampler: SamplerSettings = field(default_factory=SamplerSettings)
    """The live sampler settings the sampler panel's keys change."""
    bias: LogitBias = field(default_factory=LogitBias)
    lora_scale: float | None = None
    """The adapter scale the next generation uses; None when no adapter is loaded."""
    speculation: Speculation = field(default_factory=Speculation)
    """Speculative decoding for the next generations: --speculative or [speculative], then the palette."""
    last_seed: int | None = None
    """The seed the last generation drew (what 'fix seed' fixes)."""

    def changed_from(self, old: EngineState) -> frozenset[str]:
        """The names of the fields that differ from `old`'s, for a watcher that acts on some of them only."""
        return frozenset(f.name for f in fields(self) if getattr(self, f.name) != getattr(old, f.name))
