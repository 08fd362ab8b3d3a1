"""Every binding of the app in one registry: the help screen (F1), the command palette,
the keymap check and every "press X" hint are built from it, so a key added to a pane
shows in all of them, remapped as the author's config says.

It reads the classes' BINDINGS, not mounted widgets: a key's name is known before any
screen exists. Widgets get `key_display` passed in (a plain callable), never this object.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Awaitable

from textual import events
from textual.app import SystemCommand
from textual.binding import Binding, BindingType
from textual.dom import DOMNode
from textual.widget import Widget
from textual.widgets import Input, TextArea

# Keys that only move within a panel: in the help screen, not in the command palette.
_NAVIGATION_IDS = {
    "sampler.select_up",
    "sampler.select_down",
    "sampler.adjust_up",
    "sampler.adjust_down",
    "panels.leave",
    "focus.next",
    "focus.previous",
}
_NOT_IN_PALETTE = {"command_palette", "help_quit", "ask_reject"}
"""The palette itself, and Esc's first press on a suggestion (the palette's Reject is deliberate already)."""
_COMMAND_MODIFIERS = {"alt", "meta", "super"}


def typed_with_alt(event: events.Key) -> bool:
    """A letter pressed with Alt: a command, not text. Terminals send Alt+E as ESC e, which
    Textual reads as 'alt+e' still carrying the character 'e', and its TextArea and Input
    type that character before any binding of the screen or the app may see the key."""
    return event.is_printable and not _COMMAND_MODIFIERS.isdisjoint(event.key.split("+")[:-1])


def type_into(field: Input, text: str) -> None:
    """Put `text` where the cursor is in `field`, over what is selected."""
    selection = field.selection
    if selection.is_empty:
        field.insert_text_at_cursor(text)
    else:
        field.replace(text, *sorted(selection))


def type_invisible(widget: Widget | None, event: events.Key) -> bool:
    """Type a format character (U+200C ZWNJ from a Persian keyboard, U+200D ZWJ in an emoji
    the picker sends, U+200E/F direction marks, a soft hyphen) into `widget`, a TextArea or
    Input: theirs insert only what str.isprintable() passes, and these are not, so the
    key was dropped and the text came out changed. True when it was typed."""
    character = event.character
    if not character or len(character) != 1 or event.is_printable or unicodedata.category(character) != "Cf":
        return False
    if isinstance(widget, TextArea) and not widget.read_only:
        widget.replace(character, *widget.selection, maintain_selection_offset=False)
    elif isinstance(widget, Input):
        type_into(widget, character)
    else:
        return False
    event.stop()
    event.prevent_default()
    return True


KeyDisplay = Callable[[str], str]
"""A binding id -> how its key reads ('^g', 'F9'), after the author's keymap."""


@dataclass(frozen=True, slots=True)
class Section:
    title: str
    """How the help screen and the palette name it: 'Draft', 'Sampler panel'..."""
    bindings: tuple[Binding, ...]


