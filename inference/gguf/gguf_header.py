"""A fast GGUF header reader: metadata scalars and tensor extents, without the vocabulary.

`gguf.GGUFReader` builds a Python object for every element of every array, which takes
about 8 s on a 262k-token vocabulary (Gemma 3); model discovery reads dozens of files and
only needs a handful of scalars, so it walks the header with struct and skips arrays.
String arrays are stepped over (their length is kept); numeric arrays are kept as tuples
only when short, so per-layer values survive and vocabularies do not.
"""

from __future__ import annotations

import mmap
import os
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import ModelFileError

GGUF_MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32
MAX_KEPT_ARRAY = 4096
"""Numeric arrays up to this many elements are kept; longer ones only have their length."""
MAX_DIMS = 4
"""GGML_MAX_DIMS: llama.cpp refuses a tensor with more dimensions."""
MAX_NAME = 64
"""GGML_MAX_NAME: a tensor name takes fewer bytes (and its final NUL) in llama.cpp."""
MAX_ELEMENTS = 2**63 - 1
"""llama.cpp refuses a tensor whose element count overflows int64."""
# The fewest bytes a metadata entry (key length, type, a one-byte value) and a tensor
# description (name length, dimension count, type, offset) can take: a count that cannot
# fit in what is left of the file is corrupt, whatever the bytes after it say.
MIN_KV_BYTES = 8 + 4 + 1
MIN_TENSOR_BYTES = 8 + 4 + 4 + 8
HEADER_SECONDS = 5.0
"""A header that takes longer is not a header: even a 262k-token vocabulary takes
milliseconds, but counts within a multi-gigabyte file can still ask for billions of steps."""
CHECK_EVERY = 4096

# GGUF value types -> struct codes (GGUFValueType in gguf-py).
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_WIDTHS = {code: struct.calcsize(f"<{code}") for code in _SCALARS.values()}
_STRING, _ARRAY = 8, 9
UINT32, FLOAT32 = 4, 6
"""The value types llama.cpp reads some keys as directly (gguf_get_val_u32, _f32), asserting the
type: general.alignment, adapter.lora.alpha. Any other type there aborts the process."""
REMOVED_TYPES = {
    4: "Q4_2",
    5: "Q4_3",
    31: "Q4_0_4_4",
    32: "Q4_0_4_8",
    33: "Q4_0_8_8",
    36: "IQ4_NL_4_4",
    37: "IQ4_NL_4_8",
    38: "IQ4_NL_8_8",
}
"""Tensor types ggml once had and no longer loads (ggml.h keeps their numbers as comments)."""


@dataclass(frozen=True, slots=True)
class TensorExtent:
    name: str
    type_code: int
    n_elements: int
    n_bytes: int | None
    """None when the quantization type is unknown to this gguf package."""
    end: int
    """Offset in the file just past the tensor's data (None-sized tensors count as 0 bytes)."""
    shape: tuple[int, ...] = ()
    """Its dimensions as GGUF stores them, innermost first (llama.cpp's ne[0], ne[1]...)."""


@dataclass(frozen=True, slots=True)
class GGUFHeader:
    path: Path
    version: int
    file_size: int
    metadata: dict[str, Any]
    """Scalars, strings and short numeric arrays (as tuples), by key."""
    array_lengths: dict[str, int]
    """The element count of every array, kept or not."""
    tensors: tuple[TensorExtent, ...]
    value_types: dict[str, int] = field(default_factory=dict)
    """The GGUF value type of every key (arrays: 9), for the keys llama.cpp reads by type."""

    def get(self, key: str, default: Any = None) -> Any:
        return self.metadata.get(key, default)

    def first_truncated_tensor(self) -> TensorExtent | None:
        """The first tensor whose data ends past the end of the file (an interrupted download)."""
        return next((t for t in self.tensors if t.end > self.file_size), None)


