"""The vocabulary contract between the author's SentencePiece model and a converted GGUF.

A model's ids mean something only if the GGUF holds the very vocabulary it was trained
with, and its text is cut as in training. Each clause below compares what the `.model`
says with what the GGUF says and returns plain findings; `scriptorium vocab` prints
them and the engine uses `piece_text_mismatch` before tokenizing with SentencePiece.
Parity (tokenizing text both ways) is in vocab_parity.py.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..core.settings import describe_ranges
from ..core.text import describe_character, unknown_warning
from ..gguf.gguf_vocab import GGUFVocab
from .spm_model import BYTE, NORMAL, PIECE_TYPE_NAMES, USER_DEFINED, SpmModel

GGUF_TYPE_NAMES = {0: "UNDEFINED", 1: "NORMAL", 2: "UNKNOWN", 3: "CONTROL", 4: "USER_DEFINED", 5: "UNUSED", 6: "BYTE"}
ALLOWED_TYPES = {t: {t} for t in PIECE_TYPE_NAMES} | {USER_DEFINED: {USER_DEFINED, NORMAL}}
"""SentencePiece piece type -> the GGUF token types a faithful converter writes. The
numbers coincide; llama.cpp's converter writes user-defined pieces as NORMAL unless told."""
TYPE_MAPPING = ", ".join(
    f"{name} -> {' or '.join(GGUF_TYPE_NAMES[t] for t in sorted(ALLOWED_TYPES[code], reverse=True))}"
    for code, name in PIECE_TYPE_NAMES.items()
)
SENTENCEPIECE_TOKENIZERS = ("llama", "t5")
"""GGUF tokenizer models a SentencePiece vocabulary converts to: 'llama' (llama.cpp merges
its pieces by score), 't5' (llama.cpp's unigram). 'gpt2' is byte-level BPE, 'bert' WordPiece."""
BYTE_TEXT = re.compile(r"<0x[0-9A-Fa-f]{2}>")
MAX_LISTED = 8


@dataclass(frozen=True, slots=True)
class Clause:
    """One clause of the contract: whether it holds, in one line, then the evidence."""

    name: str
    holds: bool
    summary: str
    details: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    data: dict[str, Any] = field(default_factory=dict)


def _nfkc_only(a: str, b: str) -> bool:
    return a != b and unicodedata.normalize("NFKC", a) == unicodedata.normalize("NFKC", b)


def _shift(spm_pieces: Sequence[str], tokens: Sequence[str], first: int) -> int | None:
    """k when GGUF id i + k holds SPM piece i from `first` on (a token inserted or lost)."""
    window = range(first, min(len(spm_pieces), first + 64))
    for k in (1, -1, 2, -2, 3, -3):
        hits = sum(1 for i in window if 0 <= i + k < len(tokens) and tokens[i + k] == spm_pieces[i])
        if window and hits >= 0.9 * len(window):
            return k
    return None


def piece_text_mismatch(spm_pieces: Sequence[str], tokens: Sequence[str]) -> str:
    """'' when every SPM id holds the same text in the GGUF, else a one-line summary."""
    if len(tokens) < len(spm_pieces):
        return f"the GGUF has {len(tokens):,} tokens for {len(spm_pieces):,} SentencePiece pieces"
    first = next((i for i, p in enumerate(spm_pieces) if tokens[i] != p), None)
    if first is None:
        return ""
    count = sum(1 for i, p in enumerate(spm_pieces) if tokens[i] != p)
    shift = _shift(spm_pieces, tokens, first)
    how = (
        f"shifted by {shift} from id {first}"
        if shift is not None
        else f"first at id {first}: {spm_pieces[first]!r} in the .model, {tokens[first]!r} in the GGUF"
    )
    if shift is None and _nfkc_only(spm_pieces[first], tokens[first]):
        how += " (they differ only by NFKC normalization)"
    return f"{count:,} of {len(spm_pieces):,} pieces differ, {how}"


