"""Prefill versus decode: the first is compute-bound (many tokens per llama_decode), the
second memory-bound (one token per call), and the numbers show it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text


from scriptorium.app.tui.widgets.formatting import format_ms, format_rate
from scriptorium.app.tui.widgets.panel import Panel
from scriptorium.app.i18n.language import ENGLISH, Language
from scriptorium.app.i18n.marker import N_
from scriptorium.app.tui.widgets.usual_rate import UsualRate

if TYPE_CHECKING:
    from scriptorium.inference.core.events import (
        GenerationDone,
        PrefillDone,
        PrefillProgress,
        SpeculationCounts,
        TokenEvent,
    )


def rate_between(tokens: int, milliseconds: float) -> float | None:
    """Tokens per second over an interval the engine timed, with the definition the
    engine's GenerationDone uses (prefill: tokens evaluated / prefill time; decode:
    completion tokens - 1 over first-to-last-token time). Used only while a generation
    runs; GenerationDone's own figures replace these when it ends."""
    return tokens / milliseconds * 1000.0 if tokens > 0 and milliseconds > 0 else None


STOP_REASONS = {
    "eos": N_("eos"),
    "length": N_("length"),
    "stop": N_("stop"),
    "sentence": N_("sentence"),
    "paragraph": N_("paragraph"),
    "cancelled": N_("cancelled"),
    "context": N_("context"),
}
"""How the title names why a generation ended (GenerationDone.stop_reason), marked for translation."""


