"""A suggestion beside the draft (the ghost) and its versions: every re-roll and every branch from a token keeps the
text it replaces, so the author can go back to it (alt+← / alt+→ in the draft).

The ghost's own `text` and `tokens` are the version on screen; the others wait in
`ghost.versions`, the current one's slot refreshed whenever the author moves away.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.widgets.text_area import Location

from scriptorium.inference.window.window import prompt_end

from scriptorium.app.tui.token_spans import TokenRecord, chosen_records, split_records
from scriptorium.app.tui.widgets.formatting import visible_token
from scriptorium.app.i18n.language import ENGLISH, Language
from scriptorium.app.i18n.marker import N_

Writers = list[tuple[int | None, int]]
"""Who wrote a suggestion's text: (a generation's request id, or None for the author's own
word, where in the text its writing starts), in order; each wrote up to the next's start.
Accepting credits each generation with exactly its characters, not a share by length."""


@dataclass(slots=True)
class Version:
    text: str
    tokens: list[TokenRecord] = field(default_factory=list)
    label: str = ""
    """How it came about: 'first', 're-roll', 'branch at “word”'."""
    request_ids: list[int] = field(default_factory=list)
    """The generations whose text this version is: accepting it credits them, not the others."""
    writers: Writers = field(default_factory=list)


@dataclass(slots=True)
class Ghost:
    """A suggestion waiting beside the draft."""

    anchor: Location
    """Where the suggestion would be inserted."""
    from_cursor: bool
    """True when it continues from the cursor rather than from the end of the draft."""
    text: str = ""
    streaming: bool = True
    request_ids: list[int] = field(default_factory=list)
    """The generations whose text this is (one, or several after "continue again")."""
    writers: Writers = field(default_factory=list)
    """Which part of `text` each of them (or the author, in a branch) wrote."""
    tokens: list[TokenRecord] = field(default_factory=list)
    """What the model thought of each token of `text` (offsets into `text`)."""
    versions: list[Version] = field(default_factory=list)
    """Earlier and later versions (re-rolls, branches)."""
    version: int = 0
    replaces: int = 0
    """Characters after the anchor that accepting the suggestion replaces (a branch taken
    inside the draft, in accepted or scored text). They stay in the draft until then: Esc,
    a crash or an edit that invalidates the suggestion leave the draft as it was."""
    spaces_left_out: int = 0
    """The author's spaces and tabs ending the text where the suggestion attaches, which the
    prompt left out (window.prompt_end), while the suggestion's text decides where it goes
    (place_by_first_text): before them, taking their place (`replaces` = them), or after them.
    0 once the author typed or kept any of it, or when none were left out."""
    break_end: int | None = None
    """Where the paragraph break before a depth-0 note's continuation ends in `text`, while
    that generation writes (window_layout.note_break): it goes again if the model writes
    nothing after it. It moves with the words kept from the front and given back by an undo
    (0 or less: the break went into the draft with them)."""


@dataclass(frozen=True, slots=True)
class KeptWord:
    """A word just accepted from a suggestion, for an undo to give back: the suggestion as
    it was (a copy), and the text, tokens and writers of the rest it left. What the rest
    gained since (the model wrote on, while or after the word was kept) follows the word back."""

    suggestion: Ghost
    rest_text: str
    rest_tokens: int
    rest_writers: int

    def fits(self, ghost: Ghost) -> bool:
        """`ghost`, the rest, has only been written on since (not typed into, re-rolled or branched)."""
        return (
            not ghost.versions
            and ghost.text.startswith(self.rest_text)
            and len(ghost.tokens) >= self.rest_tokens
            and len(ghost.writers) >= self.rest_writers
        )

    def give_back(self, ghost: Ghost) -> str:
        """Make `ghost` (which fits) the suggestion as it was, then what was written since; the word given back."""
        was = self.suggestion
        word = was.text[: len(was.text) - len(self.rest_text)]
        ghost.text = was.text + ghost.text[len(self.rest_text) :]
        ghost.tokens = was.tokens + [record.moved(len(word)) for record in ghost.tokens[self.rest_tokens :]]
        ghost.writers = was.writers + [
            (writer, start + len(word)) for writer, start in ghost.writers[self.rest_writers :]
        ]
        ghost.anchor, ghost.replaces, ghost.versions, ghost.version = (
            was.anchor,
            was.replaces,
            was.versions,
            was.version,
        )
        ghost.spaces_left_out = was.spaces_left_out
        if ghost.break_end is not None:
            ghost.break_end += len(word)
        return word


CLOSING_PUNCTUATION = ".,;:!?…)]}»”’"
"""What ends a word or a clause against it: written after the author's space, it takes the space's place."""


def place_by_first_text(ghost: Ghost) -> None:
    """Where the suggestion goes among the author's spaces the prompt left out, decided by
    the text shown (the rule stated once): a model that writes white space first (a space, a
    tab, a newline) wrote its own, which takes their place, and so does punctuation that
    closes what the author wrote ("buia " + "." is "buia.": no language sets a space before
    it); one that writes a word, or opens a quote, follows them, so "pronto. " + "lire"
    keeps the author's space and a line's indentation stays. Nothing is decided before the
    first text (nothing is shown)."""
    spaces = ghost.spaces_left_out
    if not spaces or not ghost.text:
        return
    row, column = ghost.anchor
    before = column if ghost.replaces else column - spaces  # they are on the anchor's line
    if ghost.text[0].isspace() or ghost.text[0] in CLOSING_PUNCTUATION:
        ghost.anchor, ghost.replaces = (row, before), spaces
    else:
        ghost.anchor, ghost.replaces = (row, before + spaces), 0


def _save_current(ghost: Ghost) -> None:
    if not ghost.versions:
        ghost.versions.append(
            Version(ghost.text, list(ghost.tokens), "first", list(ghost.request_ids), list(ghost.writers))
        )
        ghost.version = 0
    else:
        slot = ghost.versions[ghost.version]
        slot.text, slot.tokens, slot.request_ids = ghost.text, list(ghost.tokens), list(ghost.request_ids)
        slot.writers = list(ghost.writers)


def start_version(
    ghost: Ghost, label: str, text: str = "", tokens: list[TokenRecord] | None = None, writers: Writers | None = None
) -> None:
    """Keep what is on screen as a version and start a new one with `text` (written by the
    generations on screen so far, until the caller says otherwise; by `writers`)."""
    if ghost.text or ghost.versions:
        _save_current(ghost)
    ghost.versions.append(Version(text, list(tokens or []), label, list(ghost.request_ids), list(writers or [])))
    ghost.version = len(ghost.versions) - 1
    ghost.text, ghost.tokens, ghost.writers = text, list(tokens or []), list(writers or [])
    place_by_first_text(ghost)


BRANCH_LABEL = N_("branch at “{value}”")
CANDIDATE_LABEL = N_("candidate · seed {value}")
"""Version labels made of a value, kept in English in the session, read in the interface's language (shown_label)."""


