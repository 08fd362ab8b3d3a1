"""The KV cache: one more token costs the same bytes every time, so use grows in a line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from scriptorium.inference.window.window import Window

from scriptorium.app.tui.widgets.formatting import clip, fitting, format_bytes, meter
from scriptorium.app.tui.widgets.panel import Panel
from scriptorium.app.i18n.language import ENGLISH, Language
from scriptorium.app.i18n.marker import N_

if TYPE_CHECKING:
    from scriptorium.inference.core.events import KVCacheUsage


class KVPanel(Panel):
    """Tokens held / n_ctx as a meter, bytes in use / allocated, bytes per token, how
    much of the last prompt was already in the cache, and what the last draft prompt held:
    memory / note / lore / draft / free, in tokens."""

    PANEL_NAME = "kv"
    TITLE = N_("KV cache")
    LINES = 6
    COMPONENT_CLASSES = {"kv--fill", "kv--empty", "kv--dim"}

    def __init__(self, language: Language) -> None:
        super().__init__(language)
        self.usage: KVCacheUsage | None = None
        self.loading = False
        """Whether a model is loading (no usage to show yet either way)."""
        self.last_known = False
        """Whether the figures are the last known: the llama-server holding them is not answering."""
        self.reused: tuple[int, int, str] | None = None
        """(tokens kept from the previous request, prompt tokens, how) of the last prefill."""
        self.window: Window | None = None
        """What the last draft prompt held: memory / note / draft tokens."""

    def show_reuse(self, reused_tokens: int, prompt_tokens: int, how: str = "prefix") -> None:
        self.reused = (reused_tokens, prompt_tokens, how)
        self.refresh_lines(4, 1)

    def show_window(self, window: Window | None) -> None:
        """Split the context into memory / note / draft / room left (a chat prompt has no split)."""
        self.window = window
        self.refresh_lines(5, 1)

    def show_model(self, usage: KVCacheUsage | None) -> None:
        """A model was loaded (`usage`, its empty cache) or let go (None): what the last one's
        requests reused and held is not this one's."""
        self.forget_request()
        self.show_usage(usage)

    def forget_request(self) -> None:
        """What the last request reused and held is not what the panel stands for now (the
        other mode's, or a generation's once scoring filled the cache)."""
        self.reused = self.window = None
        self.refresh()

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
        language = self.language
        _, number = language.gettext, language.number
        if usage is None:
            idle = _("the model is loading…") if self.loading else _("no model loaded")
            return [Text(idle, style=dim)] + [Text()] * (self.LINES - 1)
        reuse = Text()
        if self.last_known:  # a server restarted since holds none of them
            reuse = Text(clip(_("last known figures"), width), style=dim)
        elif usage.tokens is None:
            # A llama-server with several slots: another client's figure is not this app's.
            reuse = Text(clip(_("slot unknown until a generation"), width), style=dim)
        elif self.reused is not None:
            reused, prompt, how = self.reused
            moved = _(" (shifted)") if how == "shifted" else ""
            counts = {"reused": number(reused, ","), "prompt": number(prompt, ",")}
            reuse = Text(
                fitting(
                    width,
                    _("reused {reused} of {prompt} tok").format(**counts) + moved,
                    _("reused {reused}/{prompt}").format(**counts) + moved,
                ),
                style=dim,
            )
        window = self.window
        # The prompt as llama.cpp evaluated it: a cache moved with the window keeps the first
        # words of the window as it spelled them (" Poi" for "Poi"), a token more or less.
        evaluated = None if self.reused is None else self.reused[1]
        split = Text() if window is None else Text(_window_split(window, usage.n_ctx, width, evaluated, language))
        tokens = _("{tokens} / {n_ctx} tokens").format(
            tokens=_count(usage.tokens, language), n_ctx=number(usage.n_ctx, ",")
        )
        used = _("{used} of {allocated}").format(
            used=_bytes(usage.bytes_used, language), allocated=_bytes(usage.bytes_allocated, language)
        )
        return [
            meter(usage.tokens or 0, usage.n_ctx, width, self.style_of("kv--fill"), self.style_of("kv--empty")),
            Text(tokens),
            Text(used),
            Text(_per_token(usage, width, language), style=dim),
            reuse,
            split,
        ]


def _window_split(
    window: Window, n_ctx: int, width: int, evaluated: int | None = None, language: Language = ENGLISH
) -> str:
    """'mem 13·note 19·lore 22·draft 64·free 160', made to fit the panel: the room left is the
    number a small context is watched for, so a memory or note of 0 goes first, then the
    spaces, then the draft's count (the tokens line above holds it, with memory and note),
    before anything is cut. `evaluated`: the prompt's tokens as llama.cpp evaluated them
    (None: as counted), which the parts add up to."""
    prompt = window.prompt_tokens if evaluated is None else evaluated
    pinned_tokens = window.memory_tokens + window.note_tokens + window.lore_tokens
    _, number = language.gettext, language.number
    lore = [(N_("lore"), window.lore_tokens)] if window.lore else []  # a draft without a lorebook: as before
    parts = [
        (N_("mem"), window.memory_tokens),
        (N_("note"), window.note_tokens),
        *lore,
        (N_("draft"), max(0, prompt - pinned_tokens)),
        (N_("free"), max(0, n_ctx - prompt)),
    ]
    shown = [(label, count) for label, count in parts if count or label in ("draft", "free")]
    pinned = [(label, count) for label, count in shown if label != "draft"]
    return fitting(
        width,
        *(
            "·".join(f"{_(label)}{space}{number(count, ',')}" for label, count in labels)
            for labels, space in ((parts, " "), (shown, " "), (shown, ""), (pinned, " "), (pinned, ""))
        ),
    )


def _per_token(usage: KVCacheUsage, width: int, language: Language) -> str:
    """Bytes one more token costs; on a sliding-window model also what it costs once the
    window layers' cache is full (else "18 KiB per token" and "27 MiB for 4,096" disagree)."""
    _ = language.gettext
    if usage.window_tokens is not None and usage.bytes_per_token_past_window is not None:
        each, past = _bytes(usage.bytes_per_token, language), _bytes(usage.bytes_per_token_past_window, language)
        window = language.number(usage.window_tokens, ",")
        # "18.0 KiB/tok, 3.0 KiB past 1,024" is 33 cells, a stacked panel 30 or 32: the
        # second unit goes when it is the first's, before the edge cuts the window's size.
        past_number, _space, past_unit = past.partition(" ")
        same_unit = each.partition(" ")[2] == past_unit
        said = _("{each}/tok, {past} past {window}")
        return fitting(
            width,
            said.format(each=each, past=past, window=window),
            said.format(each=each, past=past_number if same_unit else past, window=window),
        )
    return clip(_("{size} per token").format(size=_bytes(usage.bytes_per_token, language)), width)


def _count(tokens: int | None, language: Language) -> str:
    return language.gettext("unknown") if tokens is None else language.number(tokens, ",")


def _bytes(count: int | None, language: Language) -> str:
    """A size, or 'unknown' where the backend cannot derive it exactly (a remote server)."""
    return language.gettext("unknown") if count is None else format_bytes(count, language.number)
