"""The KV cache: one more token costs the same bytes every time, so use grows in a line."""

from __future__ import annotations

from rich.text import Text

from scriptorium.inference.events import KVCacheUsage

from scriptorium.app.tui.widgets.formatting import format_bytes, meter
from scriptorium.app.tui.widgets.panel import Panel


class KVPanel(Panel):
    """Tokens held / n_ctx as a meter, bytes in use / allocated, bytes per token, and how
    much of the last prompt was already in the cache."""

    PANEL_NAME = "kv"
    TITLE = "KV cache"
    LINES = 5
    COMPONENT_CLASSES = {"kv--fill", "kv--empty", "kv--dim"}

    def __init__(self) -> None:
        super().__init__()
        self.usage: KVCacheUsage | None = None
        self.loading = False
        """Whether a model is loading (no usage to show yet either way)."""
        self.reused: tuple[int, int] | None = None
        """(tokens kept from the previous request, prompt tokens) of the last prefill."""

    def show_reuse(self, reused_tokens: int, prompt_tokens: int) -> None:
        self.reused = (reused_tokens, prompt_tokens)
        self.refresh_lines(4, 1)

    def show_usage(self, usage: KVCacheUsage | None) -> None:
        same_shape = self.usage is not None and usage is not None and usage.n_ctx == self.usage.n_ctx
        self.usage = usage
        if same_shape:
            self.refresh_lines(0, 3)  # bytes per token and the allocation never change
        else:
            self.refresh()

    def lines(self, width: int) -> list[Text]:
        usage = self.usage
        dim = self.style_of("kv--dim")
        if usage is None:
            return [Text("the model is loading…" if self.loading else "no model loaded", style=dim)] + [Text()] * 4
        reuse = Text()
        if self.reused is not None:
            reused, prompt = self.reused
            reuse = Text(f"reused {reused:,} of {prompt:,} tok", style=dim)
        return [
            meter(usage.tokens, usage.n_ctx, width, self.style_of("kv--fill"), self.style_of("kv--empty")),
            Text(f"{usage.tokens:,} / {usage.n_ctx:,} tokens"),
            Text(f"{_bytes(usage.bytes_used)} of {_bytes(usage.bytes_allocated)}"),
            Text(f"{_bytes(usage.bytes_per_token)} per token", style=dim),
            reuse,
        ]


def _bytes(count: int | None) -> str:
    """A size, or 'unknown' where the backend cannot derive it exactly (a remote server)."""
    return "unknown" if count is None else format_bytes(count)
