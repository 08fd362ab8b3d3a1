"""Every place scriptorium reads or writes on disk, in one module.

Directories come from platformdirs; `SCRIPTORIUM_HOME` moves all of them under one
folder (tests and portable installs use it). Nothing is created at import time.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "scriptorium"
HOME_ENV = "SCRIPTORIUM_HOME"
CONFIG_ENV = "SCRIPTORIUM_CONFIG"


def _root_override() -> Path | None:
    home = os.environ.get(HOME_ENV)
    return Path(home).expanduser() if home else None


def config_dir() -> Path:
    root = _root_override()
    return root / "config" if root else Path(platformdirs.user_config_dir(APP_NAME))


def data_dir() -> Path:
    root = _root_override()
    return root / "data" if root else Path(platformdirs.user_data_dir(APP_NAME))


def cache_dir() -> Path:
    root = _root_override()
    return root / "cache" if root else Path(platformdirs.user_cache_dir(APP_NAME))


def config_file() -> Path:
    """The TOML config: `SCRIPTORIUM_CONFIG` names another file."""
    override = os.environ.get(CONFIG_ENV)
    return Path(override).expanduser() if override else config_dir() / "config.toml"


def sessions_dir() -> Path:
    return data_dir() / "sessions"


def models_dir() -> Path:
    """Where the user may drop GGUF files for discovery."""
    return data_dir() / "models"


def prompts_dir() -> Path:
    """User copies of the prompt templates; a file here overrides the packaged one."""
    return config_dir() / "prompts"


def demo_model_cache_dir() -> Path:
    return cache_dir() / "demo-model"


def flash_choice_file() -> Path:
    """Which attention path decodes each model faster here, measured once per model and build."""
    return cache_dir() / "flash-attention.json"
