"""Stop where a writer would: at the end of the sentence or of the paragraph, not only
after so many tokens (SamplerSettings.length).

A sentence has ended once its closing punctuation (. ! ? …, and the quotes or brackets
that close after it) is followed by white space: "3.5" and "Sig.ra" go on. So the end is
known only at the token after it, which is then not written: the generation stops before
that token, as before an end-of-generation token, and the text ends on the punctuation
(its quote included). A line break after some text ends a sentence too (a title, a line
of verse). A paragraph ends at a blank line: the generation stops before the token that
would open it (a line break written before it stays), or, when one token wrote the blank
line after its text (".\n\n"), before the next.

Pure: text in, a decision out; no llama.cpp, no Textual.
"""

from __future__ import annotations

LENGTH_MODES = ("tokens", "sentence", "paragraph")
"""tokens: max_tokens only; sentence: also at the end of the first sentence written;
paragraph: also at the end of the paragraph."""
SENTENCE_PUNCTUATION = frozenset(".!?…。！？")
CLOSERS = frozenset("\"'»”’)]」』")
"""What may follow a sentence's punctuation and still belong to it."""


class WriterStop:
    """Fed each token's text before it is written (`stops_before`), then after (`wrote`)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self._written = ""
        """The end of what was written so far (a few characters are all it needs)."""

    def stops_before(self, text: str) -> bool:
        """Whether the generation ends before a token writing `text`."""
        if self.mode == "tokens" or not text:
            return False
        text = text.replace("\r\n", "\n").replace("\r", "\n")  # a token's own line breaks, read as the text's
        written = self._written
        if not written.strip():
            return False  # nothing of the model's own yet: a leading space or break is no end
        if self.mode == "paragraph":
            opens = text.lstrip(" \t").startswith("\n") and (written.endswith("\n") or text.lstrip(" \t")[:2] == "\n\n")
            return opens or "\n\n" in written.lstrip()
        if text[0] == "\n":
            return True
        return text[0].isspace() and _ends_sentence(written)

    def wrote(self, text: str) -> None:
        self._written = (self._written + text)[-64:]


def _ends_sentence(text: str) -> bool:
    stripped = text.rstrip("".join(CLOSERS))
    return bool(stripped) and stripped[-1] in SENTENCE_PUNCTUATION


def check_length(mode: str) -> str | None:
    """None, or why `mode` is no length mode."""
    return None if mode in LENGTH_MODES else f"must be one of {', '.join(LENGTH_MODES)}, not {mode!r}"
