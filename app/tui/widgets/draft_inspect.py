"""Draft mode, issue 6: inspect the suggestion's tokens, colour them, branch, and move
between the suggestion's versions. A part of the draft pane (draft_pane.py), which keeps
the keys and hands them to it.

Two cursors inspect: the editor's own cursor over accepted or scored text (always on),
and a token cursor in the suggestion (F4, then ←/→).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from textual.binding import Binding

from scriptorium.app.tui.branches import Version, branch_at, branch_label, move_version, start_version
from scriptorium.app.tui.token_spans import Span, TokenRecord, TokenSource, add_records, branch_choice
from scriptorium.app.tui.widgets.token_text import TokenLegend
from scriptorium.app.tui.widgets.showing import set_shown
from scriptorium.app.i18n.marker import N_

if TYPE_CHECKING:
    from textual.app import App
    from textual.css.query import DOMQuery
    from textual.widget import Widget

    from scriptorium.inference.core.events import TokenEvent

    from scriptorium.app.i18n.language import Language
    from scriptorium.app.tui.generation_request import GenerationRequest
    from scriptorium.app.tui.keys import KeyDisplay
    from scriptorium.app.tui.screens.alternatives_screen import AlternativesScreen
    from scriptorium.app.tui.widgets.draft_editor import DraftEditor
    from scriptorium.app.tui.widgets.suggestion_view import SuggestionView

# Checked before the draft's own Esc (stop, reject): leaving inspection comes first.
LEADING_BINDINGS = [
    Binding("escape", "leave_inspect", N_("Done"), id="draft.inspect_leave", tooltip=N_("Leave token inspection")),
]
BINDINGS = [
    Binding(
        "f4",
        "inspect",
        N_("Inspect"),
        id="draft.inspect",
        tooltip=N_("Step through the suggestion's tokens (←/→) and see what else the model considered"),
    ),
    Binding(
        "left",
        "inspect_move(-1)",
        N_("Previous token"),
        priority=True,
        show=False,
        id="draft.inspect_previous",
        tooltip=N_("While inspecting: the token before"),
    ),
    Binding(
        "right",
        "inspect_move(1)",
        N_("Next token"),
        priority=True,
        show=False,
        id="draft.inspect_next",
        tooltip=N_("While inspecting: the token after"),
    ),
    Binding(
        "ctrl+b",
        "branch",
        N_("Branch"),
        show=False,
        id="draft.branch",
        tooltip=N_(
            "At the inspected token (or the generated or scored token at the cursor): take another "
            "alternative, or your own word, and write on from there (in your own scored text, the rest "
            "of the line); the old text stays in the draft until you accept the branch, and as a version"
        ),
    ),
    Binding(
        # Esc b: what a stock Mac Terminal sends for Option+← (Option is not Meta there, see docs/guide/writing.md).
        "alt+left,alt+b",
        "version(-1)",
        N_("Older version"),
        show=False,
        id="draft.version_previous",
        tooltip=N_(
            "Show the suggestion's previous version (re-rolls and branches are kept); with none shown, "
            "bring back the one last thrown away"
        ),
    ),
    Binding(
        "alt+right,alt+f",  # Esc f: Option+→ in a stock Mac Terminal
        "version(1)",
        N_("Newer version"),
        show=False,
        id="draft.version_next",
        tooltip=N_("Show the suggestion's next version"),
    ),
    Binding(
        "f8",
        "toggle_colours",
        N_("Colours"),
        show=False,
        id="draft.colours",
        tooltip=N_(
            "Colour generated and scored text by how probable the model found each token; "
            "those speculative decoding guessed are underlined"
        ),
    ),
]


class InspectionPane(Protocol):
    """What inspection needs of the draft pane it is part of."""

    editor: DraftEditor
    suggestion: SuggestionView
    language: Language
    key_display: KeyDisplay
    generating: bool

    @property
    def app(self) -> App[object]: ...

    def notify(self, message: str, *, severity: str = ..., timeout: float | None = ...) -> None: ...

    def refresh_bindings(self) -> None: ...

    def query(self, selector: type[TokenLegend]) -> DOMQuery[TokenLegend]: ...

    def mount(self, *widgets: Widget) -> object: ...

    def show_record(self, record: TokenRecord, *, asked: bool = False) -> None: ...

    def alternatives_screen(self, record: TokenRecord) -> AlternativesScreen: ...

    def write_on(self) -> None:
        """Continue the suggestion as it stands (after a branch put new text at its end)."""

    def reject(self, *, say: bool = True) -> None:
        """Throw the suggestion away; `say`: that the undo key brings it back."""

    def redraw_suggestion(self) -> None: ...


class Inspection:
    """What the model thought: the token cursor in the suggestion, the colours, branching at
    a token, and the suggestion's versions."""

    def __init__(self, pane: InspectionPane) -> None:
        self.pane = pane
        self.inspected: int | None = None
        """Index into the suggestion's tokens under the token cursor, or None."""
        self.colouring = False
        self._sources: dict[int, TokenSource] = {}
        """Each running generation's token source, by request id: its seed is known at its end."""

    def check_action(self, action: str) -> bool | None:
        """Whether one of inspection's actions is enabled; None for the pane's other actions."""
        ghost = self.pane.editor.ghost
        if action in ("inspect_move", "leave_inspect"):
            return self.inspected is not None and ghost is not None
        if action == "version":  # with no suggestion: bring back the one thrown away (DraftPane)
            return ghost is None or len(ghost.versions) > 1
        return None

    # ---- tokens arriving ---------------------------------------------------------------
    def stream_tokens(self, request: GenerationRequest, events: tuple[TokenEvent, ...]) -> None:
        ghost = self.pane.editor.ghost
        if ghost is None:
            return
        source = self._sources.get(request.id)
        if source is None:
            source = self._sources[request.id] = TokenSource.generated(request.settings, request.window)
        add_records(ghost.tokens, events, len(ghost.text), source)
        if self.colouring and any(event.drafted for event in events):
            self._show_legend()

    def generation_seed(self, seed: int | None) -> None:
        """The seed a generation drew is known at its end; its tokens' source learns it
        (one generation at a time writes into the draft)."""
        for source in self._sources.values():
            source.seed = seed
        self._sources.clear()

    # ---- inspecting --------------------------------------------------------------------
    def cursor_moved(self) -> None:
        """The editor's cursor moved: the token under it shows its numbers."""
        pane = self.pane
        if self.inspected is not None or pane.generating:
            return
        found = pane.editor.token_at_cursor()
        if found is not None:
            span, index = found
            pane.show_record(span.tokens[index])

    def inspect(self) -> None:
        pane = self.pane
        ghost = pane.editor.ghost
        if self.inspected is not None:
            self.leave()
            return
        key = pane.key_display("draft.inspect")
        if ghost is not None and ghost.tokens:
            self.inspected = len(ghost.tokens) - 1 if not ghost.streaming else 0
            self.draw()
            return
        if ghost is not None and ghost.streaming:  # still reading its prompt (seconds, for a long one)
            pane.notify(
                pane.language.gettext("The model has not written a token yet: press {key} again once it has.").format(
                    key=key
                )
            )
            return
        found = pane.editor.token_at_cursor()
        if found is not None:
            pane.show_record(found[0].tokens[found[1]], asked=True)
            return
        pane.notify(
            pane.language.gettext(
                "Nothing to inspect here: generate a suggestion (inspect it with {key}), or move the cursor "
                "onto generated or scored text."
            ).format(key=key),
            severity="warning",
        )

    def move(self, step: int) -> None:
        ghost = self.pane.editor.ghost
        if ghost is None or self.inspected is None or not ghost.tokens:
            return
        self.inspected = min(max(self.inspected + step, 0), len(ghost.tokens) - 1)
        self.draw()

    def leave(self) -> None:
        self.inspected = None
        self.draw()

    def draw(self) -> None:
        """Show the inspected token (kept within the suggestion) in the view and the panel."""
        pane = self.pane
        ghost = pane.editor.ghost
        if ghost is None or not ghost.tokens:
            self.inspected = None
        elif self.inspected is not None:
            self.inspected = min(self.inspected, len(ghost.tokens) - 1)
            pane.show_record(ghost.tokens[self.inspected])
        pane.suggestion.set_inspection(colour=self.colouring, inspected=self.inspected)
        pane.refresh_bindings()

    # ---- colouring ---------------------------------------------------------------------
    def toggle_colours(self) -> None:
        self.set_colouring(not self.colouring)

    def set_colouring(self, on: bool) -> None:
        pane = self.pane
        self.colouring = on
        pane.editor.set_colouring(on)
        pane.suggestion.set_inspection(colour=on, inspected=self.inspected)
        self._show_legend()

    def text_shown(self) -> None:
        """Another text is in the draft (a session opened): the legend names the marks of its tokens."""
        if self.colouring:
            self._show_legend()

    def _show_legend(self) -> None:
        """The legend while colouring, naming the mark on guessed tokens when some of the draft's are."""
        pane = self.pane
        legends = pane.query(TokenLegend)
        guessed = self.colouring and self._holds_guessed()
        if legends:
            legend = legends.first()
            set_shown(legend, self.colouring)
            legend.show_guessed(guessed)
        elif self.colouring:
            pane.mount(TokenLegend(pane.language, guessed=guessed, id="draft-legend"))

    def _holds_guessed(self) -> bool:
        """Whether some token of the suggestion or the draft was guessed by speculative decoding."""
        ghost = self.pane.editor.ghost
        if ghost is not None and any(record.drafted for record in ghost.tokens):
            return True
        return any(record.drafted for span in self.pane.editor.spans.spans for record in span.tokens)

    # ---- branches and versions ------------------------------------------------------------
    def branch(self) -> None:
        pane = self.pane
        if pane.generating:
            pane.notify(
                pane.language.gettext("The model is writing: press Esc to stop it, then branch."), severity="warning"
            )
            return
        ghost = pane.editor.ghost
        if ghost is not None and self.inspected is not None:
            index = self.inspected
            record = ghost.tokens[index]
            pane.app.push_screen(
                pane.alternatives_screen(record), lambda choice: self._branch_suggestion(index, choice)
            )
            return
        found = pane.editor.token_at_cursor()
        if found is None or found[0].tokens[found[1]].source.kind not in ("generated", "scored"):
            pane.notify(
                pane.language.gettext(
                    "Put the cursor on generated or scored text (or inspect the suggestion with {inspect}) to "
                    "branch there; {score} scores your own text, and text changed since it was generated."
                ).format(inspect=pane.key_display("draft.inspect"), score=pane.key_display("draft.score")),
                severity="warning",
            )
            return
        span, index = found
        pane.app.push_screen(
            pane.alternatives_screen(span.tokens[index]), lambda choice: self._branch_draft(span, index, choice)
        )

    def _branch_suggestion(self, index: int, choice: str | None) -> None:
        ghost = self.pane.editor.ghost
        if choice is None or ghost is None or index >= len(ghost.tokens) or self.pane.generating:
            return
        branch_at(ghost, index, choice)
        self.inspected = None
        self.pane.write_on()

    def _branch_draft(self, span: Span, index: int, choice: str | None) -> None:
        pane = self.pane
        editor = pane.editor
        if choice is None or pane.generating or span not in editor.spans.spans:
            if choice is not None:
                pane.notify(
                    pane.language.gettext("That text changed meanwhile; nothing was replaced."), severity="warning"
                )
            return
        record = span.tokens[index]
        start = span.start + record.start
        if record.source.kind == "scored":
            # The author's own words: the branch rewrites the rest of their line (paragraph),
            # not everything after it.
            line_end = editor.text.find("\n", start)
            end = len(editor.text) if line_end < 0 else line_end
            old_tokens = [
                r.moved(other.start - start)
                for other in editor.spans.spans
                if start <= other.start and other.end <= end
                for r in other.tokens
            ]
        else:
            end = span.end
            old_tokens = [r.moved(-record.start) for r in span.tokens[index:]]
        old_text = editor.text[start:end]
        if editor.ghost is not None:
            pane.reject(say=False)  # the branch takes its place: no undo brings it back
        at = editor.document.get_location_from_index(start)
        editor.move_cursor(at)
        # The old text stays in the draft until the author accepts the branch (Tab).
        ghost = editor.begin_ghost(at, from_cursor=True)
        ghost.replaces = end - start
        ghost.versions.append(Version(old_text, old_tokens, "as it was"))
        ghost.text, ghost.tokens = old_text, old_tokens
        choice, chosen = branch_choice(record, choice, editor.text[max(0, start - 1) : start])
        start_version(ghost, branch_label(choice), choice, chosen, [] if chosen else [(None, 0)])
        pane.write_on()

    def version(self, step: int) -> None:
        """Show the suggestion's older (-1) or newer (1) version."""
        pane = self.pane
        ghost = pane.editor.ghost
        if ghost is None:
            return
        if pane.generating:
            pane.notify(pane.language.gettext("The model is writing: press Esc to stop it first."), severity="warning")
            return
        if not move_version(ghost, step):
            _ = pane.language.gettext
            pane.notify(_("No older version.") if step < 0 else _("No newer version."))
            return
        self.inspected = None
        pane.redraw_suggestion()
        self.draw()
