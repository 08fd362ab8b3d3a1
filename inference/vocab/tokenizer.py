"""Text to token ids: llama.cpp's own tokenizer, or the author's SentencePiece model.

The engine holds one of these and `Engine.tokenize` delegates to it, so drafts, chat,
scoring and prefix reuse all see the same ids.

- `LlamaTokenizer` calls `llama_tokenize`. A SentencePiece ("llama") vocabulary without
  `<0xNN>` byte tokens makes llama.cpp throw an uncatchable C++ exception (the process
  aborts) on any character it has no piece for, so such a vocabulary gets a
  `CharacterGuard` that refuses the text first, naming the character and where it is.
  No `<unk>` fallback: silently changing the author's words would hide the problem.
- `SentencePieceTokenizer` cuts text with the `.model` the model was trained on: llama.cpp
  segments a unigram model differently from SentencePiece (vocab_contract.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Protocol

from ..core.errors import ModelFileError, ScriptoriumError
from ..core.text import describe_character
from .spm_model import CONTROL, SpmModel

SPACE_PIECE = "▁"
"""SentencePiece writes a space as U+2581; llama.cpp does the same before looking up pieces."""
TOKEN_ATTR_BYTE = 1 << 5
TOKEN_ATTR_CONTROL = 1 << 3
TOKEN_ATTR_USER_DEFINED = 1 << 4


class UnencodableTextError(ScriptoriumError):
    """The vocabulary has no piece and no byte tokens for a character of the text.
    `index`: where it is in the text tokenized (-1: the space llama.cpp puts before it);
    `placed` names the place anew, in the text the author wrote (window_layout.py)."""

    def __init__(
        self, character: str, where: str, others: int = 0, index: int = -1, others_at_least: bool = False
    ) -> None:
        at_least = "at least " if others_at_least else ""
        more = f"; {at_least}{others} other character{'s' if others != 1 else ''} too" if others else ""
        super().__init__(
            f"the model's vocabulary cannot encode {describe_character(character)} at {where}: it has "
            f"no piece for it and no byte tokens to fall back on{more}. Remove or replace it"
        )
        self.character, self.where, self.others, self.index = character, where, others, index
        self.others_at_least = others_at_least
        """`others` is a floor: a server counted them, asked only so many times (remote_tokens.py)."""

    def __reduce__(self) -> tuple[type, tuple[str, str, int, int, bool]]:
        # It crosses the pipe from the engine's process (wire.py): the fields travel too.
        return type(self), (self.character, self.where, self.others, self.index, self.others_at_least)

    def placed(self, where: str) -> "UnencodableTextError":
        return UnencodableTextError(self.character, where, self.others, self.index, self.others_at_least)


class Tokenizer(Protocol):
    name: str
    """What the panels say: 'llama.cpp' or 'SentencePiece (tokenizer.model)'."""

    def tokenize(self, text: str, *, add_bos: bool, special: bool) -> list[int]: ...

    def unknown_characters(self, text: str) -> str:
        """The characters of `text` the model would read as <unk>, each once ('' for none)."""


def describe_position(text: str, index: int) -> str:
    """'character 24 (line 2, column 5)', counted from 1 as editors do."""
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"character {index + 1} (line {line}, column {column})"


@dataclass(frozen=True, slots=True)
class CharacterGuard:
    """Which characters llama.cpp's SentencePiece tokenizer can encode without byte tokens.

    llama.cpp splits the text (spaces written as ▁) into characters, merges neighbours
    whose concatenation is a piece, and falls back to byte tokens only for a single
    character that is no piece: so text is safe exactly when each of its characters is
    a piece. Special-token texts are cut out first, as llama.cpp partitions them."""

    pieces: frozenset[str]
    always_special: tuple[str, ...]
    """User-defined tokens: llama.cpp matches them in any text."""
    control: tuple[str, ...]
    """Control tokens: matched only when the text is parsed for specials (chat)."""
    add_space_prefix: bool

    def check(self, text: str, *, special: bool) -> None:
        """UnencodableTextError naming the first character with no piece (and how many)."""
        missing = list(self._missing(text, special))
        if not missing:
            return
        index, char = missing[0]
        where = "the space llama.cpp puts before the text" if index < 0 else describe_position(text, index)
        raise UnencodableTextError(char, where, len({c for _, c in missing} - {char}), index)

    def _missing(self, text: str, special: bool) -> Iterator[tuple[int, str]]:
        specials = self.always_special + (self.control if special else ())
        pattern = (
            re.compile("|".join(re.escape(s) for s in sorted(specials, key=len, reverse=True))) if specials else None
        )
        if self.add_space_prefix and text and SPACE_PIECE not in self.pieces:
            yield -1, " "
        start = 0
        for match in pattern.finditer(text) if pattern else ():
            yield from self._missing_in(text, start, match.start())
            start = match.end()
        yield from self._missing_in(text, start, len(text))

    def _missing_in(self, text: str, start: int, end: int) -> Iterator[tuple[int, str]]:
        for index in range(start, end):
            char = text[index]
            if (SPACE_PIECE if char == " " else char) not in self.pieces:
                yield index, char


NO_BYTE_TOKENS = "no byte tokens: text with a character it has no piece for is refused"


def tokenizer_warning(tokenizer: Tokenizer, note: str) -> str:
    """What the author should know about the tokenizer in use, in one line, else ''."""
    if note:
        return note
    return NO_BYTE_TOKENS if getattr(tokenizer, "guard", None) is not None else ""


def vocab_texts(lib: Any, vocab: Any) -> list[str]:
    """Every token's text as llama.cpp holds it."""
    n = int(lib.llama_vocab_n_tokens(vocab))
    return [lib.llama_vocab_get_text(vocab, i).decode("utf-8", "replace") for i in range(n)]


