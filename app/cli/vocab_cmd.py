"""`scriptorium vocab`: check a converted GGUF against the SentencePiece model it came from.

The checks are inference/vocab/vocab_contract.py and vocab_parity.py; this module reads the
files, runs them and prints the findings. Exit 0: the contract holds; 1: it does not
(the failed clauses are named); 2: bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HELP = (
    "Check a GGUF's vocabulary against the SentencePiece .model the model was trained with: pieces, "
    "byte tokens, settings, model type, and whether llama.cpp cuts text as SentencePiece does."
)
EXIT_BROKEN = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", type=Path, metavar="MODEL.gguf", required=True, help="the converted GGUF model")
    parser.add_argument(
        "--spm", type=Path, metavar="tokenizer.model", required=True, help="the SentencePiece model it was trained with"
    )
    parser.add_argument(
        "--text",
        action="append",
        metavar="FILE",
        default=[],
        help="text to tokenize both ways, line by line (repeatable; default: a built-in Italian sample)",
    )
    parser.add_argument(
        "--llama-tokenizer",
        action="store_true",
        help="judge parity for running without the .model named, when llama.cpp tokenizes: "
        "then any difference breaks the contract",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    from scriptorium.inference.core.errors import ScriptoriumError
    from scriptorium.inference.gguf.gguf_vocab import read_gguf_vocab
    from scriptorium.inference.vocab.spm_model import load_spm
    from scriptorium.inference.vocab.vocab_contract import (
        Clause,
        check_byte_tokens,
        check_model_type,
        check_pieces,
        check_settings,
        check_unknown_characters,
        piece_text_mismatch,
    )
    from scriptorium.inference.vocab.vocab_parity import SAMPLE, compare_lines, parity_clause

    from .common import read_draft, read_text_file

    spm = load_spm(args.spm)
    gguf = read_gguf_vocab(args.model)
    texts = [read_draft(name) if name == "-" else read_text_file(name, "text file") for name in args.text] or [SAMPLE]
    lines = [line for text in texts for line in text.splitlines() if line.strip()]
    if not lines:  # parity would hold on nothing at all
        raise ScriptoriumError(f"--text {', '.join(args.text)}: no line of text to tokenize both ways")
    pieces = check_pieces(spm, gguf)
    clauses = [pieces, check_byte_tokens(spm, gguf), check_settings(spm, gguf, lines), check_model_type(spm, gguf)]
    # The engine uses the .model only when its pieces' texts are the GGUF's (tokenizer.py):
    # otherwise llama.cpp tokenizes, named or not, and that is the parity that counts.
    unusable = bool(piece_text_mismatch(spm.pieces, gguf.tokens))
    spm_used = not (args.llama_tokenizer or unusable)
    if pieces.data["duplicates"]:
        clauses.append(
            Clause("parity", False, "not run: llama.cpp would abort loading a vocabulary with duplicate texts")
        )
    else:
        clauses.append(
            parity_clause(
                _parity(args.model, gguf, spm, lines, compare_lines),
                spm_used=spm_used,
                unused_because=" (the .model's pieces do not match the GGUF's, so scriptorium cannot use it)"
                if unusable and not args.llama_tokenizer
                else "",
            )
        )
    clauses.append(check_unknown_characters(spm, lines, spm_used=spm_used))
    failed = [c.name for c in clauses if not c.holds]
    if args.json:
        print(
            json.dumps(
                {
                    "holds": not failed,
                    "failed": failed,
                    "spm": {
                        "path": str(spm.path),
                        "pieces": len(spm),
                        "model_type": spm.model_type,
                        "byte_fallback": spm.byte_fallback,
                    },
                    "gguf": {"path": str(gguf.path), "tokens": len(gguf), "tokenizer_model": gguf.tokenizer_model},
                    "clauses": [
                        {
                            "name": c.name,
                            "holds": c.holds,
                            "summary": c.summary,
                            "details": list(c.details),
                            "warnings": list(c.warnings),
                            "data": c.data,
                        }
                        for c in clauses
                    ],
                },
                ensure_ascii=False,
                default=str,
            )
        )
    else:
        _print(spm, gguf, clauses, failed)
    return EXIT_BROKEN if failed else 0


def _parity(model: Path, gguf, spm, lines: list[str], compare_lines):
    from scriptorium.inference.vocab.tokenizer import LlamaVocab

    vocab = LlamaVocab(model, gguf.add_space_prefix)
    try:
        return compare_lines(
            lines,
            spm.encode,
            lambda text: vocab.tokenizer.tokenize(text, add_bos=False, special=False),
            lambda i: spm.pieces[i],
            lambda i: gguf.tokens[i] if 0 <= i < len(gguf) else f"<id {i}>",
        )
    finally:
        vocab.close()


def _print(spm, gguf, clauses, failed: list[str]) -> None:
    print(
        f"{spm.path.name} ({spm.model_type}, {len(spm):,} pieces) against {gguf.path.name} "
        f"({len(gguf):,} tokens, tokenizer '{gguf.tokenizer_model or 'none'}')"
    )
    warnings = 0
    for clause in clauses:
        print(f"{'holds' if clause.holds else 'FAILS'}  {clause.name}: {clause.summary}")
        for detail in clause.details:
            print("\n".join("       " + line for line in detail.splitlines()))
        for warning in clause.warnings:
            print(f"       warning: {warning}")
            warnings += 1
    if failed:
        print(f"the contract does not hold: {', '.join(failed)}")
    else:
        print("the contract holds" + (f" ({warnings} warning{'s' if warnings != 1 else ''})" if warnings else ""))
    sys.stdout.flush()
