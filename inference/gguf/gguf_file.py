"""Read GGUF headers before llama.cpp sees a file: validate it and collect the model's facts.

llama.cpp crashes or fails with a bare "failed to load" on a wrong file; everything a user
can get wrong (missing, not GGUF, truncated, an adapter for another model) is caught here
with a message that says which file and what is wrong.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..core.errors import ModelFileError
from ..core.model_facts import AdapterFacts, ModelFacts
from .gguf_header import FLOAT32, GGUFHeader, quantization_name, read_gguf_header
from .preflight import TOKEN_TEXTS, TOKEN_TYPE_BYTE, TOKEN_TYPES, check_model

TOKEN_TYPE_UNKNOWN = 2
TOKEN_TYPES_NAMED = (2, 3, 5)
"""Unknown, control and unused tokens: a candidate list shows their names (<unk>, </s>),
which are not the text they stand for."""

# Architectures whose sliding-window layers follow a fixed pattern in llama.cpp when the
# GGUF does not carry `<arch>.attention.sliding_window_pattern` (llama-model.cpp).
DEFAULT_SWA_PATTERN = {"gemma2": 2, "gemma3": 6, "gemma3n": 5, "cohere2": 4}
# Converters write a window for these, but llama.cpp ignores it and keeps one full cache.
SWA_IGNORED = frozenset({"phi3"})


TILED_WEIGHT_TYPES = "Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_XS IQ2_XXS IQ2_XS IQ2_S IQ3_XXS IQ3_S IQ1_S IQ1_M".split()
"""The weight types ggml-cpu's tiled matmul takes (tiled.cpp, ggml_tiled_supported)."""


def _open(path: Path, what: str, whole_arrays: frozenset[str] = frozenset()) -> GGUFHeader:
    """The header of a file that exists, is readable, is GGUF and holds all its tensors."""
    path = Path(path)
    if not path.exists():
        raise ModelFileError(f"{what} not found: {path}")
    if path.is_dir():
        raise ModelFileError(f"{what} is a folder, not a GGUF file: {path}")
    try:
        header = read_gguf_header(path, whole_arrays=whole_arrays)
    except ModelFileError as error:
        message = str(error)
        if message.startswith("cannot read "):
            raise ModelFileError(message.replace("cannot read ", f"cannot read {what} ", 1)) from None
        raise ModelFileError(f"{what} {message}") from None
    truncated = header.first_truncated_tensor()
    if truncated is not None:
        raise ModelFileError(f"{what} {path} is truncated: tensor {truncated.name} ends past the end of the file")
    return header


def _per_layer(value: Any, n_layer: int, default: int) -> tuple[int, ...]:
    if value is None:
        return (default,) * n_layer
    if isinstance(value, tuple):
        return tuple(int(v) for v in value)
    return (int(value),) * n_layer


def _swa_layers(header: GGUFHeader, arch: str, n_layer: int, window: int | None) -> tuple[bool, ...]:
    if not window:
        return (False,) * n_layer
    pattern = header.get(f"{arch}.attention.sliding_window_pattern")
    if isinstance(pattern, tuple):
        return tuple(bool(v) for v in pattern[:n_layer])
    n_pattern = int(pattern) if pattern is not None else DEFAULT_SWA_PATTERN.get(arch, 0)
    # Mirrors llama_hparams::set_swa_pattern (dense layer last in each group; 0 = all SWA).
    return tuple(n_pattern == 0 or (il % n_pattern < n_pattern - 1) for il in range(n_layer))


def _dimensions(path: Path, header: GGUFHeader) -> tuple[str, int, int, int]:
    """(architecture, layers, embedding width, most attention heads) of a model's header;
    ModelFileError naming what is missing or not a count."""
    if header.get("general.type", "model") == "adapter":
        raise ModelFileError(f"{path} is a LoRA adapter, not a model (pass it with --lora)")
    arch = header.get("general.architecture")
    if not arch or not isinstance(arch, str):
        raise ModelFileError(f"model {path} has no general.architecture: not a llama.cpp model")
    counts = []
    for name in ("block_count", "embedding_length", "attention.head_count"):
        value = header.get(f"{arch}.{name}", 0)
        values = value if isinstance(value, tuple) else (value,)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values) or not values:
            raise ModelFileError(f"model {path} has {arch}.{name} = {str(value)[:40]!r}, not a count")
        counts.append(max(values))
    n_layer, n_embd, n_head = counts
    if not (n_layer and n_embd and n_head):
        raise ModelFileError(f"model {path} lacks block_count, embedding_length or head_count for '{arch}'")
    return arch, n_layer, n_embd, n_head


