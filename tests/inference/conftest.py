"""Fixtures shared by the inference tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_server import server_binary


@pytest.fixture(scope="module")
def server_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where a module's llama-servers write their logs. Without a llama-server binary it
    skips, with the reason, every test that asks for it."""
    server_binary()
    return tmp_path_factory.mktemp("llama-server-logs")
