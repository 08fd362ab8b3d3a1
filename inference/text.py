"""From token bytes to text a reader can trust.

A UTF-8 character can be split over several tokens (byte tokens especially): the
decoder holds the open sequence until it completes. A character that never completes
(the generation ended, was stopped or cut by a stop string first, or the next byte
does not continue it) was never shown, and is dropped: nothing of it reaches the text
the author accepts. Bytes that can never start a character (the byte-token loop
produces <0xFF>) are shown as \\xNN, not dropped.
"""

from __future__ import annotations

import codecs
import unicodedata

_UNFINISHED_CHARACTER = "scriptorium-drop-unfinished"


def _drop_unfinished(error: UnicodeDecodeError) -> tuple[str, int]:
    """A lead byte (0xC2..0xF4) whose character did not complete is dropped; any other
    invalid byte is written as an escape. Called only on an error: the common token pays
    nothing for it."""
    bad = error.object[error.start:error.end]
    if 0xC2 <= bad[0] <= 0xF4:
        return "", error.end
    return "".join(f"\\x{byte:02x}" for byte in bad), error.end


codecs.register_error(_UNFINISHED_CHARACTER, _drop_unfinished)


class TokenTextDecoder:
    """Incremental bytes -> str: unfinished characters dropped, invalid bytes made visible."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors=_UNFINISHED_CHARACTER)

    def feed(self, piece: bytes) -> str:
        return self._decoder.decode(piece)

    def finish(self) -> str:
        """'': only an unfinished character can still be open at the end, and it is
        dropped (the decoder is ready for the next generation)."""
        return self._decoder.decode(b"", final=True)


def piece_text(piece: bytes) -> str:
    """A single token's text on its own, as a candidate list shows it."""
    return piece.decode("utf-8", errors="backslashreplace")


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
        self._held = pending[len(pending) - keep:] if keep else ""
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


def describe_character(char: str) -> str:
    """'☕' (U+2615 HOT BEVERAGE); invisible characters by escape and code point only."""
    name = unicodedata.name(char, "")
    shown = char if char.isprintable() and char != " " else char.encode("unicode_escape").decode("ascii")
    return f"'{shown}' (U+{ord(char):04X}{' ' + name if name else ''})"
