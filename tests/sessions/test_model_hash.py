"""Model hashes: the whole file's SHA-256, cached per (path, size, mtime); refs built from real GGUF facts."""

from __future__ import annotations

import builtins
import hashlib
import os
import shutil
from pathlib import Path

import pytest

from scriptorium.app.models import hashing as model_hash
from scriptorium.app.sessions import LoraRef, ModelRef, SessionStore
from scriptorium.inference.gguf.gguf_file import read_adapter_facts, read_model_facts


def test_hash_is_plain_sha256_and_cached(tmp_path: Path, random_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "model.gguf"
    shutil.copy(random_model, model)
    expected = hashlib.sha256(model.read_bytes()).hexdigest()
    seen: list[tuple[int, int]] = []
    assert model_hash.cached_sha256(model) is None
    assert model_hash.file_sha256(model, progress=lambda done, total: seen.append((done, total))) == expected
    assert seen[-1] == (model.stat().st_size, model.stat().st_size)
    real_open = builtins.open

    def no_model_reads(file, *args, **kwargs):  # type: ignore[no-untyped-def]
        assert Path(file).name != "model.gguf", "a cached hash read the model again"
        return real_open(file, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(builtins, "open", no_model_reads)
        assert model_hash.file_sha256(model) == expected
    with model.open("ab") as handle:  # the file changes: size and mtime no longer match
        handle.write(b"\0")
    assert model_hash.cached_sha256(model) is None
    assert model_hash.file_sha256(model) == hashlib.sha256(model.read_bytes()).hexdigest()


def test_damaged_cache_only_costs_a_rehash(tmp_path: Path, random_model: Path) -> None:
    model_hash.cache_file().parent.mkdir(parents=True, exist_ok=True)
    model_hash.cache_file().write_text("{broken", encoding="utf-8")
    assert model_hash.file_sha256(random_model) == hashlib.sha256(random_model.read_bytes()).hexdigest()
    assert model_hash.cached_sha256(random_model) is not None


def test_unreadable_model_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(model_hash.HashError, match="cannot read .*missing.gguf") as info:
        model_hash.file_sha256(tmp_path / "missing.gguf")
    assert "\n" not in str(info.value)


def test_refs_from_real_gguf_facts_round_trip(
    store: SessionStore, random_model: Path, lora_adapter: Path, generate
) -> None:
    facts = read_model_facts(random_model)
    adapter = read_adapter_facts(lora_adapter, facts.architecture)
    model = ModelRef.from_facts(facts, model_hash.file_sha256(random_model))
    lora = LoraRef.from_facts(adapter, 0.75, model_hash.file_sha256(lora_adapter))
    assert model.size == os.path.getsize(random_model) and model.quantization == facts.file_type
    assert model.name == facts.name and lora.scale == 0.75 and lora.name == lora_adapter.stem
    session = store.create_draft(text="x")
    generate(session, " y", model=model, lora=lora)
    store.save(session)
    assert SessionStore().load(session.id).generations[0].model == model
