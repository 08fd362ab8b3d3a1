"""The bar of keys under the panes: Textual's Footer, without the leak in its rebuilds."""

from __future__ import annotations

from textual.widgets import Footer


class KeyFooter(Footer):
    """Textual's Footer builds its keys afresh whenever the active bindings change, as they
    do when a generation starts and ends. Each key watches the footer's `compact`, and
    Textual forgets a watcher only when the watched value changes (Textual issue 6666),
    which `compact` never does here: every rebuild kept the replaced keys alive, with the
    lines they had drawn: some 1,800 objects a generation, never freed, and the
    garbage collector's full passes, which come while tokens stream, walked them all."""

    async def recompose(self) -> None:
        await super().recompose()
        # Textual keeps a reactive's watchers in this attribute; a version that prunes
        # them itself leaves nothing here to do.
        watchers = getattr(self, "__watchers", {}).get("compact")
        if watchers:
            watchers[:] = [(node, callback) for node, callback in watchers if node.is_attached]
