"""Loading refuses what llama.cpp cannot or should not load, in one line saying why:
missing, truncated or foreign files, adapters where a model belongs (and the reverse),
adapters for another base model, and llama.cpp's own refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.errors import ModelFileError


def load(model: Path, **options) -> Engine:
    return Engine.load(LoadOptions(model_path=model, **options))


def test_bad_model_files_are_refused_before_llama_cpp(
    tmp_path: Path, bad_gguf_files, foreign_lora_adapter, random_model, lora_adapter
) -> None:
    with pytest.raises(ModelFileError, match="not found"):
        load(tmp_path / "missing.gguf")
    with pytest.raises(ModelFileError, match="not a GGUF file"):
        load(bad_gguf_files["not_gguf"])
    with pytest.raises(ModelFileError, match="truncated"):
        load(bad_gguf_files["truncated"])
    with pytest.raises(ModelFileError):
        load(bad_gguf_files["empty"])
    with pytest.raises(ModelFileError, match="'gemma3' model, but the model is 'llama'"):
        load(random_model, lora_path=foreign_lora_adapter)
    with pytest.raises(ModelFileError, match="is a LoRA adapter, not a model"):
        load(lora_adapter)
    with pytest.raises(ModelFileError, match="not a LoRA adapter"):
        load(random_model, lora_path=random_model)


def test_an_adapter_for_another_base_model_of_the_same_architecture_is_refused_by_its_shapes(
    random_model: Path, wider_model_lora_adapter: Path
) -> None:
    with pytest.raises(
        ModelFileError,
        match=r"made for another base model: its blk\.0\.attn_q\.weight is 128 x 128, "
        r"the model's 64 x 64",
    ):
        load(random_model, lora_path=wider_model_lora_adapter)


def test_a_load_llama_cpp_refuses_says_why(random_model: Path) -> None:
    from scriptorium.inference.core.errors import ModelLoadError

    # 16-wide heads cannot hold a q8_0 K cache (blocks of 32): llama.cpp's own reason is kept.
    with pytest.raises(ModelLoadError, match="does not divide"):
        load(random_model, type_k="q8_0", flash_attn=True)


def test_a_model_llama_cpp_cannot_load_names_the_reason_not_the_bare_failure(
    tmp_path: Path, random_model: Path
) -> None:
    from gguf_corrupt import corrupt_copy

    from scriptorium.inference.core.errors import ModelLoadError

    # llama.cpp logs "error loading model: ... tensor 'token_embd.weight' not found", then
    # "failed to load model": the second says nothing the message does not already say.
    missing_tensors = corrupt_copy(random_model, tmp_path / "three-tensors.gguf", tensor_count=3)
    with pytest.raises(ModelLoadError, match="not found") as refused:
        load(missing_tensors)
    assert not str(refused.value).endswith("failed to load model")
