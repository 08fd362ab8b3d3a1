"""Prompt templates shipped as data files; the author's edited copies win.

`continue.txt` shapes the draft into the completion prompt (`{draft}` is replaced),
`chat_system.txt` is the chat system prompt, and `chat_fallback.jinja` is the chat
template for models whose GGUF has none.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from scriptorium.inference.errors import ScriptoriumError, read_named_text

CONTINUE = "continue.txt"
CHAT_SYSTEM = "chat_system.txt"
CHAT_FALLBACK = "chat_fallback.jinja"
NAMES = (CONTINUE, CHAT_SYSTEM, CHAT_FALLBACK)
DRAFT = "{draft}"
MAX_TEMPLATE_CHARS = 100_000
"""A template is a frame for the author's text (a chat template a few pages at most): one past
this, a file pasted in by mistake, would take the whole context and leave the draft no room,
said far from its cause."""


def packaged_text(name: str) -> str:
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


class PromptError(ScriptoriumError):
    """The author's copy of a template cannot be read as text; one line naming it."""


def load(name: str, override_dir: Path | None = None) -> str:
    """The template `name`, from `override_dir` when the author keeps a copy there.
    Raises PromptError for a copy that is there but unreadable or not UTF-8: using the
    packaged one instead would quietly ignore the author's edits."""
    if name not in NAMES:
        raise KeyError(f"no prompt template named {name!r}")
    if override_dir is not None:
        candidate = override_dir / name
        if candidate.exists() or candidate.is_symlink():  # a dangling link is the author's copy, gone
            return _checked(name, read_named_text(candidate, "prompt template", PromptError), candidate)
    return packaged_text(name)


def _checked(name: str, template: str, path: Path) -> str:
    """The author's template, or PromptError saying what about it cannot work."""
    if len(template) > MAX_TEMPLATE_CHARS:
        raise PromptError(
            f"prompt template {path} is {len(template):,} characters long; a template holds at most "
            f"{MAX_TEMPLATE_CHARS:,} (the draft, memory and note are not part of it)"
        )
    if name == CONTINUE and (count := template.count(DRAFT)) > 1:
        raise PromptError(
            f"prompt template {path} holds {DRAFT} {count:,} times; it takes it once, where the "
            "draft goes (or not at all: the draft then follows the template)"
        )
    return template


def render_continue(draft: str, template: str) -> str:
    """The completion prompt for a draft. A plain replace, not str.format, so braces
    in the author's text or template never raise. Editors end files with a newline the
    author did not mean as part of the prompt, so one final newline is dropped."""
    template = template.removesuffix("\n")
    return template.replace(DRAFT, draft) if DRAFT in template else template + draft