def check_pieces(spm: SpmModel, gguf: GGUFVocab) -> Clause:
    """Same text, same score (as float32) and a matching type for every SPM id."""
    n = len(spm)
    problems: list[tuple[int, str]] = []
    summary = piece_text_mismatch(spm.pieces, gguf.tokens)
    if len(gguf) >= n:
        spm_scores = np.asarray(spm.scores, dtype=np.float32)
        for i in range(n):
            spm_piece, token = spm.pieces[i], gguf.tokens[i]
            if spm_piece != token:
                note = " (differ only by NFKC normalization)" if _nfkc_only(spm_piece, token) else ""
                problems.append((i, f"text {spm_piece!r} in the .model, {token!r} in the GGUF{note}"))
            elif gguf.scores is not None and spm_scores[i] != gguf.scores[i]:
                problems.append(
                    (i, f"{spm_piece!r} scores {spm_scores[i]:g} in the .model, {gguf.scores[i]:g} in the GGUF")
                )
            elif gguf.types is not None and int(gguf.types[i]) not in ALLOWED_TYPES.get(spm.types[i], {spm.types[i]}):
                problems.append(
                    (
                        i,
                        f"{spm_piece!r} is {PIECE_TYPE_NAMES.get(spm.types[i], spm.types[i])} in the .model, "
                        f"{GGUF_TYPE_NAMES.get(int(gguf.types[i]), gguf.types[i])} in the GGUF",
                    )
                )
        if gguf.scores is None:
            problems.append((0, "the GGUF has no token scores: llama.cpp ranks SentencePiece merges by them"))
    duplicates = _duplicates(gguf.tokens)
    if duplicates:
        problems.append(
            (
                duplicates[0][1],
                f"{len(duplicates)} token texts appear twice (first {duplicates[0][0]!r} at "
                f"ids {duplicates[0][1]} and {duplicates[0][2]}): llama.cpp aborts loading it",
            )
        )
    if not summary and problems:
        summary = f"{len(problems):,} of {n:,} pieces differ, first at id {problems[0][0]}"
    holds = not summary and not problems
    return Clause(
        name="pieces",
        holds=holds,
        summary=f"all {n:,} pieces match: text, score (float32) and type" if holds else summary,
        details=tuple(f"id {i}: {text}" for i, text in problems[:MAX_LISTED]) + (f"types: {TYPE_MAPPING}",),
        data={
            "spm_pieces": n,
            "gguf_tokens": len(gguf),
            "mismatches": [{"id": i, "problem": t} for i, t in problems[:50]],
            "mismatch_count": len(problems),
            "type_mapping": TYPE_MAPPING,
            "duplicates": len(duplicates),
        },
    )


def _duplicates(tokens: Sequence[str]) -> list[tuple[str, int, int]]:
    seen: dict[str, int] = {}
    found = []
    for i, text in enumerate(tokens):
        if text in seen:
            found.append((text, seen[text], i))
        else:
            seen[text] = i
    return found


