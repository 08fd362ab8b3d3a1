"""The TOML parser the config file and the lorebooks are read with: the standard library's
`tomllib` from Python 3.11, before it `tomli` (the same parser, which pyproject installs for
3.10). Stated once here, and imported when a file is read rather than with the app: most
starts have no config file and no lorebook, and the parser's import (its regular
expressions compiled) was about 6 ms of the first paint on a 2-core EPYC."""

from __future__ import annotations

import sys
from types import ModuleType


def toml_parser() -> ModuleType:
    """The module with `loads` and `TOMLDecodeError`."""
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    import tomli  # pragma: no cover - Python 3.10

    return tomli  # pragma: no cover
