"""The prompt templates in use: the author's edited copy of each (in the prompts folder of
the config directory) wins over the one shipped in `scriptorium.prompts`."""

from __future__ import annotations

from pathlib import Path

from scriptorium import prompts
from scriptorium.inference.core.errors import ScriptoriumError, read_named_text

MAX_TEMPLATE_CHARS = 100_000
"""A template is a frame for the author's text (a chat template a few pages at most): one past
this, a file pasted in by mistake, would take the whole context and leave the draft no room,
said far from its cause."""


class PromptError(ScriptoriumError):
    """The author's copy of a template cannot be read as text; one line naming it."""


def load(name: str, override_dir: Path | None = None) -> str:
    """The template `name`, from `override_dir` when the author keeps a copy there.
    Raises PromptError for a copy that is there but unreadable or not UTF-8: using the
    packaged one instead would quietly ignore the author's edits."""
    if name not in prompts.NAMES:
        raise KeyError(f"no prompt template named {name!r}")
    if override_dir is not None:
        candidate = override_dir / name
        if candidate.exists() or candidate.is_symlink():  # a dangling link is the author's copy, gone
            return _checked(name, read_named_text(candidate, "prompt template", PromptError), candidate)
    return prompts.packaged_text(name)


def _checked(name: str, template: str, path: Path) -> str:
    """The author's template, or PromptError saying what about it cannot work."""
    if len(template) > MAX_TEMPLATE_CHARS:
        raise PromptError(
            f"prompt template {path} is {len(template):,} characters long; a template holds at most "
            f"{MAX_TEMPLATE_CHARS:,} (the draft, memory and note are not part of it)"
        )
    if name == prompts.CONTINUE and (count := template.count(prompts.DRAFT)) > 1:
        raise PromptError(
            f"prompt template {path} holds {prompts.DRAFT} {count:,} times; it takes it once, where the "
            "draft goes (or not at all: the draft then follows the template)"
        )
    return template
