"""The installed scriptorium's version, for `scriptorium --version` and export front matter."""

from __future__ import annotations

from importlib import metadata


def scriptorium_version() -> str:
    try:
        return metadata.version("scriptorium")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"
