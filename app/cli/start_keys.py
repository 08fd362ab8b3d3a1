"""Keys typed while the editor starts count, ctrl+q among them.

Until Textual takes the terminal (after the imports, the config and the first screen), the
terminal is in its ordinary line mode, where ctrl+q and ctrl+s are flow control (XON and
XOFF): the terminal driver itself takes them, and a ctrl+q pressed 0.3 s after launch never
reached the app. So the command puts the terminal into the mode Textual reads keys in first
thing, and puts back the mode it found when the process ends, whatever happened in between
(Textual, at its own end, puts back the mode it found: this one).
"""

from __future__ import annotations

import atexit
import contextlib
import sys
from typing import IO


def keep_keys_typed_at_start(stream: IO[str] | None = None) -> None:
    """From now until the process ends, the terminal on `stream` (default: standard input)
    hands every key to whoever reads it, at once and unechoed, as Textual's driver does;
    a pipe or a file is left alone."""
    stream = stream if stream is not None else sys.stdin
    try:
        import termios

        descriptor = stream.fileno()
        found = termios.tcgetattr(descriptor) if stream.isatty() else None
    except (ImportError, AttributeError, ValueError, OSError):  # no termios (Windows), a closed or stand-in stream
        return
    if found is None:
        return
    mode = list(found)
    iflag, lflag = 0, 3  # the order of termios' attribute list
    mode[iflag] &= ~(termios.IXON | termios.IXOFF)  # ctrl+q and ctrl+s are keys, not flow control
    mode[lflag] &= ~(termios.ICANON | termios.ECHO)  # each key readable as it comes, not echoed ("^Q")
    with contextlib.suppress(termios.error):
        termios.tcsetattr(descriptor, termios.TCSANOW, mode)
        atexit.register(_put_back, descriptor, found)


def _put_back(descriptor: int, mode: list) -> None:
    import termios

    with contextlib.suppress(termios.error, OSError):
        termios.tcsetattr(descriptor, termios.TCSANOW, mode)
