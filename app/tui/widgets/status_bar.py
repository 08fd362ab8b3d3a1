"""One line at the top: the mode, the draft file, the model and what it is doing."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.reactive import var
from textual.widget import Widget

from scriptorium.app.i18n.language import Language
from scriptorium.app.i18n.marker import N_
from scriptorium.app.models.status import ModelStatus
from scriptorium.app.tui.widgets.formatting import clip


_MODE_NAMES = {"draft": N_("Draft"), "chat": N_("Chat")}


class StatusBar(Widget, can_focus=False):
    COMPONENT_CLASSES = {"status-bar--mode", "status-bar--dim", "status-bar--busy", "status-bar--error"}

    model: var[ModelStatus] = var(lambda: ModelStatus("none"))

    def __init__(self, language: Language, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._language = language
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
        _, number = self._language.gettext, self._language.number
        left = Text()
        for mode in ("draft", "chat"):
            label = f" {_(_MODE_NAMES[mode])} "
            left.append(
                label, style=self._style("status-bar--mode") if mode == self.mode else self._style("status-bar--dim")
            )
        model = self.model
        if model.state == "loading":
            right = Text(
                _("loading {name} {percent}").format(
                    name=model.path.name if model.path else "", percent=number(model.progress, ".0%")
                ),
                style=self._style("status-bar--busy"),
            )
        elif model.state == "failed":
            right = Text(_("model failed to load"), style=self._style("status-bar--error"))
        elif model.state == "ready" and model.facts is not None:
            right = Text(model.facts.name)
        else:
            right = Text(_("no model"), style=self._style("status-bar--dim"))
        if self.activity:
            right = Text.assemble((self.activity, self._style("status-bar--busy")), "  ", right)
        width = self.content_size.width
        # The name gives way to what the model is doing: a long one pushed 'writing…' and
        # 'model failed to load' past the edge. Cut at its end, the unsaved mark kept.
        mark = " ●" if self.modified else ""
        words = Text()
        if self.mode == "draft" and self.words is not None:
            counted = self._language.ngettext("{count} word", "{count} words", self.words)
            words = Text(f"  {counted.format(count=number(self.words, ','))}", style=self._style("status-bar--dim"))
        room = width - left.cell_len - 2 - len(mark) - words.cell_len - 2 - right.cell_len - 1
        left.append(f"  {clip(self.draft_name, max(room, 8))}{mark}")
        left.append_text(words)
        gap = max(width - left.cell_len - right.cell_len - 1, 1)
        return Text.assemble(left, " " * gap, right)
