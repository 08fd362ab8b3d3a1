"""`scriptorium sessions`: list the saved sessions from the shell."""

from __future__ import annotations

import argparse
import json
import sys

HELP = "List saved sessions, most recently updated first."
TITLE_WIDTH = 40


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print a JSON list (id, title, kind, dates, model, words, path)")


def _short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def run(args: argparse.Namespace) -> int:
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
    rows += [(s.id, _short(s.title, TITLE_WIDTH), s.kind, s.updated_at.replace("T", " ")[:16],
              _short(s.model or "-", 30), str(s.words)) for s in summaries]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [cell.rjust(widths[i]) if i == len(row) - 1 else cell.ljust(widths[i]) for i, cell in enumerate(row)]
        print("  ".join(cells).rstrip())
    return 0
