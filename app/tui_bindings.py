"""Every binding of the app in one registry: the help screen (F1), the command palette
and the keymap check are all built from it, so a key added to a pane shows in all three.
A mixin of ScriptoriumApp."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Iterable

from textual.app import SystemCommand
from textual.binding import Binding, BindingType
from textual.dom import DOMNode
from textual.screen import Screen

from .screens.main_screen import MainScreen
from .widgets.chat_pane import ChatPane
from .widgets.draft_pane import DraftPane
from .widgets.sampler_panel import SamplerPanel
from .widgets.sidebar import Sidebar

if TYPE_CHECKING:
    from textual.app import App

# The sections after the app's own bindings, in help-screen order: (title, class holding them).
SECTIONS = (("Focus", MainScreen), ("Draft", DraftPane), ("Chat", ChatPane), ("Panels", Sidebar),
            ("Sampler panel", SamplerPanel))
# Keys that only move within a panel: in the help screen, not in the command palette.
_NAVIGATION_IDS = {"sampler.select_up", "sampler.select_down", "sampler.adjust_up", "sampler.adjust_down",
                   "panels.leave", "focus.next", "focus.previous"}


class BindingRegistry:
    """Needs from the app: main, keymap, BINDINGS and App's own key display and actions."""

    main: MainScreen
    keymap: dict[str, str]
    BINDINGS: list[BindingType]

    def binding_sections(self) -> list[tuple[str, DOMNode, list[Binding]]]:
        main = self.main
        nodes: tuple[DOMNode, ...] = (main, main.draft, main.chat, main.sidebar, main.sidebar.sampler)
        sections: list[tuple[str, DOMNode, Iterable[BindingType]]] = [
            ("General", self, self.BINDINGS),
            *((title, node, cls.BINDINGS) for (title, cls), node in zip(SECTIONS, nodes, strict=True)),
        ]
        return [(title, node, _with_ids(bindings)) for title, node, bindings in sections]

    def key_display(self, binding_id: str) -> str:
        """How the key bound to `binding_id` reads, after the author's keymap."""
        for _, _, bindings in self.binding_sections():
            for binding in bindings:
                if binding.id == binding_id:
                    keys = self.keymap.get(binding_id, binding.key).split(",")[0].strip()
                    shown = binding.key_display if binding_id not in self.keymap else None
                    return self._app.get_key_display(replace(binding, key=keys, key_display=shown))
        raise KeyError(binding_id)

    def binding_rows(self) -> list[tuple[str, str, str, str, str]]:
        """(section, keys, name, what it does, id) for every binding."""
        rows = []
        for title, _, bindings in self.binding_sections():
            for binding in bindings:
                keys = self.keymap.get(binding.id or "", binding.key)
                shown = ", ".join(self._app.get_key_display(replace(binding, key=k.strip(), key_display=None))
                                  for k in keys.split(","))
                rows.append((title, shown, binding.description, binding.tooltip, binding.id or ""))
        return rows

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)  # type: ignore[misc]
        if not isinstance(screen, MainScreen):
            return
        for title, node, bindings in self.binding_sections():
            for binding in bindings:
                if binding.id in _NAVIGATION_IDS or binding.action in ("command_palette", "help_quit"):
                    continue
                yield SystemCommand(f"{title}: {binding.description}", binding.tooltip,
                                    partial(self._run_from_palette, node, binding.action))

    async def _run_from_palette(self, node: DOMNode, action: str) -> None:
        if not await self._app.run_action(action, node):
            self._app.notify("That is not available right now.", severity="warning")

    @property
    def _app(self) -> "App[None]":
        return self  # type: ignore[return-value]


def _with_ids(bindings: Iterable[BindingType]) -> list[Binding]:
    return [b for b in bindings if isinstance(b, Binding) and b.id]


def unknown_keymap_ids(keymap: Iterable[str], app_bindings: Iterable[BindingType]) -> str | None:
    """The line saying which keymap ids name no binding, or None. Needs no running app, so
    `scriptorium config show` says it too."""
    known = {b.id for bindings in (app_bindings, *(cls.BINDINGS for _, cls in SECTIONS)) for b in _with_ids(bindings)}
    unknown = sorted(set(keymap) - known)
    return f"Keymap names no such binding: {', '.join(unknown)} (F1 lists the ids)" if unknown else None
