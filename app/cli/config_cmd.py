"""`scriptorium config path|show|init`: where the config file is, what is in effect, a starter file."""

from __future__ import annotations

import argparse
import sys

HELP = "Show the config file's path or the settings in effect, or write a commented starter file."

ACTIONS = {
    "path": "print the config file's path",
    "show": "print the settings in effect (file over built-in defaults) as TOML; problems go to stderr",
    "init": "write a commented starter config file (never overwrites one)",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from scriptorium.app.config.run_settings import add_config_argument

    # `scriptorium --config F config show` hands this parser `--config F show`: the option
    # comes before the action, so this parser takes it too.
    add_config_argument(parser)
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, help_text in ACTIONS.items():
        add_config_argument(actions.add_parser(name, help=help_text, description=help_text), default=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    from scriptorium.app import atomic
    from scriptorium.app.config.file import ConfigError, config_path, load_config_lenient

    if args.action == "path":
        print(config_path(args.config))
        return 0
    if args.action == "init":
        from scriptorium.app.config.text import write_default_config

        path = config_path(args.config)
        try:
            write_default_config(path)
        except atomic.FileExistsRefused:
            raise ConfigError(f"config file {path} already exists: edit it, or remove it first") from None
        except OSError as error:
            raise ConfigError(f"cannot create {path.parent}: {error.strerror or error}") from None
        print(f"wrote {path}")
        return 0
    from scriptorium.app.cli.main import EXIT_USAGE
    from scriptorium.app.config.text import effective_config_toml

    config, problems = load_config_lenient(args.config)
    if problems and config.source is None:
        raise ConfigError(problems[0])  # the file itself is unreadable: showing defaults would mislead
    if config.keymap:
        # The app's bindings are only known to the app's classes: Textual is imported for it.
        from scriptorium.app.tui.bindings import keymap_problems

        problems = [*problems, *(f"{config.source}: {line}" for line in keymap_problems(config.keymap))]
    sys.stdout.write(effective_config_toml(config))
    for problem in problems:
        print(f"scriptorium: {problem}", file=sys.stderr)
    return EXIT_USAGE if problems else 0