def check_byte_tokens(spm: SpmModel, gguf: GGUFVocab) -> Clause:
    """Where the 256 byte tokens are, whether they are exact and in order, impostors, rows."""
    types = gguf.types if gguf.types is not None else np.zeros(len(gguf), dtype=np.int64)
    byte_ids = [int(i) for i in np.flatnonzero(types == BYTE)]
    problems: list[str] = []
    n = len(spm)
    if not byte_ids:
        where = "none"
        problems.append(
            "no byte tokens: llama.cpp aborts on any character with no piece (scriptorium refuses such text instead)"
        )
    elif spm.byte_fallback:
        where = f"inside the SentencePiece vocabulary (byte_fallback), ids {describe_ranges(tuple(byte_ids))}"
        if byte_ids != list(spm.byte_piece_ids):
            problems.append(f"the .model's byte pieces are ids {describe_ranges(spm.byte_piece_ids)}")
    else:
        where = f"appended after the {n:,} SentencePiece pieces, ids {describe_ranges(tuple(byte_ids))}"
        if byte_ids[0] < n:
            where = f"ids {describe_ranges(tuple(byte_ids))}, among the SentencePiece pieces"
    if byte_ids:
        texts = [gguf.tokens[i] for i in byte_ids]
        expected = [f"<0x{b:02X}>" for b in range(256)]
        if texts != expected:
            if sorted(texts) == expected:
                problems.append("the byte tokens are out of order: " + _first_disorder(byte_ids, texts, expected))
            else:
                problems.append(f"{len(byte_ids)} byte tokens, not exactly <0x00>..<0xFF>")
        elif byte_ids != list(range(byte_ids[0], byte_ids[0] + 256)):
            problems.append(f"the byte tokens are not consecutive ({describe_ranges(tuple(byte_ids))})")
    impostors = [i for i, t in enumerate(gguf.tokens) if BYTE_TEXT.fullmatch(t) and int(types[i]) != BYTE]
    if impostors:
        problems.append(
            f"{len(impostors)} tokens look like byte tokens but are not typed BYTE "
            f"(first {gguf.tokens[impostors[0]]!r} at id {impostors[0]})"
        )
    extra = [i for i in range(n, len(gguf)) if int(types[i]) != BYTE]
    if extra:
        problems.append(
            f"{len(extra)} tokens after the SentencePiece pieces are not byte tokens "
            f"(first {gguf.tokens[extra[0]]!r} at id {extra[0]})"
        )
    rows_line = (
        f"token_embd has {gguf.embedding_rows:,} rows, output "
        + (f"{gguf.output_rows:,}" if gguf.output_rows is not None else "tied to token_embd")
        + f", for {len(gguf):,} tokens"
    )
    for name, rows in (("token_embd", gguf.embedding_rows), ("output", gguf.output_rows)):
        if rows is not None and rows < len(gguf):
            problems.append(f"{name} has {rows:,} rows for {len(gguf):,} tokens: ids from {rows:,} have no row")
    holds = not problems
    return Clause(
        name="byte tokens",
        holds=holds,
        summary=(f"256 byte tokens <0x00>..<0xFF> in order, typed BYTE, {where}" if holds else problems[0]),
        details=(() if holds else (f"where: {where}",)) + tuple(problems[1:]) + (rows_line,),
        data={
            "ids": describe_ranges(tuple(byte_ids)),
            "count": len(byte_ids),
            "location": where,
            "problems": problems,
            "impostors": impostors[:50],
            "embedding_rows": gguf.embedding_rows,
            "output_rows": gguf.output_rows,
        },
    )


def _first_disorder(ids: Sequence[int], texts: Sequence[str], expected: Sequence[str]) -> str:
    k = next(k for k, (t, e) in enumerate(zip(texts, expected)) if t != e)
    return f"id {ids[k]} holds {texts[k]}, where {expected[k]} belongs"


def check_settings(spm: SpmModel, gguf: GGUFVocab, sample: Sequence[str]) -> Clause:
    """Special ids, the space prefix, whitespace and normalization."""
    problems: list[str] = []
    warnings: list[str] = []
    details: list[str] = []
    for label, spm_id, gguf_id in (
        ("unk", spm.unk_id, gguf.unk_id),
        ("bos", spm.bos_id, gguf.bos_id),
        ("eos", spm.eos_id, gguf.eos_id),
    ):
        details.append(f"{label}: id {spm_id} in the .model, {gguf_id} in the GGUF")
        if spm_id >= 0 and spm_id != gguf_id:
            problems.append(f"the {label} id is {spm_id} in the .model but {gguf_id} in the GGUF")
    details.append(f"add_bos: {str(gguf.add_bos).lower()}" + _default_note(gguf, "add_bos_token"))
    details.append(
        f"add_space_prefix: {str(gguf.add_space_prefix).lower()} in the GGUF"
        + _default_note(gguf, "add_space_prefix")
        + f", add_dummy_prefix: {str(spm.add_dummy_prefix).lower()} in the .model"
    )
    if gguf.add_space_prefix != spm.add_dummy_prefix:
        problems.append(
            f"add_space_prefix is {str(gguf.add_space_prefix).lower()} in the GGUF but add_dummy_prefix "
            f"is {str(spm.add_dummy_prefix).lower()} in the .model: every text's first word is cut differently"
        )
    details.append(f"remove_extra_whitespaces: {str(spm.remove_extra_whitespaces).lower()} in the .model")
    if spm.remove_extra_whitespaces and gguf.tokenizer_model == "llama":
        warnings.append(
            "the .model collapses repeated, leading and trailing spaces; llama.cpp's tokenizer for a "
            "'llama' vocabulary keeps them"
        )
    details.append(f"normalization: {spm.normalizer}")
    changed = normalization_changes(spm, sample)
    if spm.normalizer.startswith(("nmt_nfkc", "nfkc")):
        effect = "; ".join(changed[:MAX_LISTED]) if changed else "no character of the sample changes"
        warnings.append(
            f"the .model normalizes text with {spm.normalizer} and llama.cpp applies no NFKC to a 'llama' "
            f"vocabulary: {effect}"
        )
    holds = not problems
    return Clause(
        name="specials and settings",
        holds=holds,
        summary="special ids and the space prefix agree" if holds else problems[0],
        details=tuple(details) + tuple(problems[1:]),
        warnings=tuple(warnings),
        data={
            "unk": [spm.unk_id, gguf.unk_id],
            "bos": [spm.bos_id, gguf.bos_id],
            "eos": [spm.eos_id, gguf.eos_id],
            "add_bos": gguf.add_bos,
            "add_space_prefix": gguf.add_space_prefix,
            "add_dummy_prefix": spm.add_dummy_prefix,
            "remove_extra_whitespaces": spm.remove_extra_whitespaces,
            "normalization": spm.normalizer,
            "normalization_changes": changed,
            "problems": problems,
        },
    )


