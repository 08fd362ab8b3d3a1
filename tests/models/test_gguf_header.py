"""The fast header reader agrees with gguf_file (which uses gguf.GGUFReader) and fails in one line."""

from __future__ import annotations

import struct
from pathlib import Path

import gguf
import pytest

from scriptorium.inference.core.errors import ModelFileError
from scriptorium.inference.gguf.gguf_file import read_adapter_facts, read_model_facts
from scriptorium.inference.gguf.gguf_header import quantization_name, read_gguf_header


def test_header_matches_model_facts(random_model: Path) -> None:
    facts = read_model_facts(random_model)
    header = read_gguf_header(random_model)
    assert header.get("general.architecture") == facts.architecture
    assert header.get("general.name") == facts.name
    assert quantization_name(header) == facts.file_type
    assert header.get(f"{facts.architecture}.context_length") == facts.context_length
    assert sum(t.n_elements for t in header.tensors) == facts.parameters
    assert header.array_lengths["tokenizer.ggml.tokens"] == facts.vocab_size
    assert "tokenizer.ggml.tokens" not in header.metadata  # vocabularies are skipped, not kept
    assert header.first_truncated_tensor() is None
    assert max(t.end for t in header.tensors) <= header.file_size
    reader = gguf.GGUFReader(str(random_model))
    assert {t.name: t.shape for t in header.tensors} == {t.name: tuple(int(n) for n in t.shape) for t in reader.tensors}


def test_header_of_adapter(lora_adapter: Path) -> None:
    facts = read_adapter_facts(lora_adapter)
    header = read_gguf_header(lora_adapter)
    assert header.get("general.type") == "adapter"
    assert header.get("general.architecture") == facts.architecture
    assert header.get("adapter.lora.alpha") == pytest.approx(facts.alpha)


def test_short_numeric_arrays_are_kept(tmp_path: Path) -> None:
    writer = gguf.GGUFWriter(str(tmp_path / "a.gguf"), "llama")
    writer.add_array("llama.attention.head_count_kv", [2, 2, 1])
    writer.add_array("long.array", list(range(5000)))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    header = read_gguf_header(tmp_path / "a.gguf")
    assert header.get("llama.attention.head_count_kv") == (2, 2, 1)
    assert header.get("long.array") is None
    assert header.array_lengths["long.array"] == 5000


def test_quantization_falls_back_to_the_dominant_tensor_type(tmp_path: Path, make_gguf) -> None:
    path = make_gguf(tmp_path / "untyped.gguf", file_type=None)
    assert quantization_name(read_gguf_header(path)) == "F32"


def test_truncated_data_is_detected(bad_gguf_files: dict[str, Path]) -> None:
    header = read_gguf_header(bad_gguf_files["truncated"])
    assert header.first_truncated_tensor() is not None


@pytest.mark.parametrize(
    "content, reason",
    [
        (b"", "is not a GGUF file (only 0 bytes)"),
        (b"Questo non e' un modello, proprio per niente.\n", "is not a GGUF file (it does not start with 'GGUF')"),
        (b"GGUF" + struct.pack("<I", 1) + bytes(40), "uses GGUF version 1; only versions 2 and 3 are supported"),
        (b"GGUF" + struct.pack("<IQQ", 3, 1, 5) + struct.pack("<Q", 10**9), "has a truncated or corrupt GGUF header"),
    ],
)
def test_bad_files_fail_in_one_line(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(content)
    with pytest.raises(ModelFileError) as caught:
        read_gguf_header(path)
    message = str(caught.value)
    assert reason in message and str(path) in message and "\n" not in message


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="cannot read .*missing.gguf"):
        read_gguf_header(tmp_path / "missing.gguf")


def _header_bytes(tensor_count: int, kv_count: int, body: bytes = b"") -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, tensor_count, kv_count) + body


