"""Shared fixtures: tiny real GGUF models (built once per session) and an isolated
SCRIPTORIUM_HOME for every test."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import gguf
import numpy as np
import pytest

# With --import-mode=importlib the tests directory is not on sys.path; put it there
# so test modules can `from gguf_models import ...`.
_TESTS_DIR = str(Path(__file__).resolve().parent)
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)

import gguf_adapters  # noqa: E402
import gguf_healing  # noqa: E402
import gguf_models  # noqa: E402
import spm_models  # noqa: E402


WORKERS_AT_LEAST = 4
"""pytest-xdist workers, whatever the cores: most of a test's time waits on a model's child
process, a llama-server or the app's next frame, so even on 2 cores four workers ran the
suite in 17 minutes where one took 32. More cores, as many workers as cores."""
WORKERS_AT_MOST = 8
"""Each worker writes its own models and may start its own llama-server: past this, memory
and start-up cost more than they save."""


def pytest_configure(config: pytest.Config) -> None:
    """Compile the package's sources (and the tests' helper modules) to bytecode once, before
    any worker starts, as pip does for an installed copy: the suite starts hundreds of
    `scriptorium` processes and engine children, and where Python may not write bytecode
    itself (PYTHONDONTWRITEBYTECODE, as in some sandboxes and CI images) each of them
    compiled every module it imported again: 13% of tests/cli's CPU time."""
    if hasattr(config, "workerinput"):
        return  # an xdist worker: its controller has compiled already
    import compileall
    import re

    import scriptorium.app
    import scriptorium.inference
    import scriptorium.prompts

    for package in (scriptorium.app, scriptorium.inference, scriptorium.prompts):
        for folder in package.__path__:
            compileall.compile_dir(folder, quiet=2)
    # Test modules are rewritten by pytest as they are imported; their helpers are not.
    compileall.compile_dir(_TESTS_DIR, quiet=2, rx=re.compile(r"[\\/](test_[^\\/]*|conftest)\.py$"))


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """How many workers `-n auto` (pyproject.toml's addopts) starts; `-n 0` runs in one process."""
    return min(WORKERS_AT_MOST, max(WORKERS_AT_LEAST, os.cpu_count() or 1))


@pytest.fixture(autouse=True)
def scriptorium_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own config/data/cache root, never the user's."""
    home = tmp_path / "scriptorium-home"
    home.mkdir()
    monkeypatch.setenv("SCRIPTORIUM_HOME", str(home))
    monkeypatch.delenv("SCRIPTORIUM_CONFIG", raising=False)
    return home


@pytest.fixture(autouse=True)
def english_interface(monkeypatch: pytest.MonkeyPatch) -> None:
    """The interface in English whatever the machine's locale (an Italian LANG made the app
    Italian): LANGUAGE comes first in gettext's order (app/i18n/choice.py), and unlike LC_ALL it
    changes nothing else, the UTF-8 a tmux test needs included. Tests of the choice set their own."""
    monkeypatch.setenv("LANGUAGE", "en")


@pytest.fixture(autouse=True)
def flash_attention_timed_faster(monkeypatch: pytest.MonkeyPatch) -> None:
    """The auto flash-attention choice (flash_choice.py) finds flash attention faster
    without timing anything: a timed choice could flip between runs and move the
    probabilities a test reads. Tests of the timing itself import the real function."""
    from scriptorium.inference.local import flash_choice

    monkeypatch.setattr(
        flash_choice, "time_decode_paths", lambda *args, **kwargs: flash_choice.FlashTiming(on_ms=1.0, off_ms=2.0)
    )


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
def short_context_model(gguf_dir: Path) -> Path:
    """The author's layout (16k pieces + 256 byte tokens) trained on 256 tokens, as theirs."""
    return gguf_models.write_llama_model(gguf_dir / "ctx256.gguf", kind="random", context_length=256)


@pytest.fixture(scope="session")
def one_layer_model(gguf_dir: Path) -> Path:
    """One layer, trained on 256 tokens: its keys and values depend on a token and its
    position alone, so a shifted cache must equal a cold one up to float rounding."""
    return gguf_models.write_llama_model(gguf_dir / "ctx256-1layer.gguf", kind="random", n_layer=1, context_length=256)


@pytest.fixture(scope="session")
def byte_loop_model(gguf_dir: Path) -> Path:
    return gguf_models.write_llama_model(gguf_dir / "byte-loop.gguf", kind="byte_loop")


@pytest.fixture(scope="session")
def utf8_model(gguf_dir: Path) -> Path:
    return gguf_models.write_llama_model(gguf_dir / "utf8-bytes.gguf", kind="utf8_bytes")


@pytest.fixture(scope="session")
def crlf_model(gguf_dir: Path) -> Path:
    """Writes " La casa." then "\\r\\n" forever: its newline piece is SmolLM2's."""
    return gguf_models.write_llama_model(gguf_dir / "crlf-lines.gguf", kind="crlf_lines")


@pytest.fixture(scope="session")
def sentence_model(gguf_dir: Path) -> Path:
    return gguf_models.write_llama_model(
        gguf_dir / "sentence.gguf",
        kind="sentence",
        chat_template=gguf_models.SIMPLE_CHAT_TEMPLATE,
    )


