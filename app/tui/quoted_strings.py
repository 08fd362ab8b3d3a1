"""The stop strings as one line of text: how the sampler panel shows them and how the
author writes them back (the same form both ways, so what is shown can be edited)."""

from __future__ import annotations

import ast
import io
import tokenize

from scriptorium.inference.settings import SettingsError

SKIPPED = frozenset({tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER})
HOW = "write each stop string in quotes, as the panel shows them: '\\n\\n' 'THE END'"


def stops_text(stops: tuple[str, ...]) -> str:
    """ "'\\n\\n' 'FINE'": each in quotes with its escapes, so a line break shows as \\n."""
    return " ".join(repr(stop) for stop in stops)


def parse_stops(text: str) -> tuple[str, ...]:
    """The stop strings written as `stops_text` shows them; an empty line is none.
    SettingsError, naming them, for anything else."""
    stops: list[str] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text.strip()).readline):
            if token.type in SKIPPED:
                continue
            value = ast.literal_eval(token.string) if token.type == tokenize.STRING else None
            if not isinstance(value, str):
                raise SettingsError(f"stop strings: {HOW}, not {token.string}")
            stops.append(value)
    except (tokenize.TokenError, SyntaxError, ValueError) as error:
        if isinstance(error, SettingsError):
            raise
        raise SettingsError(f"stop strings: {HOW}") from None
    return tuple(stops)
