"""Config tests: discovery must never see the real ~/.lmstudio or Hugging Face cache, so HOME
points into each test's tmp dir (the fixtures live in tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _fake_home(fake_home: Path) -> Path:
    return fake_home
