"""`scriptorium [DRAFT.md] [--resume] [--model PATH|NAME] [--lora PATH --lora-scale F] [--ctx N] [--preset NAME] ...`.

Flags over the config file over built-in defaults (run_settings.py). A bad flag is one
line and exit status 2 before any screen is drawn; a bad config file is not: the app
starts with defaults where it can and shows each problem as a notification.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from scriptorium.app.cli.common import (
    SERVER_MODEL,
    add_model_arguments,
    add_sampler_arguments,
    add_speculation_arguments,
    add_server_argument,
    choose_loader,
)

if TYPE_CHECKING:
    from scriptorium.app.tui.app import ScriptoriumApp

HELP = (
    "Write with your own language model: your draft in an editor, the model continuing it, "
    "a chat, and llama.cpp's numbers (probabilities, KV cache, speed) beside them."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from scriptorium.app.config.run_settings import add_config_argument

    parser.add_argument(
        "draft",
        nargs="?",
        type=Path,
        metavar="DRAFT.md",
        help="the draft to edit, saved with its session; created if it does not exist (one named "
        "like a subcommand needs a path: ./models)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="reopen the last session, with the model it was last written with unless --model names one",
    )
    add_config_argument(parser)
    add_model_arguments(parser)
    add_server_argument(parser)
    add_sampler_arguments(parser)
    add_speculation_arguments(parser)


def run(args: argparse.Namespace) -> int:
    if sys.__stderr__ is None:
        # Textual draws the screen on the stderr the process started with: closed (2>&-),
        # the editor ran blind, or hung half-started, deaf to kill.
        from scriptorium.inference.core.errors import ScriptoriumError

        raise ScriptoriumError("standard error is closed, and the editor draws its screen there")
    from scriptorium.app.tui.process_tuning import pause_collector_for_start_up

    pause_collector_for_start_up()
    try:
        app = build_app(args)
    except BaseException:
        gc.enable()  # no app to resume it: the error is said and the process goes on to exit
        raise
    app.run()
    # Said in the app too, but the save that quits said it as the screen went: the terminal keeps it.
    for line in app.sessions.gone_files.after_exit():
        print(f"scriptorium: {line}", file=sys.stderr)
    return app.return_code or 0


def build_app(args: argparse.Namespace) -> "ScriptoriumApp":
    """The app for these arguments, not yet running (tests drive it with Pilot)."""
    # Imported here so `scriptorium --help` stays fast.
    from scriptorium.inference.core.errors import ScriptoriumError

    from scriptorium.app.config.file import load_config_lenient
    from scriptorium.app.models.startup import ModelSource
    from scriptorium.app.config.run_settings import run_settings
    from scriptorium.app.tui.app import ScriptoriumApp
    from scriptorium.app.config.tui_settings import TuiSettings
    from scriptorium.app.i18n.choice import chosen_language
    from scriptorium.app.i18n.language import Language

    if args.resume and args.draft is not None:
        raise ScriptoriumError("--resume reopens the last session; give either it or DRAFT.md")
    config, problems = load_config_lenient(args.config)
    try:
        chosen = run_settings(args, config)
    except ScriptoriumError:
        if not problems:
            raise
        # A bad value in the config (not on the command line) must not stop the app.
        config, chosen = type(config)(source=config.source), run_settings(args, type(config)(source=config.source))
    # Checked now, so a bad --ctx or --lora-scale is one line before the screen appears.
    chosen.load_options(Path(chosen.model or "model.gguf"))
    frames = {"frames_per_second": config.ui.frames_per_second} if config.ui.frames_per_second else {}
    settings = TuiSettings(
        language=Language.load(chosen_language(config.ui.language, os.environ)),
        sampler=chosen.sampler,
        bias=chosen.bias,
        threads=chosen.n_threads,
        speculation=chosen.speculation,
        **frames,
    ).validated()
    loader, remote = choose_loader(chosen.server)
    return ScriptoriumApp(
        # A server has its model loaded: connect at once, nothing to resolve on this machine.
        backend_loader=loader,
        load_options=chosen.load_options(SERVER_MODEL) if remote else None,
        settings=settings,
        keymap=dict(config.keymap),
        draft=args.draft,
        resume=args.resume,
        model_source=ModelSource(chosen.model, config, named=args.model is not None or args.lora is not None),
        config=config,
        config_problems=problems,
        run_config=chosen,
    )
