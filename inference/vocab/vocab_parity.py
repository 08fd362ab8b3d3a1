"""Tokenization parity: does llama.cpp cut each line as the SentencePiece model does?

The verdict depends on which tokenizer scriptorium will use. With the `.model` named,
scriptorium feeds SentencePiece's own ids to llama.cpp, so a difference only says what
llama.cpp alone would have done (a warning). Without it, llama.cpp's cut is what the
model sees, and any difference breaks the contract.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from ..core.errors import ScriptoriumError
from .vocab_contract import MAX_LISTED, Clause

SAMPLE = (
    "La casa sul fiume aveva ancora le persiane verdi e un'edera che saliva fino al tetto.\n"
    "«Sei sveglia?» chiese la nonna dalla cucina. «Allora vieni a prendere il caffè.»\n"
    "Perché così presto? Città, università, ventitré: l'accento non è un capriccio.\n"
    "Nel 1987 il treno delle 6.30 costava 1.200 lire; oggi ne servono 3,50 euro.\n"
    "  Due spazi all'inizio,  e due  in mezzo alla riga.\n"
    "— Dov'è l'olio? — È finito… lo compro domani.\n"
    "\n"
    "Un caffè ☕ e una fetta di torta 🍰 a Tōkyō: 東京.\n"
    "Pòrtami quell'àncora, ché il mare è già alto.\n"
)
"""Accents, apostrophes, dialogue, double and leading spaces, a blank line, digits, emoji."""


@dataclass(frozen=True, slots=True)
class LineParity:
    line: str
    spm: tuple[str, ...]
    llama: tuple[str, ...]
    """llama.cpp's pieces, or one entry saying why it could not cut the line."""

    @property
    def identical(self) -> bool:
        return self.spm == self.llama


def compare_lines(
    lines: Sequence[str],
    spm_ids: Callable[[str], list[int]],
    llama_ids: Callable[[str], list[int]],
    spm_piece: Callable[[int], str],
    llama_piece: Callable[[int], str],
) -> list[LineParity]:
    """Both tokenizations of every line, without BOS, as piece texts (each side's own)."""
    results = []
    for line in lines:
        ours = tuple(spm_piece(i) for i in spm_ids(line))
        try:
            theirs = tuple(llama_piece(i) for i in llama_ids(line))
        except ScriptoriumError as error:
            theirs = (f"(llama.cpp cannot: {error})",)
        results.append(LineParity(line, ours, theirs))
    return results


def side_by_side(result: LineParity, context: int = 2) -> tuple[str, str, str]:
    """(line, SentencePiece's pieces, llama.cpp's) around the first difference: the
    differing stretch in [brackets], up to where both cuts meet again at the same place
    in the text, with `context` pieces either side."""
    a, b = result.spm, result.llama
    start = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    ends_a, ends_b = _ends(a), _ends(b)
    offset = ends_a[start - 1] if start else 0
    meet = min((set(ends_a[start:]) & set(ends_b[start:])) or {max(ends_a[-1:] + ends_b[-1:] + [offset])})
    stop_a = next((k + 1 for k in range(start, len(a)) if ends_a[k] == meet), len(a))
    stop_b = next((k + 1 for k in range(start, len(b)) if ends_b[k] == meet), len(b))

    def show(pieces: tuple[str, ...], stop: int) -> str:
        before, after = pieces[max(0, start - context) : start], pieces[stop : stop + context]
        lead = "… " if start > context else ""
        tail = " …" if stop + context < len(pieces) else ""
        return lead + " ".join([*before, "[" + " ".join(pieces[start:stop]) + "]", *after]) + tail

    return result.line, show(a, stop_a), show(b, stop_b)


def _ends(pieces: tuple[str, ...]) -> list[int]:
    """Where each piece ends, in characters of the cut text (byte tokens count as one)."""
    ends, total = [], 0
    for piece in pieces:
        total += 1 if piece.startswith("<0x") and piece.endswith(">") else len(piece)
        ends.append(total)
    return ends


def parity_clause(results: Sequence[LineParity], *, spm_used: bool, unused_because: str = "") -> Clause:
    """The parity clause; `spm_used` says the `.model` is named, so SentencePiece tokenizes.
    `unused_because`: why the engine would not use a `.model` that is named (its pieces)."""
    total = len(results)
    same = sum(r.identical for r in results)
    share = same / total if total else 1.0
    figures = f"{same} of {total} lines identical ({share:.0%})"
    diverging = [r for r in results if not r.identical]
    details = tuple(
        f"line {results.index(r) + 1}: {line!r}\n    SentencePiece: {ours}\n    llama.cpp:     {theirs}"
        for r in diverging[:MAX_LISTED]
        for line, ours, theirs in [side_by_side(r)]
    )
    warnings: tuple[str, ...] = ()
    if spm_used:
        holds = True
        summary = f"scriptorium tokenizes with SentencePiece; llama.cpp alone would give {figures}"
        if diverging:
            warnings = (
                f"llama.cpp's own tokenizer cuts {total - same} of {total} lines differently: harmless while the "
                ".model is named, wrong for any tool that feeds this GGUF text through llama.cpp",
            )
    else:
        holds = not diverging
        summary = f"llama.cpp tokenizes{unused_because}: {figures}"
    return Clause(
        name="parity",
        holds=holds,
        summary=summary,
        details=details,
        warnings=warnings,
        data={
            "lines": total,
            "identical": same,
            "share": share,
            "tokenizer": "sentencepiece" if spm_used else "llama.cpp",
            "divergences": [
                {"line": r.line, "sentencepiece": list(r.spm), "llama_cpp": list(r.llama)} for r in diverging[:20]
            ],
        },
    )
