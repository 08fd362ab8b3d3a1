"""The bar of keys under the panes: Textual's Footer, without the leak in its rebuilds, and
giving way on a narrow terminal by dropping its lesser keys whole."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import NamedTuple

from textual import events
from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey
from scriptorium.app.tui.widgets.showing import set_shown


class KeyFooter(Footer):
    """Textual's Footer, building its keys itself for two reasons.

    Textual's Footer binds each key to its own `compact`, and Textual forgets such a
    watcher only when the watched value changes (Textual issue 6666), which `compact` never
    does here. Every rebuild, as when a generation starts and ends, kept the replaced keys
    alive with the lines they had drawn: some 1,800 objects a generation, never freed, and
    the garbage collector's full passes, which come while tokens stream, walked them all.
    Here `compact` is fixed when the footer is made, so each key is given it, not bound
    to it. scriptorium's bindings have no groups: each key stands alone, as in F1.

    The footer is also rebuilt only when what it shows changes. The screen signals a change
    of bindings whenever the focus moves, at start-up twice before the first frame, and
    each rebuild restyles every key.

    Textual lets keys that do not fit run under the palette key, docked at the right, which
    cut them mid-word ("^t Tun") and hid the last ones (Quit). Here the keys that do not fit
    go whole: first the actions in `lesser`, in that order, then the others from the right;
    never those in `keep`.

    Each key's name is the binding's English description, marked with N_: `translate` (the
    interface language's gettext) gives the one shown."""

    def __init__(
        self,
        *,
        keep: Collection[str] = (),
        lesser: Sequence[str] = (),
        compact: bool = False,
        translate: Callable[[str], str] = str,
    ) -> None:
        super().__init__(compact=compact)
        self._keep = frozenset(keep)
        self._lesser = tuple(lesser)
        self._translate = translate
        self._shown: tuple[_Key, ...] | None = None
        self._widths: dict[FooterKey, int] = {}
        """The keys' widths, each measured once: a resize only decides again which fit."""

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        self._shown = self._keys_to_show()
        for key in self._shown:
            widget = FooterKey(
                key.key,
                key.display,
                key.description,
                key.action,
                disabled=not key.enabled,
                tooltip=key.tooltip,
                classes=key.classes,
            )
            widget.set_reactive(FooterKey.compact, self.compact)
            widget.set_class(self.compact, "-compact", update=False)
            yield widget

    async def recompose(self) -> None:
        if self._shown is not None and self._keys_to_show() == self._shown:
            return
        self._widths = {}
        await super().recompose()
        self._give_way()

    def _keys_to_show(self) -> tuple[_Key, ...]:
        """The active bindings the bar shows, one per action, then the palette's key."""
        active = self.screen.active_bindings
        keys: dict[str, _Key] = {}
        for _, binding, enabled, tooltip in active.values():
            if binding.show and binding.action not in keys:
                display = self.app.get_key_display(binding)
                description = self._said(binding.description)
                keys[binding.action] = _Key(
                    binding.key, display, description, binding.action, enabled, self._said(tooltip)
                )
        shown = list(keys.values())
        palette = active.get(self.app.COMMAND_PALETTE_BINDING) if self.app.ENABLE_COMMAND_PALETTE else None
        if self.show_command_palette and palette is not None:
            _, binding, enabled, _ = palette
            tooltip = self._said(binding.tooltip or binding.description)
            description = self._said(binding.description)
            display = self.app.get_key_display(binding)
            shown.append(_Key(binding.key, display, description, binding.action, enabled, tooltip, "-command-palette"))
        return tuple(shown)

    def _said(self, text: str) -> str:
        # gettext("") is the catalog's header, not an empty name.
        return self._translate(text) if text else text

    def on_resize(self, event: events.Resize) -> None:
        self._give_way()

    def _give_way(self) -> None:
        keys = list(self.query_children(FooterKey))
        widths = self._widths
        for key in keys:
            if key not in widths:
                widths[key] = _width(key)
        # The last key's right margin is blank space past it: it need not fit.
        spare = self.size.width - sum(widths.values()) + max((key.styles.margin.right for key in keys), default=0)
        rest = [key for key in reversed(keys) if key.action not in self._keep and key.action not in self._lesser]
        lesser = sorted((key for key in keys if key.action in self._lesser), key=lambda k: self._lesser.index(k.action))
        dropped = set()
        for key in lesser + rest:
            if spare >= 0:
                break
            dropped.add(key)
            spare += widths[key]
        for key in keys:
            set_shown(key, key not in dropped)


def _width(key: FooterKey) -> int:
    """Columns the key takes in the bar: its label, padding, border and margins."""
    return key.render().cell_len + key.styles.gutter.width + key.styles.margin.width


class _Key(NamedTuple):
    """One key as the bar shows it; equal keys need no rebuild."""

    key: str
    display: str
    description: str
    action: str
    enabled: bool
    tooltip: str
    classes: str = ""