class SpeedPanel(Panel):
    """Time to first token, prefill and decode speed, updated as tokens arrive; a decode
    far below this model's usual rate says that the machine is busy (usual_rate.py)."""

    PANEL_NAME = "speed"
    TITLE = N_("Speed")
    LINES = 5
    COMPONENT_CLASSES = {"speed--label", "speed--value", "speed--dim", "speed--busy"}

    def __init__(self, language: Language) -> None:
        super().__init__(language)
        self.usual = UsualRate()
        self._clear()
        self._before: tuple[object, ...] | None = None

    def _figures(self) -> tuple[object, ...]:
        return (
            self.progress,
            self.prefill,
            self.first_token_ms,
            self.waited_ms,
            self.last_token,
            self.done,
            self.failed,
            self.border_title,
            self.busy_usual,
        )

    def reset(self) -> None:
        """A generation starts: the figures go, kept aside until it is known to run."""
        self._before = self._figures()
        self._clear()

    def forget(self) -> None:
        """Another model is loaded: its figures, and those kept aside, were the last one's."""
        self._before = None
        self.usual.forget()
        self._clear()

    def _clear(self) -> None:
        self.progress: PrefillProgress | None = None
        self.prefill: PrefillDone | None = None
        self.first_token_ms: float | None = None
        self.waited_ms: float | None = None
        """From the author's key to the first token on screen (the app's clock, key_timing)."""
        self.last_token: TokenEvent | None = None
        self.guessed = 0
        """Tokens so far that speculative decoding guessed and the model's sampling kept."""
        self.done: GenerationDone | None = None
        self.failed = False
        self.busy_usual: float | None = None
        """The usual decode rate a finished run fell far below: the machine was busy."""
        self.border_title = self.title
        self.refresh()

    def show_progress(self, progress: PrefillProgress) -> None:
        self.progress = progress
        self.refresh()

    def show_prefill(self, prefill: PrefillDone) -> None:
        self.prefill = prefill
        self.refresh()

    def show_token(self, event: TokenEvent) -> None:
        self.last_token = event
        self.guessed += event.drafted
        if self.first_token_ms is None:
            # The engine stamps each token with the time since the request began: the
            # first one's stamp is the time to first token.
            self.first_token_ms = event.elapsed_ms
            decoding = self.language.gettext("decoding")
            self.border_title = f"{self.title} · {decoding}"
            self.refresh()
        else:
            self.refresh_lines(3, 2)  # only the decode lines move

    def show_waited(self, waited_ms: float) -> None:
        self.waited_ms = waited_ms
        self.refresh_lines(0, 1)

    def show_not_run(self) -> None:
        """The generation never reached the model (its prompt refused, or Esc while it was
        made): nothing was measured, so the last generation's figures come back."""
        if self._before is not None:
            (
                self.progress,
                self.prefill,
                self.first_token_ms,
                self.waited_ms,
                self.last_token,
                self.done,
                self.failed,
                self.border_title,
                self.busy_usual,
            ) = self._before
            self.refresh()

    def show_failed(self) -> None:
        """No GenerationDone will come: the figures stay as the last token left them."""
        self.failed = True
        failed = self.language.gettext("failed")
        self.border_title = f"{self.title} · {failed}"
        self.refresh()

    def show_done(self, done: GenerationDone) -> None:
        self.done = done
        # Judged against the runs before it: a slow run must not lower the measure of itself.
        self.busy_usual = self.usual.collapsed(done.decode_tokens_per_s, done.completion_tokens)
        self.usual.add(done.decode_tokens_per_s, done.completion_tokens)
        self.border_title = (
            f"{self.title} · {self.language.gettext(STOP_REASONS.get(done.stop_reason, done.stop_reason))}"
        )
        self.refresh()

    def _line(self, label: str, value: str, width: int) -> Text:
        line = Text(label, style=self.style_of("speed--label"))
        line.append(value.rjust(max(width - len(label), 0)), style=self.style_of("speed--value"))
        return line

    def _detail(self, text: str) -> Text:
        return Text("  " + text, style=self.style_of("speed--dim"))

    def lines(self, width: int) -> list[Text]:
        _, number = self.language.gettext, self.language.number
        done, prefill = self.done, self.prefill
        if done is not None:
            ttft: float | None = done.ttft_ms or None  # 0: no token came before the run ended
            prefill_rate: float | None = done.prefill_tokens_per_s
            prefill_tokens, prefill_ms = (prefill.prefill_tokens if prefill else 0), done.prefill_ms
            decode_rate: float | None = done.decode_tokens_per_s
            decoded, decode_ms = done.completion_tokens, done.decode_ms
        else:
            ttft = self.first_token_ms
            prefill_tokens = prefill.prefill_tokens if prefill else 0
            prefill_ms = prefill.prefill_ms if prefill else 0.0
            prefill_rate = rate_between(prefill_tokens, prefill_ms)
            last = self.last_token
            decoded = last.index + 1 if last else 0
            decode_ms = last.elapsed_ms - self.first_token_ms if last and self.first_token_ms is not None else 0.0
            decode_rate = rate_between(decoded - 1, decode_ms)
        if self.waited_ms is not None:
            # What the author waits for: the engine's own TTFT starts once the prompt is made
            # and its process has the request (8 ms of a wait of a second, on a warm cache).
            lines = [self._line(_("TTFT from key"), format_ms(self.waited_ms, number), width)]
        else:
            lines = [self._line(_("TTFT"), format_ms(ttft, number) if ttft is not None else "–", width)]
        if prefill is None and done is None and self.progress is not None:
            progress = _("{done} / {total} tok").format(
                done=number(self.progress.done, ","), total=number(self.progress.total, ",")
            )
            lines.append(self._line(_("prefill"), progress, width))
            # Failed mid-prompt (the engine died): the count is where it stopped, not work going on.
            lines.append(self._detail(_("failed during the prompt") if self.failed else _("evaluating the prompt…")))
        else:
            lines.append(self._line(_("prefill"), format_rate(prefill_rate, number) if prefill_rate else "–", width))
            lines.append(self._detail(self._tokens_in(prefill_tokens, prefill_ms)))
        lines.append(self._line(_("decode"), format_rate(decode_rate, number) if decode_rate else "–", width))
        usual = self.busy_usual if done is not None else self.usual.collapsed(decode_rate, decoded)
        if usual is not None:
            # Whole in the side panel's 32 columns, for a model as fast as 9,999 tok/s.
            busy = _("  machine busy; usual {rate} tok/s").format(rate=number(usual, ".0f"))
            lines.append(Text(busy, style=self.style_of("speed--busy")))
        elif (speculation := done.speculation if done is not None else None) is not None:
            lines.append(self._detail(guesses_line(speculation, self.language)))
        elif done is None and self.guessed:
            guessed = _("{tokens} tok, {guessed} guessed")
            lines.append(self._detail(guessed.format(tokens=number(decoded, ","), guessed=number(self.guessed, ","))))
        else:
            lines.append(self._detail(self._tokens_in(decoded, decode_ms)))
        return lines

    def _tokens_in(self, tokens: int, ms: float) -> str:
        number = self.language.number
        said = self.language.gettext("{tokens} tok in {time}")
        return said.format(tokens=number(tokens, ","), time=format_ms(ms, number))


def guesses_line(speculation: SpeculationCounts, language: Language = ENGLISH) -> str:
    """'40/52 guessed 77% · 3.1/pass' (accepted of drafted, the rate, tokens per verifying
    pass), whole in the side panel's 32 columns; a llama-server's accepted tokens carry no
    probabilities, which the line says rather than show them as certain. Speculation that drafted
    nothing says so: a draft model that is never sure, or text that never echoes itself, is
    something the author may want to switch off."""
    _, number = language.gettext, language.number
    if not speculation.drafted:
        return _("speculating, nothing guessed")
    text = _("{accepted}/{drafted} guessed {rate}").format(
        accepted=number(speculation.accepted, ","),
        drafted=number(speculation.drafted, ","),
        rate=number(speculation.acceptance, ".0%"),
    )
    if speculation.passes:
        text += _(" · {tokens}/pass").format(tokens=number(speculation.tokens_per_pass, ".1f"))
    return text if speculation.probabilities else text + _(" · no p")