def _default_note(gguf: GGUFVocab, key: str) -> str:
    return " (not in the file: llama.cpp's default)" if f"tokenizer.ggml.{key}" in gguf.defaulted else ""


def normalization_changes(spm: SpmModel, sample: Sequence[str]) -> list[str]:
    """How the .model's normalizer rewrites the sample's characters: ["'…' -> '...'"]."""
    changes = []
    for char in sorted(set("".join(sample)) - {" "}):
        normalized = spm.normalize("a" + char + "a")
        if normalized not in ("a" + char + "a", "▁a" + char + "a"):
            rewritten = normalized.removeprefix("▁").removeprefix("a").removesuffix("a").replace("▁", " ")
            changes.append(f"{describe_character(char)} -> {rewritten!r}")
    return changes


def check_unknown_characters(spm: SpmModel, sample: Sequence[str], *, spm_used: bool) -> Clause:
    """The sample's characters the .model reads as <unk> (SpmModel.unknown_characters). With
    the .model tokenizing, the model sees <unk> for each, the same token for «, ? and 7: the
    contract does not hold for this text. Without it, llama.cpp spells them in byte tokens
    instead, which training never showed the model (a warning)."""
    unknown = spm.unknown_characters("\n".join(sample))
    data = {"characters": list(unknown), "byte_fallback": spm.byte_fallback, "fails": spm_used}
    if not unknown:
        return Clause(
            name="unknown characters", holds=True, data=data, summary="no character of the text is <unk> to the .model"
        )
    said = unknown_warning(unknown, f"the .model ({spm.path.name})")
    details = tuple(describe_character(c) for c in unknown[:MAX_LISTED])
    if spm_used:
        return Clause(name="unknown characters", holds=False, summary=said, details=details, data=data)
    return Clause(
        name="unknown characters",
        holds=True,
        details=details,
        data=data,
        summary=f"llama.cpp tokenizes: it spells {len(unknown)} character(s) in byte tokens",
        warnings=(f"{said} in training: byte tokens for them are new to it",),
    )


def check_model_type(spm: SpmModel, gguf: GGUFVocab) -> Clause:
    """unigram or BPE, and what llama.cpp will do with it."""
    data = {"spm": spm.model_type, "gguf": gguf.tokenizer_model}
    if gguf.tokenizer_model not in SENTENCEPIECE_TOKENIZERS:
        return Clause(
            name="model type",
            holds=False,
            data=data,
            summary=(
                f"the GGUF's tokenizer is '{gguf.tokenizer_model or 'none'}', not a SentencePiece vocabulary ('llama', "
                "or 't5' for unigram): it was not converted from a .model"
            ),
        )
    warnings = []
    if spm.model_type == "unigram" and gguf.tokenizer_model == "llama":
        warnings.append(
            "the .model is unigram but the GGUF says tokenizer 'llama': llama.cpp merges pieces by score "
            "(BPE-style), not unigram's best path, so it cuts most text differently from training. "
            "Name the .model (--spm, or tokenizer = in the config's [model]) so scriptorium tokenizes "
            "with SentencePiece"
        )
    return Clause(
        name="model type",
        holds=True,
        summary=f"{spm.model_type} .model, GGUF tokenizer '{gguf.tokenizer_model or 'none'}'",
        warnings=tuple(warnings),
        data=data,
    )
