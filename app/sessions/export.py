"""Export a session to Markdown: YAML front matter that says how the text was made, then the text.

The front matter is plain YAML written by yaml.safe_dump (so any title or stop string is
quoted safely) between `---` lines, which pandoc and Obsidian both read. It describes the
*headline* generation: the first one whose text appears in the export (else the latest),
and the session's memory and author's note when it has them.
The body is the draft, or the chat as one `##` section per turn. Plain text (a plain-text
draft, the author's messages, the system prompt) is escaped to show as written, its
indentation kept (export_plain); a Markdown draft is as written, a model's chat reply is
Markdown, as the chat shows it. Single line breaks stay breaks (export_breaks), except in
a Markdown draft, whose author wraps lines as they like. Options:
`mark_model` marks the model's passages (see export_marks), `settings_changes` adds a
footnote to each model passage whose settings differ from the passage before it.
"""

from __future__ import annotations

import os
import re
from datetime import date, datetime
from pathlib import Path
from typing import Any

import yaml

from scriptorium.app import atomic
from scriptorium.app.version import scriptorium_version
from scriptorium.inference.core.errors import ScriptoriumError

from scriptorium.app.sessions.export_breaks import soft_break_ends
from scriptorium.app.sessions.export_html import html_starts
from scriptorium.app.sessions.export_marks import Passage, below_headings, render, replaced
from scriptorium.app.sessions.export_plain import plain_as_markdown
from scriptorium.app.sessions.model import AnySession, ChatSession, DraftSession
from scriptorium.app.sessions.records import Generation, settings_key

_FRONT_MATTER = re.compile(r"---[ \t]*\n(.*?\n)(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdown", ".mkd", ".mkdn", ".mdwn")
OUTCOME_WORDS = {
    "pending": "undecided",
    "accepted": "accepted",
    "partly_accepted": "partly accepted",
    "rejected": "rejected",
}


class ExportError(ScriptoriumError):
    """The export could not be written; one line for the author."""


class ExportExistsError(ExportError):
    """The target file exists and overwriting was not allowed (the TUI asks, the CLI wants --force)."""


def _passages(session: AnySession) -> list[tuple[int, Passage]]:
    """(turn index, passage) in document order; the turn index is 0 for a draft."""
    if isinstance(session, DraftSession):
        return [(0, Passage(s.start, s.end, s.generation)) for s in session.spans]
    return [
        (i, Passage(0, len(turn.content), turn.generation))
        for i, turn in enumerate(session.turns)
        if turn.role == "assistant" and turn.generation and turn.content
    ]


def _generations_in_text(session: AnySession) -> list[Generation]:
    by_id = {g.id: g for g in session.generations}
    seen: list[Generation] = []
    for _, passage in _passages(session):
        generation = by_id.get(passage.generation)
        if generation is not None and generation not in seen:
            seen.append(generation)
    return seen


def headline_generation(session: AnySession) -> Generation | None:
    in_text = _generations_in_text(session)
    if in_text:
        return in_text[0]
    return session.generations[-1] if session.generations else None


def front_matter(session: AnySession) -> dict[str, Any]:
    """The metadata block as a plain dict (str, int, float, bool, None, a date, lists and dicts)."""
    g = headline_generation(session)
    counts = {outcome: sum(1 for x in session.generations if x.outcome == outcome) for outcome in OUTCOME_WORDS}
    models = list(dict.fromkeys(x.model.name for x in session.generations))
    data: dict[str, Any] = {
        "title": session.title,
        # A bare YYYY-MM-DD is a date for Obsidian's properties and pandoc alike.
        "date": _date_of(session.created_at),
        "created": session.created_at,
        "updated": session.updated_at,
        "session": session.id,
        "kind": session.kind,
        "generator": f"scriptorium {scriptorium_version()}",
        "model": g.model.name if g else None,
        "model_file": os.path.basename(g.model.path) if g else None,
        "model_sha256": g.model.sha256 if g else None,
        "quantization": g.model.quantization if g else None,
        "lora": g.lora.name if g and g.lora else None,
        "lora_scale": g.lora.scale if g and g.lora else None,
        "lora_sha256": g.lora.sha256 if g and g.lora else None,
        "sampler": dict(g.sampler) if g else None,
        "sampler_chain": g.chain_text() if g else None,
        "seed": g.seed if g else None,
        "logit_bias": g.bias.summary if g else None,
        "arithmetic": dict(g.arithmetic) if g and g.arithmetic else None,
        "server": (g.origin or None) if g else None,
        "generations": len(session.generations),
        "accepted": counts["accepted"],
        "partly_accepted": counts["partly_accepted"],
        "rejected": counts["rejected"],
        "undecided": counts["pending"],  # on screen when the app quit: neither kept nor thrown away
    }
    if g is not None and g.other_loras:  # a llama-server started with several --lora
        data["other_loras"] = [{"name": o.name, "scale": o.scale} for o in g.other_loras]
    if len(models) > 1:
        data["models"] = models
    if speculated := [x.speculation for x in session.generations if x.speculation]:
        # The text is plain decoding's either way; what the guesses saved is part of how it was made.
        data["speculation"] = {
            "generations": len(speculated),
            "guessers": list(dict.fromkeys(str(s.get("guesser")) for s in speculated)),
            "drafted": sum(int(s.get("drafted") or 0) for s in speculated),
            "accepted": sum(int(s.get("accepted") or 0) for s in speculated),
        }
    arithmetics = list(dict.fromkeys(x.arithmetic_text() for x in session.generations))
    if len(arithmetics) > 1:
        data["arithmetics"] = arithmetics  # the probabilities of different passages came from different arithmetic
    # What was pinned into every prompt: part of how the text was made.
    if session.memory.strip():
        data["memory"] = session.memory
    if session.note.strip():
        data["authors_note"] = session.note
        data["note_depth"] = session.note_depth
    lore = [
        {
            "generation": x.id,
            "entries": [f.name for f in x.lore if f.kept],
            **({"dropped": dropped} if (dropped := [f.name for f in x.lore if not f.kept]) else {}),
        }
        for x in session.generations
        if x.lore
    ]
    if lore:  # which lorebook entries each suggestion's prompt held (and left out for room)
        data["lore"] = lore
    healed = [{"generation": x.id, "text": x.healed} for x in session.generations if x.healed]
    if healed:  # the text before the cursor each healed prompt backed up over, written again by the model
        data["healed"] = healed
    filled = [{"generation": x.id, "after_cursor_chars": x.fim_after} for x in session.generations if x.fim_after]
    if filled:  # inserts whose prompt carried the text after the cursor (fill in the middle)
        data["fill_in_the_middle"] = filled
    return data