class _Cursor:
    """Reads little- or big-endian GGUF fields from a buffer, failing with the offset."""

    def __init__(self, buffer: Any, endian: str) -> None:
        self.buffer = buffer
        self.endian = endian
        self.offset = 0
        self.deadline = time.monotonic() + HEADER_SECONDS

    def check_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise ValueError(f"still reading the header after {HEADER_SECONDS:g} s")

    def count(self, what: str, min_bytes: int) -> int:
        """A u64 count of items that take at least `min_bytes` each, bounded by the bytes left."""
        count = self.unpack("Q")
        if count * min_bytes > len(self.buffer) - self.offset:
            raise ValueError(f"{count} {what} cannot fit in the file")
        return count

    def unpack(self, code: str) -> Any:
        width = _WIDTHS[code]
        if self.offset + width > len(self.buffer):
            raise ValueError(f"the file ends inside the header, at byte {len(self.buffer):,}")
        value = struct.unpack_from(self.endian + code, self.buffer, self.offset)[0]
        self.offset += width
        return value

    def string(self) -> str:
        length = self.unpack("Q")
        end = self.offset + length
        if end > len(self.buffer):
            raise ValueError(f"a {length:,}-byte string at byte {self.offset - 8:,} runs past the end of the file")
        text = bytes(self.buffer[self.offset : end]).decode("utf-8", errors="replace")
        self.offset = end
        return text

    def strings(self, count: int, keep: bool) -> tuple[bytes, ...] | None:
        """Step over `count` strings; with `keep`, their raw bytes (as llama.cpp compares them)."""
        unpack_from, buffer, fmt = struct.unpack_from, self.buffer, self.endian + "Q"
        offset, size = self.offset, len(buffer)
        kept: list[bytes] = []
        for index in range(count):
            start = offset + 8
            if start > size:
                break
            offset = start + unpack_from(fmt, buffer, offset)[0]
            if offset > size:
                break
            if keep:
                kept.append(buffer[start:offset])
            if index % CHECK_EVERY == 0:
                self.check_time()
        else:
            self.offset = offset
            return tuple(kept) if keep else None
        raise ValueError(f"string {index:,} of an array of {count:,} runs past the end of the file")

    def value(self, value_type: int, keep_whole: bool = False) -> tuple[Any, int | None]:
        """(value, array length or None); value is None for an array too long to keep,
        unless `keep_whole`, which returns a long numeric array as a numpy array and a
        string array as a tuple of bytes."""
        if value_type in _SCALARS:
            return self.unpack(_SCALARS[value_type]), None
        if value_type == _STRING:
            return self.string(), None
        if value_type != _ARRAY:
            raise ValueError(f"unknown metadata value type {value_type}")
        element_type = self.unpack("I")
        if element_type == _STRING:
            count = self.count("strings", 8)
            return self.strings(count, keep_whole), count
        if element_type not in _SCALARS:
            raise ValueError(f"unsupported array element type {element_type}")
        code = _SCALARS[element_type]
        width = struct.calcsize(code)
        count = self.count("array elements", width)
        if keep_whole:
            import numpy as np

            values = np.frombuffer(self.buffer, dtype=np.dtype(f"{self.endian}{code}"), count=count, offset=self.offset)
            self.offset += count * width
            return values.copy(), count
        if count > MAX_KEPT_ARRAY:
            self.offset += count * width
            return None, count
        fmt = f"{self.endian}{count}{code}"
        values = struct.unpack_from(fmt, self.buffer, self.offset)
        self.offset += count * width
        return tuple(values), count


def _tensor_bytes(type_code: int, n_elements: int) -> int | None:
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    try:
        block_size, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(type_code)]
    except (ValueError, KeyError):
        return None
    return n_elements // block_size * type_size


