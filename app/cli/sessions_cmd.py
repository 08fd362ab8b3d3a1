"""`scriptorium sessions`: list the saved sessions from the shell."""

from __future__ import annotations

import argparse
import json
import sys

HELP = "List saved sessions, most recently updated first."
TITLE_WIDTH = 40
ID_WIDTH = 40


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print a JSON list (id, title, kind, dates, model, words, path)"
    )


def _padded(cell: str, width: int, right: bool) -> str:
    # In terminal cells: a title in Chinese or Japanese takes two a character, and ljust counted one.
    from rich.cells import cell_len

    fill = " " * max(width - cell_len(cell), 0)
    return fill + cell if right else cell + fill


def run(args: argparse.Namespace) -> int:
    from scriptorium.app.display_text import display_safe
    from scriptorium.app.sessions import SessionStore

    store = SessionStore()
    summaries = store.list()
    for problem in store.take_problems():
        print(f"scriptorium: warning: {problem}", file=sys.stderr)
    if args.json:
        print(json.dumps([s.as_dict() for s in summaries], ensure_ascii=False, indent=1))
        return 0
    if not summaries:
        print(f"no sessions yet (they are kept in {store.directory})", file=sys.stderr)
        return 0
    rows = [("ID", "TITLE", "KIND", "UPDATED", "MODEL", "WORDS")]
    rows += [
        (
            display_safe(s.id, ID_WIDTH),
            display_safe(s.title, TITLE_WIDTH),
            s.kind,
            display_safe(s.updated_at.replace("T", " ")[:16], 16),
            display_safe(s.model or "-", 30),
            str(s.words),
        )
        for s in summaries
    ]
    from rich.cells import cell_len

    widths = [max(cell_len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [_padded(cell, widths[i], right=i == len(row) - 1) for i, cell in enumerate(row)]
        print("  ".join(cells).rstrip())
    return 0