def check_model_header(path: Path, header: GGUFHeader) -> None:
    """The one validity check of a model file, for `models` as for a load: ModelFileError or
    ModelLoadError (one line naming the key) for a header llama.cpp would refuse or abort on."""
    arch, n_layer, _, _ = _dimensions(path, header)
    check_model(path, header, arch, n_layer)


def read_model_facts(path: str | os.PathLike[str], *, preflight: bool = True) -> ModelFacts:
    """Validate a model GGUF and read its facts; raises ModelFileError with a one-line reason,
    or (with `preflight`) ModelLoadError for a file that parses but that llama.cpp would
    abort on. `scriptorium vocab` reads such files too: it reports their faults itself."""
    path = Path(path)
    header = _open(path, "model", frozenset({TOKEN_TYPES, TOKEN_TEXTS}))
    arch, n_layer, n_embd, n_head = _dimensions(path, header)
    if preflight:
        check_model(path, header, arch, n_layer)
    n_head_kv = _per_layer(header.get(f"{arch}.attention.head_count_kv"), n_layer, n_head)
    head_dim = n_embd // n_head
    window = header.get(f"{arch}.attention.sliding_window")
    window = int(window) if window and arch not in SWA_IGNORED else None
    token_types, texts = header.get(TOKEN_TYPES), header.get(TOKEN_TEXTS)
    byte_ids: tuple[int, ...] = ()
    named_ids: tuple[int, ...] = ()
    unknown_ids: tuple[int, ...] = ()
    if token_types is not None:
        import numpy as np

        types = np.asarray(token_types)
        byte_ids = tuple(int(i) for i in np.flatnonzero(types == TOKEN_TYPE_BYTE))
        named_ids = tuple(int(i) for i in np.flatnonzero(np.isin(types, TOKEN_TYPES_NAMED)))
        unknown_ids = tuple(int(i) for i in np.flatnonzero(types == TOKEN_TYPE_UNKNOWN))
    return ModelFacts(
        path=path,
        name=str(header.get("general.name") or path.stem),
        architecture=str(arch),
        parameters=sum(t.n_elements for t in header.tensors),
        file_type=quantization_name(header),
        file_size=header.file_size,
        vocab_size=header.array_lengths.get("tokenizer.ggml.tokens", 0),
        context_length=int(header.get(f"{arch}.context_length", 0)),
        n_layer=n_layer,
        n_embd=n_embd,
        n_head=n_head,
        n_head_kv=n_head_kv,
        key_length=int(header.get(f"{arch}.attention.key_length", head_dim)),
        value_length=int(header.get(f"{arch}.attention.value_length", head_dim)),
        sliding_window=window,
        swa_layers=_swa_layers(header, str(arch), n_layer, window),
        has_chat_template="tokenizer.chat_template" in header.metadata,
        byte_token_ids=byte_ids,
        tokenizer_model=str(header.get("tokenizer.ggml.model", "")),
        add_bos=header.get("tokenizer.ggml.add_bos_token"),
        add_space_prefix=bool(header.get("tokenizer.ggml.add_space_prefix", True)),
        named_token_ids=named_ids,
        unknown_token_ids=unknown_ids,
        tiled_weights=_has_tiled_weights(header),
        longest_token_chars=_longest_token_chars(texts or (), frozenset(byte_ids)),
    )


def _longest_token_chars(texts: tuple[bytes, ...], byte_ids: frozenset[int]) -> int:
    """ModelFacts.longest_token_chars, from the token texts as llama.cpp keeps them. Read here
    rather than from the loaded vocabulary: a foreign call per token took 0.3 s over Gemma's
    262k tokens, and 2 s while the healing index was built on another thread."""
    longest = 1
    for token_id, text in enumerate(texts):
        # A text's bytes are never fewer than its characters: decode only what could be longer.
        if len(text) > longest and token_id not in byte_ids:
            longest = max(longest, len(text.decode("utf-8", "replace")))
    return longest


