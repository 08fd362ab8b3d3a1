"""Chat prompts in the model's own format: its GGUF template, else the fallback in prompts/."""

from __future__ import annotations

from ..core.errors import ScriptoriumError

ROLES = ("system", "user", "assistant")


def render_chat(
    messages: list[dict[str, str]], model_template: str | None, fallback_template: str | None, bos_token: str
) -> str:
    """Render `messages` and open the assistant's turn; `bos_token` is the text of the
    model's BOS token ('' when it has none)."""
    for message in messages:
        if message.get("role") not in ROLES or not isinstance(message.get("content"), str):
            raise ScriptoriumError(f"a chat message needs a role in {ROLES} and text content: {message!r}")
    if model_template is None and fallback_template is None:
        from scriptorium import prompts

        fallback_template = prompts.packaged_text(prompts.CHAT_FALLBACK)
    template = model_template or fallback_template
    from .template_process import render_template

    # In a process of its own, bounded in time and output: a template is a program, and
    # one that loops for ever must not take the app with it (template_process.py).
    return render_template(
        template, {"messages": messages, "add_generation_prompt": True, "bos_token": bos_token, "eos_token": ""}
    )
