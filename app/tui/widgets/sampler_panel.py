"""Every sampler setting with its value; focused, it is where the keys tune them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import var

from scriptorium.inference.settings import LogitBias, SamplerSettings, describe_bias

from scriptorium.app.tui import tuning
from scriptorium.app.tui.widgets.panel import Panel

# (label, what left/right do on that row)
ROWS: tuple[tuple[str, str], ...] = (
    ("preset", "preset"),
    ("temperature", "temperature"),
    ("top-k", "top_k"),
    ("top-p", "top_p"),
    ("min-p", "min_p"),
    ("repeat penalty", "repeat_penalty"),
    ("seed", "seed"),
    ("LoRA scale", "lora"),
    ("bias", "ban"),
)


BIAS_INDENT = 5
"""The bias summary is long: it starts right after its label ("bias ") and wraps."""


def _nudges(key: str, knob: str, label: str) -> list[Binding]:
    return [
        Binding(key, f"nudge('{knob}', -1)", f"{label} −", show=False, id=f"sampler.{knob}_down",
                tooltip=f"Lower {label} one step"),
        Binding(key.upper(), f"nudge('{knob}', 1)", f"{label} +", show=False, id=f"sampler.{knob}_up",
                tooltip=f"Raise {label} one step"),
    ]


@dataclass(frozen=True, slots=True)
class SamplerView:
    """What the panel draws: the settings the next generation uses."""

    sampler: SamplerSettings
    bias: LogitBias = field(default_factory=LogitBias)
    byte_token_ids: tuple[int, ...] | None = None
    """The loaded model's byte tokens; None before a model is loaded."""
    lora_scale: float | None = None
    pending: bool = False
    """A generation running now still uses older settings."""
    last_seed: int | None = None
    """The seed the last generation drew: what 'fix seed' fixes."""
    load_hint: str = ""
    """The key that loads a model (and an adapter)."""


