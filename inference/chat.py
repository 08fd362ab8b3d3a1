"""Chat prompts in the model's own format: its GGUF template, else the fallback in prompts/."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import ScriptoriumError

if TYPE_CHECKING:
    from .engine import Engine

ROLES = ("system", "user", "assistant")


def render_chat(
    engine: "Engine", messages: list[dict[str, str]], model_template: str | None, fallback_template: str | None
) -> str:
    """Render `messages` and open the assistant's turn."""
    for message in messages:
        if message.get("role") not in ROLES or not isinstance(message.get("content"), str):
            raise ScriptoriumError(f"a chat message needs a role in {ROLES} and text content: {message!r}")
    if model_template is None and fallback_template is None:
        from scriptorium import prompts

        fallback_template = prompts.load(prompts.CHAT_FALLBACK)
    template = model_template or fallback_template
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)

    def raise_exception(message: str) -> None:
        raise ScriptoriumError(f"the chat template refused the conversation: {message}")

    bos = engine.token_text(engine.bos_id) if engine.bos_id >= 0 else ""
    try:
        return environment.from_string(template).render(
            messages=messages,
            add_generation_prompt=True,
            bos_token=bos,
            eos_token="",
            raise_exception=raise_exception,
        )
    except jinja2.TemplateError as error:
        raise ScriptoriumError(f"the chat template could not be rendered: {error}") from None
