"""The context viewer (F6): the exact prompt the model sees, part by part (memory, lore, the
template's words, the draft window, the author's note), with each part's tokens and where
the window and the note cut into the draft; the next prompt (what ctrl+g would send now) or
the last one a generation evaluated. From here m, n and l open the memory, the note and the
lorebook: keys a Mac's stock terminal sends, where their alt+ keys need Option as Meta."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from scriptorium.inference.core.errors import ScriptoriumError

from scriptorium.app.i18n.language import ENGLISH, Language
from scriptorium.app.tui.prompt_view import PART_NAMES, PromptView

PART_STYLES = {
    "memory": "bold",
    "lore": "italic",
    "template": "dim",
    "draft": "",
    "note": "reverse",
    "after": "underline",
}
"""How each part of the prompt is told apart in the text (a heading says its name too)."""


class ContextScreen(ModalScreen[str | None]):
    """Shows `last` (the last generation's prompt, or None) and the next prompt, which
    `make_next` builds in a worker thread (it counts tokens, asking the engine); returns
    'memory', 'note' or 'lore' to open that editor, else None."""

    BINDINGS = [
        Binding("escape,q,f6", "dismiss(None)", "Close", id="context.close", tooltip="Back to writing"),
        Binding("tab", "switch", "Next / last", id="context.switch", tooltip="Show the next prompt, or the last one"),
        Binding("m", "dismiss('memory')", "Memory", id="context.memory", tooltip="Edit the memory"),
        Binding("n", "dismiss('note')", "Note", id="context.note", tooltip="Edit the author's note"),
        Binding("l", "dismiss('lore')", "Lorebook", id="context.lore", tooltip="Edit the lorebook"),
    ]

    def __init__(
        self,
        last: PromptView | None,
        make_next: Callable[[], PromptView] | None,
        why_no_next: str,
        language: Language = ENGLISH,
    ) -> None:
        """`make_next` None: no next prompt can be made now, for `why_no_next`."""
        super().__init__()
        self._language = language
        self._last = last
        self._make_next = make_next
        self._next: PromptView | None = None
        self._said = why_no_next if make_next is None else language.gettext("making the next prompt…")
        self.showing = "next" if make_next is not None or last is None else "last"

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="context-dialog"):
            yield Static("", classes="dialog-title", id="context-title", markup=False)
            yield Static("", id="context-counts", markup=False)
            with VerticalScroll(id="context-prompt-box"):
                yield Static("", id="context-prompt", markup=False)
            yield Static(
                self._language.gettext("tab next / last prompt · m memory · n note · l lorebook · esc closes"),
                classes="dialog-reason",
            )

    def on_mount(self) -> None:
        self._show()
        if self._make_next is not None:
            self._build_next(self._make_next)

    @work(thread=True, exit_on_error=False)
    def _build_next(self, make_next: Callable[[], PromptView]) -> None:
        try:
            view, said = make_next(), ""
        except ScriptoriumError as error:  # memory and note too long, a server gone: said, not raised
            view, said = None, str(error)
        self.app.call_from_thread(self._next_made, view, said)

    def _next_made(self, view: PromptView | None, said: str) -> None:
        self._next, self._said = view, said
        self._show()

    def action_switch(self) -> None:
        self.showing = "last" if self.showing == "next" else "next"
        self._show()

    def _show(self) -> None:
        view = self._next if self.showing == "next" else self._last
        title = self.query_one("#context-title", Static)
        counts = self.query_one("#context-counts", Static)
        prompt = self.query_one("#context-prompt", Static)
        _ = self._language.gettext
        if view is None:
            title.update(_("The next prompt") if self.showing == "next" else _("The last prompt"))
            counts.update(self._said if self.showing == "next" else _("No generation yet: tab shows the next prompt."))
            prompt.update("")
            return
        title.update(view.title)
        counts.update("\n".join([*view.counts, *view.cuts]))
        prompt.update(_prompt_text(view, self._language))


def _prompt_text(view: PromptView, language: Language) -> Text:
    """The prompt as it is, each part under a dim heading naming it (the headings are not in it)."""
    text = Text()
    for what, start, end in view.parts:
        if text:
            text.append("\n")
        text.append(f"── {language.gettext(PART_NAMES[what])} ──\n", style="dim")
        text.append(view.prompt[start:end], style=PART_STYLES[what])
    return text
