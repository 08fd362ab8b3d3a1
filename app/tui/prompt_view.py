"""What the context viewer (screens/context_screen.py) says of a prompt: its parts in order
with their tokens, and where the window and the note were cut into the draft.

Read off the Window the generation itself uses (inference/window/window.py builds it, its `parts`
say where each stretch is): nothing here re-derives the prompt. Plain data, no widgets."""

from __future__ import annotations

from dataclasses import dataclass

from scriptorium.inference.window.lore import lore_summary
from scriptorium.inference.window.window import Window

from scriptorium.app.tui.widgets.suggestion_view import line_words

PART_NAMES = {
    "memory": "memory",
    "lore": "lore",
    "template": "the template's words",
    "draft": "the draft",
    "note": "author's note",
    "after": "the text after the cursor (fill in the middle)",
}


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


def draft_view(title: str, window: Window, n_ctx: int, dropped_tokens: int | None) -> PromptView:
    """`dropped_tokens`: the draft's tokens before the window (None: not counted)."""
    counts = [f"memory {window.memory_tokens:,} tok"] if window.memory_tokens else []
    if window.lore_tokens:
        counts.append(f"lore {window.lore_tokens:,} tok")
    if window.note_tokens:
        counts.append(f"author's note {window.note_tokens:,} tok")
    counts.append(f"the draft {window.draft_tokens:,} tok (with the template's words and BOS)")
    counts.append(
        f"prompt {window.prompt_tokens:,} tok of the {window.budget:,} it may use "
        f"(the context's {n_ctx:,} less max tokens)"
    )
    return PromptView(title, window.prompt, window.parts, tuple(counts), tuple(_cuts(window, dropped_tokens)))


def _words_at(window: Window, span: int) -> str:
    """The first words of the draft's `span`-th stretch in the prompt, as a writer names a place."""
    in_prompt, _, length = window.draft_spans[span]
    return line_words(window.prompt[in_prompt : in_prompt + min(length, 80)])


def _cuts(window: Window, dropped_tokens: int | None) -> list[str]:
    cuts = []
    if window.start == 0:
        cuts.append("The window starts at the draft's beginning: the model sees all of it.")
    else:
        dropped = f", {dropped_tokens:,} tokens," if dropped_tokens is not None else ""
        cuts.append(
            f"The window starts at {_words_at(window, 0)}: the {window.start:,} characters before it{dropped} "
            "are left out."
        )
    if window.note_at is not None and len(window.draft_spans) > 1:
        cuts.append(f"The author's note goes before {_words_at(window, 1)}.")
    elif window.note_at is not None:
        cuts.append("The author's note goes after the window's last paragraph, closing it.")
    if window.fim_suffix_chars:
        cuts.append(
            f"Fill in the middle: the model also sees the {window.fim_suffix_chars:,} characters after the cursor, "
            "to the end of their paragraph, and writes what goes between."
        )
    if window.spaces_left_out:
        cuts.append(f"The {window.spaces_left_out} spaces ending the text are left out (the model writes its own).")
    if window.lore:
        cuts.append(lore_summary(window.lore) + ".")
    return cuts


def chat_view(title: str, prompt: str, prompt_tokens: int, n_ctx: int) -> PromptView:
    """A chat prompt: the model's template over the turns kept, one part."""
    counts = (f"prompt {prompt_tokens:,} tok of the context's {n_ctx:,}",)
    cuts = ("The chat's turns in the model's own template; the oldest leave first when they do not fit.",)
    return PromptView(title, prompt, (("template", 0, len(prompt)),), counts, cuts)