class SamplerPanel(Panel, can_focus=True):
    """The sampler as the next generation will use it; its keys ask the app for changes."""

    @dataclass
    class Tuned(Message):
        """The author changed the settings with a key: the change, which the app makes to
        the settings it holds. Not the new settings: a key pressed before the panel shows
        the last one's effect would build on settings already replaced, and undo it."""

        sampler: Callable[[SamplerSettings], SamplerSettings] | None = None
        bias: Callable[[LogitBias], LogitBias] | None = None
        lora_scale: Callable[[float], float] | None = None
        next_preset: bool = False
        """Switch to the preset after the current one: which one that is depends on the
        presets the app knows (the config's own among them), not on the panel."""

        def applied(self, sampler: SamplerSettings, bias: LogitBias, lora_scale: float | None,
                    presets: Mapping[str, SamplerSettings]) -> tuple[SamplerSettings, LogitBias, float | None]:
            """The settings after this change; without an adapter the scale stays None."""
            if self.next_preset:
                sampler = tuning.next_preset(sampler, presets)
            return (sampler if self.sampler is None else self.sampler(sampler),
                    bias if self.bias is None else self.bias(bias),
                    lora_scale if self.lora_scale is None or lora_scale is None else self.lora_scale(lora_scale))

    PANEL_NAME = "sampler"
    TITLE = "Sampler"
    COMPONENT_CLASSES = {"sampler--label", "sampler--changed", "sampler--selected", "sampler--dim"}
    BINDINGS = [
        Binding("up", "select(-1)", "Select", show=False, id="sampler.select_up", tooltip="Select the setting above"),
        Binding("down", "select(1)", "Select", key_display="↑↓", id="sampler.select_down",
                tooltip="Select the setting below"),
        Binding("left,minus", "adjust(-1)", "Lower", show=False, id="sampler.adjust_down",
                tooltip="Lower the selected setting (previous preset, unfix seed, ban off)"),
        Binding("right,plus", "adjust(1)", "Adjust", key_display="←→", id="sampler.adjust_up",
                tooltip="Raise the selected setting (next preset, new seed, ban on)"),
        *_nudges("t", "temperature", "temperature"),
        *_nudges("k", "top_k", "top-k"),
        *_nudges("p", "top_p", "top-p"),
        *_nudges("m", "min_p", "min-p"),
        *_nudges("r", "repeat_penalty", "repetition penalty"),
        Binding("c", "cycle_preset", "Preset", id="sampler.preset", tooltip="Switch to the next sampler preset"),
        Binding("b", "toggle_ban", "Byte ban", id="sampler.ban",
                tooltip="Ban or allow the byte tokens (<0x00>..<0xFF>) with a bias of -100"),
        Binding("s", "new_seed", "New seed", show=False, id="sampler.new_seed",
                tooltip="Draw a new seed and keep it fixed"),
        Binding("f", "fix_seed", "Fix seed", show=False, id="sampler.fix_seed",
                tooltip="Fix the seed the last generation used, or go back to a new seed each time"),
        Binding("l", "lora_scale(-1)", "LoRA −", show=False, id="sampler.lora_down",
                tooltip="Lower the LoRA adapter's scale by 0.1 (0 disables it)"),
        Binding("L", "lora_scale(1)", "LoRA +", show=False, id="sampler.lora_up",
                tooltip="Raise the LoRA adapter's scale by 0.1"),
    ]

    view: var[SamplerView | None] = var(None)

    def __init__(self) -> None:
        super().__init__()
        self.selected = 1
        self.sampler: SamplerSettings | None = None
        self.bias = LogitBias()
        self.byte_token_ids: tuple[int, ...] | None = None
        self.lora_scale: float | None = None
        self.changed: set[str] = set()

    def watch_view(self, old: SamplerView | None, view: SamplerView | None) -> None:
        if view is None:
            return
        if old is not None:
            values = self._values(view.sampler, view.bias, view.lora_scale)
            previous = self._values(old.sampler, old.bias, old.lora_scale)
            self.changed = {row for row in values if values[row] != previous[row]} or self.changed
        self.sampler, self.bias = view.sampler, view.bias
        self.byte_token_ids, self.lora_scale = view.byte_token_ids, view.lora_scale
        self.border_title = f"{self.TITLE} · {view.sampler.preset}"
        self.border_subtitle = "for the next generation" if view.pending else ""
        self.refresh(layout=True)

    @staticmethod
    def _values(sampler: SamplerSettings, bias: LogitBias, lora_scale: float | None) -> dict[str, object]:
        return {
            "preset": sampler.preset, "temperature": sampler.temperature, "top_k": sampler.top_k,
            "top_p": sampler.top_p, "min_p": sampler.min_p, "repeat_penalty": sampler.repeat_penalty,
            "seed": sampler.seed, "lora": lora_scale, "ban": bias.ban_byte_tokens,
        }

    def _bias_text(self) -> str:
        if self.byte_token_ids:
            return describe_bias(self.bias, self.byte_token_ids)
        # Without byte tokens to list, the ban's state is still said: else the ban key
        # would change nothing on screen (before a load, or a vocabulary with none: GPT-2 style).
        state = "banned" if self.bias.ban_byte_tokens else "allowed"
        why = "their ids are known once a model is loaded" if self.byte_token_ids is None else "this vocabulary has none"
        entries = "".join(f"; {token_id}: {value:+g}" for token_id, value in self.bias.entries)
        return f"byte tokens {state} ({why}){entries}"

    def _bias_lines(self, width: int) -> list[str]:
        """The bias summary, wrapped beside its short label over as many lines as it needs."""
        return [line.plain for line in Text(self._bias_text()).wrap(self.app.console, max(width - BIAS_INDENT, 1))]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(ROWS) - 1 + len(self._bias_lines(width))

    def _value_text(self, row: str) -> str:
        s = self.sampler
        assert s is not None
        if row == "preset":
            return s.preset
        if row == "top_k":
            return "off" if s.top_k == 0 else str(s.top_k)
        if row == "repeat_penalty":
            return f"{s.repeat_penalty:.2f} · last {s.repeat_window}"
        if row == "seed":
            return "new each time" if s.seed is None else f"{s.seed} (fixed)"
        if row == "lora":
            return "no adapter" if self.lora_scale is None else f"{self.lora_scale:.2f}"
        return f"{getattr(s, row):.2f}"

    def lines(self, width: int) -> list[Text]:
        if self.sampler is None:
            return [Text()]
        label_width = 15
        lines = []
        for index, (label, row) in enumerate(ROWS):
            style = Style()
            if row in self.changed:
                style = self.style_of("sampler--changed")
            if self.has_focus and index == self.selected:
                style = self.style_of("sampler--selected")
            label_style = style or self.style_of("sampler--label")
            if row == "ban":
                for number, part in enumerate(self._bias_lines(width)):
                    line = Text((label if number == 0 else "").ljust(BIAS_INDENT), style=label_style)
                    lines.append(line + Text(part.strip().rjust(max(width - BIAS_INDENT, 0)), style=style))
                continue
            line = Text(label.ljust(label_width), style=label_style)
            lines.append(line + Text(self._value_text(row).rjust(max(width - label_width, 0)), style=style))
        return lines

    # ---- keys ----------------------------------------------------------------------
    def action_select(self, step: int) -> None:
        self.selected = (self.selected + step) % len(ROWS)
        self.refresh()

    def action_adjust(self, direction: int) -> None:
        """Left/right on the selected row."""
        row = ROWS[self.selected][1]
        if row == "preset":
            self.action_cycle_preset()
        elif row == "seed":
            self.action_new_seed() if direction > 0 else self.action_fix_seed()
        elif row == "lora":
            self.action_lora_scale(direction)
        elif row == "ban":
            self.post_message(self.Tuned(bias=lambda bias: tuning.with_ban(bias, direction > 0)))
        else:
            self.action_nudge(row, direction)

    def action_nudge(self, knob: str, direction: int) -> None:
        self.post_message(self.Tuned(sampler=lambda sampler: tuning.nudge(sampler, knob, direction)))

    def action_cycle_preset(self) -> None:
        self.post_message(self.Tuned(next_preset=True))

    def action_toggle_ban(self) -> None:
        self.post_message(self.Tuned(bias=lambda bias: tuning.with_ban(bias, not bias.ban_byte_tokens)))

    def action_new_seed(self) -> None:
        self.post_message(self.Tuned(sampler=tuning.with_new_seed))

    def action_fix_seed(self) -> None:
        last_seed = self.view.last_seed if self.view is not None else None
        if self.view is not None and self.view.sampler.seed is None and self.view.sampler.temperature > 0:
            # A reused cache is computed a little differently (inference/generation.py): said, the wait is no surprise.
            self.notify("Seed fixed: the prompt is now evaluated afresh, as `scriptorium continue --seed` does, so the "
                        "seed gives the same text in both (a re-roll then evaluates one token).", title="Seed")
        self.post_message(self.Tuned(sampler=lambda sampler: tuning.with_seed_fixed(sampler, last_seed)))

    def action_lora_scale(self, direction: int) -> None:
        view = self.view
        if view is None or view.lora_scale is None:
            hint = f", or load one with {view.load_hint}" if view is not None and view.load_hint else ""
            self.notify(f"No LoRA adapter is loaded (start with --lora PATH{hint}).", severity="warning")
            return
        self.post_message(self.Tuned(lora_scale=lambda scale: tuning.lora_scale_moved(scale, direction)))

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()
