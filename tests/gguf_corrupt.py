"""Copies of a tiny test model (gguf_models.py) with one thing broken in place, the way a
bad conversion, a bad download or a careless edit breaks a real file. The header keeps
its layout: only values are overwritten, so everything else still parses."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import gguf
import numpy as np

TENSOR_COUNT_OFFSET = 8
"""Where the u64 tensor count sits in a GGUF file: after the magic and the version."""


def corrupt_copy(
    source: str | Path,
    target: str | Path,
    *,
    block_count: int | None = None,
    rms_epsilon: float | None = None,
    same_byte_token_texts: bool = False,
    nan_output_row: int | None = None,
    tensor_count: int | None = None,
) -> Path:
    """Copy the model at `source` to `target`, then overwrite what is asked:
    `block_count` (llama.block_count; the tensors stay), `rms_epsilon`
    (llama.attention.layer_norm_rms_epsilon), `same_byte_token_texts` (every <0xNN> token
    reads <0x00>, so 256 ids share one text), `nan_output_row` (that token's row of
    output.weight becomes NaN, so its logit is NaN from any context) and `tensor_count`
    (the header's count, now wrong)."""
    target = Path(target)
    shutil.copyfile(source, target)
    reader = gguf.GGUFReader(str(target), "r+")
    if block_count is not None:
        _scalar(reader, "llama.block_count")[0] = block_count
    if rms_epsilon is not None:
        _scalar(reader, "llama.attention.layer_norm_rms_epsilon")[0] = rms_epsilon
    if same_byte_token_texts:
        tokens = reader.fields["tokenizer.ggml.tokens"]
        for index in tokens.data:
            text = tokens.parts[index]
            if bytes(text).startswith(b"<0x") and len(text) == 6:
                text[:] = np.frombuffer(b"<0x00>", dtype=np.uint8)
    if nan_output_row is not None:
        output = next(t for t in reader.tensors if t.name == "output.weight")
        output.data[nan_output_row] = np.nan
    reader.data.flush()
    del reader
    if tensor_count is not None:
        with target.open("r+b") as handle:
            handle.seek(TENSOR_COUNT_OFFSET)
            handle.write(struct.pack("<Q", tensor_count))
    return target


def _scalar(reader: gguf.GGUFReader, key: str) -> np.ndarray:
    field = reader.fields[key]
    return field.parts[field.data[0]]


def rewritten_copy(
    source: str | Path,
    target: str | Path,
    *,
    metadata: dict | None = None,
    tensors: dict[str, np.ndarray] | None = None,
) -> Path:
    """Write `source` again to `target` with some keys set to new values, of any type (a
    scalar made an array, a float a string: what no in-place edit can do) and some tensors
    replaced. A value is a (value, GGUFValueType[, element type]) tuple, or a bare string or
    list of ints (an array of UINT32); None removes the key."""
    reader = gguf.GGUFReader(str(source))
    arch = reader.fields["general.architecture"].contents()
    writer = gguf.GGUFWriter(str(target), arch)
    changes = dict(metadata or {})
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture" or name in changes:
            continue
        sub_type = field.types[-1] if field.types[0] == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(name, field.contents(), field.types[0], sub_type=sub_type)
    for name, value in changes.items():
        if value is None:
            continue
        if isinstance(value, tuple):
            value, value_type, *element_type = value
        else:
            value_type = gguf.GGUFValueType.STRING if isinstance(value, str) else gguf.GGUFValueType.ARRAY
            element_type = []
        sub_type = (element_type or [gguf.GGUFValueType.UINT32])[0] if value_type == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(name, value, value_type, sub_type=sub_type)
    for tensor in reader.tensors:
        data = (tensors or {}).get(tensor.name)
        if data is not None:
            writer.add_tensor(tensor.name, data)
        else:
            writer.add_tensor(
                tensor.name,
                tensor.data,
                raw_shape=tuple(reversed([int(n) for n in tensor.shape])),
                raw_dtype=tensor.tensor_type,
            )
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return Path(target)