def _tensor_info(name: bytes, dims: list[int]) -> bytes:
    return (
        struct.pack("<Q", len(name))
        + name
        + struct.pack("<I", len(dims))
        + struct.pack(f"<{len(dims)}Q", *dims)
        + struct.pack("<IQ", 0, 0)
    )


@pytest.mark.parametrize(
    "content, reason",
    [
        (_header_bytes(2**40, 0, bytes(64)), "1099511627776 tensors cannot fit in the file"),
        (_header_bytes(0, 2**62, bytes(64)), "metadata entries cannot fit in the file"),
        (
            _header_bytes(0, 1, struct.pack("<Q", 1) + b"k" + struct.pack("<IIQ", 9, 8, 2**50) + bytes(16)),
            "strings cannot fit in the file",
        ),
        (
            _header_bytes(0, 1, struct.pack("<Q", 1) + b"k" + struct.pack("<IIQ", 9, 10, 2**40) + bytes(16)),
            "array elements cannot fit in the file",
        ),
        (_header_bytes(1, 0, _tensor_info(b"w", [2] * 5)), "tensor 'w' has 5 dimensions (at most 4)"),
        (
            _header_bytes(1, 0, _tensor_info(b"w", [2**40, 2**40])),
            "tensor 'w' has more elements than llama.cpp can count",
        ),
    ],
)
def test_counts_and_sizes_are_bounded_by_the_file(tmp_path: Path, content: bytes, reason: str) -> None:
    """A wrong count used to be believed: 2^40 tensors, or one too many, had the reader
    take tensor data for a dimension count of about 1e9 and multiply for ever."""
    path = tmp_path / "bad.gguf"
    path.write_bytes(content)
    with pytest.raises(ModelFileError, match="has a truncated or corrupt GGUF header") as caught:
        read_gguf_header(path)
    assert reason in str(caught.value)