def _has_tiled_weights(header: GGUFHeader) -> bool:
    """Whether any tensor is of one of TILED_WEIGHT_TYPES."""
    from gguf import GGMLQuantizationType

    tiled = frozenset(GGMLQuantizationType[name].value for name in TILED_WEIGHT_TYPES)
    return any(tensor.type_code in tiled for tensor in header.tensors)


def read_adapter_facts(
    path: str | os.PathLike[str],
    model_architecture: str | None = None,
    model_path: str | os.PathLike[str] | None = None,
) -> AdapterFacts:
    """Validate a LoRA GGUF (and that it fits the model's architecture, and with
    `model_path` the model's tensors)."""
    path = Path(path)
    header = _open(path, "LoRA adapter")
    if header.get("general.type") != "adapter" or header.get("adapter.type", "lora") != "lora":
        raise ModelFileError(f"{path} is not a LoRA adapter (general.type is not 'adapter')")
    arch = str(header.get("general.architecture") or "")
    if model_architecture is not None and arch != model_architecture:
        raise ModelFileError(f"LoRA adapter {path} is for a '{arch}' model, but the model is '{model_architecture}'")
    alpha = header.get("adapter.lora.alpha")
    if header.value_types.get("adapter.lora.alpha", FLOAT32) != FLOAT32:
        # llama.cpp reads it with gguf_get_val_f32, which aborts on any other type.
        shown = repr(str(alpha)[:40]) if alpha is not None else "a long array"
        raise ModelFileError(
            f"LoRA adapter {path} has adapter.lora.alpha = {shown}; llama.cpp needs a 32-bit float there"
        )
    if damage := _rank_mismatch(header):
        raise ModelFileError(f"LoRA adapter {path} is damaged: {damage}")
    misfit = _tensor_misfit(header, _open(Path(model_path), "model")) if model_path is not None else None
    if misfit:
        raise ModelFileError(f"LoRA adapter {path} was made for another base model: {misfit}")
    return AdapterFacts(
        path=path,
        architecture=arch,
        alpha=float(alpha) if alpha is not None else None,
        file_size=header.file_size,
    )


def _rank_mismatch(adapter: GGUFHeader) -> str:
    """A lora_a/lora_b pair whose ranks differ, else '': llama.cpp refuses it in words about
    an old "finetune" example ("lora_a tensor is not transposed")."""
    shapes = {tensor.name: tensor.shape for tensor in adapter.tensors}
    for name, lora_a in shapes.items():
        lora_b = shapes.get(name.removesuffix(".lora_a") + ".lora_b") if name.endswith(".lora_a") else None
        if lora_b is not None and len(lora_a) >= 2 and len(lora_b) >= 2 and lora_a[1] != lora_b[0]:
            return f"its {name} has rank {lora_a[1]}, its lora_b rank {lora_b[0]}"
    return ""


def _tensor_misfit(adapter: GGUFHeader, model: GGUFHeader) -> str:
    """Why llama.cpp would refuse the adapter's tensors on this model, else ''. Its own
    checks (llama-adapter.cpp): every lora_a/lora_b pair names a model tensor, lora_a as
    wide as it and lora_b as tall (a same-architecture adapter for a bigger or smaller
    model fails them)."""
    model_shapes = {tensor.name: tensor.shape for tensor in model.tensors}
    adapter_shapes = {tensor.name: tensor.shape for tensor in adapter.tensors}
    for name, lora_a in adapter_shapes.items():
        if not name.endswith(".lora_a"):
            continue
        target = name.removesuffix(".lora_a")
        lora_b, weight = adapter_shapes.get(f"{target}.lora_b"), model_shapes.get(target)
        if weight is None:
            return f"the model has no tensor {target}"
        if lora_b is None or min(len(lora_a), len(lora_b), len(weight)) < 2:
            continue  # llama.cpp names what else is wrong
        # The token embedding's pair is stored the other way round (llama.cpp's llm_build_inp_embd).
        fitted = (lora_b[1], lora_a[1]) if target.endswith("token_embd.weight") else (lora_a[0], lora_b[1])
        if fitted != weight[:2]:
            return f"its {target} is {fitted[0]} x {fitted[1]}, the model's {weight[0]} x {weight[1]}"
    return ""
