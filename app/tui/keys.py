"""Every binding of the app in one registry: the help screen (F1), the command palette,
the keymap check and every "press X" hint are built from it, so a key added to a pane
shows in all of them, remapped as the author's config says.

It reads the classes' BINDINGS, not mounted widgets: a key's name is known before any
screen exists. Widgets get `key_display` passed in (a plain callable), never this object.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Awaitable

from textual import events
from textual.app import SystemCommand
from textual.binding import Binding, BindingType
from textual.dom import DOMNode

# Keys that only move within a panel: in the help screen, not in the command palette.
_NAVIGATION_IDS = {"sampler.select_up", "sampler.select_down", "sampler.adjust_up", "sampler.adjust_down",
                   "panels.leave", "focus.next", "focus.previous"}
_NOT_IN_PALETTE = {"command_palette", "help_quit"}
_COMMAND_MODIFIERS = {"alt", "meta", "super"}


def typed_with_alt(event: events.Key) -> bool:
    """A letter pressed with Alt: a command, not text. Terminals send Alt+E as ESC e, which
    Textual reads as 'alt+e' still carrying the character 'e', and its TextArea and Input
    type that character before any binding of the screen or the app may see the key."""
    return event.is_printable and not _COMMAND_MODIFIERS.isdisjoint(event.key.split("+")[:-1])


KeyDisplay = Callable[[str], str]
"""A binding id -> how its key reads ('^g', 'F9'), after the author's keymap."""


@dataclass(frozen=True, slots=True)
class Section:
    title: str
    """How the help screen and the palette name it: 'Draft', 'Sampler panel'..."""
    bindings: tuple[Binding, ...]


class KeyMap:
    """The app's bindings by section, and the author's remapping of them."""

    def __init__(self, sections: Iterable[tuple[str, Iterable[BindingType]]], keymap: Mapping[str, str],
                 display: Callable[[Binding], str]) -> None:
        """`display` is Textual's App.get_key_display (how a key reads on this terminal)."""
        self.sections = tuple(Section(title, tuple(b for b in bindings if isinstance(b, Binding) and b.id))
                              for title, bindings in sections)
        self.keymap = dict(keymap)
        self._display = display

    def ids(self) -> set[str]:
        return {binding.id for section in self.sections for binding in section.bindings if binding.id}

    def unknown_ids(self) -> list[str]:
        """Keymap entries that name no binding (a typo in the config)."""
        return sorted(set(self.keymap) - self.ids())

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
                shown = ", ".join(self._display(replace(binding, key=k.strip(), key_display=None))
                                  for k in keys.split(","))
                rows.append((section.title, shown, binding.description, binding.tooltip, binding.id or ""))
        return rows

    def commands(self, nodes: Mapping[str, DOMNode],
                 run: Callable[[DOMNode, str], Awaitable[None]]) -> Iterable[SystemCommand]:
        """Palette entries for every section with a node in `nodes` (by title); choosing one
        runs the binding's action on that node through `run`."""
        for section in self.sections:
            node = nodes.get(section.title)
            if node is None:
                continue
            for binding in section.bindings:
                if binding.id in _NAVIGATION_IDS or binding.action in _NOT_IN_PALETTE:
                    continue
                yield SystemCommand(f"{section.title}: {binding.description}", binding.tooltip,
                                    _Runner(run, node, binding.action))


@dataclass(frozen=True, slots=True)
class _Runner:
    run: Callable[[DOMNode, str], Awaitable[None]]
    node: DOMNode
    action: str

    async def __call__(self) -> None:
        await self.run(self.node, self.action)
