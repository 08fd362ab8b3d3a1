"""From token bytes to text a reader can trust.

A UTF-8 character can be split over several tokens (byte tokens especially): the
decoder holds the open sequence until it completes. A character that never completes
(the generation ended, was stopped or cut by a stop string first, or the next byte
does not continue it) was never shown, and is dropped: nothing of it reaches the text
the author accepts. A byte that can never start a character (the byte-token loop
produces <0xFF>; a lone continuation byte) is not text either, but the model did write
it: it becomes U+FFFD, the replacement character, as any editor shows bytes it cannot
read. Written as "\\xff", it reached the author's draft as four characters they could
have typed. The panels still name the token by its byte (<0xFF>, piece_text).

Line breaks are the editor's: each one "\\n" (a vocabulary with "\\r\\n" tokens, SmolLM2's,
writes two characters where the editor keeps one). Stop strings are matched on that text,
the text the author sees: a stop "\\n\\n" ends a paragraph on such a model too.

Control characters other than "\\n" and "\\t" (byte tokens <0x1F>, <0x0E>... with the byte
ban lifted) are no text either: each becomes its Unicode control picture (U+241F ␟ for
U+001F, U+2421 ␡ for DEL; U+FFFD for the C1 controls, which have none), as the panels draw
a token's "\\r" as ␍. Written as they came, they reached the author's draft file, and the
suggestion's box, whose cells they took no room in, lost its border's line. This is the one
place the rule is kept: the draft, the chat, `continue` and the session all get this text.
"""

from __future__ import annotations

import codecs
import functools
import re
import unicodedata
from typing import Callable

OTHER_LINE_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
"""Besides "\\n", every line break str.splitlines (so the editor) knows."""
_OTHER_BREAK = re.compile(f"\r\n|[{OTHER_LINE_BREAKS}]")

