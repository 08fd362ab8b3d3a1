"""Prompt templates shipped as data files.

`continue.txt` shapes the draft into the completion prompt (`{draft}` is replaced),
`chat_system.txt` is the chat system prompt, and `chat_fallback.jinja` is the chat
template for models whose GGUF has none. The author's edited copies, which win over
these, are the app's to read (app/config/prompt_templates.py): this package is data,
and the inference layer may read it without depending on the app.
"""

from __future__ import annotations

CONTINUE = "continue.txt"
CHAT_SYSTEM = "chat_system.txt"
CHAT_FALLBACK = "chat_fallback.jinja"
NAMES = (CONTINUE, CHAT_SYSTEM, CHAT_FALLBACK)
DRAFT = "{draft}"


def packaged_text(name: str) -> str:
    """The template `name` as shipped."""
    if name not in NAMES:
        raise KeyError(f"no prompt template named {name!r}")
    from importlib import resources  # read with the first prompt, not with the app (some 3 ms)

    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")


def render_continue(draft: str, template: str) -> str:
    """The completion prompt for a draft. A plain replace, not str.format, so braces
    in the author's text or template never raise. Editors end files with a newline the
    author did not mean as part of the prompt, so one final newline is dropped."""
    template = template.removesuffix("\n")
    return template.replace(DRAFT, draft) if DRAFT in template else template + draft