def _date_of(stamp: str) -> date | str:
    try:
        return datetime.fromisoformat(stamp).date()
    except ValueError:
        return stamp


def _yaml_block(data: dict[str, Any]) -> str:
    body = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1000)
    if "\x85" in body:
        # PyYAML writes U+0085 (NEL) raw when allowed Unicode, and reads it back as a line
        # break folded to a space: the title or memory would change. Escaped, it survives.
        body = yaml.safe_dump(data, sort_keys=False, allow_unicode=False, default_flow_style=False, width=1000)
    return f"---\n{body}---\n"


def describe_changes(before: Generation | None, after: Generation) -> str:
    """'temperature 0.8 → 1.1; LoRA none → style ×0.5; seed 42' (the seed is always given)."""
    parts: list[str] = []
    if before is not None:
        if settings_key(before)[0] != settings_key(after)[0]:
            parts.append(
                f"model {before.model.name} ({before.model.quantization}) → {after.model.name} ({after.model.quantization})"
            )
        if settings_key(before)[1] != settings_key(after)[1]:
            parts.append(f"LoRA {before.lora_text()} → {after.lora_text()}")
        old_values, new_values = before.sampler_values(), after.sampler_values()
        for key in dict.fromkeys([*old_values, *new_values]):
            old, new = old_values.get(key), new_values.get(key)
            if old != new:
                parts.append(f"{key} {_value_text(old)} → {_value_text(new)}")
        if settings_key(before)[3] != settings_key(after)[3]:
            parts.append(f"logit bias {after.bias.summary}")
        if settings_key(before)[4] != settings_key(after)[4]:
            parts.append(f"arithmetic {before.arithmetic_text()} → {after.arithmetic_text()}")
    parts.append(f"seed {after.seed}" if after.seed is not None else "seed unknown")
    return "; ".join(parts)


def _value_text(value: Any) -> str:
    return "unset" if value is None else (repr(value) if isinstance(value, (str, list)) else f"{value}")


def _notes(session: AnySession) -> dict[str, tuple[str, str]]:
    """generation id -> (footnote label, footnote text), for passages whose settings changed."""
    notes: dict[str, tuple[str, str]] = {}
    previous = headline_generation(session)
    for generation in _generations_in_text(session):
        if previous is not None and generation is not previous and not generation.same_settings(previous):
            when = generation.started_at.replace("T", " ")[:16]
            notes[generation.id] = (
                generation.id,
                f"Generation {generation.id} ({when}, {OUTCOME_WORDS[generation.outcome]}), settings changed: "
                f"{describe_changes(previous, generation)}.",
            )
        previous = generation
    return notes


