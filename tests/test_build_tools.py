"""tools/build_llama_server.py builds llama-perplexity beside llama-server, and never builds
a cached tool again (cmake and the download are stood in for: a real build takes minutes)."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest
from llama_server import _build_tool

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    module = _build_tool()
    monkeypatch.setattr(module, "cache_root", lambda: tmp_path / "cache")
    monkeypatch.setattr(module, "installed_version", lambda: "9.9.9")
    monkeypatch.setattr(module.shutil, "which", lambda name: f"/usr/bin/{name}")
    for name in module.OVERRIDES.values():
        monkeypatch.delenv(name, raising=False)
    module.commands = []

    def download(version: str, into: Path) -> Path:
        source = tmp_path / "sdist" / "llama_cpp_python-9.9.9"
        head = source / ".git" / "modules" / "vendor" / "llama.cpp" / "HEAD"
        head.parent.mkdir(parents=True, exist_ok=True)
        head.write_text(COMMIT + "\n", encoding="utf-8")
        archive = into / "llama_cpp_python-9.9.9.tar.gz"
        with tarfile.open(archive, "w:gz") as tar:
            tar.add(source, arcname=source.name)
        module.commands.append(["download"])
        return archive

    def run(cmd: list[str], log: Path) -> None:
        module.commands.append(cmd)
        if "--target" in cmd:
            built = Path(cmd[cmd.index("--build") + 1]) / "bin" / cmd[cmd.index("--target") + 1]
            built.parent.mkdir(parents=True, exist_ok=True)
            built.write_text("#!/bin/sh\n", encoding="utf-8")
            built.chmod(0o755)

    monkeypatch.setattr(module, "_download_sdist", download)
    monkeypatch.setattr(module, "_run", run)
    return module


def targets(commands: list[list[str]]) -> list[str]:
    return [cmd[cmd.index("--target") + 1] for cmd in commands if "--target" in cmd]


def test_both_tools_are_built_in_one_build_folder(tool) -> None:
    server = tool.build(2)
    assert targets(tool.commands) == ["llama-server", "llama-perplexity"]
    assert len({cmd[cmd.index("--build") + 1] for cmd in tool.commands if "--build" in cmd}) == 1
    assert server == tool.locate() and server.name == "llama-server"
    assert tool.locate("llama-perplexity") == server.with_name("llama-perplexity")


def test_a_cached_server_is_not_built_again(tool) -> None:
    tool.build(2)
    tool.locate("llama-perplexity").unlink()  # cached before llama-perplexity was a tool
    tool.commands.clear()
    tool.build(2)
    assert targets(tool.commands) == ["llama-perplexity"]


def test_nothing_is_downloaded_when_both_are_cached(tool) -> None:
    tool.build(2)
    tool.commands.clear()
    tool.build(2)
    assert tool.commands == []


def test_a_missing_perplexity_tool_is_one_line(tool) -> None:
    with pytest.raises(tool.BuildError, match="llama-perplexity for llama-cpp-python 9.9.9 is not built"):
        tool.locate("llama-perplexity")