@pytest.fixture(scope="session")
def phrases_model(gguf_dir: Path) -> Path:
    """Italian phrases whose every choice wins by a wide margin: for tests that show text."""
    return gguf_models.write_llama_model(gguf_dir / "phrases.gguf", kind="phrases")


@pytest.fixture(scope="session")
def molo_model(gguf_dir: Path) -> Path:
    """ "▁molo" is one token, and "lungo il mo" continues with "lo" only when healed (gguf_healing.py)."""
    return gguf_healing.write_molo_model(gguf_dir / "molo.gguf")


@pytest.fixture(scope="session")
def lora_adapter(gguf_dir: Path, random_model: Path) -> Path:
    """Pushes "▁gatto" to the top on random_model at scale 1."""
    return gguf_adapters.write_lora_adapter(gguf_dir / "lora-gatto.gguf", random_model)


@pytest.fixture(scope="session")
def foreign_lora_adapter(gguf_dir: Path, random_model: Path) -> Path:
    """Declares general.architecture = "gemma3": llama.cpp refuses it on our models."""
    return gguf_adapters.write_lora_adapter(gguf_dir / "lora-gemma3.gguf", random_model, architecture="gemma3")


@pytest.fixture(scope="session")
def wider_model_lora_adapter(gguf_dir: Path) -> Path:
    """A llama adapter made for a llama model twice as wide as random_model: same
    architecture, wrong shapes, which llama.cpp refuses."""
    wider = gguf_models.write_llama_model(gguf_dir / "wider.gguf", kind="random", n_embd=128, n_ff=256)
    return gguf_adapters.write_lora_adapter(gguf_dir / "lora-wider.gguf", wider)


@pytest.fixture(scope="session")
def bad_gguf_files(gguf_dir: Path, random_model: Path) -> dict[str, Path]:
    """{"not_gguf", "truncated", "empty"} -> a *.gguf file that must fail to load."""
    return gguf_adapters.write_bad_files(gguf_dir / "bad", random_model)


# ---- header-only GGUF files and a fake HOME, for config, discovery and model-choice tests ----
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
    if not adapter:  # the dimensions every model declares, or `models` lists it as unusable
        writer.add_block_count(1)
        writer.add_embedding_length(8)
        writer.add_head_count(1)
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


@pytest.fixture
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
    from scriptorium.inference.gguf import demo_model

    monkeypatch.setattr(demo_model, "DEMO_PACKAGE", "scriptorium_test_no_such_demo_package")


@pytest.fixture
def make_gguf():
    """write_gguf, for tests to lay out folders of tiny GGUF files."""
    return write_gguf


# SentencePiece models trained once per session on tests/data/italiano.txt, and their
# faithful GGUF conversions (spm_models.py).
@pytest.fixture(scope="session")
def spm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spm")


def _trained(spm_dir: Path, model_type: str, byte_fallback: bool) -> Path:
    return spm_models.train_spm(
        spm_dir / f"{model_type}{'-bytes' if byte_fallback else ''}.model",
        model_type=model_type,
        byte_fallback=byte_fallback,
    )


@pytest.fixture(scope="session")
def unigram_spm(spm_dir: Path) -> Path:
    return _trained(spm_dir, "unigram", False)


@pytest.fixture(scope="session")
def unigram_bytes_spm(spm_dir: Path) -> Path:
    return _trained(spm_dir, "unigram", True)


@pytest.fixture(scope="session")
def bpe_spm(spm_dir: Path) -> Path:
    return _trained(spm_dir, "bpe", False)


@pytest.fixture(scope="session")
def bpe_bytes_spm(spm_dir: Path) -> Path:
    return _trained(spm_dir, "bpe", True)


@pytest.fixture(scope="session")
def unigram_gguf(spm_dir: Path, unigram_spm: Path) -> Path:
    """The author's layout: the pieces, then <0x00>..<0xFF> appended."""
    return spm_models.convert_to_gguf(unigram_spm, spm_dir / "unigram.gguf")


@pytest.fixture(scope="session")
def prose_spm(spm_dir: Path) -> Path:
    """A model that never saw «, », ?, — or a digit (spm_models.UNSEEN): it reads them as <unk>."""
    return spm_models.train_spm(spm_dir / "prosa.model", without=spm_models.UNSEEN)


@pytest.fixture(scope="session")
def prose_gguf(spm_dir: Path, prose_spm: Path) -> Path:
    return spm_models.convert_to_gguf(prose_spm, spm_dir / "prosa.gguf")


@pytest.fixture(scope="session")
def no_bytes_gguf(spm_dir: Path, unigram_spm: Path) -> Path:
    """The same conversion without byte tokens: llama.cpp aborts on a character with no piece."""
    return spm_models.convert_to_gguf(unigram_spm, spm_dir / "unigram-no-bytes.gguf", byte_tokens="none")


@pytest.fixture(scope="session")
def fim_model(gguf_dir: Path) -> Path:
    """The "sentence" model with fill-in-the-middle tokens (gguf_models.FIM_TOKENS)."""
    return gguf_models.write_llama_model(gguf_dir / "fim.gguf", kind="sentence", fim_tokens=True)
