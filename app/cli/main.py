"""The `scriptorium` command: the TUI by default, headless subcommands for shells and editors."""

from __future__ import annotations

import argparse
import errno
import importlib
import io
import sys
from types import ModuleType

# Subcommand name -> module in scriptorium.app.cli exposing HELP, add_arguments(parser)
# and run(args) -> int. Imported only when chosen, so `scriptorium info` never pays for Textual.
SUBCOMMANDS: dict[str, str] = {
    "continue": "continue_cmd",
    "export": "export_cmd",
    "info": "info_cmd",
    "models": "models_cmd",
    "config": "config_cmd",
    "sessions": "sessions_cmd",
    "vocab": "vocab_cmd",
    "quantize": "quantize_cmd",
    "compare": "compare_cmd",
    "draft-model": "draft_model_cmd",
}
TUI_COMMAND = "tui_cmd"

EXIT_USAGE = 2


def _command_module(module_name: str) -> ModuleType:
    return importlib.import_module(f"scriptorium.app.cli.{module_name}")


class VersionAction(argparse.Action):
    """--version: the installed version, read only when asked (argparse's own wants it up front)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, **kwargs)  # type: ignore[arg-type]

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from scriptorium.app.version import scriptorium_version

        parser._print_message(f"scriptorium {scriptorium_version()}\n", sys.stdout)
        parser.exit()


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments get one line, not a usage dump: the user sees what is wrong at once."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see {self.prog} --help)\n")

    def _print_message(self, message: str, file: object = None) -> None:  # type: ignore[override]
        """Output (--help, --version) written and flushed here, so that a failure reaches
        main, which says it in one line: argparse drops a failed write without a word
        (`--help > /dev/full` exited 0 with nothing written), and what stays buffered failed
        at exit with a traceback. Messages for stderr keep argparse's own handling."""
        if file is not sys.stdout or not message:
            super()._print_message(message, file)  # type: ignore[arg-type]
            return
        sys.stdout.write(message)
        sys.stdout.flush()


def build_parser(subcommand: str | None) -> argparse.ArgumentParser:
    if subcommand is None:
        module = _command_module(TUI_COMMAND)
        parser = OneLineParser(
            prog="scriptorium",
            description=module.HELP,
            epilog="subcommands: " + ", ".join(SUBCOMMANDS) + " (scriptorium SUBCOMMAND --help); options such "
            "as --config go before or after the subcommand. A draft named like a subcommand needs a "
            "path: `scriptorium ./models` edits the draft, `scriptorium models` lists the models.",
        )
        parser.add_argument("--version", action=VersionAction, help="print scriptorium's version and exit")
    else:
        module = _command_module(SUBCOMMANDS[subcommand])
        parser = OneLineParser(prog=f"scriptorium {subcommand}", description=module.HELP)
    module.add_arguments(parser)
    if "--config" not in parser._option_string_actions:
        # The help says options such as --config go before or after the subcommand: an
        # alias `scriptorium --config F` must run the commands that read no config too.
        parser.add_argument("--config", metavar="FILE", help=argparse.SUPPRESS)
    parser.set_defaults(run=module.run)
    return parser


def split_subcommand(args: list[str]) -> tuple[str | None, list[str]]:
    """The subcommand named by the first positional argument, and the other arguments.

    Options may come before it (`scriptorium --config F models`): an option of the
    app's own parser that takes a value (--config F, --model M) is skipped with its
    value, so that value is never taken for a subcommand; the subcommand's parser then
    accepts or refuses the options it was given. A positional that is no subcommand
    (or anything after `--`) is the TUI's draft.
    """
    takes_value = {
        option for action in build_parser(None)._actions if action.nargs != 0 for option in action.option_strings
    }
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            break
        if arg.startswith("-") and arg != "-":
            index += 2 if arg in takes_value else 1
            continue
        if arg in SUBCOMMANDS:
            return arg, args[:index] + args[index + 1 :]
        break
    return None, args


def _empty_argument(parser: argparse.ArgumentParser, args: list[str]) -> str | None:
    """The option given "" (or the positional that is ""), if any. An unset variable in
    `scriptorium continue --model "$MODEL"` read as the current folder ("model . is a
    folder"), and `scriptorium export "$SESSION"` exported the latest session. A TEXT
    value (--stop "") is left to its own check."""
    value_options = {
        option: action.metavar != "TEXT"
        for action in parser._actions
        if action.nargs != 0
        for option in action.option_strings
    }
    for index, arg in enumerate(args):
        option, equals, value = arg.partition("=")
        if equals and value_options.get(option) and not value:
            return option
        if arg == "":
            before = args[index - 1] if index else ""
            if before not in value_options:
                return "an argument"
            if value_options[before]:
                return before
    return None


def main(argv: list[str] | None = None) -> int:
    from scriptorium.inference.core.errors import ScriptoriumError

    from scriptorium.app.cli.common import EXIT_INTERRUPTED

    _stand_in_for_closed_streams()
    given = list(sys.argv[1:] if argv is None else argv)
    if not SUBCOMMANDS.keys() & set(given):  # the editor: keys typed as it starts must reach it
        from scriptorium.app.cli.start_keys import keep_keys_typed_at_start

        keep_keys_typed_at_start()
    subcommand, args_list = split_subcommand(given)
    parser = build_parser(subcommand)
    if (empty := _empty_argument(parser, args_list)) is not None:
        parser.error(f"{empty} is empty (an unset shell variable?)")
    try:
        args = parser.parse_args(args_list)  # inside: --help and --version write to stdout
        code = int(args.run(args) or 0)
        sys.stdout.flush()  # here, where a full disk is still this function's to report
        return code
    except ScriptoriumError as error:
        print(f"scriptorium: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("scriptorium: interrupted (ctrl+c)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `scriptorium continue ... | head` closes the pipe early: not an error.
        _drop_stdout()
        return 0
    except OSError as error:
        # Commands turn the files they read or write into ScriptoriumErrors; what is left,
        # with no file name, is standard output itself (`> /dev/full`, a full disk).
        if error.filename is not None:
            print(f"scriptorium: {error.filename}: {error.strerror or error}", file=sys.stderr)
            return EXIT_USAGE
        _drop_stdout()
        print(f"scriptorium: cannot write the output: {error.strerror or error}", file=sys.stderr)
        return EXIT_USAGE


class ClosedOutput(io.TextIOBase):
    """sys.stdout when the command started with it closed: every write fails."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")


def _stand_in_for_closed_streams() -> None:
    """Python sets sys.stdout or sys.stderr to None when the command starts with that
    descriptor closed (`>&-`, `2>&-`): the first write then failed with a traceback far
    from here. Messages for a closed stderr are dropped; output for a closed stdout fails
    as a closed descriptor does, which main reports in one line. (A closed stdin is the
    draft's business: common.read_draft.)"""
    import os

    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")
    if sys.stdout is None:
        sys.stdout = ClosedOutput()


def _drop_stdout() -> None:
    """Point standard output at the null device: the interpreter flushes it again at exit,
    and the text still buffered would fail a second time, with a traceback."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())