def branch_label(choice: str) -> str:
    """'branch at “word”'; a choice of white space only (a line break) drawn as the panel draws it."""
    return BRANCH_LABEL.format(value=choice.strip() or visible_token(choice))


def branch_at(ghost: Ghost, index: int, choice: str) -> None:
    """A new version: the text up to token `index`, then `choice` (one of its alternatives,
    or the author's own word) instead of it, for a generation to write on from."""
    record = ghost.tokens[index]
    chosen = chosen_records(record, record.start, choice)
    writers = writers_before(ghost.writers, record.start)
    if not chosen:
        writers.append((None, record.start))  # the author's own word
    start_version(
        ghost, branch_label(choice), ghost.text[: record.start] + choice, ghost.tokens[:index] + chosen, writers
    )


def with_writer(writers: Writers, text: str, request_id: int | None) -> Writers:
    """`writers` once `request_id` writes on after `text`. Text no one is said to have
    written yet (a branch's chosen alternative, before its generation) is the new writer's:
    it continues from that token as it continues from its own."""
    return [*writers, (request_id, len(text) if writers else 0)]


def with_break(text: str, writers: Writers, lead: str) -> tuple[str, Writers]:
    """`text` and its writers once `lead` follows it: the paragraph break a depth-0 note
    leaves before the model's words (window_layout.note_break), no model's, the author's."""
    return (text + lead, [*writers, (None, len(text))]) if lead else (text, writers)


def writers_before(writers: Writers, end: int) -> Writers:
    """The writers of text[:end] (a branch cuts the text there)."""
    return [(writer, start) for writer, start in writers if start < end]


def writers_after(writers: Writers, cut: int) -> Writers:
    """The writers of text[cut:], their starts moved (the author kept text[:cut])."""
    kept = [(writer, max(start - cut, 0)) for writer, start in writers]
    # Of the writers starting at or before the cut, only the last one still writes after it.
    return [w for i, w in enumerate(kept) if i + 1 == len(kept) or kept[i + 1][1] > 0]


