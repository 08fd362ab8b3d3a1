"""The `scriptorium` command: the TUI by default, headless subcommands for shells and editors."""

from __future__ import annotations

import argparse
import importlib
import sys
from types import ModuleType

# Subcommand name -> module in scriptorium.app.commands exposing HELP, add_arguments(parser)
# and run(args) -> int. Imported only when chosen, so `scriptorium info` never pays for Textual.
SUBCOMMANDS: dict[str, str] = {
    "continue": "continue_cmd",
    "export": "export_cmd",
    "info": "info_cmd",
    "models": "models_cmd",
    "config": "config_cmd",
    "sessions": "sessions_cmd",
    "vocab": "vocab_cmd",
}
TUI_COMMAND = "tui_cmd"

EXIT_USAGE = 2


def _command_module(module_name: str) -> ModuleType:
    return importlib.import_module(f"scriptorium.app.commands.{module_name}")


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments get one line, not a usage dump: the user sees what is wrong at once."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser(subcommand: str | None) -> argparse.ArgumentParser:
    if subcommand is None:
        module = _command_module(TUI_COMMAND)
        parser = OneLineParser(
            prog="scriptorium",
            description=module.HELP,
            epilog="subcommands: " + ", ".join(SUBCOMMANDS) + " (scriptorium SUBCOMMAND --help)",
        )
    else:
        module = _command_module(SUBCOMMANDS[subcommand])
        parser = OneLineParser(prog=f"scriptorium {subcommand}", description=module.HELP)
    module.add_arguments(parser)
    parser.set_defaults(run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    from scriptorium.inference.errors import ScriptoriumError

    args_list = list(sys.argv[1:] if argv is None else argv)
    subcommand = args_list[0] if args_list and args_list[0] in SUBCOMMANDS else None
    parser = build_parser(subcommand)
    args = parser.parse_args(args_list[1:] if subcommand else args_list)
    try:
        return int(args.run(args) or 0)
    except ScriptoriumError as error:
        print(f"scriptorium: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `scriptorium continue ... | head` closes the pipe early: not an error.
        return 0


if __name__ == "__main__":
    sys.exit(main())
