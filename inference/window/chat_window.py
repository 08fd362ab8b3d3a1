"""A chat fitted to the context: the system prompt (with the memory) stays, the oldest
turns leave first. Counting is the caller's `count`, as for the draft window (window.py).

Pure: no llama.cpp, no Textual.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..core.errors import ScriptoriumError
from ..core.text import describe_character
from ..vocab.tokenizer import UnencodableTextError, describe_position
from .window import Count, WindowError

Render = Callable[[list[dict[str, str]]], str]
WHOSE = {"system": "the system prompt", "user": "your message", "assistant": "a reply"}


class ChatFormatError(ScriptoriumError):
    """The chat's own format (its turn separators) has a character the vocabulary cannot
    encode: no message the author could change would make the chat encodable."""


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


def alternating(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """`messages` with turns of the same role in a row joined into one (by a blank line).
    A message whose reply failed stays in the conversation, so the next makes two of the
    author's turns in a row, and many models' templates (Gemma's, Mistral's) refuse any
    conversation whose roles do not alternate."""
    joined: list[dict[str, str]] = []
    for message in messages:
        if joined and joined[-1].get("role") == message.get("role"):
            joined[-1] = dict(joined[-1], content=joined[-1]["content"].rstrip() + "\n\n" + message["content"])
        else:
            joined.append(dict(message))
    return joined


def fit_chat(
    messages: list[dict[str, str]],
    *,
    budget: int,
    count: Count,
    render: Render,
    memory: str = "",
    reply_start: str = "",
) -> ChatWindow:
    """Drop the oldest turns until the rendered conversation fits `budget`; system
    messages and the memory stay, and so does the last turn (WindowError if even that
    does not fit). `reply_start` is the reply the model goes on from (a branch): it ends
    the prompt and counts with it. A character the vocabulary cannot encode is named where
    the author knows it: in a message, or in the chat's format (ChatFormatError)."""
    messages = with_memory(messages, memory)
    system = [m for m in messages if m.get("role") == "system"]
    turns = [m for m in messages if m.get("role") != "system"]
    dropped = 0
    while True:
        # Turns leave one by one; those of one role in a row are sent as one.
        kept = alternating(system + turns[dropped:])
        prompt = render(kept) + reply_start
        try:
            tokens = count(prompt)
        except UnencodableTextError as error:
            raise _placed(error, kept, render) from None
        if tokens <= budget:
            return ChatWindow(kept, prompt, tokens, dropped)
        if dropped >= len(turns) - 1:
            what = "the last message and the reply up to where it goes on" if reply_start else "the last message"
            raise WindowError(
                f"the system prompt, memory and {what} take {tokens:,} tokens, more than the {budget:,} "
                "the context leaves for the prompt: shorten them, or give the model a larger context"
            )
        dropped += 1
        # A conversation resumes with the author's turn, not with a reply to nothing.
        while dropped < len(turns) - 1 and turns[dropped].get("role") == "assistant":
            dropped += 1


def _placed(error: UnencodableTextError, messages: list[dict[str, str]], render: Render) -> ScriptoriumError:
    """The error said of the whole prompt ("character 93 (line 1, column 93)", a place the
    author never saw), said again of the format or the message the character is in."""
    try:
        format_only = render([dict(message, content="") for message in messages])
    except ScriptoriumError:
        format_only = ""
    if error.index >= 0 and error.character in format_only:
        return ChatFormatError(
            f"this model cannot chat: its chat format writes {describe_character(error.character)} between the "
            "turns, and the model's vocabulary has no piece for it and no byte tokens to fall back on. "
            "Write with it in the draft instead, or chat with a model that has byte tokens"
        )
    for message in reversed(messages):  # the newest first: most likely what was just written
        at = message["content"].find(error.character)
        if at >= 0:
            return error.placed(f"{describe_position(message['content'], at)} of {WHOSE[message['role']]}")
    return error
