"""Showing and hiding a widget so that the terminal always shows the change.

Textual's compositor finds what to repaint after a layout by comparing the new
arrangement with the last one it kept. A geometry query made between a change and that
layout (any widget's `region`, after a scroll) arranges the screen anew and keeps that
arrangement, and the change itself is then never painted (Textual 8.2). A suggestion
hidden as it was accepted stayed on the terminal, over the rows of the draft it gave way
to, until something else repainted them. The parent's whole area, repainted as the
widget comes or goes, cannot be missed: one repaint of one area, once per change.
"""

from __future__ import annotations

from textual.widget import Widget


def set_shown(widget: Widget, shown: bool) -> None:
    """Show or hide `widget`, repainting the area it shares with its siblings."""
    if widget.display == shown:
        return
    widget.display = shown
    if isinstance(parent := widget.parent, Widget):
        parent.refresh()