def render_markdown(session: AnySession, *, mark_model: bool = False, settings_changes: bool = False) -> str:
    """The whole export as a string."""
    notes = _notes(session) if settings_changes else {}
    labels = {gid: label for gid, (label, _) in notes.items()}
    meta = front_matter(session)
    if isinstance(session, DraftSession):
        passages = [p for _, p in _passages(session)]
        own, start = _own_front_matter(session.text, passages)
        # The author's own properties first (theirs where both name one), then how the text was made.
        meta = {**own, **{key: value for key, value in meta.items() if key not in own}}
        passages = [Passage(p.start - start, p.end - start, p.generation) for p in passages]
        text = session.text[start:]
        if _written_in_markdown(session):
            body = render(text, passages, mark=mark_model, notes=labels)
        else:  # plain text: shown as the author saw it in the editor, lines and indentation kept
            text, passages = plain_as_markdown(text, passages)
            body = render(text, passages, mark=mark_model, notes=labels, hard_breaks=soft_break_ends(text))
        if start:
            body = body.lstrip("\n")  # the blank line after the author's block: the separator puts one back
        body = body if body.endswith("\n") or not body else body + "\n"
    else:
        body = _chat_body(session, mark_model, labels)
    # A note names settings, stop strings and models: text, not Markdown (`</s>` is no tag).
    footnotes = "".join(f"\n[^{label}]: {_plain(text)}\n" for label, text in notes.values())
    separator = "\n" if body else ""
    return _yaml_block(meta) + separator + body + footnotes


def _written_in_markdown(session: DraftSession) -> bool:
    """A draft kept in a Markdown file (.md) is written in Markdown: its author knows that a
    single newline is a soft break (many wrap their paragraphs at a width, for their
    editor or for diffs) and expects it read as Markdown, as their viewer does with the
    draft file itself. It is exported as written. Any other draft (.txt, or one only in
    its session) is plain text: its lines are kept as the author saw them in the editor."""
    return Path(session.draft_path or "").suffix.lower() in _MARKDOWN_SUFFIXES


def _own_front_matter(text: str, passages: list[Passage]) -> tuple[dict[str, Any], int]:
    """A draft that opens with its own YAML front matter (Obsidian's properties, a pandoc
    header): its mapping and where the text after it starts, so that the export has one
    block, not two (a second one is body text to Obsidian). ({}, 0) when there is none,
    it is not a mapping, or the model wrote inside it."""
    match = _FRONT_MATTER.match(text)
    if match is None or any(p.start < match.end() for p in passages):
        return {}, 0
    try:
        own = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return {}, 0
    return (own, match.end()) if isinstance(own, dict) and own else ({}, 0)


def _chat_body(session: ChatSession, mark_model: bool, labels: dict[str, str]) -> str:
    by_id = {g.id: g for g in session.generations}
    sections: list[str] = []
    if session.system_prompt:  # plain text (prompts/chat_system.txt)
        sections.append(f"## System prompt\n\n{_plain(session.system_prompt.rstrip())}\n")
    for turn in session.turns:
        if turn.role == "user":  # shown in the chat as typed
            sections.append(f"## Author\n\n{_plain(turn.content.rstrip())}\n")
            continue
        generation = by_id.get(turn.generation or "")
        # A model's name is the GGUF's or its file's: text, as the Model panel shows it.
        heading = f"Model ({_plain(generation.model.name)})" if generation else "Model"
        # A reply that did not end as the model chose (its last sentence may be half one)
        # says so in its heading, in the chat's words.
        if generation is not None and generation.ending:
            heading += f" · {generation.ending}"
        # The chat shows the reply as Markdown with its single line breaks kept (chat_reply.py).
        content = below_headings(turn.content.rstrip(), 2)  # under "## Model"
        passage = [Passage(0, len(content), turn.generation)] if turn.generation and content else []
        content, passage = replaced(content, passage, [(at, at, "\\") for at in html_starts(content)])
        content = render(content, passage, mark=mark_model, notes=labels, hard_breaks=soft_break_ends(content))
        sections.append(f"## {heading}\n\n{content}\n")
    return "\n".join(sections)


def _plain(text: str) -> str:
    markdown, _ = plain_as_markdown(text, [])
    return render(markdown, [], mark=False, notes={}, hard_breaks=soft_break_ends(markdown))


def default_export_path(session: AnySession, directory: str | os.PathLike[str] | None = None) -> Path:
    """`<directory or current folder>/<session id>.md`."""
    return Path(directory if directory is not None else Path.cwd()) / f"{session.id}.md"


def export_session(
    session: AnySession,
    out: str | os.PathLike[str] | None = None,
    *,
    force: bool = False,
    mark_model: bool = False,
    settings_changes: bool = False,
) -> Path:
    """Write the export atomically and return its path. `out` may be a folder.

    Raises ExportExistsError if the file exists and not `force`, ExportError for a path
    that cannot be written, and refuses ever to overwrite the draft file the session saves to.
    """
    target = Path(out).expanduser() if out is not None else default_export_path(session)
    if target.is_dir():
        target = default_export_path(session, target)
    if (
        isinstance(session, DraftSession)
        and session.draft_path
        and target.exists()
        and os.path.exists(session.draft_path)
        and os.path.samefile(target, session.draft_path)
    ):
        raise ExportError(f"{target} is the draft file of this session; export to another file")
    text = render_markdown(session, mark_model=mark_model, settings_changes=settings_changes)
    try:
        return atomic.write_text(target, text, overwrite=force)
    except atomic.FileExistsRefused:
        raise ExportExistsError(f"{target} already exists; use --force to overwrite it") from None
    except atomic.WriteError as error:
        raise ExportError(str(error)) from None
