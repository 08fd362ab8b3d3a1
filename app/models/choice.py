"""Which model to run: the command line, else the config, else the demo model; and what
discovery finds in the user's folders, for `scriptorium models`, the picker and the
welcome screen.

A model can be named instead of pathed: a file name, its stem, its general.name or an
LM Studio / Hugging Face repo, matched against what discovery lists; "demo" is the demo.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from scriptorium.inference.gguf import demo_model
from scriptorium.inference.gguf.demo_model import DEMO_INSTALL_HINT, Progress
from scriptorium.inference.gguf.discovery import (
    KIND_MODEL,
    SOURCE_CONFIG,
    SOURCE_MODELS_DIR,
    Discovery,
    FoundModel,
    ModelFolder,
    discover_models,
    standard_folders,
)
from scriptorium.inference.core.errors import ModelFileError, ScriptoriumError

from scriptorium.app import paths
from scriptorium.app.config.schema import Config

DEMO_NAME = "demo"
SHOWN_IN_ERRORS = 3


class NoModelError(ScriptoriumError):
    """No model given, none configured, and no demo model: the welcome screen's case.
    `discovery` holds what was found, so the screen need not scan again."""

    def __init__(self, message: str, discovery: Discovery) -> None:
        super().__init__(message)
        self.discovery = discovery


def discovery_folders(
    config: Config, home: Path | None = None, environ: Mapping[str, str] | None = None
) -> list[ModelFolder]:
    """Configured folders, the data dir's models/, then LM Studio and the Hugging Face cache."""
    configured = [ModelFolder(folder, SOURCE_CONFIG, required=True) for folder in config.model.folders]
    return [*configured, ModelFolder(paths.models_dir(), SOURCE_MODELS_DIR), *standard_folders(home, environ)]


def discover(config: Config, home: Path | None = None, environ: Mapping[str, str] | None = None) -> Discovery:
    """Everything discovery finds, the demo model first (when installed or assembled)."""
    demo = demo_model.demo_entry(paths.demo_model_cache_dir())
    return discover_models(discovery_folders(config, home, environ), extra=[demo] if demo else [])


def is_demo_model(path: Path) -> bool:
    """Whether `path` is the demo model (the TUI says it is a small demo model)."""
    return demo_model.is_demo_model(path, paths.demo_model_cache_dir())


def demo_model_path(progress: Progress | None = None) -> Path:
    """The demo model, assembled into the cache on first use (blocking; DemoModelError)."""
    return demo_model.ensure_demo_model(paths.demo_model_cache_dir(), progress)


def demo_available() -> bool:
    """Whether the demo model can be used without installing anything."""
    return demo_model.demo_installed() or demo_model.demo_model_ready(paths.demo_model_cache_dir())


def _names(model: FoundModel) -> set[str]:
    stem = model.path.name[: -len(".gguf")] if model.path.name.lower().endswith(".gguf") else model.path.name
    names = {model.path.name, stem, model.name}
    if model.repo:
        names |= {model.repo, f"{model.repo}/{model.path.name}", model.repo.rsplit("/", 1)[-1]}
    return {name.casefold() for name in names}


def find_by_name(reference: str, discovery: Discovery) -> list[FoundModel]:
    """Usable models called `reference` (case-insensitive): exact names first, else substrings."""
    wanted = reference.casefold()
    candidates = discovery.usable(KIND_MODEL)
    exact = [model for model in candidates if wanted in _names(model)]
    if exact:
        return exact
    return [model for model in candidates if any(wanted in name for name in _names(model))]


def _summary(discovery: Discovery) -> str:
    models = discovery.usable(KIND_MODEL)
    if not models:
        return "discovery found no GGUF models"
    shown = _first_few(f"{m.name} ({m.path.name})" for m in models)
    return f"discovery found {len(models)}: {shown} (see scriptorium models)"


def _first_few(names) -> str:
    """The first SHOWN_IN_ERRORS of `names`, then "and N more": a count the list disagrees with
    reads as a lost model."""
    names = list(names)
    more = f" and {len(names) - SHOWN_IN_ERRORS} more" if len(names) > SHOWN_IN_ERRORS else ""
    return ", ".join(names[:SHOWN_IN_ERRORS]) + more


def _by_name(reference: str, origin: str, discovery: Discovery) -> Path:
    matches = find_by_name(reference, discovery)
    if len(matches) == 1:
        return matches[0].path
    if matches:
        shown = _first_few(str(m.path) for m in matches)
        raise ModelFileError(f"model '{reference}' ({origin}) matches {len(matches)} models: {shown}; give a path")
    raise ModelFileError(f"model not found: {reference} ({origin}) is not a file, and {_summary(discovery)}")


def resolve_model(
    cli_model: str | os.PathLike[str] | None,
    config: Config,
    progress: Progress | None = None,
    *,
    discovery: Discovery | None = None,
) -> Path:
    """The model file to load: --model, else the config's [model] path, else the demo model.

    A reference that is not an existing file is looked up by name among discovered models.
    The demo model is assembled on first use (blocking; `progress(done, total)` reports it).
    Raises NoModelError (one line: how to point scriptorium at a GGUF, what discovery
    found) when nothing is given and the demo extra is missing; ModelFileError for a
    reference that matches nothing or several models. `discovery` saves a rescan.
    """
    if cli_model is not None:
        reference, origin = os.fspath(cli_model), "--model"
    elif config.model.path is not None:
        reference, origin = config.model.path, f"[model] path in {config.source}"
    else:
        if demo_available():
            return demo_model_path(progress)
        found = discovery if discovery is not None else discover(config)
        where = config.source or paths.config_file()
        raise NoModelError(
            f"no model: pass --model FILE.gguf, set path under [model] in {where}, or install the demo model "
            f"({DEMO_INSTALL_HINT}); {_summary(found)}",
            found,
        )
    if reference.casefold() == DEMO_NAME:
        return demo_model_path(progress)
    path = Path(reference).expanduser()
    if path.is_file():
        return path
    if path.is_dir():
        raise ModelFileError(f"model {path} ({origin}) is a folder, not a GGUF file")
    return _by_name(reference, origin, discovery if discovery is not None else discover(config))


PROGRESS_BAR_CELLS = 20


def progress_bar(percent: int) -> str:
    """A bar of PROGRESS_BAR_CELLS cells, one filled per 5%."""
    filled = min(max(percent, 0), 100) * PROGRESS_BAR_CELLS // 100
    return "█" * filled + "░" * (PROGRESS_BAR_CELLS - filled)


def stderr_progress(label: str = "scriptorium: preparing the demo model (first run only)") -> Progress:
    """A progress callback for the CLI: a bar and its percentage redrawn in place on a
    terminal, one line at the start and at the end otherwise (logs stay readable)."""
    stream = sys.stderr
    interactive = stream.isatty()
    last_percent = -1

    def report(done: int, total: int) -> None:
        nonlocal last_percent
        percent = 100 * done // total if total else 100
        if percent == last_percent:
            return
        if interactive:
            stream.write(f"\r{label}… {progress_bar(percent)} {percent:3d}%" + ("\n" if percent >= 100 else ""))
        elif last_percent < 0 or percent >= 100:
            stream.write(f"{label}… {'done' if percent >= 100 else 'started'}\n")
        stream.flush()
        last_percent = percent

    return report
