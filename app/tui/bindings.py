"""The app's own keys, and every section of keys the help screen, the palette and the
keymap know (app/tui/keys.py reads them)."""

from __future__ import annotations

from collections.abc import Mapping

from textual.binding import Binding, BindingType
from textual.widgets import TextArea

from scriptorium.app.tui.keys import KeyMap
from scriptorium.app.tui.screens.main_screen import MainScreen
from scriptorium.app.tui.widgets.chat_input import ChatInput
from scriptorium.app.tui.widgets.chat_pane import ChatPane
from scriptorium.app.tui.widgets.draft_pane import DraftPane
from scriptorium.app.tui.widgets.find_bar import FindBar
from scriptorium.app.tui.widgets.sampler_panel import SamplerPanel
from scriptorium.app.tui.widgets.sidebar import Sidebar
from scriptorium.app.i18n.marker import N_

# Actions named screen.* are the main screen's (a dialog on top has none: its keys stay its own).
APP_BINDINGS: list[BindingType] = [
    Binding("f1", "help", N_("Keys"), id="app.help", tooltip=N_("Every key, what it does, and its id for remapping")),
    Binding(
        "ctrl+p",
        "command_palette",
        N_("Commands"),
        show=False,
        priority=True,
        id="app.palette",
        tooltip=N_("Search every action by name"),
    ),
    Binding("f2", "screen.switch_mode", N_("Mode"), id="app.mode", tooltip=N_("Switch between draft and chat")),
    Binding(
        "f7",
        "cycle_speculation",
        N_("Speculate"),
        show=False,
        priority=True,
        id="app.speculation",
        tooltip=N_("Speculative decoding: off, prompt lookup, the draft model; the same text, sooner"),
    ),
    Binding(
        "f3",
        "screen.toggle_sidebar",
        N_("Panels"),
        show=False,
        id="app.sidebar",
        tooltip=N_("Show or hide the side panels"),
    ),
    Binding(
        "ctrl+t",
        "screen.focus_sampler",
        N_("Tune"),
        id="app.tune",
        tooltip=N_("Go to the sampler panel: change settings with keys there (1-5 toggle panels)"),
    ),
    Binding("ctrl+q", "quit", N_("Quit"), priority=True, id="app.quit", tooltip=N_("Leave scriptorium")),
    Binding(
        "ctrl+l",
        "load_model",
        N_("Model"),
        show=False,
        id="app.load_model",
        tooltip=N_("Load another model (and LoRA adapter); on a llama-server, connect to it again"),
    ),
    Binding(
        "ctrl+c",
        "help_quit",
        N_("How to quit"),
        show=False,
        system=True,
        id="app.help_quit",
        tooltip=N_("Says which key quits (ctrl+c copies in the editor)"),
    ),
    Binding(
        "f10,alt+m",
        "pick_model",
        N_("Models"),
        show=False,
        id="app.models",
        tooltip=N_("Choose a discovered model (and LoRA adapter) and switch to it"),
    ),
    Binding(
        "f5",
        "sessions",
        N_("Sessions"),
        show=False,
        id="app.sessions",
        tooltip=N_("Open, rename or delete saved sessions"),
    ),
    Binding(
        "alt+e",
        "edit_pinned('memory')",
        N_("Memory"),
        show=False,
        id="app.memory",
        tooltip=N_("Edit the memory: text pinned at the top of every prompt (synopsis, characters, style)"),
    ),
    Binding(
        "alt+n",
        "edit_pinned('note')",
        N_("Note"),
        show=False,
        id="app.note",
        tooltip=N_("Edit the author's note: put a few paragraphs before the end of what the model sees"),
    ),
    Binding(
        "alt+l",
        "edit_pinned('lore')",
        N_("Lorebook"),
        show=False,
        id="app.lore",
        tooltip=N_("Edit the lorebook: entries that enter the draft's prompt when its end mentions them"),
    ),
    # F11: the last F-key free (F6 is the context viewer's, F7 speculation's). macOS takes it for
    # Show Desktop unless the F-keys are standard function keys: "Compare" in the palette always
    # works. Not enabled on a dialog (ScriptoriumApp.check_action): a second compare screen on top
    # of the first would run two comparisons.
    Binding(
        "f11",
        "compare",
        N_("Compare"),
        show=False,
        priority=True,
        id="app.compare",
        tooltip=N_(
            "Compare models, quantizations and LoRA scales on this draft: bits per character, paragraph by "
            "paragraph (Esc stops)"
        ),
    ),
    Binding(
        "alt+h",
        "messages",
        N_("Messages"),
        show=False,
        id="app.messages",
        tooltip=N_("Read again what the app said: every notification of this run, with its time"),
    ),
    Binding(
        "f6",
        "show_context",
        N_("Context"),
        show=False,
        priority=True,  # before the editor's own F6 (select the line), which shift+home and shift+end do too
        id="app.context",
        tooltip=N_(
            "See the exact prompt the model sees: memory, lore, the window, the note, each part's tokens "
            "and where the window starts"
        ),
    ),
    Binding(
        "f12",
        "export",
        N_("Export"),
        show=False,
        id="app.export",
        tooltip=N_("Export this session to Markdown, with how it was made in the front matter"),
    ),
]


