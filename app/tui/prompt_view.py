"""What the context viewer (screens/context_screen.py) says of a prompt: its parts in order
with their tokens, and where the window and the note were cut into the draft.

Read off the Window the generation itself uses (inference/window/window.py builds it, its `parts`
say where each stretch is): nothing here re-derives the prompt. Plain data, no widgets."""

from __future__ import annotations

from dataclasses import dataclass

from scriptorium.inference.window.lore import lore_summary
from scriptorium.inference.window.window import Window

from scriptorium.app.i18n.language import ENGLISH, Language
from scriptorium.app.i18n.marker import N_
from scriptorium.app.tui.widgets.suggestion_view import line_words

PART_NAMES = {
    "memory": N_("memory"),
    "lore": N_("lore"),
    "template": N_("the template's words"),
    "draft": N_("the draft"),
    "note": N_("author's note"),
    "after": N_("the text after the cursor (fill in the middle)"),
}
"""In English, marked: the context viewer translates them where it shows them."""


@dataclass(frozen=True, slots=True)
class PromptView:
    title: str
    prompt: str
    """The prompt exactly as the engine is given it (it adds a BOS token where the model has one)."""
    parts: tuple[tuple[str, int, int], ...]
    """(what, start, end) in `prompt`: Window.parts, or the whole of a chat prompt."""
    counts: tuple[str, ...]
    """One line per part with its tokens, then the total against the room."""
    cuts: tuple[str, ...]
    """Where the window starts and the note goes, in the draft's words."""


def draft_view(
    title: str, window: Window, n_ctx: int, dropped_tokens: int | None, language: Language = ENGLISH
) -> PromptView:
    """`dropped_tokens`: the draft's tokens before the window (None: not counted)."""
    _, number = language.gettext, language.number
    counts = [_("memory {tokens} tok").format(tokens=number(window.memory_tokens, ","))] if window.memory_tokens else []
    if window.lore_tokens:
        counts.append(_("lore {tokens} tok").format(tokens=number(window.lore_tokens, ",")))
    if window.note_tokens:
        counts.append(_("author's note {tokens} tok").format(tokens=number(window.note_tokens, ",")))
    counts.append(
        _("the draft {tokens} tok (with the template's words and BOS)").format(tokens=number(window.draft_tokens, ","))
    )
    counts.append(
        _("prompt {tokens} tok of the {budget} it may use (the context's {n_ctx} less max tokens)").format(
            tokens=number(window.prompt_tokens, ","), budget=number(window.budget, ","), n_ctx=number(n_ctx, ",")
        )
    )
    cuts = _cuts(window, dropped_tokens, language)
    return PromptView(title, window.prompt, window.parts, tuple(counts), tuple(cuts))


def _words_at(window: Window, span: int) -> str:
    """The first words of the draft's `span`-th stretch in the prompt, as a writer names a place."""
    in_prompt, _, length = window.draft_spans[span]
    return line_words(window.prompt[in_prompt : in_prompt + min(length, 80)])


def _cuts(window: Window, dropped_tokens: int | None, language: Language) -> list[str]:
    _, number = language.gettext, language.number
    cuts = []
    if window.start == 0:
        cuts.append(_("The window starts at the draft's beginning: the model sees all of it."))
    elif dropped_tokens is not None:
        cuts.append(
            _(
                "The window starts at {words}: the {characters} characters before it, {tokens} tokens, are left out."
            ).format(
                words=_words_at(window, 0),
                characters=number(window.start, ","),
                tokens=number(dropped_tokens, ","),
            )
        )
    else:
        cuts.append(
            _("The window starts at {words}: the {characters} characters before it are left out.").format(
                words=_words_at(window, 0), characters=number(window.start, ",")
            )
        )
    if window.note_at is not None and len(window.draft_spans) > 1:
        cuts.append(_("The author's note goes before {words}.").format(words=_words_at(window, 1)))
    elif window.note_at is not None:
        cuts.append(_("The author's note goes after the window's last paragraph, closing it."))
    if window.fim_suffix_chars:
        cuts.append(
            _(
                "Fill in the middle: the model also sees the {characters} characters after the cursor, "
                "to the end of their paragraph, and writes what goes between."
            ).format(characters=number(window.fim_suffix_chars, ","))
        )
    if window.spaces_left_out:
        cuts.append(
            _("The {count} spaces ending the text are left out (the model writes its own).").format(
                count=number(window.spaces_left_out, "")
            )
        )
    if window.lore:
        cuts.append(lore_summary(window.lore, _, number) + ".")
    return cuts


def chat_view(title: str, prompt: str, prompt_tokens: int, n_ctx: int, language: Language = ENGLISH) -> PromptView:
    """A chat prompt: the model's template over the turns kept, one part."""
    _, number = language.gettext, language.number
    counts = (
        _("prompt {tokens} tok of the context's {n_ctx}").format(
            tokens=number(prompt_tokens, ","), n_ctx=number(n_ctx, ",")
        ),
    )
    cuts = (_("The chat's turns in the model's own template; the oldest leave first when they do not fit."),)
    return PromptView(title, prompt, (("template", 0, len(prompt)),), counts, cuts)
