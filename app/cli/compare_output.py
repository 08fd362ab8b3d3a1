"""How `scriptorium compare` prints its rows: a table, Markdown or JSON, and per paragraph."""

from __future__ import annotations

import argparse
import json


def print_results(
    results: list[dict], text: str, args: argparse.Namespace, *, planned_rows: int, interrupted: bool
) -> None:
    from scriptorium.app.models.comparing import COLUMNS, cell, paragraph_bits
    from scriptorium.inference.local.comparison import paragraph_spans

    spans = paragraph_spans(text)
    for record in results:
        record["paragraphs"] = paragraph_bits(record, spans)
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
    cells += [[r["label"]] + [cell(r.get(key), style) for key, _, style in COLUMNS] for r in results]
    print(_markdown(cells) if args.markdown else _aligned(cells))
    notes = [(r["label"], note) for r in results for note in r.get("notes", ())]
    if notes:
        print()
        for label, note in notes:
            print(f"{'- ' if args.markdown else ''}{label}: {note}")
    if args.paragraphs and results:
        print()
        print(_paragraph_table(results, text, spans, markdown=args.markdown))


def _paragraph_table(results: list[dict], text: str, spans: list[tuple[int, int]], *, markdown: bool) -> str:
    from scriptorium.app.models.comparing import cell, paragraph_opening

    scored = [r for r in results if r.get("paragraphs")]
    cells = [["#", "paragraph"] + [r["label"] for r in scored]]
    for number, (start, end) in enumerate(spans):
        cells.append(
            [str(number + 1), paragraph_opening(text[start:end])]
            + [cell(r["paragraphs"][number], "{:.3f}") for r in scored]
        )
    heading = "bits per character, paragraph by paragraph"
    return f"{heading}\n\n{_markdown(cells)}" if markdown else f"{heading}\n{_aligned(cells)}"


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
