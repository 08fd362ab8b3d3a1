"""Shared fixtures: tiny real GGUF models (built once per session) and an isolated
SCRIPTORIUM_HOME for every test."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# With --import-mode=importlib the tests directory is not on sys.path; put it there
# so test modules can `from gguf_models import ...`.
_TESTS_DIR = str(Path(__file__).resolve().parent)
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)

import gguf_models  # noqa: E402


@pytest.fixture(autouse=True)
def scriptorium_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own config/data/cache root, never the user's."""
    home = tmp_path / "scriptorium-home"
    home.mkdir()
    monkeypatch.setenv("SCRIPTORIUM_HOME", str(home))
    monkeypatch.delenv("SCRIPTORIUM_CONFIG", raising=False)
    return home


@pytest.fixture
def models_dir(scriptorium_home: Path) -> Path:
    """The (empty) model discovery folder under this test's SCRIPTORIUM_HOME
    (app.paths.models_dir(): <home>/data/models); copy or link models into it."""
    path = scriptorium_home / "data" / "models"
    path.mkdir(parents=True)
    return path


@pytest.fixture(scope="session")
def gguf_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("gguf")


@pytest.fixture(scope="session")
def random_model(gguf_dir: Path) -> Path:
    return gguf_models.write_llama_model(gguf_dir / "random.gguf", kind="random")


@pytest.fixture(scope="session")
def byte_loop_model(gguf_dir: Path) -> Path:
    return gguf_models.write_llama_model(gguf_dir / "byte-loop.gguf", kind="byte_loop")


@pytest.fixture(scope="session")
def utf8_model(gguf_dir: Path) -> Path:
    return gguf_models.write_llama_model(gguf_dir / "utf8-bytes.gguf", kind="utf8_bytes")


@pytest.fixture(scope="session")
def sentence_model(gguf_dir: Path) -> Path:
    return gguf_models.write_llama_model(
        gguf_dir / "sentence.gguf", kind="sentence",
        chat_template=gguf_models.SIMPLE_CHAT_TEMPLATE,
    )


@pytest.fixture(scope="session")
def phrases_model(gguf_dir: Path) -> Path:
    """Italian phrases whose every choice wins by a wide margin: for tests that show text."""
    return gguf_models.write_llama_model(gguf_dir / "phrases.gguf", kind="phrases")


@pytest.fixture(scope="session")
def lora_adapter(gguf_dir: Path, random_model: Path) -> Path:
    """Pushes "▁gatto" to the top on random_model at scale 1."""
    return gguf_models.write_lora_adapter(gguf_dir / "lora-gatto.gguf", random_model)


@pytest.fixture(scope="session")
def foreign_lora_adapter(gguf_dir: Path, random_model: Path) -> Path:
    """Declares general.architecture = "gemma3": llama.cpp refuses it on our models."""
    return gguf_models.write_lora_adapter(
        gguf_dir / "lora-gemma3.gguf", random_model, architecture="gemma3"
    )


@pytest.fixture(scope="session")
def bad_gguf_files(gguf_dir: Path, random_model: Path) -> dict[str, Path]:
    """{"not_gguf", "truncated", "empty"} -> a *.gguf file that must fail to load."""
    return gguf_models.write_bad_files(gguf_dir / "bad", random_model)
