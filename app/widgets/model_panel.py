"""Which model is loaded, what shape it has, and how its loading went."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.text import Text

from scriptorium.inference.gguf_file import AdapterFacts, ModelFacts

from .formatting import clip, format_bytes, format_count, meter
from .panel import Panel


@dataclass(frozen=True, slots=True)
class ModelStatus:
    """What the model panel and the status bar show about the model."""

    state: str
    """'none', 'loading', 'ready' or 'failed'."""
    path: Path | None = None
    progress: float = 0.0
    """llama.cpp's own load progress, 0..1, while loading."""
    facts: ModelFacts | None = None
    n_ctx: int = 0
    adapter: AdapterFacts | None = None
    error: str = ""
    file_size: int = 0
    tokenizer: str = ""
    """Which tokenizer cuts the text: 'llama.cpp' or 'SentencePiece (NAME.model)'."""
    tokenizer_warning: str = ""
    """Why the named .model is not used, or that the vocabulary has no byte tokens."""


class ModelPanel(Panel):
    """Name, architecture, parameters, quantization, GQA ratio, context, LoRA and scale,
    tokenizer."""

    PANEL_NAME = "model"
    TITLE = "Model"
    LINES = 6
    COMPONENT_CLASSES = {"model--name", "model--dim", "model--error", "model--fill", "model--empty"}

    def __init__(self) -> None:
        super().__init__()
        self.status = ModelStatus("none")
        self.lora_scale: float | None = None
        self.load_hint = ""

    def show(self, status: ModelStatus, lora_scale: float | None, load_hint: str) -> None:
        self.status = status
        self.lora_scale = lora_scale
        self.load_hint = load_hint
        self.refresh()

    def lines(self, width: int) -> list[Text]:
        status = self.status
        dim = self.style_of("model--dim")
        name = status.path.name if status.path else ""
        if status.state == "none":
            return [Text("no model loaded", style=dim), Text(f"{self.load_hint} to load one", style=dim)] + [Text()] * 4
        if status.state == "loading":
            return [
                Text(clip(f"loading {name}", width), style=self.style_of("model--name")),
                meter(round(status.progress * 1000), 1000, width, self.style_of("model--fill"), self.style_of("model--empty")),
                Text(f"{status.progress * 100:.0f}% of {format_bytes(status.file_size)}", style=dim),
                Text("keep writing meanwhile", style=dim),
                Text(),
                Text(),
            ]
        if status.state == "failed":
            error = Text(status.error, style=self.style_of("model--error"))
            wrapped = list(error.wrap(self.app.console, max(width, 1)))[:4]
            hint = Text(f"{self.load_hint}: choose another model", style=dim)
            return wrapped + [Text()] * (5 - len(wrapped)) + [hint]
        facts = status.facts
        assert facts is not None
        heads = f"{facts.n_head} q / {max(facts.n_head_kv)} kv heads"
        lines = [
            Text(clip(facts.name, width), style=self.style_of("model--name")),
            Text(clip(f"{facts.architecture} · {format_count(facts.parameters)} params · {facts.file_type}", width)),
            Text(clip(f"{facts.attention_kind} {facts.gqa_ratio:g}:1 · {heads}", width)),
            Text(clip(f"context {status.n_ctx:,} (trained {facts.context_length:,})", width), style=dim),
        ]
        if status.adapter is None:
            lines.append(Text("LoRA none", style=dim))
        else:
            scale = f" × {self.lora_scale:.2f}" if self.lora_scale is not None else ""
            lines.append(Text(clip(f"LoRA {status.adapter.path.name}{scale}", width)))
        if status.tokenizer_warning:
            lines.append(Text(clip(f"tokenizer {status.tokenizer}: {status.tokenizer_warning}", width),
                              style=self.style_of("model--error")))
        else:
            lines.append(Text(clip(f"tokenizer {status.tokenizer}", width), style=dim))
        return lines
