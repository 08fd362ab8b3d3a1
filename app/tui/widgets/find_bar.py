"""Find and replace in the draft: a bar above the editor, opened with ctrl+f.

It searches the draft only: a suggestion is not the author's text until accepted. It moves
the editor's selection to what it finds, so the author sees each occurrence in its place.
A replacement is an edit like any other (the suggestion's anchor follows it), and replacing
all is one step of the undo history: one ctrl+z gives back every occurrence. While the model
writes into a suggestion nothing is replaced: the pane says why (`why_not_edit`), and the
author stops the model first, as for any change that would move the text it continues."""

from __future__ import annotations

from collections.abc import Callable

from textual import on
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Label, TextArea
from textual.widgets.text_area import Selection

from scriptorium.app.tui.keys import KeyDisplay
from scriptorium.app.tui.text_search import Match, following, occurrences
from scriptorium.app.tui.widgets.showing import set_shown
from scriptorium.app.i18n.marker import N_
from scriptorium.app.i18n.language import ENGLISH, Language

BINDINGS = [
    Binding("escape", "close", N_("Close"), id="find.close", tooltip=N_("Close the find bar and go back to the draft")),
    Binding(
        "down", "move(1)", N_("Next"), key_display="↓", show=False, id="find.next", tooltip=N_("Select the next place")
    ),
    Binding(
        "up",
        "move(-1)",
        N_("Previous"),
        key_display="↑",
        show=False,
        id="find.previous",
        tooltip=N_("Select the place before"),
    ),
    Binding(
        "ctrl+r",
        "replace",
        N_("Replace"),
        id="find.replace",
        tooltip=N_(
            "Replace the selected place with the replacement, and select the next (Enter in the replace field too)"
        ),
    ),
    Binding(
        "ctrl+g",
        "replace_all",
        N_("Replace all"),
        id="find.replace_all",
        tooltip=N_("Replace every place in the draft (g as in global); one undo gives them all back"),
    ),
    Binding(
        "ctrl+t",
        "toggle_case",
        N_("Match case"),
        id="find.case",
        tooltip=N_("Find only what has the same capitals (Lucia, not LUCIA), or any"),
    ),
]


