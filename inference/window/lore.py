"""The lorebook: entries about a character or a place that enter the prompt only when the
end of the draft (or the author's note) mentions them.

An entry has keys (words or phrases, matched case-insensitively on whole words; a key
written `/like this/` is a regular expression), optional secondary keys (one of them must
match too), a text, a priority, an on/off switch, and "always" for an entry that behaves
like memory. `scan` says which entries fire and from which key; lore_window.py fits them
into the prompt, between the memory and the draft.

Stability. The word the text ends in is not scanned while it is still being written
(`settled_end`): typing "Lucia" letter by letter would otherwise fire the entry at "Lucia"
and drop it again at "Luciana", changing the prompt (and throwing away the cache) at
every key. A key fires once a space, a punctuation mark or a line break follows it.

Pure: no llama.cpp, no Textual.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable

from ..core.errors import ScriptoriumError
from ..vocab.tokenizer import UnencodableTextError, describe_position

DEFAULT_SCAN_DEPTH = 64
"""Tokens of the end of the draft window scanned for keys."""
DEFAULT_BUDGET = 64
"""Tokens the lore may take in the prompt (never more than half of what memory and note leave)."""
SCAN_DEPTH_RANGE = (1, 100_000)
BUDGET_RANGE = (0, 1_000_000)
ALWAYS = "always"
"""The key an "always" entry is said to fire from."""
_WORD = re.compile(r"\w")


class LoreError(ScriptoriumError):
    """A lorebook the author wrote that cannot be used: the message names the entry and the key."""


@dataclass(frozen=True, slots=True)
class LoreEntry:
    name: str
    keys: tuple[str, ...]
    text: str
    secondary: tuple[str, ...] = ()
    """Keys of which one must match as well as a primary key (none: the primary alone)."""
    priority: int = 0
    """Higher first, in the prompt and when the budget is short (ties: the lorebook's order)."""
    enabled: bool = True
    always: bool = False
    """In every prompt, as the memory is, without a key (still within the lore budget)."""
    case_sensitive: bool = False


@dataclass(frozen=True, slots=True)
class Lorebook:
    entries: tuple[LoreEntry, ...] = ()
    scan_depth: int = DEFAULT_SCAN_DEPTH
    budget: int = DEFAULT_BUDGET

    def __post_init__(self) -> None:
        check_whole("scan_depth", self.scan_depth, SCAN_DEPTH_RANGE)
        check_whole("budget", self.budget, BUDGET_RANGE)
        for entry in self.entries:
            compiled_keys(entry)  # a key that does not compile is said now, once, not at every prompt

    @property
    def active(self) -> tuple[LoreEntry, ...]:
        return tuple(e for e in self.entries if e.enabled and e.text.strip() and (e.keys or e.always))


@dataclass(frozen=True, slots=True)
class Fired:
    """An entry that fired for a prompt: from which key, what it cost, whether it is in."""

    name: str
    key: str
    tokens: int = 0
    """Its tokens in the prompt (what the block grew by), or what it would have cost if dropped."""
    kept: bool = True
    """False: dropped for room (the lore budget, or what memory and note leave)."""

    def as_json(self) -> dict[str, object]:
        return {"name": self.name, "key": self.key, "tokens": self.tokens, "kept": self.kept}


@dataclass(frozen=True, slots=True)
class LoreChoice:
    """What of the lorebook a prompt holds: `block` goes between the memory and the draft."""

    block: str = ""
    fired: tuple[Fired, ...] = field(default=())

    @property
    def kept(self) -> tuple[Fired, ...]:
        return tuple(f for f in self.fired if f.kept)

    @property
    def dropped(self) -> tuple[Fired, ...]:
        return tuple(f for f in self.fired if not f.kept)


def check_whole(key: str, value: object, bounds: tuple[int, int]) -> int:
    low, high = bounds
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise LoreError(f"lorebook {key} must be a whole number from {low:,} to {high:,}, not {value!r}")
    return value


def is_pattern(key: str) -> bool:
    return len(key) > 2 and key.startswith("/") and key.endswith("/")


def compile_key(key: str, case_sensitive: bool = False, entry: str = "") -> re.Pattern[str]:
    """A key as a pattern: a word or phrase on whole words (its spaces match any run of
    white space, so a phrase cut by a line break still fires), or a `/regular expression/`
    as written. LoreError, naming the entry, for one that does not compile."""
    flags = 0 if case_sensitive else re.IGNORECASE
    if is_pattern(key):
        try:
            return re.compile(key[1:-1], flags)
        except re.error as error:
            where = f" of lore entry {entry!r}" if entry else ""
            raise LoreError(f"the key {key}{where} is not a valid regular expression: {error}") from None
    words = r"\s+".join(re.escape(word) for word in key.split())
    return re.compile(rf"(?<!\w){words}(?!\w)", flags)


def compiled_keys(entry: LoreEntry) -> tuple[tuple[tuple[str, re.Pattern[str]], ...], tuple[re.Pattern[str], ...]]:
    keys = tuple((k, compile_key(k, entry.case_sensitive, entry.name)) for k in entry.keys if k.strip())
    secondary = tuple(compile_key(k, entry.case_sensitive, entry.name) for k in entry.secondary if k.strip())
    return keys, secondary


def settled_end(text: str, end: int | None = None) -> int:
    """Where the scan of text[:end] stops: before a word the text ends in, which may still
    be being typed (nothing follows it yet)."""
    end = len(text) if end is None else end
    while end > 0 and _WORD.match(text[end - 1]):
        end -= 1
    return end


def scan(lorebook: Lorebook, texts: Iterable[str]) -> tuple[tuple[LoreEntry, str], ...]:
    """The entries that fire on `texts` (the end of the draft, the author's note), in
    priority order (ties: the lorebook's), each with the first key that matched."""
    texts = tuple(texts)
    fired: list[tuple[int, int, LoreEntry, str]] = []
    for index, entry in enumerate(lorebook.active):
        key = _firing_key(entry, texts)
        if key is not None:
            fired.append((-entry.priority, index, entry, key))
    return tuple((entry, key) for _, _, entry, key in sorted(fired, key=lambda item: item[:2]))


def _firing_key(entry: LoreEntry, texts: tuple[str, ...]) -> str | None:
    if entry.always:
        return ALWAYS
    keys, secondary = compiled_keys(entry)
    for key, pattern in keys:
        if any(pattern.search(text) for text in texts):
            if not secondary or any(s.search(text) for s in secondary for text in texts):
                return key
            return None
    return None


def entry_block(text: str) -> str:
    """An entry as the prompt holds it: its own paragraph."""
    return text.strip() + "\n\n"


def choose(fired: Iterable[tuple[LoreEntry, str]], room: int, count: Callable[[str], int]) -> LoreChoice:
    """Fit the fired entries (in priority order) into `room` tokens, each as it comes:
    one that does not fit is dropped and the next is tried. Each entry's tokens are what
    the block grows by with it, so the kept ones add up to the block's own count. A
    character the vocabulary cannot encode is named in the entry that holds it."""
    empty = count("")
    block, used, chosen = "", 0, []
    for entry, key in fired:
        grown = block + entry_block(entry.text)
        try:
            tokens = count(grown) - empty - used
        except UnencodableTextError as error:
            offset = max(0, error.index - len(block)) + len(entry.text) - len(entry.text.lstrip())
            raise error.placed(f"{describe_position(entry.text, offset)} of lore entry {entry.name!r}") from None
        kept = used + tokens <= room
        if kept:
            block, used = grown, used + tokens
        chosen.append(Fired(entry.name, key, tokens, kept))
    return LoreChoice(block, tuple(chosen))


def lore_summary(
    fired: Iterable[Fired], gettext: Callable[[str], str] = str, number: Callable[[float, str], str] = format
) -> str:
    """'lore: Lucia (Lucia, 12 tok), Porto (il porto, 9 tok); dropped for room: Marco (20 tok)',
    as the command line and the app say it. The app passes its language's `gettext` and
    `number` (app/i18n; babel.cfg extracts the strings here); the command line stays English."""
    fired = tuple(fired)
    entry_kept, entry_dropped = gettext("{name} ({key}, {tokens} tok)"), gettext("{name} ({tokens} tok)")
    kept = ", ".join(
        entry_kept.format(name=f.name, key=f.key, tokens=number(f.tokens, ",")) for f in fired if f.kept
    ) or gettext("none")
    dropped = ", ".join(entry_dropped.format(name=f.name, tokens=number(f.tokens, ",")) for f in fired if not f.kept)
    summary = gettext("lore: {kept}").format(kept=kept)
    return summary + (gettext("; dropped for room: {dropped}").format(dropped=dropped) if dropped else "")