def cut_front(ghost: Ghost, length: int) -> list[TokenRecord]:
    """Take the suggestion's first `length` characters off (kept into the draft, or typed
    there by the author); their tokens. Who wrote the rest, and where the note's break
    ends in it, move with it."""
    taken, ghost.tokens = split_records(ghost.tokens, length)
    ghost.text = ghost.text[length:]
    ghost.writers = writers_after(ghost.writers, length)
    if ghost.break_end is not None:
        ghost.break_end -= length
    return taken


def without_trailing_spaces(ghost: Ghost) -> None:
    """Before the suggestion is written on: the spaces and tabs it ends with go (see written_on_from)."""
    ghost.text, ghost.tokens, ghost.writers = written_on_from(ghost.text, ghost.tokens, ghost.writers)


def written_on_from(text: str, tokens: list[TokenRecord], writers: Writers) -> tuple[str, list[TokenRecord], Writers]:
    """A suggestion's text, tokens and writers as what the model writes next follows them:
    without the spaces and tabs they end with (whole tokens only: a lone "▁" the model
    stopped at, or a branch chose). The prompt leaves them out (window.prompt_end), so what
    the model writes next takes their place, as a suggestion takes the place of the draft's
    (draft_anchors.before_trailing_spaces)."""
    end = prompt_end(text)
    if end == len(text) or any(r.start < end < r.end for r in tokens):
        return text, tokens, writers
    return text[:end], split_records(tokens, end)[0], writers_before(writers, end)


def written_parts(writers: Writers, length: int) -> list[tuple[int | None, int, int]]:
    """(writer, start, end) of text[:length], each part non-empty."""
    parts = []
    for i, (writer, start) in enumerate(writers):
        end = min(writers[i + 1][1] if i + 1 < len(writers) else length, length)
        if end > start:
            parts.append((writer, start, end))
    return parts


def move_version(ghost: Ghost, step: int) -> bool:
    """Show the previous (-1) or next (+1) version; False when there is none that way."""
    target = ghost.version + step
    if not ghost.versions or not 0 <= target < len(ghost.versions):
        return False
    _save_current(ghost)
    ghost.version = target
    chosen = ghost.versions[target]
    ghost.text, ghost.tokens, ghost.request_ids = chosen.text, list(chosen.tokens), list(chosen.request_ids)
    ghost.writers = list(chosen.writers)
    place_by_first_text(ghost)
    return True


def every_request_id(ghost: Ghost) -> tuple[int, ...]:
    """The generations of every version, the one on screen included: thrown away together."""
    ids = [rid for version in ghost.versions for rid in version.request_ids] + ghost.request_ids
    return tuple(dict.fromkeys(ids))


def other_request_ids(ghost: Ghost) -> tuple[int, ...]:
    """The generations of the versions not on screen: rejected when the one shown is kept."""
    return tuple(rid for rid in every_request_id(ghost) if rid not in ghost.request_ids)


def lost_note(ghost: Ghost, restore_key: str, language: Language = ENGLISH) -> str:
    """What the author is told when an undo or redo took the suggestion `ghost` with it."""
    _ = language.gettext
    said = (
        _(
            "The suggestion and its {count} versions went with the undo: with the draft as it was again (redo), "
            "{key} brings it back."
        )
        if len(ghost.versions) > 1
        else _("The suggestion went with the undo: with the draft as it was again (redo), {key} brings it back.")
    )
    return said.format(count=len(ghost.versions), key=restore_key)


def version_label(ghost: Ghost, language: Language = ENGLISH) -> str:
    """'version 2/3 · re-roll', or '' while there is only one."""
    if len(ghost.versions) < 2:
        return ""
    number = language.gettext("version {number}/{count}").format(number=ghost.version + 1, count=len(ghost.versions))
    return f"{number} · {shown_label(ghost.versions[ghost.version].label, language)}"


def shown_label(label: str, language: Language) -> str:
    """A version's label in the interface's language. Sessions keep labels in English: the
    fixed ones are translated here, and those made of a value by their English form."""
    fixed = {
        "first": language.pgettext("version", "first"),
        "re-roll": language.pgettext("version", "re-roll"),
        "as it was": language.pgettext("version", "as it was"),
    }
    if label in fixed:
        return fixed[label]
    for form in (BRANCH_LABEL, CANDIDATE_LABEL):
        before, after = form.split("{value}")
        if label.startswith(before) and label.endswith(after) and len(label) >= len(before) + len(after):
            return language.gettext(form).format(value=label[len(before) : len(label) - len(after)])
    return label