class FindBar(Vertical):
    """The find and replace fields, acting on the draft's editor they are given.

    The bar is hidden until ctrl+f (or a palette entry) opens it, and its fields are mounted
    then, the first time: mounted with the main screen, the two inputs and their labels, never
    seen on the first frame, took some 25 ms of styling before it (bench/startup.py)."""

    BINDINGS = BINDINGS

    def __init__(
        self,
        editor: TextArea,
        key_display: KeyDisplay,
        why_not_edit: Callable[[], str],
        language: Language = ENGLISH,
        **kwargs: object,
    ) -> None:
        """`why_not_edit`: why the draft may not be changed now ('' when it may)."""
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._language = language
        self._editor = editor
        self._key_display = key_display
        self._why_not_edit = why_not_edit
        self.match_case = False
        self.display = False
        _ = language.gettext
        self.wanted = Input(placeholder=_("find"), compact=True, id="find-text")
        self.replacement = Input(placeholder=_("replace with"), compact=True, id="replace-text")
        self.count = Label("", id="find-count")
        self.hints = Label("", id="find-hints")
        find, replace = _("Find"), _("Replace")
        width = max(len(find), len(replace)) + 1  # the two fields start in one column
        self._rows: list[Horizontal] = [
            Horizontal(Label(find.ljust(width), classes="find-label"), self.wanted, self.count, classes="find-row"),
            Horizontal(
                Label(replace.ljust(width), classes="find-label"), self.replacement, self.hints, classes="find-row"
            ),
        ]
        """The rows of fields, until they are mounted (`_mount_fields`)."""

    async def _mount_fields(self) -> None:
        """Mount the fields, the first time the bar is opened."""
        if self._rows:
            rows, self._rows = self._rows, []
            await self.mount_all(rows)

    # ---- opening and closing ---------------------------------------------------------
    async def open(self) -> None:
        """Show the bar with the cursor in the find field; a selection on one line is what it looks for."""
        await self._mount_fields()
        selected = self._editor.selected_text
        if selected and "\n" not in selected:
            self.wanted.value = selected
        set_shown(self, True)
        self.wanted.focus()
        self.wanted.select_all()
        self._show_count()

    def action_close(self) -> None:
        set_shown(self, False)
        self._editor.focus()

    # ---- finding ---------------------------------------------------------------------
    def _found(self) -> list[Match]:
        return occurrences(self._editor.text, self.wanted.value, match_case=self.match_case)

    def _selected(self, found: list[Match]) -> int | None:
        """Which of `found` the editor's selection is exactly, if any."""
        document = self._editor.document
        start, end = sorted(self._editor.selection)
        span = Match(document.get_index_from_location(start), document.get_index_from_location(end))
        return found.index(span) if span in found else None

    async def action_move(self, step: int) -> None:
        await self._reveal()
        found = self._found()
        current = self._selected(found)
        if current is not None:
            origin = found[current].start
        else:
            cursor = self._editor.document.get_index_from_location(self._editor.cursor_location)
            origin = cursor - 1 if step > 0 else cursor  # a place starting at the cursor is the next one
        self._go_to(found, following(found, origin, forward=step > 0))

    def _go_to(self, found: list[Match], where: tuple[int, bool] | None) -> None:
        if where is None:
            self._show_count(found)
            if self.wanted.value:
                said = self._language.gettext("{text} is not in the draft.").format(text=repr(self.wanted.value))
                self.notify(said, severity="warning", timeout=3)
            return
        index, wrapped = where
        location = self._editor.document.get_location_from_index
        self._editor.selection = Selection(location(found[index].start), location(found[index].end))
        self._editor.scroll_cursor_visible(center=True, animate=False)
        self._show_count(found, index)
        if wrapped and len(found) > 1:
            self.notify(self._language.gettext("Found again from the other end of the draft."), timeout=2)

    def _show_count(self, found: list[Match] | None = None, index: int | None = None) -> None:
        _ = self._language.gettext
        found = self._found() if found is None else found
        case = _("same case") if self.match_case else _("any case")
        if not self.wanted.value:
            places = ""
        elif not found:
            places = _("not found") + " · "
        elif index is None:
            places = _("{count} found").format(count=len(found)) + " · "
        else:
            places = _("{number} of {count}").format(number=index + 1, count=len(found)) + " · "
        self.count.update(f" {places}{case}")
        keys = self._key_display
        self.hints.update(
            " "
            + _("{previous}{next} · {replace} replace · {all} all · {case} case").format(
                previous=keys("find.previous"),
                next=keys("find.next"),
                replace=keys("find.replace"),
                all=keys("find.replace_all"),
                case=keys("find.case"),
            )
        )

    @on(Input.Changed, "#find-text")
    def _wanted_changed(self) -> None:
        self._show_count()

    @on(Input.Submitted, "#find-text")
    async def _find_submitted(self) -> None:
        await self.action_move(1)

    @on(Input.Submitted, "#replace-text")
    async def _replace_submitted(self) -> None:
        await self.action_replace()

    async def action_toggle_case(self) -> None:
        await self._reveal()
        self.match_case = not self.match_case
        self._show_count()

    async def _reveal(self) -> None:
        """Palette entries reach the bar closed: it opens, so what they do shows."""
        await self._mount_fields()
        if not self.display:
            set_shown(self, True)
            self.wanted.focus()

    # ---- replacing -------------------------------------------------------------------
    async def _may_edit(self) -> bool:
        await self._reveal()
        if reason := self._why_not_edit():
            self.notify(reason, severity="warning", timeout=4)
            return False
        if not self.wanted.value:
            self.notify(self._language.gettext("Type what to find first."), severity="warning", timeout=3)
            self.wanted.focus()
            return False
        return True

    async def action_replace(self) -> None:
        """Replace the place selected (found before, so the author saw what goes), then select
        the next one; with none selected, select the next first."""
        if not await self._may_edit():
            return
        found = self._found()
        current = self._selected(found)
        if current is None:
            return await self.action_move(1)
        editor, match = self._editor, found[current]
        location = editor.document.get_location_from_index
        editor.history.checkpoint()  # one undo step of its own, not joined to the typing before
        editor.replace(self.replacement.value, location(match.start), location(match.end))
        editor.history.checkpoint()
        after = self._found()
        self._go_to(after, following(after, match.start + len(self.replacement.value) - 1, forward=True))

    async def action_replace_all(self) -> None:
        if not await self._may_edit():
            return
        found = self._found()
        if not found:
            return self._go_to(found, None)
        replaced = replace_as_one_edit(self._editor, found, self.replacement.value)
        self._show_count()
        said = self._language.ngettext(
            "Replaced {count} place: {key} gives them all back at once.",
            "Replaced {count} places: {key} gives them all back at once.",
            replaced,
        )
        self.notify(said.format(count=replaced, key=self._key_display("draft.undo")), timeout=5)


def replace_as_one_edit(editor: TextArea, found: list[Match], replacement: str) -> int:
    """Replace each of `found` in `editor`, from the last (so the offsets before it hold), as
    one step of the undo history. Each is an edit of its own, so the suggestion's anchor and
    the generated text's tokens follow each as they follow typing; their batches are joined
    into the first one as they come, or a long list would push older steps out of the
    history's bounded stack, and with them its own first replacements."""
    history = editor.history
    stack = history._undo_stack  # Textual's EditHistory offers no public way to join batches
    location = editor.document.get_location_from_index
    history.checkpoint()
    own: list | None = None
    for match in reversed(found):
        editor.replace(replacement, location(match.start), location(match.end), maintain_selection_offset=False)
        if own is None:
            own = stack[-1] if stack else None
        elif stack and stack[-1] is not own:
            own.extend(stack.pop())
    history.checkpoint()
    return len(found)
