"""What the TUI starts with: typed, validated once, then handed to ScriptoriumApp.

The config file (issue 5) builds one of these; the command line overrides a few fields.
Live changes made with the keyboard (sampler nudges, the byte ban, the LoRA scale) are
held by the app, not written back here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.inference.core.settings import LogitBias, Rule, SamplerSettings, SettingsError, preset, ruled, rule_for
from scriptorium.inference.core.speculation import OFF, Speculation

from scriptorium.app.i18n.language import ENGLISH, Language

PANELS = ("probabilities", "speed", "kv", "sampler", "model")
"""Side panels, in the order they are stacked (the live ones first, for small terminals)."""

MODES = ("draft", "chat")

MAX_CANDIDATES = 6
"""More candidates than this no longer fit side by side, and each costs a full decode."""


@dataclass(frozen=True, slots=True)
class TuiSettings:
    """Starting state of the app."""

    sampler: SamplerSettings = field(default_factory=lambda: preset("prose"))
    """Sampler for the first generation; keys change it from there."""
    bias: LogitBias = field(default_factory=LogitBias)
    """Logit bias: the byte-token ban (on by default) plus the author's own entries."""
    top_n: int = 12
    """Candidates the engine reports per step, shown in the probabilities panel."""
    mode: str = "draft"
    """Which mode opens first: 'draft' or 'chat'."""
    panels: tuple[str, ...] = PANELS
    """Side panels shown at start (a subset of PANELS)."""
    sidebar: bool = True
    """Whether the side panels are shown at all at start."""
    frames_per_second: int = ruled(10, Rule("frames per second", 1, 60, whole=True))
    """Screen updates a second while tokens stream ([ui] frames_per_second): tokens
    arriving in between are drawn together, so a fast model never makes the UI redraw per
    token. Ten: text still flows (a few tokens a frame) and the numbers can be read, while
    on a machine whose every core runs llama.cpp each frame's CPU time is taken from the
    decode (docs/guide/speed.md; bench/tui_stream.py --fps)."""
    threads: int | None = None
    """CPU threads for llama.cpp; None chooses them by measurement while the model writes
    (every core to start with, as plain llama.cpp at its best; fewer when other work, the
    interface's drawing included, makes every core slower: inference/local/thread_choice.py).
    The engine runs in its own process, so its threads spinning between tokens take no
    interpreter from the interface (bench/isolated.py, bench/tui_stream.py)."""
    candidates: int = 3
    """How many continuations the candidates dialog writes at first (+/- change it there)."""
    speculation: Speculation = OFF
    """Speculative decoding for every generation ([speculative], --speculative): the same text, sooner."""
    language: Language = ENGLISH
    """The interface's words and numbers ([ui] language, chosen at start-up by app/cli)."""
    chat_stop: tuple[str, ...] = ("\nUtente:", "\nUser:")
    """Stop strings for chat replies when the model has no chat template of its own
    (they match the turns written by prompts/chat_fallback.jinja)."""

    def validated(self) -> "TuiSettings":
        self.sampler.validated()
        self.bias.validated()
        if not 0 <= self.top_n <= 50:
            raise SettingsError(f"top_n must be between 0 and 50, not {self.top_n}")
        if self.mode not in MODES:
            raise SettingsError(f"mode must be one of {', '.join(MODES)}, not '{self.mode}'")
        unknown = [name for name in self.panels if name not in PANELS]
        if unknown:
            raise SettingsError(f"unknown panel '{unknown[0]}' (choose from {', '.join(PANELS)})")
        rule_for(TuiSettings, "frames_per_second").check(self.frames_per_second)
        rule_for(LoadOptions, "n_threads").check(self.threads)
        if not 1 <= self.candidates <= MAX_CANDIDATES:
            raise SettingsError(f"candidates must be between 1 and {MAX_CANDIDATES}, not {self.candidates}")
        self.speculation.validated()
        if not all(self.chat_stop):
            raise SettingsError("a chat stop string cannot be empty")
        return self

    @property
    def frame_interval(self) -> float:
        """Seconds between two frames while tokens stream."""
        return 1.0 / self.frames_per_second

    def generation_threads(self) -> int | None:
        """The threads a model is loaded with when nothing else says: None, measured."""
        return self.threads

    def with_changes(self, **changes: object) -> "TuiSettings":
        return replace(self, **changes).validated()
