"""How `scriptorium compare` prints its rows: a table, Markdown or JSON, and per paragraph."""

from __future__ import annotations

import argparse
import json
from typing import Any

COLUMNS = (
    # (key, heading, format): bits per character first, the column that compares any two models.
    ("bits_per_character", "bits/char", "{:.4f}"),
    ("perplexity", "PPL", "{:.4f}"),
    ("kld_mean", "KLD", "{:.6f}"),
    ("kld_p99", "KLD p99", "{:.6f}"),
    ("top1_agreement", "top-1", "{:.2%}"),
    ("prefill_tps", "prefill t/s", "{:.1f}"),
    ("decode_tps", "decode t/s", "{:.1f}"),
    ("file_bytes", "file", "bytes"),
    ("kv_bytes_per_token", "KV/token", "bytes"),
    ("peak_memory_bytes", "peak mem", "bytes"),
)


def row_record(label: str, planned: Any, row: Any, notes: list[str]) -> dict:
    """One row as plain data (what --json prints)."""
    score = row.score
    notes = list(notes) + [n for n in (row.note, score.kld_note) if n]
    if score.cancelled:
        notes.append("stopped before the end of the text")
    return {
        "label": label,
        "model": str(planned.options.model_path),
        "lora": str(planned.options.lora_path) if row.scale is not None else None,
        "lora_scale": row.scale,
        "n_ctx": score.n_ctx,
        "tokenizer": row.tokenizer,
        "n_vocab": row.n_vocab,
        "tokens": score.tokens,
        "characters": score.characters,
        "bits": score.bits,
        "bits_per_character": score.bits_per_character,
        "perplexity": score.perplexity,
        "ppl_tokens": score.ppl_tokens,
        "kld_mean": score.kld_mean,
        "kld_p99": score.kld_p99,
        "top1_agreement": score.top1_agreement,
        "prefill_tps": score.prefill_tokens / score.prefill_ms * 1000.0 if score.prefill_ms else None,
        "decode_tps": row.decode_tps,
        "file_bytes": planned.file_bytes,
        "kv_bytes_per_token": row.kv_bytes_per_token,
        "peak_memory_bytes": row.peak_rss_bytes,
        "notes": notes,
        "token_bits": score.token_bits,
        "token_starts": score.token_starts,
    }


def print_results(
    results: list[dict], text: str, args: argparse.Namespace, *, planned_rows: int, interrupted: bool
) -> None:
    from scriptorium.inference.comparison import paragraph_spans

    spans = paragraph_spans(text)
    for record in results:
        record["paragraphs"] = _paragraphs(record, spans)
    if args.json:
        shown = [{k: v for k, v in r.items() if k not in ("token_bits", "token_starts")} for r in results]
        print(
            json.dumps(
                {
                    "text": {"path": args.text, "characters": len(text), "paragraphs": len(spans)},
                    "rows": shown,
                    "finished_rows": len(results),
                    "planned_rows": planned_rows,
                    "interrupted": interrupted,
                },
                ensure_ascii=False,
            )
        )
        return
    cells = [["model"] + [heading for _, heading, _ in COLUMNS]]
    cells += [[r["label"]] + [_cell(r.get(key), style) for key, _, style in COLUMNS] for r in results]
    print(_markdown(cells) if args.markdown else _aligned(cells))
    notes = [(r["label"], note) for r in results for note in r.get("notes", ())]
    if notes:
        print()
        for label, note in notes:
            print(f"{'- ' if args.markdown else ''}{label}: {note}")
    if args.paragraphs and results:
        print()
        print(_paragraph_table(results, text, spans, markdown=args.markdown))


def _paragraphs(record: dict, spans: list[tuple[int, int]]) -> list[float | None]:
    from scriptorium.inference.comparison import TextScore, paragraph_bits_per_character

    if "token_bits" not in record:
        return []
    score = TextScore(
        n_ctx=0, tokens=0, characters=0, bits=0.0, token_bits=record["token_bits"], token_starts=record["token_starts"]
    )
    return paragraph_bits_per_character(score, spans)


def _paragraph_table(results: list[dict], text: str, spans: list[tuple[int, int]], *, markdown: bool) -> str:
    scored = [r for r in results if r.get("paragraphs")]
    cells = [["#", "paragraph"] + [r["label"] for r in scored]]
    for number, (start, end) in enumerate(spans):
        opening = " ".join(text[start:end].split())
        opening = opening if len(opening) <= 40 else opening[:39] + "…"
        cells.append([str(number + 1), opening] + [_cell(r["paragraphs"][number], "{:.3f}") for r in scored])
    heading = "bits per character, paragraph by paragraph"
    return f"{heading}\n\n{_markdown(cells)}" if markdown else f"{heading}\n{_aligned(cells)}"


def _cell(value: Any, style: str) -> str:
    if value is None:
        return "-"
    if style == "bytes":
        from scriptorium.app.units import format_bytes

        return format_bytes(int(value))
    return style.format(value)


def _aligned(cells: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    lines = []
    for number, row in enumerate(cells):
        parts = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        lines.append("  ".join(parts).rstrip())
        if number == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _markdown(cells: list[list[str]]) -> str:
    def line(row: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in row) + " |"

    return "\n".join(
        [line(cells[0]), "|" + "|".join(["---"] + ["---:"] * (len(cells[0]) - 1)) + "|"]
        + [line(row) for row in cells[1:]]
    )