def guard_for(lib: Any, vocab: Any, *, add_space_prefix: bool, has_byte_tokens: bool) -> CharacterGuard | None:
    """A guard for a SentencePiece vocabulary with no byte tokens; None for any other.
    `add_space_prefix` is the GGUF's tokenizer.ggml.add_space_prefix (the C API has no getter)."""
    if has_byte_tokens or int(lib.llama_vocab_type(vocab)) != lib.LLAMA_VOCAB_TYPE_SPM:
        return None
    n = int(lib.llama_vocab_n_tokens(vocab))
    attrs = [int(lib.llama_vocab_get_attr(vocab, i)) for i in range(n)]
    texts = vocab_texts(lib, vocab)
    return CharacterGuard(
        pieces=frozenset(texts),
        always_special=tuple(t for t, a in zip(texts, attrs) if a & TOKEN_ATTR_USER_DEFINED and t),
        control=tuple(t for t, a in zip(texts, attrs) if a & TOKEN_ATTR_CONTROL and t),
        add_space_prefix=add_space_prefix,
    )


class LlamaTokenizer:
    """llama.cpp's tokenizer for the model's vocabulary."""

    name = "llama.cpp"

    def __init__(self, lib: Any, vocab: Any, guard: CharacterGuard | None) -> None:
        self._lib, self._vocab, self.guard = lib, vocab, guard

    def unknown_characters(self, text: str) -> str:
        """Always '': llama.cpp spells a character it has no piece for in byte tokens, and
        without them the guard refuses the text (no <unk>, see the module's doc)."""
        return ""

    def tokenize(self, text: str, *, add_bos: bool, special: bool) -> list[int]:
        if self.guard is not None:
            self.guard.check(text, special=special)
        import ctypes  # llama.cpp's own tokenizer is used with its model, after the app's first frame

        data = text.encode("utf-8")
        capacity = len(data) + 8
        while True:
            buffer = (ctypes.c_int32 * capacity)()
            count = self._lib.llama_tokenize(self._vocab, data, len(data), buffer, capacity, add_bos, special)
            if count >= 0:
                return list(buffer[:count])
            capacity = -count


class SentencePieceTokenizer:
    """The `.model`'s own segmentation; ids are the GGUF's (the contract says they match)."""

    def __init__(self, spm: SpmModel, bos_id: int) -> None:
        self.spm, self.bos_id = spm, bos_id
        self.name = f"SentencePiece ({spm.path.name})"
        controls = {p: i for i, (p, t) in enumerate(zip(spm.pieces, spm.types)) if t == CONTROL and p}
        self._controls = controls
        self._control_pattern = (
            re.compile("|".join(re.escape(p) for p in sorted(controls, key=len, reverse=True))) if controls else None
        )

    def unknown_characters(self, text: str) -> str:
        return self.spm.unknown_characters(text)

    def tokenize(self, text: str, *, add_bos: bool, special: bool) -> list[int]:
        ids = [self.bos_id] if add_bos and self.bos_id >= 0 else []
        if not special or self._control_pattern is None:
            return ids + self.spm.encode(text)
        # Chat templates write control tokens as text; they become their ids, and each
        # stretch between them is cut on its own (llama.cpp does the same).
        start = 0
        for match in self._control_pattern.finditer(text):
            if match.start() > start:
                ids += self.spm.encode(text[start : match.start()])
            ids.append(self._controls[match.group()])
            start = match.end()
        if start < len(text):
            ids += self.spm.encode(text[start:])
        return ids


def sentencepiece_tokenizer(spm_path: Path, lib: Any, vocab: Any) -> tuple[Tokenizer | None, str]:
    """(the SentencePiece tokenizer, '') when the `.model` matches the loaded vocabulary
    piece for piece, else (None, why not). A missing or unreadable file raises."""
    from .spm_model import load_spm
    from .vocab_contract import piece_text_mismatch

    spm = load_spm(spm_path)
    problem = piece_text_mismatch(spm.pieces, vocab_texts(lib, vocab))
    if problem:
        return None, f"{spm_path.name} does not match the model's vocabulary ({problem}): llama.cpp tokenizes"
    return SentencePieceTokenizer(spm, int(lib.llama_vocab_bos(vocab))), ""


class LlamaVocab:
    """A GGUF's vocabulary alone (no weights, no context), for `scriptorium vocab`."""

    def __init__(self, path: Path, add_space_prefix: bool) -> None:
        from ..core import native

        self._lib = native.llama()
        params = self._lib.llama_model_default_params()
        params.vocab_only = True
        mark = native.log_mark()
        self._model = self._lib.llama_model_load_from_file(str(path).encode(), params)
        if not self._model:
            reason = native.last_error_since(mark)
            raise ModelFileError(
                f"llama.cpp could not read the vocabulary of {path}" + (f": {reason}" if reason else "")
            )
        vocab = self._lib.llama_model_get_vocab(self._model)
        has_bytes = any(
            self._lib.llama_vocab_get_attr(vocab, i) & TOKEN_ATTR_BYTE
            for i in range(int(self._lib.llama_vocab_n_tokens(vocab)))
        )
        guard = guard_for(self._lib, vocab, add_space_prefix=add_space_prefix, has_byte_tokens=has_bytes)
        self.tokenizer = LlamaTokenizer(self._lib, vocab, guard)

    def close(self) -> None:
        if self._model:
            self._lib.llama_model_free(self._model)
            self._model = None
