"""Read GGUF headers before llama.cpp sees a file: validate it and collect the model's facts.

llama.cpp crashes or fails with a bare "failed to load" on a wrong file; everything a user
can get wrong (missing, not GGUF, truncated, an adapter for another model) is caught here
with a message that says which file and what is wrong.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ModelFileError

GGUF_MAGIC = b"GGUF"
TOKEN_TYPE_BYTE = 6

# Architectures whose sliding-window layers follow a fixed pattern in llama.cpp when the
# GGUF does not carry `<arch>.attention.sliding_window_pattern` (llama-model.cpp).
DEFAULT_SWA_PATTERN = {"gemma2": 2, "gemma3": 6, "gemma3n": 5, "cohere2": 4}


@dataclass(frozen=True, slots=True)
class ModelFacts:
    """What a GGUF file says about its model, read without loading the weights."""

    path: Path
    name: str
    architecture: str
    parameters: int
    file_type: str
    file_size: int
    vocab_size: int
    context_length: int
    n_layer: int
    n_embd: int
    n_head: int
    n_head_kv: tuple[int, ...]
    """Per layer: llama.cpp allows the KV head count to vary by layer."""
    key_length: int
    value_length: int
    sliding_window: int | None
    swa_layers: tuple[bool, ...]
    """Per layer: True where llama.cpp uses the sliding-window cache."""
    has_chat_template: bool
    byte_token_ids: tuple[int, ...]

    @property
    def gqa_ratio(self) -> float:
        """Query heads per KV head: 1 is plain multi-head attention, n_head is MQA."""
        kv = max(self.n_head_kv) or 1
        return self.n_head / kv

    @property
    def attention_kind(self) -> str:
        kv = max(self.n_head_kv)
        if kv == self.n_head:
            return "MHA"
        return "MQA" if kv == 1 else "GQA"


@dataclass(frozen=True, slots=True)
class AdapterFacts:
    path: Path
    architecture: str
    alpha: float | None
    rank: int | None
    file_size: int


def _open(path: Path, what: str) -> Any:
    """A GGUFReader over a file that exists, is readable and starts with the GGUF magic."""
    path = Path(path)
    if not path.exists():
        raise ModelFileError(f"{what} not found: {path}")
    if path.is_dir():
        raise ModelFileError(f"{what} is a folder, not a GGUF file: {path}")
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except OSError as error:
        raise ModelFileError(f"cannot read {what} {path}: {error.strerror or error}") from None
    if magic != GGUF_MAGIC:
        raise ModelFileError(f"{what} {path} is not a GGUF file (it does not start with 'GGUF')")

    from gguf import GGUFReader

    try:
        reader = GGUFReader(path, "r")
    except Exception as error:  # the reader raises many kinds on damaged headers
        raise ModelFileError(f"{what} {path} is truncated or corrupt ({type(error).__name__}: {error})") from None
    size = path.stat().st_size
    for tensor in reader.tensors:
        if tensor.data_offset + tensor.n_bytes > size:
            raise ModelFileError(
                f"{what} {path} is truncated: tensor {tensor.name} ends past the end of the file"
            )
    return reader


def _value(reader: Any, key: str, default: Any = None) -> Any:
    field = reader.fields.get(key)
    if field is None:
        return default
    return field.contents()


def _array_length(reader: Any, key: str) -> int:
    field = reader.fields.get(key)
    return 0 if field is None else len(field.data)


def _per_layer(value: Any, n_layer: int, default: int) -> tuple[int, ...]:
    if value is None:
        return (default,) * n_layer
    if isinstance(value, list):
        return tuple(int(v) for v in value)
    return (int(value),) * n_layer


def _file_type_name(reader: Any) -> str:
    from gguf import GGMLQuantizationType, LlamaFileType

    code = _value(reader, "general.file_type")
    if code is not None:
        try:
            return LlamaFileType(int(code)).name.removeprefix("MOSTLY_").removeprefix("ALL_")
        except ValueError:
            pass
    # No declared file type: name it after the type holding most of the weights.
    totals: dict[str, int] = {}
    for tensor in reader.tensors:
        kind = GGMLQuantizationType(tensor.tensor_type).name
        totals[kind] = totals.get(kind, 0) + int(tensor.n_elements)
    return max(totals, key=totals.__getitem__) if totals else "unknown"


def _swa_layers(reader: Any, arch: str, n_layer: int, window: int | None) -> tuple[bool, ...]:
    if not window:
        return (False,) * n_layer
    pattern = _value(reader, f"{arch}.attention.sliding_window_pattern")
    if isinstance(pattern, list):
        return tuple(bool(v) for v in pattern[:n_layer])
    n_pattern = int(pattern) if pattern is not None else DEFAULT_SWA_PATTERN.get(arch, 0)
    # Mirrors llama_hparams::set_swa_pattern (dense layer last in each group; 0 = all SWA).
    return tuple(n_pattern == 0 or (il % n_pattern < n_pattern - 1) for il in range(n_layer))


def read_model_facts(path: str | os.PathLike[str]) -> ModelFacts:
    """Validate a model GGUF and read its facts; raises ModelFileError with a one-line reason."""
    path = Path(path)
    reader = _open(path, "model")
    kind = _value(reader, "general.type", "model")
    if kind == "adapter":
        raise ModelFileError(f"{path} is a LoRA adapter, not a model (pass it with --lora)")
    arch = _value(reader, "general.architecture")
    if not arch:
        raise ModelFileError(f"model {path} has no general.architecture: not a llama.cpp model")
    n_layer = int(_value(reader, f"{arch}.block_count", 0))
    n_embd = int(_value(reader, f"{arch}.embedding_length", 0))
    n_head_value = _value(reader, f"{arch}.attention.head_count", 0)
    n_head = max(n_head_value) if isinstance(n_head_value, list) else int(n_head_value)
    if not (n_layer and n_embd and n_head):
        raise ModelFileError(f"model {path} lacks block_count, embedding_length or head_count for '{arch}'")
    n_head_kv = _per_layer(_value(reader, f"{arch}.attention.head_count_kv"), n_layer, n_head)
    head_dim = n_embd // n_head
    window = _value(reader, f"{arch}.attention.sliding_window")
    window = int(window) if window else None
    token_types = reader.fields.get("tokenizer.ggml.token_type")
    byte_ids: tuple[int, ...] = ()
    if token_types is not None:
        import numpy as np

        types = np.asarray([token_types.parts[i][0] for i in token_types.data])
        byte_ids = tuple(int(i) for i in np.flatnonzero(types == TOKEN_TYPE_BYTE))
    return ModelFacts(
        path=path,
        name=str(_value(reader, "general.name") or path.stem),
        architecture=str(arch),
        parameters=sum(int(t.n_elements) for t in reader.tensors),
        file_type=_file_type_name(reader),
        file_size=path.stat().st_size,
        vocab_size=_array_length(reader, "tokenizer.ggml.tokens"),
        context_length=int(_value(reader, f"{arch}.context_length", 0)),
        n_layer=n_layer,
        n_embd=n_embd,
        n_head=n_head,
        n_head_kv=n_head_kv,
        key_length=int(_value(reader, f"{arch}.attention.key_length", head_dim)),
        value_length=int(_value(reader, f"{arch}.attention.value_length", head_dim)),
        sliding_window=window,
        swa_layers=_swa_layers(reader, str(arch), n_layer, window),
        has_chat_template=reader.fields.get("tokenizer.chat_template") is not None,
        byte_token_ids=byte_ids,
    )


def read_adapter_facts(path: str | os.PathLike[str], model_architecture: str | None = None) -> AdapterFacts:
    """Validate a LoRA GGUF (and that it fits the model's architecture)."""
    path = Path(path)
    reader = _open(path, "LoRA adapter")
    if _value(reader, "general.type") != "adapter" or _value(reader, "adapter.type", "lora") != "lora":
        raise ModelFileError(f"{path} is not a LoRA adapter (general.type is not 'adapter')")
    arch = str(_value(reader, "general.architecture") or "")
    if model_architecture is not None and arch != model_architecture:
        raise ModelFileError(
            f"LoRA adapter {path} is for a '{arch}' model, but the model is '{model_architecture}'"
        )
    ranks = {int(t.shape[0]) for t in reader.tensors if t.name.endswith(".lora_b")}
    alpha = _value(reader, "adapter.lora.alpha")
    return AdapterFacts(
        path=path,
        architecture=arch,
        alpha=float(alpha) if alpha is not None else None,
        rank=ranks.pop() if len(ranks) == 1 else None,
        file_size=path.stat().st_size,
    )
