"""The wheel holds every module of the tree: a sub-package added under app/, inference/ or
prompts/ is found by setup.py, never listed by hand, and this checks the built artefact."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {"app": "scriptorium/app", "inference": "scriptorium/inference", "prompts": "scriptorium/prompts"}


def _tree_files() -> set[str]:
    """What the wheel must hold: every .py, and the package data (.tcss, prompt templates, the
    translations' catalogs and their compiled .mo)."""
    wanted = set()
    for folder, installed in FOLDERS.items():
        for path in (ROOT / folder).rglob("*"):
            if (
                path.is_file()
                and "__pycache__" not in path.parts
                and path.suffix in {".py", ".tcss", ".txt", ".md", ".jinja", ".toml", ".pot", ".po", ".mo"}
            ):
                wanted.add(f"{installed}/{path.relative_to(ROOT / folder).as_posix()}")
    return wanted


class Built(NamedTuple):
    wheel: Path
    log: str
    """What pip and setuptools printed (pip -v: the backend's own lines too)."""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    # From a copy of the source: setuptools builds in the source folder (build/, the egg-info),
    # and this module's tests may run on two workers at once, each building.
    source = tmp_path_factory.mktemp("source")
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for folder in FOLDERS:
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    out = tmp_path_factory.mktemp("wheel")
    # --no-build-isolation: the venv already has setuptools; no download in the test.
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-v", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    (wheel,) = out.glob("scriptorium-*.whl")
    return Built(wheel, result.stdout + result.stderr)


def test_the_wheel_holds_every_module_and_data_file(built: Built) -> None:
    names = set(zipfile.ZipFile(built.wheel).namelist())
    missing = sorted(_tree_files() - names)
    assert not missing, f"left out of the wheel: {missing}"


def test_the_wheel_installs_no_bare_top_level_packages(built: Built) -> None:
    tops = {name.split("/")[0] for name in zipfile.ZipFile(built.wheel).namelist() if not name.endswith(".dist-info/")}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"scriptorium"}


def test_the_build_gives_setuptools_nothing_to_warn_about(built: Built) -> None:
    """A newcomer's install prints no warning box: the translations' folders, which hold only
    catalogs, are listed as packages (setup.py), not installed as data of a folder that is not one."""
    assert "BuildBackendWarning" not in built.log and "would be ignored" not in built.log
