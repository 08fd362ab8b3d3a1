"""A SentencePiece `.model` file: its pieces and the specs it was trained with.

The `sentencepiece` package tokenizes; its bundled `sentencepiece_model_pb2` needs
`protobuf`, which scriptorium does not depend on, so the few fields the vocabulary
contract reads (model type, byte fallback, special ids, normalizer settings, piece
types) are read here straight from the protobuf wire format.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..core.errors import ModelFileError, read_named_bytes

# sentencepiece_model.proto: TrainerSpec.ModelType and SentencePiece.Type. The piece types
# use the same numbers as GGUF's token types (gguf.TokenType), which is what a converter
# writes: 1 normal, 2 unknown, 3 control, 4 user defined, 5 unused, 6 byte.
MODEL_TYPES = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}
PIECE_TYPE_NAMES = {1: "normal", 2: "unknown", 3: "control", 4: "user defined", 5: "unused", 6: "byte"}
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


@dataclass(frozen=True, slots=True)
class SpmModel:
    """What a `.model` says, and a processor that tokenizes with it."""

    path: Path
    pieces: tuple[str, ...]
    scores: tuple[float, ...]
    types: tuple[int, ...]
    model_type: str
    """'unigram' (SentencePiece's default), 'bpe', 'word' or 'char'."""
    byte_fallback: bool
    unk_id: int
    bos_id: int
    eos_id: int
    normalizer: str
    """The normalization rule: 'nmt_nfkc' (the default), 'identity', 'nfkc'..."""
    add_dummy_prefix: bool
    remove_extra_whitespaces: bool
    precompiled_charsmap: bytes = field(repr=False)
    processor: Any = field(repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.pieces)

    @property
    def byte_piece_ids(self) -> tuple[int, ...]:
        return tuple(i for i, t in enumerate(self.types) if t == BYTE)

    def encode(self, text: str) -> list[int]:
        return list(self.processor.encode(text))

    def unknown_characters(self, text: str) -> str:
        """The characters of `text` this model reads as <unk>, each once, in the order they
        first appear ('' for none). A model trained without byte_fallback has no piece for a
        character it never saw, or saw too rarely: «, ? and a digit all become the same
        <unk>, and the model never sees which. The one place that decides it: the tokenizer
        (tokenizer.py) and `scriptorium vocab` ask here. Read from SentencePiece's own cut
        (each <unk> piece's surface: the author's characters it stands for)."""
        if self.unk_id < 0 or not text:
            return ""
        found: dict[str, None] = {}
        for number, value in _fields(self.processor.encode(text, out_type="serialized_proto")):
            if number == 2 and isinstance(value, bytes):  # SentencePieceText.pieces
                piece = dict(_fields(value))
                if piece.get(2, 0) == self.unk_id:  # SentencePiece.id; .surface is field 3
                    surface = bytes(piece.get(3, b"")).decode("utf-8", errors="replace")  # type: ignore[arg-type]
                    found.update(dict.fromkeys(c for c in surface if not c.isspace()))
        return "".join(found)

    def normalize(self, text: str) -> str:
        """The text as the model's normalizer rewrites it before cutting it."""
        return str(self.processor.normalize(text))

    def offsets(self, text: str) -> list[int]:
        """Where each piece of `encode(text)` starts in `text`, in characters.

        The pieces cut the normalized text ("…" is "..." under NFKC, a run of spaces one ▁),
        so their lengths do not walk the author's characters; SentencePiece's own alignment
        (each piece's `begin`, a byte offset into the text as given) does."""
        data = text.encode("utf-8")
        proto = self.processor.encode(text, out_type="serialized_proto")
        offsets, chars, at = [], 0, 0
        for number, value in _fields(proto):
            if number == 2 and isinstance(value, bytes):  # SentencePieceText.pieces
                begin = int(dict(_fields(value)).get(4, at))  # SentencePiece.begin
                chars += len(data[at:begin].decode("utf-8", errors="ignore"))
                at = max(at, begin)
                offsets.append(chars)
        return offsets


def _varint(buffer: bytes, offset: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if offset >= len(buffer):
            raise ValueError("a number runs past the end")
        byte = buffer[offset]
        offset += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, offset
        shift += 7
        if shift > 63:
            raise ValueError("a number is too long")


def _fields(buffer: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) of one protobuf message: ints for varints and fixed-width
    fields (32-bit ones as raw bits), bytes for length-delimited ones."""
    offset = 0
    while offset < len(buffer):
        key, offset = _varint(buffer, offset)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, offset = _varint(buffer, offset)
        elif wire == 1:
            value, offset = int.from_bytes(buffer[offset : offset + 8], "little"), offset + 8
        elif wire == 2:
            length, offset = _varint(buffer, offset)
            value, offset = bytes(buffer[offset : offset + length]), offset + length
        elif wire == 5:
            value, offset = int.from_bytes(buffer[offset : offset + 4], "little"), offset + 4
        else:
            raise ValueError(f"its bytes are no protobuf message (a field of wire type {wire})")
        if offset > len(buffer):
            raise ValueError("a field runs past the end")
        yield number, value


def _signed(value: int) -> int:
    """An int32 field: negative values are written as 64-bit two's complement."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _float(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _parse(data: bytes) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "pieces": [],
        "scores": [],
        "types": [],
        "model_type": 1,
        "byte_fallback": False,
        "unk_id": 0,
        "bos_id": 1,
        "eos_id": 2,
        "normalizer": "nmt_nfkc",
        "add_dummy_prefix": True,
        "remove_extra_whitespaces": True,
        "precompiled_charsmap": b"",
    }
    trainer_fields = {3: "model_type", 35: "byte_fallback", 40: "unk_id", 41: "bos_id", 42: "eos_id"}
    normalizer_fields = {
        1: "normalizer",
        2: "precompiled_charsmap",
        3: "add_dummy_prefix",
        4: "remove_extra_whitespaces",
    }
    for number, value in _fields(data):
        if number == 1 and isinstance(value, bytes):  # a piece: text, score, type
            piece = {1: b"", 2: 0, 3: NORMAL}
            piece.update(_fields(value))
            spec["pieces"].append(bytes(piece[1]).decode("utf-8"))  # type: ignore[arg-type]
            spec["scores"].append(_float(int(piece[2])))  # type: ignore[arg-type]
            spec["types"].append(int(piece[3]))  # type: ignore[arg-type]
        elif number in (2, 3) and isinstance(value, bytes):
            names = trainer_fields if number == 2 else normalizer_fields
            for inner, inner_value in _fields(value):
                if inner in names:
                    spec[names[inner]] = inner_value
    for key in ("unk_id", "bos_id", "eos_id"):
        spec[key] = _signed(int(spec[key]))
    spec["normalizer"] = (
        bytes(spec["normalizer"]).decode("utf-8") if isinstance(spec["normalizer"], bytes) else spec["normalizer"]
    )
    return spec


def load_spm(path: str | Path) -> SpmModel:
    """Read a `.model`; ModelFileError (one line) if it is missing or not SentencePiece."""
    path = Path(path)
    data = read_named_bytes(path, "SentencePiece model", ModelFileError)

    def not_spm(reason: str) -> ModelFileError:
        # The reason in the author's words: not the protobuf decoder's or the codec's.
        return ModelFileError(f"{path} is not a SentencePiece model ({reason})")

    if not data:
        raise not_spm("it is empty")
    try:
        spec = _parse(data)
    except UnicodeDecodeError:
        raise not_spm("a piece's text is not UTF-8") from None
    except struct.error:
        raise not_spm("a piece's score is not a number") from None
    except ValueError as error:
        raise not_spm(str(error)) from None
    if not spec["pieces"]:
        raise not_spm("it holds no pieces")
    import sentencepiece

    processor = sentencepiece.SentencePieceProcessor()
    try:
        processor.LoadFromSerializedProto(data)
    except (RuntimeError, OSError, TypeError):
        raise not_spm("the sentencepiece library cannot load it") from None
    if processor.get_piece_size() != len(spec["pieces"]):
        raise not_spm("the sentencepiece library reads another number of pieces in it")
    return SpmModel(
        path=path,
        pieces=tuple(spec["pieces"]),
        scores=tuple(spec["scores"]),
        types=tuple(spec["types"]),
        model_type=MODEL_TYPES.get(int(spec["model_type"]), f"type {spec['model_type']}"),
        byte_fallback=bool(spec["byte_fallback"]),
        unk_id=spec["unk_id"],
        bos_id=spec["bos_id"],
        eos_id=spec["eos_id"],
        normalizer=spec["normalizer"],
        add_dummy_prefix=bool(spec["add_dummy_prefix"]),
        remove_extra_whitespaces=bool(spec["remove_extra_whitespaces"]),
        precompiled_charsmap=bytes(spec["precompiled_charsmap"]),
        processor=processor,
    )