def read_gguf_header(path: str | os.PathLike[str], *, whole_arrays: frozenset[str] = frozenset()) -> GGUFHeader:
    """Parse a GGUF file's header; raises ModelFileError with a one-line reason.

    Reads only the header pages (through mmap), so a multi-gigabyte model costs
    milliseconds; tensor data is never touched. Numeric arrays named in `whole_arrays`
    (token types, say) are kept whole as numpy arrays, however long; string arrays named
    there (token texts) as tuples of bytes.
    """
    path = Path(path)
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size < 24:
                raise ModelFileError(f"{path} is not a GGUF file (only {size} bytes)")
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buffer:
                return _parse(path, buffer, size, whole_arrays)
    except OSError as error:
        raise ModelFileError(f"cannot read {path}: {error.strerror or error}") from None


def _parse(path: Path, buffer: Any, size: int, whole_arrays: frozenset[str]) -> GGUFHeader:  # noqa: C901 - the header read in file order, a branch per field
    if buffer[:4] != GGUF_MAGIC:
        raise ModelFileError(f"{path} is not a GGUF file (it does not start with 'GGUF')")
    version = struct.unpack_from("<I", buffer, 4)[0]
    endian = "<"
    if version & 0xFFFF == 0:  # a small number read with the wrong byte order
        endian, version = ">", struct.unpack_from(">I", buffer, 4)[0]
    if version not in (2, 3):
        raise ModelFileError(f"{path} uses GGUF version {version}; only versions 2 and 3 are supported")
    cursor = _Cursor(buffer, endian)
    cursor.offset = 8
    metadata: dict[str, Any] = {}
    array_lengths: dict[str, int] = {}
    value_types: dict[str, int] = {}
    try:
        # Both counts come before the entries: bound the tensors by what the entries leave.
        tensor_count = cursor.unpack("Q")
        kv_count = cursor.count("metadata entries", MIN_KV_BYTES)
        if tensor_count * MIN_TENSOR_BYTES > size - cursor.offset - kv_count * MIN_KV_BYTES:
            raise ValueError(f"{tensor_count} tensors cannot fit in the file")
        for index in range(kv_count):
            if index % CHECK_EVERY == 0:
                cursor.check_time()
            key = cursor.string()
            if key in value_types:  # llama.cpp refuses the file, saying only "failed to load model"
                raise ValueError(f"key {key[:60]!r} is listed twice")
            value_types[key] = cursor.unpack("I")
            value, length = cursor.value(value_types[key], key in whole_arrays)
            if length is not None:
                array_lengths[key] = length
            if value is not None:
                metadata[key] = value
        infos = []
        for index in range(tensor_count):
            if index % CHECK_EVERY == 0:
                cursor.check_time()
            name = cursor.string()
            n_dims = cursor.unpack("I")
            if n_dims > MAX_DIMS:
                raise ValueError(f"tensor {name[:40]!r} has {n_dims} dimensions (at most {MAX_DIMS})")
            shape = tuple(cursor.unpack("Q") for _ in range(n_dims))
            n_elements = 1
            for dimension in shape:
                n_elements *= dimension
            if n_elements > MAX_ELEMENTS:
                raise ValueError(f"tensor {name[:40]!r} has more elements than llama.cpp can count")
            infos.append((name, cursor.unpack("I"), n_elements, cursor.unpack("Q"), shape))
    except ValueError as error:
        # A big-endian version with little-endian counts after it: say how the counts were read.
        read_as = "; read big-endian, as its version field is written" if endian == ">" else ""
        raise ModelFileError(f"{path} has a truncated or corrupt GGUF header ({error}{read_as})") from None
    except (struct.error, OverflowError):  # the cursor bounds every read: kept in its words all the same
        raise ModelFileError(
            f"{path} has a truncated or corrupt GGUF header (a field runs past the end of the file)"
        ) from None
    alignment = _alignment(path, metadata, value_types)
    data_start = -(-cursor.offset // alignment) * alignment
    tensors = []
    for name, type_code, n_elements, offset, shape in infos:
        n_bytes = _tensor_bytes(type_code, n_elements)
        tensors.append(TensorExtent(name, type_code, n_elements, n_bytes, data_start + offset + (n_bytes or 0), shape))
    try:
        _check_layout(infos, alignment)
    except ValueError as error:
        raise ModelFileError(f"{path} has a corrupt GGUF header ({error})") from None
    return GGUFHeader(path, version, size, metadata, array_lengths, tuple(tensors), value_types)


def _alignment(path: Path, metadata: dict[str, Any], value_types: dict[str, int]) -> int:
    """general.alignment as llama.cpp takes it: a u32 (read by type, which asserts) and a power of two."""
    alignment = metadata.get("general.alignment", DEFAULT_ALIGNMENT)
    if "general.alignment" in value_types and (
        value_types["general.alignment"] != UINT32 or alignment <= 0 or alignment & (alignment - 1)
    ):
        raise ModelFileError(
            f"{path} has general.alignment = {alignment!r}; GGUF needs a power of two "
            "stored as a 32-bit unsigned integer"
        )
    return alignment


def _check_layout(infos: list[tuple[str, int, int, int, tuple[int, ...]]], alignment: int) -> None:
    """What llama.cpp's GGUF reader refuses with only "failed to load model": unknown or
    removed tensor types, rows that are not whole blocks, empty or repeated tensors, and
    data that is not packed in order (each tensor at the padded end of the one before)."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    seen: set[str] = set()
    expected = 0
    for name, type_code, n_elements, offset, shape in infos:
        shown = repr(name[:40])
        if name in seen:
            raise ValueError(f"tensor {shown} is listed twice")
        if len(name.encode("utf-8", "replace")) >= MAX_NAME:
            raise ValueError(
                f"tensor {shown} has a name of {len(name.encode('utf-8', 'replace'))} bytes; "
                f"llama.cpp takes at most {MAX_NAME - 1}"
            )
        seen.add(name)
        if type_code in REMOVED_TYPES:
            raise ValueError(f"tensor {shown} is of type {REMOVED_TYPES[type_code]}, which llama.cpp no longer reads")
        try:
            kind = GGMLQuantizationType(type_code)
            block_size, type_size = GGML_QUANT_SIZES[kind]
        except (ValueError, KeyError):
            raise ValueError(f"tensor {shown} has unknown type {type_code}") from None
        if 0 in shape:
            raise ValueError(f"tensor {shown} has a dimension of 0 ({' x '.join(map(str, shape))})")
        if shape and shape[0] % block_size:
            raise ValueError(
                f"tensor {shown} has rows of {shape[0]} values, not whole {kind.name} blocks "
                f"of {block_size}: its type is wrong"
            )
        if offset % alignment:
            raise ValueError(
                f"tensor {shown} starts at data offset {offset:,}, not a multiple of the file's alignment ({alignment})"
            )
        if offset != expected:
            where = "inside the data of the tensors before it" if offset < expected else "after a gap"
            raise ValueError(
                f"tensor {shown} starts at data offset {offset:,}, {where}: they end at {expected:,} "
                "(the type or shape of one of them, or this offset, is wrong)"
            )
        expected += -(-(n_elements // block_size * type_size) // alignment) * alignment


def quantization_name(header: GGUFHeader) -> str:
    """'Q4_K_M', 'F16'...: general.file_type, else the type holding most of the weights."""
    from gguf import GGMLQuantizationType, LlamaFileType

    code = header.get("general.file_type")
    if isinstance(code, int):
        try:
            return LlamaFileType(code).name.removeprefix("MOSTLY_").removeprefix("ALL_")
        except ValueError:
            pass
    totals: dict[str, int] = {}
    for tensor in header.tensors:
        try:
            kind = GGMLQuantizationType(tensor.type_code).name
        except ValueError:
            kind = f"type {tensor.type_code}"
        totals[kind] = totals.get(kind, 0) + tensor.n_elements
    return max(totals, key=totals.__getitem__) if totals else "unknown"