REPLACEMENT_CHARACTER = "\ufffd"

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Every control character but "\\t" and "\\n" (the other line breaks are "\\n" by then)."""
_CONTROL_PICTURES = {
    **{code: 0x2400 + code for code in range(0x20) if chr(code) not in "\t\n"},
    0x7F: 0x2421,
    **{code: ord(REPLACEMENT_CHARACTER) for code in range(0x80, 0xA0)},
}


def visible_controls(text: str) -> str:
    """`text` with each control character but "\\t" and "\\n" drawn as its control picture (module docstring)."""
    return text.translate(_CONTROL_PICTURES) if _CONTROL.search(text) else text


def _drop_unfinished(error: UnicodeDecodeError) -> tuple[str, int]:
    """A lead byte (0xC2..0xF4) whose character did not complete is dropped; any other
    invalid byte becomes U+FFFD (one per error, as Python's "replace" does). Called only on
    an error: the common token pays nothing for it."""
    if 0xC2 <= error.object[error.start] <= 0xF4:
        return "", error.end
    return REPLACEMENT_CHARACTER, error.end


def _byte_labels(error: UnicodeDecodeError) -> tuple[str, int]:
    return "".join(f"<0x{byte:02X}>" for byte in error.object[error.start : error.end]), error.end


_HANDLERS: dict[str, Callable[[UnicodeDecodeError], tuple[str, int]]] = {
    "scriptorium-drop-unfinished": _drop_unfinished,
    "scriptorium-byte-labels": _byte_labels,
}


@functools.cache
def _registered(name: str) -> str:
    """`name`, once its handler is registered with codecs: on first use, not at import
    (nothing runs when a module is imported)."""
    codecs.register_error(name, _HANDLERS[name])
    return name


class TokenTextDecoder:
    """Incremental bytes -> str: unfinished characters dropped, bytes that are no
    character replaced (U+FFFD)."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors=_registered("scriptorium-drop-unfinished"))

    def feed(self, piece: bytes) -> str:
        return self._decoder.decode(piece)

    def finish(self) -> str:
        """'': only an unfinished character can still be open at the end, and it is
        dropped (the decoder is ready for the next generation)."""
        return self._decoder.decode(b"", final=True)


def editor_line_breaks(text: str) -> str:
    """`text` with every line break "\\n", as the editor holds text (and as the model's
    output reaches the author)."""
    return _OTHER_BREAK.sub("\n", text)


class LineBreaks:
    """Incremental editor_line_breaks: a "\\r" ending one token may open a "\\r\\n" the
    next one closes, so it is held until the next text shows which."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, text: str) -> str:
        if not self._held and not _OTHER_BREAK.search(text):
            return text  # most tokens hold no line break: no copy
        text, self._held = self._held + text, ""
        if text.endswith("\r"):
            text, self._held = text[:-1], "\r"
        return _OTHER_BREAK.sub("\n", text)

    def finish(self) -> str:
        held, self._held = self._held, ""
        return "\n" if held else ""


class CompletionText:
    """A generation's token bytes as the text the author sees, one token at a time: whole
    characters (TokenTextDecoder), the editor's line breaks, control characters drawn
    (visible_controls), and no stop string (matched on that text, the stop strings' own
    line breaks read the same way)."""

    def __init__(self, stops: tuple[str, ...]) -> None:
        self._decoder = TokenTextDecoder()
        self._breaks = LineBreaks()
        self._stops = StopStringFilter(tuple(editor_line_breaks(stop) for stop in stops))

    @property
    def stopped(self) -> bool:
        """A stop string completed: the generation ends here."""
        return self._stops.stopped

    def feed(self, piece: bytes) -> str:
        """The text this token's bytes release (often '' while something is held back)."""
        return self._stops.feed(visible_controls(self._breaks.feed(self._decoder.feed(piece))))

    def finish(self) -> str:
        """What is still held back once the generation ends ('' after a stop string)."""
        if self._stops.stopped:
            return ""
        last = self._breaks.feed(self._decoder.finish()) + self._breaks.finish()
        return self._stops.feed(visible_controls(last)) + self._stops.finish()


_BYTE_LABEL = re.compile("<0x[0-9A-F]{2}>")


def piece_text(piece: bytes) -> str:
    """A single token's text on its own, as a candidate list shows it. Bytes that are no
    character on their own (a byte-level BPE piece holding part of one, SmolLM2's for
    Japanese) are written as the vocabulary writes byte tokens: <0xE3><0x83>."""
    try:
        return piece.decode("utf-8")
    except UnicodeDecodeError:  # rare: the common piece pays nothing for the labels
        return piece.decode("utf-8", errors=_registered("scriptorium-byte-labels"))


def label_is_text(label: str) -> bool:
    """False for a candidate's label that names bytes (<0xE3>, " <0xE3><0x83>"): taken as a
    word, it would write the label itself into the author's text."""
    return _BYTE_LABEL.search(label) is None


class StopStringFilter:
    """Holds back text that might be the start of a stop string, so a stop string is
    never streamed to the reader and then taken back."""

    def __init__(self, stops: tuple[str, ...]) -> None:
        self._stops = stops
        self._held = ""
        self.stopped = False

    def feed(self, text: str) -> str:
        """Text safe to release now; sets `stopped` when a stop string completed."""
        if not self._stops:
            return text
        pending = self._held + text
        cut = min((i for i in (pending.find(s) for s in self._stops) if i >= 0), default=-1)
        if cut >= 0:
            self._held = ""
            self.stopped = True
            return pending[:cut]
        keep = self._longest_stop_prefix_suffix(pending)
        self._held = pending[len(pending) - keep :] if keep else ""
        return pending[: len(pending) - keep]

    def finish(self) -> str:
        held, self._held = self._held, ""
        return held

    def _longest_stop_prefix_suffix(self, text: str) -> int:
        best = 0
        for stop in self._stops:
            for length in range(min(len(stop) - 1, len(text)), best, -1):
                if text.endswith(stop[:length]):
                    best = length
                    break
        return best


def quoted_character(char: str) -> str:
    """'☕'; an invisible character by its escape ('\\x1f')."""
    shown = char if char.isprintable() and char != " " else char.encode("unicode_escape").decode("ascii")
    return f"'{shown}'"


def describe_character(char: str) -> str:
    """'☕' (U+2615 HOT BEVERAGE); invisible characters by escape and code point only."""
    name = unicodedata.name(char, "")
    return f"{quoted_character(char)} (U+{ord(char):04X}{' ' + name if name else ''})"


UNKNOWN_LISTED = 12
"""The most characters read as <unk> one line names (the rest are counted)."""


def shown_characters(characters: str) -> str:
    """'«', '?', '—' and 3 others: characters as a line names them (escaped when invisible)."""
    shown = [quoted_character(c) for c in characters[:UNKNOWN_LISTED]]
    rest = len(characters) - len(shown)
    if rest:
        shown.append(f"{rest} other{'s' if rest != 1 else ''}")
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def unknown_warning(characters: str, tokenizer_name: str) -> str:
    """The one line the app, `continue` and `vocab` say of characters read as <unk>."""
    count = len(characters)
    return (
        f"{tokenizer_name} has no piece for {shown_characters(characters)}: the model reads "
        f"{'it' if count == 1 else 'each'} as <unk>, the same token for any unknown character, not as what you wrote"
    )