def binding_sections(app_bindings: list[BindingType]) -> list[tuple[str, list[BindingType]]]:
    # Titles in English, marked: they also key _FOCUS_AREAS and the palette's targets, and are translated where shown.
    return [
        (N_("General"), app_bindings),
        (N_("Focus"), MainScreen.BINDINGS),
        (N_("Draft"), DraftPane.BINDINGS),
        (N_("Find"), FindBar.BINDINGS),
        (N_("Chat"), [*ChatInput.BINDINGS, *ChatPane.BINDINGS]),
        (N_("Panels"), Sidebar.BINDINGS),
        (N_("Sampler panel"), SamplerPanel.BINDINGS),
    ]


_FOCUS_AREAS = {
    "General": "",
    "Focus": "",
    "Draft": "draft",
    "Find": "draft",  # the find bar sits in the draft's pane: the draft's keys answer there too
    "Chat": "chat",
    "Panels": "panels",
    "Sampler panel": "panels",
}
"""Where a section's keys answer: '' everywhere (the app's and the main screen's), else
while that area has the focus (the sampler panel sits in the panels)."""


def _active_together(section: str, other: str) -> bool:
    area, other_area = _FOCUS_AREAS.get(section, ""), _FOCUS_AREAS.get(other, "")
    return not area or not other_area or area == other_area


def _closest_id(binding_id: str, ids: set[str]) -> str:
    import difflib

    close = difflib.get_close_matches(binding_id, sorted(ids), n=1, cutoff=0.8)  # ids share "draft."
    return f" (did you mean '{close[0]}'?)" if close else " (F1 lists the ids)"


def keymap_problems(keymap: Mapping[str, str]) -> list[str]:
    """Lines saying which keymap ids name no binding and which keys the keymap gave to two
    bindings at once: the app says them at start, `scriptorium config show` without starting it."""
    keys = KeyMap(binding_sections(APP_BINDINGS), keymap, lambda binding: binding.key)
    # One line per id, named as every other config problem is (keymap.<id>), so a typo
    # is found by its key and, when close to a real id, corrected.
    lines = [
        f"keymap.{binding_id}: no such binding{_closest_id(binding_id, keys.ids())}"
        for binding_id in keys.unknown_ids()
    ]
    # The draft's editor and the chat's message field see a key before their pane does.
    text_fields = {"Draft": ("draft editor", TextArea.BINDINGS), "Chat": ("message field", TextArea.BINDINGS)}
    return lines + keys.clashes(_active_together, text_fields)
