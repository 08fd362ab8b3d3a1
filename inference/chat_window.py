"""A chat fitted to the context: the system prompt (with the memory) stays, the oldest
turns leave first. Counting is the caller's `count`, as for the draft window (window.py).

Pure: no llama.cpp, no Textual.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .window import Count, WindowError


@dataclass(frozen=True, slots=True)
class ChatWindow:
    messages: list[dict[str, str]]
    """The conversation as sent: system prompt (with memory) and the most recent turns."""
    prompt: str
    prompt_tokens: int
    dropped_turns: int


def with_memory(messages: list[dict[str, str]], memory: str) -> list[dict[str, str]]:
    """The memory joins the system prompt (a system message of its own when there is none)."""
    memory = memory.strip()
    if not memory:
        return list(messages)
    if messages and messages[0].get("role") == "system":
        first = dict(messages[0], content=messages[0]["content"].rstrip() + "\n\n" + memory)
        return [first, *messages[1:]]
    return [{"role": "system", "content": memory}, *messages]


def fit_chat(messages: list[dict[str, str]], *, budget: int, count: Count,
             render: Callable[[list[dict[str, str]]], str], memory: str = "") -> ChatWindow:
    """Drop the oldest turns until the rendered conversation fits `budget`; system
    messages and the memory stay, and so does the last turn (WindowError if even that
    does not fit)."""
    messages = with_memory(messages, memory)
    system = [m for m in messages if m.get("role") == "system"]
    turns = [m for m in messages if m.get("role") != "system"]
    dropped = 0
    while True:
        kept = system + turns[dropped:]
        prompt = render(kept)
        tokens = count(prompt)
        if tokens <= budget:
            return ChatWindow(kept, prompt, tokens, dropped)
        if dropped >= len(turns) - 1:
            raise WindowError(
                f"the system prompt, memory and the last message take {tokens:,} tokens, more than the {budget:,} "
                "the context leaves for the prompt: shorten them, or give the model a larger context")
        dropped += 1
        # A conversation resumes with the author's turn, not with a reply to nothing.
        while dropped < len(turns) - 1 and turns[dropped].get("role") == "assistant":
            dropped += 1
