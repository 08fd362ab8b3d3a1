"""The model's top candidates at the current step, as llama.cpp's raw probabilities."""

from __future__ import annotations

from textwrap import wrap
from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text

from scriptorium.inference.core.probability import has_probability
from scriptorium.inference.core.text import piece_text

from scriptorium.app.tui.widgets.formatting import (
    bar,
    border_text_room,
    clip,
    fitting,
    leading_parts,
    pad,
    percent,
    visible_token,
)
from scriptorium.app.tui.widgets.panel import Panel
from scriptorium.app.i18n.language import ENGLISH, Language
from scriptorium.app.i18n.numbers import NumberFormat, english
from scriptorium.app.i18n.marker import N_
from scriptorium.app.tui.widgets.token_text import GUESSED_LABEL, UNKNOWN

if TYPE_CHECKING:
    from scriptorium.inference.core.events import Candidate, TokenEvent

CHOSEN, BANNED, PLAIN = "▶", "⊘", " "
# The unknown token is named (token_text.UNKNOWN), dimmed, never drawn as the characters it
# stood for: an author's "?»", read as one <unk>, was labelled "?»" as if the model had that piece.
# Said under the box while a generation streams: a logit bias can make the sampler pick a
# token the bars rank lower (or one outside them), and nothing else on screen says why.
RAW_NOTE = N_("p before bias and sampling")
CHAIN_NOTE = N_("raw p · → after the chain")
"""With what the chain did (an in-process generation): each row also says what became of
its candidate: its probability after the chain (→), the sampler that took it out (✗), or
the one that pushed its logit, by how much."""
HEALED_NOTE = N_("healed {rest}: {count} allowed, {mass} of raw p · raw p · → over the allowed")
"""A step token healing held (inference/local/healing.py): the rows are the allowed candidates,
each with the model's raw probability and, after →, that probability renormalised over
the allowed tokens (what the chain drew from)."""
NO_P_SAID = N_("The server gives no probabilities for the tokens it writes while speculating, guessed or not.")
"""Where the candidates would be, for a speculating llama-server's token from a verifying pass
(NO_PROBABILITY): the guesses it accepted and the token it sampled after them. Its source sets
100% for them and sends no candidates; the panel never shows a number."""
DID_WIDTH = 7
SHORT_SAMPLER = {
    "logit_bias": "bias",
    "penalties": "pen",
    "dry": "dry",
    "top_n_sigma": "σ",
    "top_k": "top-k",
    "typ_p": "typ",
    "top_p": "top-p",
    "min_p": "min-p",
    "xtc": "xtc",
    "temperature": "T0",
    "greedy": "T0",
    "mirostat": "miro",
}


def did_text(
    candidate_id: int,
    kept: dict[int, float],
    removed: dict[int, str],
    pushed: dict[int, tuple[str, float]],
    number: NumberFormat = english,
) -> str:
    """What the chain did to one candidate, in DID_WIDTH cells: '✗xtc', 'dry-1.4', '→ 61%'."""
    if candidate_id in removed:
        return f"✗{SHORT_SAMPLER.get(removed[candidate_id], '?')}"
    if candidate_id in pushed:
        stage, change = pushed[candidate_id]
        return f"{SHORT_SAMPLER.get(stage, '?')}{number(change, '+.1f')}"
    if candidate_id in kept:
        return f"→{number(kept[candidate_id] * 100, '4.0f')}%"
    return ""


def healed_note(event: TokenEvent, language: Language = ENGLISH) -> str:
    healing = event.healing
    assert healing is not None
    number = language.number
    return language.gettext(HEALED_NOTE).format(
        rest=repr(healing.rest), count=number(healing.allowed_count, ","), mass=percent(healing.mass, number)
    )


