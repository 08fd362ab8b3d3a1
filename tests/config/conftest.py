"""Fixtures for config, discovery and demo-model tests: tiny header-complete GGUF files and
a fake home, so discovery never sees the real ~/.lmstudio or Hugging Face cache."""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
import pytest


def write_gguf(
    path: Path,
    *,
    arch: str = "llama",
    name: str | None = "tiny",
    file_type: int | None = int(gguf.LlamaFileType.MOSTLY_Q8_0),
    context_length: int | None = 2048,
    adapter: bool = False,
    split: tuple[int, int] | None = None,
    tensors: int = 2,
) -> Path:
    """A small GGUF with real metadata and `tensors` 8x8 f32 tensors (not a loadable model:
    discovery only reads headers). `split=(index, count)` writes the split.* keys of shard index."""
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(str(path), arch)
    if adapter:
        writer.add_type(gguf.GGUFType.ADAPTER)
        writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
    if name is not None:
        writer.add_name(name)
    if file_type is not None:
        writer.add_file_type(file_type)
    if context_length is not None and not adapter:
        writer.add_context_length(context_length)
    if split is not None:
        writer.add_uint16("split.no", split[0] - 1)
        writer.add_uint16("split.count", split[1])
    for index in range(tensors):
        writer.add_tensor(f"blk.{index}.weight", np.full((8, 8), index, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


@pytest.fixture(autouse=True)
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME (and the Hugging Face variables) point into the test's tmp dir."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    for variable in ("HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(variable, raising=False)
    return home


@pytest.fixture
def no_demo(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if the `demo` extra were not installed."""
    from scriptorium.inference import demo_model

    monkeypatch.setattr(demo_model, "DEMO_PACKAGE", "scriptorium_test_no_such_demo_package")


@pytest.fixture
def make_gguf():
    """write_gguf, for tests to lay out folders of tiny GGUF files."""
    return write_gguf
