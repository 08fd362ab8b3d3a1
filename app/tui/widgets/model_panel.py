"""Which model is loaded, what shape it has, and how its loading went."""

from __future__ import annotations

from typing import TYPE_CHECKING

import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text
from textual.geometry import Size
from textual.reactive import var

from scriptorium.inference.core.load_options import beyond_training

from scriptorium.app.models.status import ModelStatus
from scriptorium.app.tui.widgets.formatting import clip, format_bytes, format_count, meter
from scriptorium.app.tui.widgets.panel import Panel
from scriptorium.app.i18n.language import Language
from scriptorium.app.i18n.marker import N_

if TYPE_CHECKING:
    from scriptorium.inference.core.arithmetic import Arithmetic


@dataclass(frozen=True, slots=True)
class ModelView:
    """What the panel draws: the model's status, the adapter scale, and the key that loads one."""

    status: ModelStatus
    lora_scale: float | None = None
    load_hint: str = ""


class ModelPanel(Panel):
    """Name, architecture, parameters, quantization, GQA ratio, context, the arithmetic
    (attention path and KV types, then threads: the probabilities depend on it), LoRA and scale,
    tokenizer."""

    PANEL_NAME = "model"
    TITLE = N_("Model")
    LINES = 8
    COMPONENT_CLASSES = {"model--name", "model--dim", "model--error", "model--fill", "model--empty"}

    view: var[ModelView] = var(lambda: ModelView(ModelStatus("none")))

    def __init__(self, language: Language) -> None:
        super().__init__(language)
        self.status = ModelStatus("none")
        self.lora_scale: float | None = None
        self.load_hint = ""

    def watch_view(self, old: ModelView, view: ModelView) -> None:
        # A failure's message is shown whole, so the panel grows for it (a re-layout,
        # only when the failure comes or goes: never per frame).
        relayout = "failed" in (view.status.state, old.status.state) and view.status != old.status
        # The threads' reason may take a second line (measured threads change rarely: never per frame).
        relayout = relayout or view.status.arithmetic != old.status.arithmetic
        # So may the tokenizer's file name (a model loads: never per frame).
        relayout = relayout or view.status.tokenizer != old.status.tokenizer
        self.status, self.lora_scale, self.load_hint = view.status, view.lora_scale, view.load_hint
        self.refresh(layout=relayout)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if self.status.state == "failed":
            return max(self.LINES, len(self._error_lines(width)) + 1)
        if self.status.state == "ready":
            threads = len(_threads_lines(self.status.arithmetic, width)) if not self.status.origin else 1
            return self.LINES - 2 + threads + len(self._tokenizer_lines(width))
        return self.LINES

    def _context_line(self, n_ctx: int, trained: int, width: int) -> Text:
        _, number = self.language.gettext, self.language.number
        sizes = {"n_ctx": number(n_ctx, ","), "trained": number(trained, ",")}
        if beyond_training(n_ctx, trained):
            return Text(
                clip(_("context {n_ctx} exceeds its training ({trained})").format(**sizes), width),
                style=self.style_of("model--error"),
            )
        return Text(
            clip(_("context {n_ctx} (trained {trained})").format(**sizes), width), style=self.style_of("model--dim")
        )

    def _error_lines(self, width: int) -> list[Text]:
        error = Text(self.status.error, style=self.style_of("model--error"))
        return list(error.wrap(self.app.console, max(width, 1)))

    def lines(self, width: int) -> list[Text]:
        _, number = self.language.gettext, self.language.number
        status = self.status
        dim = self.style_of("model--dim")
        name = status.path.name if status.path else ""
        if status.state == "none":
            return [
                Text(_("no model loaded"), style=dim),
                Text(_("{key} to load one").format(key=self.load_hint), style=dim),
            ] + [Text()] * (self.LINES - 2)
        if status.state == "loading":
            return [
                Text(clip(_("loading {name}").format(name=name), width), style=self.style_of("model--name")),
                meter(
                    round(status.progress * 1000),
                    1000,
                    width,
                    self.style_of("model--fill"),
                    self.style_of("model--empty"),
                ),
                Text(
                    _("{percent} of {size}").format(
                        percent=number(status.progress, ".0%"), size=format_bytes(status.file_size, number)
                    ),
                    style=dim,
                ),
                Text(_("keep writing meanwhile"), style=dim),
            ] + [Text()] * (self.LINES - 4)
        if status.state == "failed":
            wrapped = self._error_lines(width)
            # A server that could not be used is asked again by the same key.
            again = _("connect again") if status.origin else _("choose another model")
            hint = Text(f"{self.load_hint}: {again}", style=dim)
            return wrapped + [Text()] * (self.LINES - 1 - len(wrapped)) + [hint]
        facts = status.facts
        assert facts is not None
        heads = _("{q} q / {kv} kv heads").format(q=facts.n_head, kv=max(facts.n_head_kv))
        lines = [
            Text(clip(facts.name, width), style=self.style_of("model--name")),
            # Where the panel's lines are all taken (a server's): said at once below the name.
            Text(clip(_("server not answering"), width), style=self.style_of("model--error"))
            if status.not_answering
            # What is not known (a server reports no architecture) is left out: an unlabelled
            # "unknown" first on the line read as a name.
            else Text(
                clip(
                    " · ".join(
                        part
                        for part in (
                            facts.architecture,
                            facts.parameters
                            and _("{count} params").format(count=format_count(facts.parameters, number)),
                            facts.file_type,
                        )
                        if part
                    ),
                    width,
                )
            ),
            # A server reports no heads; where it is matters more than the shape it hides.
            *(
                _origin_lines(status.origin, width)
                if status.origin
                else [Text(clip(f"{facts.attention_kind} {number(facts.gqa_ratio, 'g')}:1 · {heads}", width))]
            ),
            self._context_line(status.n_ctx, facts.context_length, width),
            # A server's address takes the arithmetic's blank second line (it reports none).
            *(
                Text(clip(line, width))
                for line in _arithmetic_lines(status.arithmetic, width, _)
                if line or not status.origin
            ),
        ]
        if status.adapter is None:
            lines.append(Text(_("LoRA none"), style=dim))
        else:
            scale = f" × {number(self.lora_scale, '.2f')}" if self.lora_scale is not None else ""
            lines.append(Text(clip(f"LoRA {status.adapter.path.name}{scale}", width)))
        return lines + self._tokenizer_lines(width)

    def _tokenizer_lines(self, width: int) -> list[Text]:
        """Which tokenizer reads the text: 'tokenizer SentencePiece (spm_italiano.model)' was cut
        to 'tokenizer SentencePiece (spm_i…' in the side panel at 120 columns, the file's name
        lost. Where it does not fit one line the name takes a second (the rest of a longer one is cut)."""
        status = self.status
        tokenizer = self.language.gettext("tokenizer {name}").format(name=status.tokenizer)
        if status.tokenizer_warning:
            return [Text(clip(f"{tokenizer}: {status.tokenizer_warning}", width), style=self.style_of("model--error"))]
        wrapped = textwrap.wrap(tokenizer, max(width, 1)) or [""]
        shown = wrapped[:1] + ([" ".join(wrapped[1:])] if len(wrapped) > 1 else [])
        return [Text(clip(line, width), style=self.style_of("model--dim")) for line in shown]


def _origin_lines(origin: str, width: int) -> list[Text]:
    # On one line the side panel cut the address to "at http…": which server it is was lost.
    server, _, address = origin.partition(" at ")
    return [Text(clip(server, width)), Text(clip(f"at {address}", width))]


def _threads_lines(arithmetic: Arithmetic | None, width: int) -> list[str]:
    """The threads in use, on a second line where the reason does not fit one ("threads 1
    of 2 (auto: 2 were slower while other work ran)"); the rest of a longer one is cut."""
    if arithmetic is None:
        return [""]
    wrapped = textwrap.wrap(arithmetic.threads_text, max(width, 1)) or [""]
    return wrapped[:1] + ([" ".join(wrapped[1:])] if len(wrapped) > 1 else [])


def _arithmetic_lines(arithmetic: Arithmetic | None, width: int, gettext: Callable[[str], str]) -> list[str]:
    # The path and the threads apart: the side panel is too narrow for one line, and a cut would hide the threads.
    if arithmetic is None:
        return [gettext("arithmetic not reported"), ""]
    return [f"{arithmetic.attention} · KV {arithmetic.kv_types}", *_threads_lines(arithmetic, width)]
