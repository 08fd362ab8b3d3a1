"""The fast header reader agrees with gguf_file (which uses gguf.GGUFReader) and fails in one line."""

from __future__ import annotations

import struct
from pathlib import Path

import gguf
import pytest

from scriptorium.inference.errors import ModelFileError
from scriptorium.inference.gguf_file import read_adapter_facts, read_model_facts
from scriptorium.inference.gguf_header import quantization_name, read_gguf_header


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


@pytest.mark.parametrize("content, reason", [
    (b"", "is not a GGUF file (only 0 bytes)"),
    (b"Questo non e' un modello, proprio per niente.\n", "is not a GGUF file (it does not start with 'GGUF')"),
    (b"GGUF" + struct.pack("<I", 1) + bytes(40), "uses GGUF version 1; only versions 2 and 3 are supported"),
    (b"GGUF" + struct.pack("<IQQ", 3, 1, 5) + struct.pack("<Q", 10**9), "has a truncated or corrupt GGUF header"),
])
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
    return struct.pack("<Q", len(name)) + name + struct.pack("<I", len(dims)) + struct.pack(
        f"<{len(dims)}Q", *dims) + struct.pack("<IQ", 0, 0)


@pytest.mark.parametrize("content, reason", [
    (_header_bytes(2**40, 0, bytes(64)), "1099511627776 tensors cannot fit in the file"),
    (_header_bytes(0, 2**62, bytes(64)), "metadata entries cannot fit in the file"),
    (_header_bytes(0, 1, struct.pack("<Q", 1) + b"k" + struct.pack("<IIQ", 9, 8, 2**50) + bytes(16)),
     "strings cannot fit in the file"),
    (_header_bytes(0, 1, struct.pack("<Q", 1) + b"k" + struct.pack("<IIQ", 9, 10, 2**40) + bytes(16)),
     "array elements cannot fit in the file"),
    (_header_bytes(1, 0, _tensor_info(b"w", [2] * 5)), "tensor 'w' has 5 dimensions (at most 4)"),
    (_header_bytes(1, 0, _tensor_info(b"w", [2**40, 2**40])), "tensor 'w' has more elements than llama.cpp can count"),
])
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
    from scriptorium.inference import gguf_header

    monkeypatch.setattr(gguf_header, "HEADER_SECONDS", -1.0)
    with pytest.raises(ModelFileError, match="still reading the header after -1 s"):
        read_gguf_header(random_model)
