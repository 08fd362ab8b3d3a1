"""Every sampler setting with its value; focused, it is where the keys tune them."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Callable, Mapping

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import var

from scriptorium.inference.core.settings import LogitBias, SamplerSettings, SettingsError, describe_bias

from scriptorium.app.tui import tuning
from scriptorium.app.tui.screens.confirm_screen import TextPromptScreen
from scriptorium.app.tui.quoted_strings import parse_strings, strings_text
from scriptorium.app.tui.widgets.panel import Panel
from scriptorium.app.i18n.language import Language
from scriptorium.app.i18n.marker import N_

# (label, what left/right do on that row): a tuning.KNOBS name or one of the panel's own.
MAIN_ROWS: tuple[tuple[str, str], ...] = (
    (N_("preset"), "preset"),
    (N_("temperature"), "temperature"),
    (N_("top-k"), "top_k"),
    (N_("top-p"), "top_p"),
    (N_("min-p"), "min_p"),
    (N_("repeat penalty"), "repeat_penalty"),
)
SAMPLER_ROWS: tuple[tuple[str, str], ...] = (
    (N_("frequency pen."), "frequency_penalty"),
    (N_("presence pen."), "presence_penalty"),
    (N_("DRY"), "dry_multiplier"),
    (N_("XTC"), "xtc_probability"),
    (N_("typical-p"), "typical_p"),
    (N_("top-n-sigma"), "top_n_sigma"),
    (N_("dynamic temp."), "dynatemp_range"),
    (N_("mirostat"), "mirostat"),
)
"""Shown while they act (their value not the one that turns them off), all of them with `a`."""
DETAIL_ROWS: dict[str, tuple[tuple[str, str], ...]] = {
    "repeat_penalty": ((N_("  window"), "repeat_window"),),
    "dry_multiplier": (
        (N_("  base"), "dry_base"),
        (N_("  allowed"), "dry_allowed_length"),
        (N_("  last n"), "dry_penalty_last_n"),
        (N_("  breakers"), "dry_sequence_breakers"),
    ),
    "xtc_probability": ((N_("  threshold"), "xtc_threshold"),),
    "dynatemp_range": ((N_("  exponent"), "dynatemp_exponent"),),
    "mirostat": ((N_("  tau"), "mirostat_tau"), (N_("  eta"), "mirostat_eta")),
}
"""The values that refine a sampler, under its row with `a`."""
END_ROWS: tuple[tuple[str, str], ...] = (
    # Length and stops always shown: set on the command line they acted while the panel said only "custom".
    (N_("max tokens"), "max_tokens"),
    (N_("stops"), "stop"),
    (N_("seed"), "seed"),
    (N_("LoRA scale"), "lora"),
    (N_("order"), "order"),
    (N_("bias"), "ban"),
)
HEAL_ROW = (N_("healing"), "heal")
"""Token healing (inference/local/healing.py), shown when it is off, or with `a`."""
WRAPPED = ("order", "ban")
"""Rows whose text wraps beside a short label over as many lines as it needs."""
LENGTHS = {"sentence": N_("sentence"), "paragraph": N_("paragraph")}
"""The length modes that end at a boundary (SamplerSettings.length), as the max tokens row names them."""
OFF = {
    "frequency_penalty": 0.0,
    "presence_penalty": 0.0,
    "dry_multiplier": 0.0,
    "xtc_probability": 0.0,
    "typical_p": 1.0,
    "top_n_sigma": -1.0,
    "dynatemp_range": 0.0,
    "mirostat": 0,
}
"""The value at which each of SAMPLER_ROWS does nothing."""
CHAIN_NAMES = {
    "penalties": "penalties",
    "dry": "DRY",
    "top_n_sigma": "top-n-σ",
    "top_k": "top-k",
    "typ_p": "typical",
    "top_p": "top-p",
    "min_p": "min-p",
    "xtc": "XTC",
    "temperature": "temp",
    "dist": "draw",
    "greedy": "greedy",
    "mirostat": "mirostat",
}


def panel_rows(sampler: SamplerSettings, show_all: bool) -> list[tuple[str, str]]:
    """The rows the panel shows for `sampler`: what acts, or everything with `show_all`."""
    rows = list(MAIN_ROWS)
    if show_all:
        rows += DETAIL_ROWS["repeat_penalty"]
    for label, row in SAMPLER_ROWS:
        if show_all or getattr(sampler, row) != OFF[row]:
            rows.append((label, row))
            if show_all:
                rows += DETAIL_ROWS.get(row, ())
    if show_all or not sampler.heal:  # on is the default, as the samplers' rows show only when they act
        rows.append(HEAL_ROW)
    return rows + list(END_ROWS)


def chain_text(sampler: SamplerSettings, show_all: bool) -> str:
    """'top-k › top-p › temp › draw': what llama.cpp applies, in order; with `show_all`
    the whole order, the samplers that do nothing now in brackets."""
    if not show_all or sampler.mirostat:
        return " › ".join(CHAIN_NAMES[name] for name in sampler.applied_chain())
    acting = sampler.acting_samplers()
    return " › ".join(CHAIN_NAMES[name] if name in acting else f"({CHAIN_NAMES[name]})" for name in sampler.samplers)


BIAS_INDENT = 5
"""The bias summary is long: it starts right after its label ("bias ") and wraps."""
INDENTS = {"ban": BIAS_INDENT, "order": 6}


def _nudges(key: str, knob: str, lower: str, higher: str, lower_tip: str, higher_tip: str) -> list[Binding]:
    """The two keys of a knob, each named whole (marked with N_ by the caller) so it is translated whole."""
    return [
        Binding(key, f"nudge('{knob}', -1)", lower, show=False, id=f"sampler.{knob}_down", tooltip=lower_tip),
        Binding(key.upper(), f"nudge('{knob}', 1)", higher, show=False, id=f"sampler.{knob}_up", tooltip=higher_tip),
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

        def applied(
            self,
            sampler: SamplerSettings,
            bias: LogitBias,
            lora_scale: float | None,
            presets: Mapping[str, SamplerSettings],
            custom: SamplerSettings | None = None,
        ) -> tuple[SamplerSettings, LogitBias, float | None]:
            """The settings after this change; without an adapter the scale stays None.
            `custom`: the author's own values, which the preset cycle comes back to."""
            if self.next_preset:
                sampler = tuning.next_preset(sampler, presets, custom)
            return (
                sampler if self.sampler is None else self.sampler(sampler),
                bias if self.bias is None else self.bias(bias),
                lora_scale if self.lora_scale is None or lora_scale is None else self.lora_scale(lora_scale),
            )

    PANEL_NAME = "sampler"
    TITLE = N_("Sampler")
    COMPONENT_CLASSES = {"sampler--label", "sampler--changed", "sampler--selected", "sampler--dim"}
    BINDINGS = [
        Binding(
            "up", "select(-1)", N_("Select"), show=False, id="sampler.select_up", tooltip=N_("Select the setting above")
        ),
        Binding(
            "down",
            "select(1)",
            N_("Select"),
            key_display="↑↓",
            id="sampler.select_down",
            tooltip=N_("Select the setting below"),
        ),
        Binding(
            "left,minus",
            "adjust(-1)",
            N_("Lower"),
            show=False,
            id="sampler.adjust_down",
            tooltip=N_("Lower the selected setting (previous preset, unfix seed, ban off)"),
        ),
        Binding(
            "right,plus",
            "adjust(1)",
            N_("Adjust"),
            key_display="←→",
            id="sampler.adjust_up",
            tooltip=N_("Raise the selected setting (next preset, new seed, ban on)"),
        ),
        *_nudges(
            "t",
            "temperature",
            N_("temperature −"),
            N_("temperature +"),
            N_("Lower temperature one step"),
            N_("Raise temperature one step"),
        ),
        *_nudges(
            "k",
            "top_k",
            N_("top-k −"),
            N_("top-k +"),
            N_("Lower top-k one step"),
            N_("Raise top-k one step"),
        ),
        *_nudges(
            "p",
            "top_p",
            N_("top-p −"),
            N_("top-p +"),
            N_("Lower top-p one step"),
            N_("Raise top-p one step"),
        ),
        *_nudges(
            "m",
            "min_p",
            N_("min-p −"),
            N_("min-p +"),
            N_("Lower min-p one step"),
            N_("Raise min-p one step"),
        ),
        *_nudges(
            "r",
            "repeat_penalty",
            N_("repetition penalty −"),
            N_("repetition penalty +"),
            N_("Lower repetition penalty one step"),
            N_("Raise repetition penalty one step"),
        ),
        *_nudges(
            "q",
            "frequency_penalty",
            N_("frequency penalty −"),
            N_("frequency penalty +"),
            N_("Lower frequency penalty one step"),
            N_("Raise frequency penalty one step"),
        ),
        *_nudges(
            "w",
            "presence_penalty",
            N_("presence penalty −"),
            N_("presence penalty +"),
            N_("Lower presence penalty one step"),
            N_("Raise presence penalty one step"),
        ),
        *_nudges(
            "d",
            "dry_multiplier",
            N_("DRY multiplier −"),
            N_("DRY multiplier +"),
            N_("Lower DRY multiplier one step"),
            N_("Raise DRY multiplier one step"),
        ),
        *_nudges(
            "x",
            "xtc_probability",
            N_("XTC probability −"),
            N_("XTC probability +"),
            N_("Lower XTC probability one step"),
            N_("Raise XTC probability one step"),
        ),
        *_nudges(
            "y",
            "typical_p",
            N_("typical-p −"),
            N_("typical-p +"),
            N_("Lower typical-p one step"),
            N_("Raise typical-p one step"),
        ),
        *_nudges(
            "n",
            "top_n_sigma",
            N_("top-n-sigma −"),
            N_("top-n-sigma +"),
            N_("Lower top-n-sigma one step"),
            N_("Raise top-n-sigma one step"),
        ),
        *_nudges(
            "e",
            "dynatemp_range",
            N_("dynamic temperature range −"),
            N_("dynamic temperature range +"),
            N_("Lower dynamic temperature range one step"),
            N_("Raise dynamic temperature range one step"),
        ),
        *_nudges(
            "o",
            "mirostat",
            N_("Mirostat version −"),
            N_("Mirostat version +"),
            N_("Lower Mirostat version one step"),
            N_("Raise Mirostat version one step"),
        ),
        *_nudges(
            "g",
            "max_tokens",
            N_("max tokens −"),
            N_("max tokens +"),
            N_("Lower max tokens one step"),
            N_("Raise max tokens one step"),
        ),
        Binding(
            "a",
            "toggle_all",
            N_("All samplers"),
            id="sampler.all",
            tooltip=N_("Show every sampler and its values, or only those that act"),
        ),
        Binding(
            "less_than_sign,comma",
            "move_in_order(-1)",
            N_("Earlier"),
            show=False,
            id="sampler.order_earlier",
            tooltip=N_("Apply the selected sampler earlier in the chain"),
        ),
        Binding(
            "greater_than_sign,full_stop",
            "move_in_order(1)",
            N_("Later"),
            show=False,
            id="sampler.order_later",
            tooltip=N_("Apply the selected sampler later in the chain"),
        ),
        Binding(
            "c", "cycle_preset", N_("Preset"), id="sampler.preset", tooltip=N_("Switch to the next sampler preset")
        ),
        Binding(
            "b",
            "toggle_ban",
            N_("Byte ban"),
            id="sampler.ban",
            tooltip=N_("Ban or allow the byte tokens (<0x00>..<0xFF>) with a bias of -100"),
        ),
        Binding(
            "u",
            "cycle_length",
            N_("Stop at"),
            id="sampler.length",
            tooltip=N_("Stop after max tokens only, or at the end of the sentence, or of the paragraph"),
        ),
        Binding(
            "h",
            "toggle_heal",
            N_("Healing"),
            id="sampler.heal",
            tooltip=N_('Token healing on or off: the model writes the token the cursor cut again ("mo" → "molo")'),
        ),
        Binding(
            "s",
            "new_seed",
            N_("New seed"),
            show=False,
            id="sampler.new_seed",
            tooltip=N_("Draw a new seed and keep it fixed"),
        ),
        Binding(
            "S",
            "edit_stops",
            N_("Stop strings"),
            show=False,
            id="sampler.stops",
            tooltip=N_("Set the stop strings (generation ends at any of them), or clear them with an empty line"),
        ),
        Binding(
            "B",
            "edit_breakers",
            N_("DRY sequence breakers"),
            show=False,
            id="sampler.dry_breakers",
            tooltip=N_("Set the strings DRY does not follow a repetition across (shown under DRY with a)"),
        ),
        Binding(
            "f",
            "fix_seed",
            N_("Fix seed"),
            show=False,
            id="sampler.fix_seed",
            tooltip=N_("Fix the seed the last generation used, or go back to a new seed each time"),
        ),
        Binding(
            "l",
            "lora_scale(-1)",
            N_("LoRA −"),
            show=False,
            id="sampler.lora_down",
            tooltip=N_("Lower the LoRA adapter's scale by 0.1 (0 disables it)"),
        ),
        Binding(
            "L",
            "lora_scale(1)",
            N_("LoRA +"),
            show=False,
            id="sampler.lora_up",
            tooltip=N_("Raise the LoRA adapter's scale by 0.1"),
        ),
    ]

    view: var[SamplerView | None] = var(None)

    def __init__(self, language: Language) -> None:
        super().__init__(language)
        self.selected_row = "temperature"
        self.show_all = False
        """Every sampler and its values (`a`), not only those that act."""
        self.sampler: SamplerSettings | None = None
        self.bias = LogitBias()
        self.byte_token_ids: tuple[int, ...] | None = None
        self.lora_scale: float | None = None
        self.changed: set[str] = set()
        self._wrapped: dict[tuple[str, str, int], list[str]] = {}

    def watch_view(self, old: SamplerView | None, view: SamplerView | None) -> None:
        if view is None:
            return
        width = self.content_size.width
        height_before = self._content_height(width) if width and self.sampler is not None else None
        if old is not None:
            values = self._values(view.sampler, view.bias, view.lora_scale)
            previous = self._values(old.sampler, old.bias, old.lora_scale)
            self.changed = {row for row in values if values[row] != previous[row]} or self.changed
        self.sampler, self.bias = view.sampler, view.bias
        self.byte_token_ids, self.lora_scale = view.byte_token_ids, view.lora_scale
        self.border_title = f"{self.title} · {view.sampler.preset}"
        self.border_subtitle = self.language.gettext("for the next generation") if view.pending else ""
        # A new layout redraws the whole screen, the draft and every panel: a nudge while
        # tokens stream waited behind it. Only a panel that grows or shrinks needs one.
        self.refresh(layout=height_before is None or height_before != self._content_height(width))

    def _content_height(self, width: int) -> int:
        return self.get_content_height(Size(width, 0), Size(width, 0), width)

    @staticmethod
    def _values(sampler: SamplerSettings, bias: LogitBias, lora_scale: float | None) -> dict[str, object]:
        values: dict[str, object] = {name: getattr(sampler, name) for name in tuning.KNOBS}
        values.update(
            preset=sampler.preset,
            seed=sampler.seed,
            stop=sampler.stop,
            dry_sequence_breakers=sampler.dry_sequence_breakers,
            lora=lora_scale,
            ban=bias.ban_byte_tokens,
            order=sampler.samplers,
            heal=sampler.heal,
            max_tokens=(sampler.max_tokens, sampler.length),  # one row says both
        )
        return values

    def rows(self) -> list[tuple[str, str]]:
        return panel_rows(self.sampler, self.show_all) if self.sampler is not None else list(MAIN_ROWS + END_ROWS)

    def _bias_text(self) -> str:
        if self.byte_token_ids:
            return describe_bias(self.bias, self.byte_token_ids, self.language.gettext, self.language.number)
        # Without byte tokens to list, the ban's state is still said: else the ban key
        # would change nothing on screen (before a load, or a vocabulary with none: GPT-2 style).
        _ = self.language.gettext
        if self.bias.ban_byte_tokens:
            state = _("byte tokens banned ({why})")
        else:
            state = _("byte tokens allowed ({why})")
        why = (
            _("their ids are known once a model is loaded")
            if self.byte_token_ids is None
            else _("this vocabulary has none")
        )
        entries = "".join(f"; {token_id}: {self.language.number(value, '+g')}" for token_id, value in self.bias.entries)
        return state.format(why=why) + entries

    def _wrapped_lines(self, row: str, width: int) -> list[str]:
        """The bias summary or the order, wrapped beside its short label over as many lines as it needs."""
        assert self.sampler is not None
        room = max(width - self._indent(row), 1)
        text = self._bias_text() if row == "ban" else chain_text(self.sampler, self.show_all)
        # Rich's wrapping is the dearest part of a redraw, asked for by every nudge: the
        # order and the bias seldom change, so their last wrappings are kept.
        key = (row, text, room)
        if (wrapped := self._wrapped.get(key)) is None:
            if row == "ban":
                # A bracket stays with the word before it: at 120 columns "(256)", the count of the
                # byte tokens banned, stood alone on a line. textwrap breaks at ASCII spaces only,
                # so a no-break space glues them.
                glued = text.replace(" (", "\u00a0(")
                wrapped = [line.replace("\u00a0", " ") for line in textwrap.wrap(glued, room)] or [""]
            else:
                wrapped = [line.plain for line in Text(text).wrap(self.app.console, room)]
            if len(self._wrapped) >= 16:
                self._wrapped.clear()
            self._wrapped[key] = wrapped
        return wrapped

    def _indent(self, row: str) -> int:
        """Where a wrapped row's text starts: after its label, however long the language makes it."""
        label = next(label for label, name in END_ROWS if name == row)
        return max(INDENTS[row], len(self.language.gettext(label)) + 1)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self.sampler is None:
            return len(MAIN_ROWS + END_ROWS)
        rows = self.rows()
        return len(rows) - len(WRAPPED) + sum(len(self._wrapped_lines(row, width)) for row in WRAPPED)

    def _value_text(self, row: str) -> str:
        s = self.sampler
        assert s is not None
        _, number = self.language.gettext, self.language.number
        if row == "preset":
            return s.preset
        if row == "top_k":
            return _("off") if s.top_k == 0 else str(s.top_k)
        if row == "repeat_penalty":
            return _("{penalty} · last {window}").format(
                penalty=number(s.repeat_penalty, ".2f"), window=s.repeat_window
            )
        if row == "stop":
            return strings_text(s.stop) if s.stop else _("none")
        if row == "dry_sequence_breakers":
            return strings_text(s.dry_sequence_breakers) if s.dry_sequence_breakers else _("none")
        if row == "seed":
            return _("new each time") if s.seed is None else _("{seed} (fixed)").format(seed=s.seed)
        if row == "lora":
            return _("no adapter") if self.lora_scale is None else number(self.lora_scale, ".2f")
        if row == "heal":
            return _("on") if s.heal else _("off")
        if row == "max_tokens" and s.length != "tokens":
            return _("{tokens} · or {length} end").format(
                tokens=s.max_tokens, length=_(LENGTHS.get(s.length, s.length))
            )
        value = getattr(s, row)
        if row in OFF and value == OFF[row]:
            return _("off")
        if row == "xtc_probability":
            return _("{probability} · above {threshold}").format(
                probability=number(value, ".2f"), threshold=number(s.xtc_threshold, ".2f")
            )
        if row == "dynatemp_range":
            return f"±{number(value, '.2f')}"
        if row == "mirostat":
            return f"v{value} · τ {number(s.mirostat_tau, 'g')} η {number(s.mirostat_eta, 'g')}"
        return str(value) if isinstance(value, int) else number(value, ".2f")

    def lines(self, width: int) -> list[Text]:
        if self.sampler is None:
            return [Text()]
        label_width = 15
        lines = []
        for english, row in self.rows():
            label = self.language.gettext(english)
            style = Style()
            if row in self.changed:
                style = self.style_of("sampler--changed")
            if self.has_focus and row == self.selected_row:
                style = self.style_of("sampler--selected")
            label_style = style or self.style_of("sampler--label")
            if row in WRAPPED:
                indent = self._indent(row)
                for number, part in enumerate(self._wrapped_lines(row, width)):
                    line = Text((label if number == 0 else "").ljust(indent), style=label_style)
                    lines.append(line + Text(part.strip().rjust(max(width - indent, 0)), style=style))
                continue
            value = self._value_text(row)
            # A long value takes the label column's spare room before it is cut: "seed
            # 2904346228 (fixe" at 120 columns, with eleven blank cells beside "seed".
            column = max(min(label_width, width - len(value)), len(label) + 1)
            line = Text(label.ljust(column), style=label_style)
            line += Text(value.rjust(max(width - column, 0)), style=style)
            line.truncate(width)  # a value still too long is cut, never wrapped onto the next row
            lines.append(line)
        return lines

    # ---- keys ----------------------------------------------------------------------
    def action_select(self, step: int) -> None:
        rows = [row for _label, row in self.rows()]
        here = rows.index(self.selected_row) if self.selected_row in rows else 0
        self.selected_row = rows[(here + step) % len(rows)]
        self.refresh()

    def action_adjust(self, direction: int) -> None:
        """Left/right on the selected row."""
        row = self.selected_row
        if row == "preset":
            self.action_cycle_preset()
        elif row == "seed":
            self.action_new_seed() if direction > 0 else self.action_fix_seed()
        elif row == "lora":
            self.action_lora_scale(direction)
        elif row == "stop":
            self.action_edit_stops()
        elif row == "dry_sequence_breakers":
            self.action_edit_breakers()
        elif row == "ban":
            self.post_message(self.Tuned(bias=lambda bias: tuning.with_ban(bias, direction > 0)))
        elif row == "heal":
            self.post_message(self.Tuned(sampler=lambda sampler: sampler.with_changes(heal=direction > 0)))
        elif row == "order":
            self.notify(self.language.gettext("Select a sampler's row and press < or > to move it in the chain."))
        else:
            self.action_nudge(row, direction)

    def action_toggle_all(self) -> None:
        self.show_all = not self.show_all
        self.refresh(layout=True)

    def action_move_in_order(self, direction: int) -> None:
        row = self.selected_row
        if row not in tuning.KNOB_SAMPLER:
            self.notify(
                self.language.gettext("Select a sampler's row (temperature, top-k, DRY…) to move it in the chain.")
            )
            return
        self.post_message(self.Tuned(sampler=lambda sampler: tuning.moved_in_order(sampler, row, direction)))

    def action_nudge(self, knob: str, direction: int) -> None:
        self.post_message(self.Tuned(sampler=lambda sampler: tuning.nudge(sampler, knob, direction)))

    def action_cycle_preset(self) -> None:
        self.post_message(self.Tuned(next_preset=True))

    def action_toggle_ban(self) -> None:
        self.post_message(self.Tuned(bias=lambda bias: tuning.with_ban(bias, not bias.ban_byte_tokens)))

    def action_cycle_length(self) -> None:
        self.post_message(self.Tuned(sampler=tuning.next_length))

    def action_toggle_heal(self) -> None:
        self.post_message(self.Tuned(sampler=lambda sampler: sampler.with_changes(heal=not sampler.heal)))

    def action_new_seed(self) -> None:
        self.post_message(self.Tuned(sampler=tuning.with_new_seed))

    def action_fix_seed(self) -> None:
        last_seed = self.view.last_seed if self.view is not None else None
        if self.view is not None and self.view.sampler.seed is None and self.view.sampler.temperature > 0:
            # A reused cache is computed a little differently (inference/local/generation.py): said, the wait is no surprise.
            _ = self.language.gettext
            self.notify(
                _(
                    "Seed fixed: the prompt is now evaluated afresh, as `scriptorium continue --seed` does, so the "
                    "seed gives the same text in both (a re-roll then evaluates one token)."
                ),
                title=_("Seed"),
            )
        self.post_message(self.Tuned(sampler=lambda sampler: tuning.with_seed_fixed(sampler, last_seed)))

    def action_edit_stops(self) -> None:
        self._edit_strings("stop", "stop strings", N_("Stop strings"))

    def action_edit_breakers(self) -> None:
        self._edit_strings("dry_sequence_breakers", "DRY sequence breakers", N_("DRY sequence breakers"))

    def _edit_strings(self, field: str, name: str, title: str) -> None:
        """A line to write the strings of `field` in, as the panel shows them."""
        current = getattr(self.sampler, field) if self.sampler is not None else ()
        said = self.language.gettext("{title}, each in quotes ('\\n' is a line break); an empty line clears them")
        title = said.format(title=self.language.gettext(title))
        self.app.push_screen(
            TextPromptScreen(title, strings_text(current), allow_empty=True),
            lambda text: self._strings_written(field, name, text),
        )

    def _strings_written(self, field: str, name: str, text: str | None) -> None:
        if text is None:  # backed out
            return
        try:
            strings = parse_strings(text, name)
            if self.sampler is not None:
                self.sampler.with_changes(**{field: strings})  # the settings' own rules ('' stops nothing)
        except SettingsError as error:
            self.notify(str(error), severity="error")
            return
        self.post_message(self.Tuned(sampler=lambda sampler: sampler.with_changes(**{field: strings})))

    def action_lora_scale(self, direction: int) -> None:
        view = self.view
        if view is None or view.lora_scale is None:
            _ = self.language.gettext
            hint = (
                _(", or load one with {key}").format(key=view.load_hint) if view is not None and view.load_hint else ""
            )
            said = _("No LoRA adapter is loaded (start with --lora PATH{hint}).").format(hint=hint)
            self.notify(said, severity="warning")
            return
        self.post_message(self.Tuned(lora_scale=lambda scale: tuning.lora_scale_moved(scale, direction)))

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()
