"""One line at the top: the mode, the draft file, the model and what it is doing."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.reactive import var
from textual.widget import Widget

from scriptorium.app.models.status import ModelStatus
from scriptorium.app.tui.widgets.formatting import clip


class StatusBar(Widget, can_focus=False):
    COMPONENT_CLASSES = {"status-bar--mode", "status-bar--dim", "status-bar--busy", "status-bar--error"}

    model: var[ModelStatus] = var(lambda: ModelStatus("none"))

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.mode = "draft"
        self.draft_name = "untitled"
        self.modified = False
        self.activity = ""
        self.words: int | None = None
        """The draft's words (the main screen counts them once typing pauses)."""

    def watch_model(self) -> None:
        self.refresh()

    def update_state(self, **changes: object) -> None:
        for name, value in changes.items():
            setattr(self, name, value)
        self.refresh()

    def _style(self, component: str) -> Style:
        return self.get_component_rich_style(component, partial=True)

    def render(self) -> Text:
        left = Text()
        for mode in ("draft", "chat"):
            label = f" {mode.capitalize()} "
            left.append(
                label, style=self._style("status-bar--mode") if mode == self.mode else self._style("status-bar--dim")
            )
        model = self.model
        if model.state == "loading":
            right = Text(
                f"loading {model.path.name if model.path else ''} {model.progress * 100:.0f}%",
                style=self._style("status-bar--busy"),
            )
        elif model.state == "failed":
            right = Text("model failed to load", style=self._style("status-bar--error"))
        elif model.state == "ready" and model.facts is not None:
            right = Text(model.facts.name)
        else:
            right = Text("no model", style=self._style("status-bar--dim"))
        if self.activity:
            right = Text.assemble((self.activity, self._style("status-bar--busy")), "  ", right)
        width = self.content_size.width
        # The name gives way to what the model is doing: a long one pushed 'writing…' and
        # 'model failed to load' past the edge. Cut at its end, the unsaved mark kept.
        mark = " ●" if self.modified else ""
        words = Text()
        if self.mode == "draft" and self.words is not None:
            words = Text(f"  {self.words:,} word{'' if self.words == 1 else 's'}", style=self._style("status-bar--dim"))
        room = width - left.cell_len - 2 - len(mark) - words.cell_len - 2 - right.cell_len - 1
        left.append(f"  {clip(self.draft_name, max(room, 8))}{mark}")
        left.append_text(words)
        gap = max(width - left.cell_len - right.cell_len - 1, 1)
        return Text.assemble(left, " " * gap, right)
