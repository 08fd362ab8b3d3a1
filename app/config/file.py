"""Reading the config file: where it is, its TOML, and the Config it gives (strict for
the CLI, lenient for the TUI). The schema is config/schema.py, the parsing config/parse.py."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from scriptorium.inference.core.errors import read_regular_file, universal_newlines

from scriptorium.app import paths
from scriptorium.app.toml_reading import toml_parser
from scriptorium.app.config.parse import parse_config
from scriptorium.app.config.schema import Config, ConfigError


def config_path(cli_value: str | os.PathLike[str] | None = None) -> Path:
    """The config file in effect: `--config FILE`, else SCRIPTORIUM_CONFIG, else the default."""
    return Path(cli_value).expanduser() if cli_value else paths.config_file()


def _read(path: Path, explicit: bool) -> tuple[dict | None, str | None]:
    """(TOML table or None, problem or None); a missing default file is simply no config."""
    try:
        # Bounded, and only a regular file: `--config /dev/zero` filled gigabytes, a FIFO waited for ever.
        text = universal_newlines(read_regular_file(path).decode("utf-8"))
    except FileNotFoundError:
        return None, (f"config file not found: {path}" if explicit else None)
    except IsADirectoryError:
        return None, f"config file {path} is a folder"
    except UnicodeDecodeError:
        return None, f"config file {path} is not UTF-8 text"
    except OSError as error:
        return None, f"cannot read config file {path}: {error.strerror or error}"
    tomllib = toml_parser()
    try:
        # A byte-order mark (Notepad's "UTF-8 with BOM") marks the file, not the TOML in it.
        return tomllib.loads(text.removeprefix("\ufeff")), None
    except tomllib.TOMLDecodeError as error:
        return None, f"{path}: not valid TOML: {error}"
    except RecursionError:  # `a = [[[[...`: the parser's own depth limit
        return None, f"{path}: not valid TOML: nested too deeply"


def load_config_lenient(cli_value: str | os.PathLike[str] | None = None) -> tuple[Config, list[str]]:
    """The config with built-in defaults wherever the file is missing or wrong, and one line
    per problem found (each names the file and the key). Never raises for a bad file."""
    path = config_path(cli_value)
    data, problem = _read(path, explicit=cli_value is not None)
    if data is None:
        return Config(), [problem] if problem else []
    config, problems = parse_config(data, path)
    return config, [f"{path}: {line}" for line in problems]


APP_ONLY_SECTIONS = ("keymap", "ui")
"""Sections only the app reads: a command that does not start it is not stopped by their problems."""
_APP_ONLY_KEYS = tuple(f"{section}{after}" for section in APP_ONLY_SECTIONS for after in (".", ":"))
"""How a problem line of theirs starts once the file's path is taken off (parse.py's 'key: problem')."""


def load_config(
    cli_value: str | os.PathLike[str] | None = None, *, warn: Callable[[str], None] | None = None
) -> Config:
    """The config, or ConfigError naming the first problem in one line. With `warn` (a
    command that does not start the app), a problem in APP_ONLY_SECTIONS goes to `warn`
    instead: the default is used there, as the line says, and the command has no use for it."""
    config, problems = load_config_lenient(cli_value)
    if warn is not None:
        prefix = f"{config_path(cli_value)}: "
        app_only = [line for line in problems if line.removeprefix(prefix).startswith(_APP_ONLY_KEYS)]
        for line in app_only:
            warn(line)
        problems = [line for line in problems if line not in app_only]
    if problems:
        more = f" (and {len(problems) - 1} more; see scriptorium config show)" if len(problems) > 1 else ""
        raise ConfigError(problems[0] + more)
    return config
