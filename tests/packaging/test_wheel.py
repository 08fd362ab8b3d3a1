"""The wheel holds every module of the tree: a sub-package added under app/, inference/ or
prompts/ is found by setup.py, never listed by hand, and this checks the built artefact."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # --no-build-isolation: the venv already has setuptools; no download in the test.
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "-w",
            str(out),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    (built,) = out.glob("scriptorium-*.whl")
    return built


def test_the_wheel_holds_every_module_and_data_file(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = sorted(_tree_files() - names)
    assert not missing, f"left out of the wheel: {missing}"


def test_the_wheel_installs_no_bare_top_level_packages(wheel: Path) -> None:
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist() if not name.endswith(".dist-info/")}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"scriptorium"}
