"""Lists of strings as one line of text (the stop strings, DRY's sequence breakers): how the
sampler panel shows them and how the author writes them back, the same form both ways, so
what is shown can be edited."""

from __future__ import annotations

import ast
import io
import tokenize

from scriptorium.inference.core.settings import SettingsError

SKIPPED = frozenset({tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER})
HOW = "write each in quotes, as the panel shows them: '\\n\\n' 'THE END'"


def strings_text(strings: tuple[str, ...]) -> str:
    """ "'\\n\\n' 'FINE'": each in quotes with its escapes, so a line break shows as \\n."""
    return " ".join(repr(string) for string in strings)


def parse_strings(text: str, name: str) -> tuple[str, ...]:
    """The strings written as `strings_text` shows them; an empty line is none. SettingsError,
    naming them (`name`: 'stop strings'), for anything else."""
    strings: list[str] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text.strip()).readline):
            if token.type in SKIPPED:
                continue
            value = ast.literal_eval(token.string) if token.type == tokenize.STRING else None
            if not isinstance(value, str):
                raise SettingsError(f"{name}: {HOW}, not {token.string}")
            strings.append(value)
    except (tokenize.TokenError, SyntaxError, ValueError) as error:
        if isinstance(error, SettingsError):
            raise
        raise SettingsError(f"{name}: {HOW}") from None
    return tuple(strings)
