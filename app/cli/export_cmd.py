"""`scriptorium export`: a session as Markdown with YAML front matter, from the shell."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "Export a session (the latest by default) to Markdown with YAML front matter."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "session",
        nargs="?",
        metavar="SESSION",
        help="session id (or its unique start) or path to a session file; default: the latest",
    )
    parser.add_argument(
        "-o",
        "--out",
        metavar="FILE.md",
        help="file or folder to write; '-' prints to stdout (default: ./<session id>.md)",
    )
    parser.add_argument("-f", "--force", action="store_true", help="overwrite FILE.md if it exists")
    parser.add_argument(
        "--mark-model", action="store_true", help='mark the passages the model wrote with <mark class="model">'
    )
    parser.add_argument(
        "--settings-changes",
        action="store_true",
        help="add a footnote to each model passage whose generation settings changed",
    )


def run(args: argparse.Namespace) -> int:
    from scriptorium.app.sessions.export import export_session, render_markdown
    from scriptorium.app.sessions import SessionError, SessionStore

    store = SessionStore()
    if args.session:
        session = store.load(args.session)
    else:
        session = store.latest()
        for problem in store.take_problems():
            print(f"scriptorium: warning: {problem}", file=sys.stderr)
        if session is None:
            raise SessionError(f"no sessions to export yet (none in {store.directory})")
    if args.out == "-":
        sys.stdout.write(render_markdown(session, mark_model=args.mark_model, settings_changes=args.settings_changes))
        return 0
    written = export_session(
        session,
        Path(args.out) if args.out else None,
        force=args.force,
        mark_model=args.mark_model,
        settings_changes=args.settings_changes,
    )
    print(written)
    return 0