def test_the_reader_gives_up_after_its_time(random_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Counts within a multi-gigabyte file can still ask for billions of steps: past
    HEADER_SECONDS the header is called corrupt (here a limit already passed)."""
    from scriptorium.inference.gguf import gguf_header

    monkeypatch.setattr(gguf_header, "HEADER_SECONDS", -1.0)
    with pytest.raises(ModelFileError, match="still reading the header after -1 s"):
        read_gguf_header(random_model)


def _tensor(name: bytes, dims: list[int], type_code: int = 0, offset: int = 0) -> bytes:
    return (
        struct.pack("<Q", len(name))
        + name
        + struct.pack("<I", len(dims))
        + struct.pack(f"<{len(dims)}Q", *dims)
        + struct.pack("<IQ", type_code, offset)
    )


def _alignment(value: int, value_type: int = 4) -> bytes:
    key = b"general.alignment"
    code = {4: "<I", 10: "<Q"}[value_type]
    return struct.pack("<Q", len(key)) + key + struct.pack("<I", value_type) + struct.pack(code, value)


@pytest.mark.parametrize(
    "content, reason",
    [
        (_header_bytes(1, 0, _tensor(b"w", [8], type_code=99)), "tensor 'w' has unknown type 99"),
        (
            _header_bytes(1, 0, _tensor(b"w", [32], type_code=4)),
            "tensor 'w' is of type Q4_2, which llama.cpp no longer reads",
        ),
        (
            _header_bytes(1, 0, _tensor(b"w", [8, 2], type_code=int(gguf.GGMLQuantizationType.Q4_0))),
            "tensor 'w' has rows of 8 values, not whole Q4_0 blocks of 32: its type is wrong",
        ),
        (_header_bytes(2, 0, _tensor(b"w", [8]) + _tensor(b"w", [8], offset=32)), "tensor 'w' is listed twice"),
        (
            _header_bytes(2, 0, _tensor(b"a", [8]) + _tensor(b"b", [8], offset=16)),
            "tensor 'b' starts at data offset 16, not a multiple of the file's alignment (32)",
        ),
        (
            _header_bytes(2, 0, _tensor(b"a", [16]) + _tensor(b"b", [8], offset=32)),
            "tensor 'b' starts at data offset 32, inside the data of the tensors before it: they end at 64",
        ),
        (
            _header_bytes(2, 0, _tensor(b"a", [8]) + _tensor(b"b", [8], offset=64)),
            "tensor 'b' starts at data offset 64, after a gap: they end at 32",
        ),
        (_header_bytes(1, 0, _tensor(b"w", [8, 0])), "tensor 'w' has a dimension of 0 (8 x 0)"),
        (_header_bytes(1, 0, _tensor(b"w" * 64, [8])), "has a name of 64 bytes; llama.cpp takes at most 63"),
    ],
)
def test_a_tensor_layout_llama_cpp_refuses_is_named(tmp_path: Path, content: bytes, reason: str) -> None:
    """llama.cpp said only "failed to load model from X" for each of these."""
    path = tmp_path / "bad.gguf"
    path.write_bytes(content + bytes(64))
    with pytest.raises(ModelFileError, match="has a corrupt GGUF header") as caught:
        read_gguf_header(path)
    assert reason in str(caught.value)


@pytest.mark.parametrize(
    "entry, shown",
    [
        (_alignment(0), "general.alignment = 0"),
        (_alignment(3), "general.alignment = 3"),
        (_alignment(32, value_type=10), "general.alignment = 32"),  # llama.cpp reads it as a u32 only
    ],
)
def test_an_alignment_llama_cpp_refuses_is_named(tmp_path: Path, entry: bytes, shown: str) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(_header_bytes(1, 1, entry + _tensor(b"w", [8])) + bytes(64))
    with pytest.raises(ModelFileError, match=f"{shown}; GGUF needs a power of two stored as a 32-bit unsigned integer"):
        read_gguf_header(path)


PYTHON_WORDS = ("unpack_from", "ssize_t", "buffer", "struct", "codec", "Python")


@pytest.mark.parametrize(
    "content",
    [
        # A string array whose second length is 2^63: the next read was at an offset past what C can index.
        _header_bytes(
            0,
            1,
            struct.pack("<Q", 1)
            + b"k"
            + struct.pack("<IIQ", 9, 8, 2)
            + struct.pack("<Q", 1)
            + b"a"
            + struct.pack("<Q", 2**63)
            + bytes(32),
        ),
        # Cut before the first key's value.
        _header_bytes(0, 1, struct.pack("<Q", 1) + b"k" + struct.pack("<I", 4)),
        # Cut inside a tensor's dimensions.
        _header_bytes(1, 0, struct.pack("<Q", 1) + b"w" + struct.pack("<IQ", 2, 8) + b"\x01\x00\x00"),
    ],
)
def test_a_truncated_or_fuzzed_header_is_described_in_plain_words(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(content)
    with pytest.raises(ModelFileError, match="has a truncated or corrupt GGUF header") as caught:
        read_gguf_header(path)
    assert not any(word in str(caught.value) for word in PYTHON_WORDS), caught.value
    assert "runs past the end of the file" in str(caught.value) or "ends inside the header" in str(caught.value)


def test_a_big_endian_version_names_the_byte_order_the_counts_were_read_in(tmp_path: Path) -> None:
    """The version big-endian, the counts after it little-endian (as a bad edit leaves them):
    "1369094286720630784 metadata entries" alone did not say why the count was so large."""
    path = tmp_path / "bad.gguf"
    path.write_bytes(b"GGUF" + struct.pack(">I", 3) + struct.pack("<QQ", 0, 19) + bytes(64))
    with pytest.raises(
        ModelFileError,
        match="metadata entries cannot fit in the file; read big-endian, as its version field is written",
    ):
        read_gguf_header(path)


def test_a_key_listed_twice_is_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.gguf"
    path.write_bytes(_header_bytes(0, 2, _alignment(32) + _alignment(64)) + bytes(64))
    with pytest.raises(ModelFileError, match="key 'general.alignment' is listed twice"):
        read_gguf_header(path)
