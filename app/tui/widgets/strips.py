"""Rich Text to Textual cells, for widgets that draw line by line while a model streams.

While a model streams, every cell the interface draws is CPU time taken from llama.cpp's
threads, which on a small machine share the cores with it: the decode loses what the
interface draws. Text.render rebuilds its style stack on every call; the lines drawn
here are runs of appended, non-overlapping spans, which need none of that.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip


def line_strip(line: Text, width: int, base: Style, console: Console) -> Strip:
    """One line of Rich Text as `width` cells over `base`, as Text.render draws it: the
    text's own style under each span's (overlapping spans fall back to Rich). Text.render
    leaves a line without spans unstyled (its style is applied only when it is wrapped);
    here a line's own style always applies. One Strip is made (each carries seven caches
    of its own), where cropping, padding and styling it would make four."""
    own = base + _style(line.style, console)
    plain = line.plain
    segments: list[Segment] = []
    position = 0
    # By place only: two spans over the same characters (Rich's tab expansion makes them)
    # would compare their styles, which do not order.
    for span in sorted(line.spans, key=lambda span: (span.start, span.end)):
        if span.start < position:  # overlapping spans: Rich's own stacking
            return Strip(line.render(console)).crop_extend(0, width, base).apply_style(base)
        if span.start > position:
            segments.append(Segment(plain[position : span.start], own))
        if span.end > span.start:
            segments.append(Segment(plain[span.start : span.end], own + _style(span.style, console)))
        position = span.end
    if position < len(plain):
        segments.append(Segment(plain[position:], own))
    cells = sum(cell_len(segment.text) for segment in segments)
    if cells > width:
        return Strip(segments, cells).crop(0, width)
    if cells < width:
        segments.append(Segment(" " * (width - cells), base))
    return Strip(segments, width)


def _style(style: str | Style, console: Console) -> Style:
    return style if isinstance(style, Style) else console.get_style(style, default=Style.null())
