"""Files llama.cpp aborts on inside the engine's child process (contained, but reported with
a GGML_ASSERT and its build path, sometimes blaming the wrong file), or passes through in its
own words: each is refused before llama.cpp sees it, in one line naming the file and the key.
What a file says of itself (its general.name) is shown cut and escaped."""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
import pytest
from gguf_corrupt import corrupt_copy, rewritten_copy
from gguf_models import N_VOCAB
from test_cli import DRAFT, assert_one_line_error, scriptorium

U32, F32, STR = gguf.GGUFValueType.UINT32, gguf.GGUFValueType.FLOAT32, gguf.GGUFValueType.STRING


@pytest.mark.parametrize(
    "metadata, fragment",
    [
        (
            {"llama.attention.head_count_kv": [2, 0]},
            "llama.attention.head_count_kv = 0 on layer 1; a layer with attention needs a KV head",
        ),
        ({"llama.attention.head_count_kv": (0, U32)}, "llama.attention.head_count_kv = 0;"),
        ({"llama.attention.head_count_kv": (3, U32)}, "llama.attention.head_count_kv = 3 for 4 attention heads"),
        (
            {"llama.attention.head_count": (2**30, U32)},
            "llama.attention.head_count = 1,073,741,824, more than its embedding_length 64",
        ),
        (
            {"llama.rope.scaling.type": "bogus"},
            "llama.rope.scaling.type = 'bogus'; llama.cpp knows none, linear, yarn and longrope",
        ),
        (
            {"tokenizer.ggml.model": "bert"},
            "tokenizer.ggml.model = 'bert' and 256 byte tokens (from id 16000); "
            "llama.cpp's WordPiece tokenizer aborts on byte tokens",
        ),
        # llama.cpp's own words were "basic_string::substr: __pos (which is 3) > this->size() (which is 1)".
        (
            {"tokenizer.ggml.token_type": ([6] * N_VOCAB, gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.INT32)},
            "marks token 0 as a byte token (tokenizer.ggml.token_type 6), but its text '<unk>' is not <0xNN>",
        ),
    ],
)
def test_a_model_llama_cpp_would_abort_on_is_refused_naming_the_key(
    random_model: Path, tmp_path: Path, metadata: dict, fragment: str
) -> None:
    broken = rewritten_copy(random_model, tmp_path / "broken.gguf", metadata=metadata)
    assert_one_line_error(scriptorium("continue", "--model", str(broken), "--max-tokens", "2", stdin=DRAFT), fragment)
    # `info` read the same file as "GQA (ratio 5.36871e+08), head dims K 0, 0 B per token" and exited 0.
    assert_one_line_error(scriptorium("info", "--model", str(broken)), fragment)


def test_models_lists_as_unusable_what_info_and_continue_refuse(random_model: Path, models_dir: Path) -> None:
    """`models` listed a NaN epsilon and 1000 layers as usable: the same check runs everywhere."""
    corrupt_copy(random_model, models_dir / "nan-epsilon.gguf", rms_epsilon=float("nan"))
    corrupt_copy(random_model, models_dir / "thousand-layers.gguf", block_count=1000)
    rewritten_copy(random_model, models_dir / "bogus-rope.gguf", metadata={"llama.rope.scaling.type": "bogus"})
    listed = scriptorium("models")
    assert listed.returncode == 0, listed.stderr
    table, unusable = listed.stdout.split("Unusable files:")
    assert "nan-epsilon" not in table and "thousand-layers" not in table and "bogus-rope" not in table
    assert "layer_norm_rms_epsilon = nan" in unusable
    assert "declares 1000 layers" in unusable
    assert "llama.rope.scaling.type = 'bogus'" in unusable


@pytest.fixture
def string_alpha_adapter(lora_adapter: Path, tmp_path: Path) -> Path:
    return rewritten_copy(lora_adapter, tmp_path / "string-alpha.gguf", metadata={"adapter.lora.alpha": "4"})


def test_an_adapter_whose_alpha_is_no_float_is_blamed_not_the_model(
    random_model: Path, string_alpha_adapter: Path
) -> None:
    """llama.cpp reads adapter.lora.alpha as a float32 and aborts on any other type; the
    message blamed the model, and `info --lora` said the adapter "fits this model"."""
    fragment = f"LoRA adapter {string_alpha_adapter} has adapter.lora.alpha = '4'; llama.cpp needs a 32-bit float"
    assert_one_line_error(
        scriptorium(
            "continue",
            "--model",
            str(random_model),
            "--lora",
            str(string_alpha_adapter),
            "--max-tokens",
            "2",
            stdin=DRAFT,
        ),
        fragment,
    )
    assert_one_line_error(
        scriptorium("info", "--model", str(random_model), "--lora", str(string_alpha_adapter)), fragment
    )


def test_an_adapter_whose_ranks_differ_is_refused_in_plain_words(
    random_model: Path, lora_adapter: Path, tmp_path: Path
) -> None:
    """llama.cpp's own words were "lora_a tensor is not transposed (hint: adapter from
    "finetune" example is no longer supported)"."""
    reader = gguf.GGUFReader(str(lora_adapter))
    lora_b = next(t for t in reader.tensors if t.name.endswith(".lora_b"))
    rows = int(lora_b.shape[1])  # gguf lists the dimensions innermost first: (rank, rows)
    broken = rewritten_copy(
        lora_adapter, tmp_path / "ranks.gguf", tensors={lora_b.name: np.zeros((rows, 5), dtype=np.float32)}
    )
    result = scriptorium(
        "continue", "--model", str(random_model), "--lora", str(broken), "--max-tokens", "2", stdin=DRAFT
    )
    assert_one_line_error(
        result,
        f"LoRA adapter {broken} is damaged: its {lora_b.name.removesuffix('_b')}_a has rank 4, its lora_b rank 5",
    )
    assert "transposed" not in result.stderr


def test_info_cuts_a_huge_name_and_escapes_its_control_characters(random_model: Path, tmp_path: Path) -> None:
    named = rewritten_copy(
        random_model, tmp_path / "named.gguf", metadata={"general.name": "\x1b[2J" + "a" * 1_000_000}
    )
    result = scriptorium("info", "--model", str(named))
    assert result.returncode == 0, result.stderr
    model_line = result.stdout.splitlines()[0]
    assert model_line.startswith("model") and "\\x1b[2Jaaa" in model_line and "a…" in model_line
    assert len(result.stdout) < 5_000 and "\x1b" not in result.stdout
