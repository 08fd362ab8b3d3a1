"""The bar of keys under the panes: Textual's Footer, without the leak in its rebuilds, and
giving way on a narrow terminal by dropping its lesser keys whole."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from textual import events
from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey
from scriptorium.app.tui.widgets.showing import set_shown


class KeyFooter(Footer):
    """Textual's Footer builds its keys afresh whenever the active bindings change, as they
    do when a generation starts and ends. Each key watches the footer's `compact`, and
    Textual forgets a watcher only when the watched value changes (Textual issue 6666),
    which `compact` never does here: every rebuild kept the replaced keys alive, with the
    lines they had drawn: some 1,800 objects a generation, never freed, and the
    garbage collector's full passes, which come while tokens stream, walked them all.

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

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                widget.description = self._translate(widget.description)
                if isinstance(widget.tooltip, str):
                    widget.tooltip = self._translate(widget.tooltip)
            yield widget

    async def recompose(self) -> None:
        await super().recompose()
        # A change of `compact` is when Textual forgets the watchers of removed keys: so
        # it is changed and changed back, through the public reactive, once the old keys
        # are gone. Both changes land before the next frame, which draws the same footer.
        self.compact = not self.compact
        self.compact = not self.compact
        self._give_way()

    def on_resize(self, event: events.Resize) -> None:
        self._give_way()

    def _give_way(self) -> None:
        keys = list(self.query_children(FooterKey))
        widths = {key: _width(key) for key in keys}
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