class ProbabilitiesPanel(Panel):
    """Top-N candidates as bars (softmax of the raw logits, before bias and sampling);
    the sampled token is marked, banned tokens are drawn as banned."""

    PANEL_NAME = "probabilities"
    TITLE = N_("Probabilities")
    COMPONENT_CLASSES = {
        "probabilities--chosen",
        "probabilities--bar",
        "probabilities--banned",
        "probabilities--dim",
        "probabilities--unknown",
    }

    def __init__(self, language: Language, top_n: int) -> None:
        super().__init__(language)
        self.top_n = top_n
        self.event: TokenEvent | None = None
        self.steps: tuple[TokenEvent, ...] = ()
        """The tokens of a character spelled in several (bytes), when `event` is that character."""
        self.idle = (language.gettext("no model loaded"),)
        """What shows before the first token: set from the model's state (set_idle)."""
        self._generating = False
        self._note = ""
        """How the token shown was chosen, whole; `border_subtitle` shows what fits of it."""
        self.unknown_ids: frozenset[int] = frozenset()
        """The model's <unk> token(s) (ModelFacts.unknown_token_ids), set as a model loads."""

    @property
    def line_count(self) -> int:
        return max(self.top_n, 1) + 1

    def show_token(self, event: TokenEvent, note: str = "", steps: tuple[TokenEvent, ...] = ()) -> None:
        """Draw `event`; `note` (under the box) says how an inspected token was chosen;
        without one, that the bars are raw probabilities. With `steps`, `event` is a
        character spelled in several tokens: each one's candidates are drawn in turn."""
        self.event, self.steps = event, steps
        _ = self.language.gettext
        numbers = (
            _("tokens {first}–{last}").format(first=steps[0].index + 1, last=steps[-1].index + 1)
            if steps
            else _("token {index}").format(index=event.index + 1)
        )
        # Guessed by speculative decoding and accepted: said here, live and under F4 (its numbers
        # are still its own position's, as any token's).
        guessed = f" · {_(GUESSED_LABEL)}" if event.drafted else ""
        self.border_title = f"{self.title} · {numbers}{guessed}"
        self._note = note or (
            healed_note(event, self.language) if event.healing else _(CHAIN_NOTE) if event.kept else _(RAW_NOTE)
        )
        self._fit_note()
        self.refresh()

    def _fit_note(self) -> None:
        # Whole settings only, as many as the box's edge leaves room for: the seed goes
        # before a top-p is cut to "0.…". What does not fit at all, Textual cuts.
        self.border_subtitle = (
            leading_parts(self._note.split(" · "), border_text_room(self.outer_size.width), more=" · …") or self._note
        )

    def on_resize(self) -> None:
        if self._note:
            self._fit_note()

    def set_idle(self, *lines: str) -> None:
        self.idle = lines
        if self.event is None:
            self.refresh()

    def stream_ended(self) -> None:
        """The generation ended (or failed, or was dropped), perhaps before any token."""
        self._generating = False
        if self.event is None:
            self.refresh()

    def reset(self) -> None:
        """A generation starts: nothing to show until its first token."""
        self._generating = True
        self.event, self.steps = None, ()
        self.border_title = self.title
        self.border_subtitle = self._note = ""
        self.refresh()

    def lines(self, width: int) -> list[Text]:
        event = self.event
        dim = self.style_of("probabilities--dim")
        if event is None:
            idle = (self.language.gettext("waiting for the first token"),) if self._generating else self.idle
            shown = [Text(clip(line, width), style=dim) for line in idle]
            return shown + [Text()] * (self.line_count - len(shown))
        label_width = min(14, max(6, width // 3))
        bar_width = max(width - label_width - 10, 1)
        if self.steps:
            return self._character_lines(event, width, label_width, bar_width)
        if not has_probability(event.p):
            return self._unscored_lines(event, width)
        listed_top = event.healing.allowed if event.healing else event.top
        # Fewer rows than candidates when the panel is squeezed (small terminals).
        rows = min(len(listed_top), max(self.content_size.height - 1, 1))
        did = self._did(event)
        if did is not None:
            bar_width = max(bar_width - DID_WIDTH, 1)
        lines = [self._row(candidate, event.id, label_width, bar_width, did) for candidate in listed_top[:rows]]
        lines += [Text()] * (rows - len(lines))
        label = clip(self._label(event.id, self._chosen_piece(event)), label_width)
        listed = any(candidate.id == event.id for candidate in listed_top)
        _ = self.language.gettext
        chosen, p, n = (
            self._label_style(event.id, self.style_of("probabilities--chosen")),
            percent(event.p, self.language.number),
            len(listed_top),
        )
        # Unlisted (an author's word the model did not expect, often): why the bars miss it
        # matters more than the word 'chosen' and the spacing, which go first.
        not_listed = "" if listed else _("  (not in top {n})").format(n=n)
        said_chosen = _("chosen")
        summaries = [Text.assemble(f"{CHOSEN} {said_chosen} ", (label, chosen), f"  {p}", not_listed, style=dim)]
        if not listed:
            summaries += [
                Text.assemble(f"{CHOSEN} ", (label, chosen), said.format(p=p, n=n), style=dim)
                for said in (_(" {p} (not in top {n})"), _(" {p} (not top {n})"))
            ]
        return lines + [fitting(width, *summaries)]

    def _unscored_lines(self, event: TokenEvent, width: int) -> list[Text]:
        """A token the backend gave no probabilities: said so where the bars would be, and
        under them the token with "no p", never a number."""
        _ = self.language.gettext
        dim = self.style_of("probabilities--dim")
        rows = max(self.content_size.height - 1, 1)
        lines = [Text(line, style=dim) for line in wrap(_(NO_P_SAID), max(width, 1))][:rows]
        lines += [Text()] * (rows - len(lines))
        label = clip(self._label(event.id, self._chosen_piece(event)), max(width // 2, 1))
        chosen, said_chosen = self._label_style(event.id, self.style_of("probabilities--chosen")), _("chosen")
        return lines + [
            fitting(
                width,
                Text.assemble(f"{CHOSEN} {said_chosen} ", (label, chosen), "  " + _("no p from the server"), style=dim),
                Text.assemble(f"{CHOSEN} ", (label, chosen), "  " + _("no p"), style=dim),
            )
        ]

    def _character_lines(self, event: TokenEvent, width: int, label_width: int, bar_width: int) -> list[Text]:
        """A character spelled in several tokens: each token's step (which of them, its
        own probability, then its top candidates, as many as the rows allow each), and the
        character's chance, the product of theirs."""
        _, number_format = self.language.gettext, self.language.number
        dim, chosen = self.style_of("probabilities--dim"), self.style_of("probabilities--chosen")
        steps, rows = self.steps, max(self.content_size.height - 1, 1)
        each = max(rows // len(steps), 1)
        lines: list[Text] = []
        for number, step in enumerate(steps, 1):
            lines.append(
                fitting(
                    width,
                    Text.assemble(
                        _("{number}/{count} token {index}: ").format(
                            number=number, count=len(steps), index=step.index + 1
                        )
                        + f"{CHOSEN} ",
                        (visible_token(step.text), chosen),
                        f" {percent(step.p, number_format)}",
                        style=dim,
                    ),
                )
            )
            lines += [self._row(candidate, step.id, label_width, bar_width) for candidate in step.top[: each - 1]]
        lines = lines[:rows]  # a squeezed panel (small terminal) still ends with the character's own line
        label, p, said_chosen = visible_token(event.text), percent(event.p, number_format), _("chosen")
        product = " × ".join(percent(step.p, number_format) for step in steps)
        return lines + [
            fitting(
                width,
                Text.assemble(f"{CHOSEN} {said_chosen} ", (label, chosen), f"  {p} = {product}", style=dim),
                Text.assemble(
                    f"{CHOSEN} ", (label, chosen), _(" {p} ({count} tokens)").format(p=p, count=len(steps)), style=dim
                ),
            )
        ]

    @staticmethod
    def _chosen_piece(event: TokenEvent) -> str:
        """The chosen token's own piece, as the candidate list shows it (or as its bytes
        spell it: a byte token's text is '' until its character is whole)."""
        for candidate in event.healing.allowed if event.healing else event.top:
            if candidate.id == event.id:
                return candidate.text
        return piece_text(event.piece) if event.piece else event.text

    def _label(self, token_id: int, text: str) -> str:
        return UNKNOWN if token_id in self.unknown_ids else visible_token(text)

    def _label_style(self, token_id: int, style: Style) -> Style:
        return style + self.style_of("probabilities--unknown") if token_id in self.unknown_ids else style

    @staticmethod
    def _did(event: TokenEvent) -> tuple[dict[int, float], dict[int, str], dict[int, tuple[str, float]]] | None:
        """What the chain did to the candidates, looked up by id; None where unknown. At a
        healed step, each allowed candidate's raw probability renormalised over the allowed set."""
        if event.healing is not None and event.healing.mass > 0:
            mass = event.healing.mass
            return {c.id: c.p / mass for c in event.healing.allowed}, {}, {}
        if not event.kept:
            return None
        # A token pushed by two samplers (the penalties, then DRY) shows their sum, named by the last.
        pushed: dict[int, tuple[str, float]] = {}
        for token, stage, change in event.pushed:
            pushed[token] = (stage, pushed.get(token, ("", 0.0))[1] + change)
        return dict(event.kept), dict(event.removed), pushed

    def _row(
        self,
        candidate: Candidate,
        chosen_id: int,
        label_width: int,
        bar_width: int,
        did: tuple[dict[int, float], dict[int, str], dict[int, tuple[str, float]]] | None = None,
    ) -> Text:
        is_chosen = candidate.id == chosen_id
        marker = CHOSEN if is_chosen else BANNED if candidate.banned else PLAIN
        label_style = (
            self.style_of("probabilities--chosen")
            if is_chosen
            else self.style_of("probabilities--banned")
            if candidate.banned
            else Style()
        )
        row = Text(f"{marker} ", style=label_style)
        row.append(
            pad(clip(self._label(candidate.id, candidate.text), label_width), label_width),
            style=self._label_style(candidate.id, label_style),
        )
        row.append(" ")
        bar_style = self.style_of("probabilities--banned" if candidate.banned else "probabilities--bar")
        row.append(bar(candidate.p, bar_width), style=bar_style)
        row.append(f"{self.language.number(candidate.p * 100, '6.1f')}%", style=label_style)
        if did is not None:
            row.append(
                did_text(candidate.id, *did, self.language.number).rjust(DID_WIDTH)[:DID_WIDTH],
                style=self.style_of("probabilities--dim") if candidate.id not in did[0] else label_style,
            )
        return row