class KeyMap:
    """The app's bindings by section, and the author's remapping of them."""

    def __init__(
        self,
        sections: Iterable[tuple[str, Iterable[BindingType]]],
        keymap: Mapping[str, str],
        display: Callable[[Binding], str],
        translate: Callable[[str], str] = str,
    ) -> None:
        """`display` is Textual's App.get_key_display (how a key reads on this terminal);
        `translate` the interface language's gettext, for the names shown (the registry's
        titles and descriptions are English, marked with N_, and stay so as keys)."""
        self.sections = tuple(
            Section(title, tuple(b for b in bindings if isinstance(b, Binding) and b.id))
            for title, bindings in sections
        )
        self.keymap = dict(keymap)
        self._display = display
        self._translate = translate

    def for_textual(self) -> dict[str, str]:
        """The keymap as App.set_keymap takes it. Textual drops every binding of a key one
        of whose bindings is remapped (Esc stops, rejects or leaves inspection: remapping
        the stop took Esc from all three), so each binding that shares a key with one
        remapped is named too, with its own keys, and keeps them."""
        bindings = [binding for section in self.sections for binding in section.bindings]
        named = dict(self.keymap)
        while True:
            in_play = {key for binding in bindings if binding.id in named for key in _keys(binding.key)}
            sharing = {
                binding.id: binding.key
                for binding in bindings
                if binding.id not in named and not _keys(binding.key).isdisjoint(in_play)
            }
            if not sharing:
                return named
            named.update(sharing)  # type: ignore[arg-type]

    def ids(self) -> set[str]:
        return {binding.id for section in self.sections for binding in section.bindings if binding.id}

    def unknown_ids(self) -> list[str]:
        """Keymap entries that name no binding (a typo in the config)."""
        return sorted(set(self.keymap) - self.ids())

    def clashes(
        self, active_together: Callable[[str, str], bool], built_in: Mapping[str, tuple[str, Iterable[BindingType]]]
    ) -> list[str]:
        """One line for each key the keymap gave a binding that something else answers where
        both are active, so that one of the two goes dead: another binding (`active_together`
        of their section titles), or the text field a section's keys pass through first
        (`built_in`: the title of the section it sits in -> the field's name and its own
        bindings, such as the editor's F6, select line). Keys shared by default are left alone (Esc stops, rejects
        or leaves, as each allows)."""
        by_id = {binding.id: (section.title, binding) for section in self.sections for binding in section.bindings}
        default = {binding_id: _keys(binding.key) for binding_id, (_, binding) in by_id.items()}
        mapped = {
            binding_id: _keys(self.keymap.get(binding_id, binding.key)) for binding_id, (_, binding) in by_id.items()
        }
        lines = []
        for binding_id in sorted(set(self.keymap) & set(by_id)):
            title, moved = by_id[binding_id][0], mapped[binding_id] - default[binding_id]
            taken: list[tuple[str, str, str]] = []
            for field_title, (field_name, field_bindings) in built_in.items():
                if active_together(title, field_title):
                    taken += [
                        (key, f"the {field_name}'s", binding.description)
                        for binding in field_bindings
                        if isinstance(binding, Binding)
                        for key in moved & _keys(binding.key)
                    ]
            for other_id, (other_title, other) in by_id.items():
                if other_id == binding_id or (other_id in self.keymap and other_id < binding_id):
                    continue  # each pair once
                if active_together(title, other_title):
                    shared = (mapped[binding_id] & mapped[other_id]) - (default[binding_id] & default[other_id])
                    taken += [(key, f"{other_id}'s", other.description) for key in shared]
            lines += [
                f"keymap.{binding_id}: {key} is already {whose} key ({what}): one of them will not work"
                for key, whose, what in sorted(taken)
            ]
        return lines

    def key_display(self, binding_id: str) -> str:
        """How the key bound to `binding_id` reads, after the author's keymap."""
        for section in self.sections:
            for binding in section.bindings:
                if binding.id == binding_id:
                    keys = self.keymap.get(binding_id, binding.key).split(",")[0].strip()
                    shown = binding.key_display if binding_id not in self.keymap else None
                    return self._display(replace(binding, key=keys, key_display=shown))
        raise KeyError(binding_id)

    def rows(self) -> list[tuple[str, str, str, str, str]]:
        """(section, keys, name, what it does, id) for every binding: the help screen."""
        rows = []
        for section in self.sections:
            for binding in section.bindings:
                keys = self.keymap.get(binding.id or "", binding.key)
                shown = ", ".join(
                    self._display(replace(binding, key=k.strip(), key_display=None)) for k in keys.split(",")
                )
                rows.append(
                    (
                        self._translate(section.title),
                        shown,
                        self._translate(binding.description),
                        self._translate(binding.tooltip),
                        binding.id or "",
                    )
                )
        return rows

    def commands(
        self, nodes: Mapping[str, DOMNode], run: Callable[[DOMNode, str], Awaitable[None]]
    ) -> Iterable[SystemCommand]:
        """Palette entries for every section with a node in `nodes` (by title); choosing one
        runs the binding's action on that node through `run`."""
        for section in self.sections:
            node = nodes.get(section.title)
            if node is None:
                continue
            for binding in section.bindings:
                if binding.id in _NAVIGATION_IDS or binding.action in _NOT_IN_PALETTE:
                    continue
                title, description = self._translate(section.title), self._translate(binding.description)
                yield SystemCommand(
                    f"{title}: {description}", self._translate(binding.tooltip), _Runner(run, node, binding.action)
                )


def _keys(keys: str) -> set[str]:
    return {key.strip() for key in keys.split(",")}


@dataclass(frozen=True, slots=True)
class _Runner:
    run: Callable[[DOMNode, str], Awaitable[None]]
    node: DOMNode
    action: str

    async def __call__(self) -> None:
        await self.run(self.node, self.action)
