"""Property-based fuzzing of the readers of files an author (or a bad download) hands us:
the GGUF header reader, the config reader and the prompt-template loader. Whatever the
bytes, each returns or raises the project's own one-line error, and gives up in time.

Each property is bounded: a few hundred examples at most and a per-example deadline far
above what a well-formed file takes (milliseconds) but far below a hang. The session
reader's fuzzing is in sessions/test_session_fuzz.py, next to its fixtures.
"""

from __future__ import annotations

import atexit
import shutil
import struct
import tempfile
from datetime import timedelta
from pathlib import Path

import gguf
import numpy as np
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scriptorium import prompts
from scriptorium.app.config import prompt_templates
from scriptorium.app.config.file import load_config, load_config_lenient
from scriptorium.app.config.schema import ConfigError
from scriptorium.inference.core.errors import ModelFileError, ScriptoriumError
from scriptorium.inference.gguf.gguf_file import read_model_facts
from scriptorium.inference.gguf.gguf_header import GGUFHeader, read_gguf_header

FUZZ = settings(
    max_examples=150,
    deadline=timedelta(seconds=3),
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
"""derandomize: the same examples on every run, so the suite is reproducible; the
examples still cover far more than hand-written cases."""


def _tiny_model_header(path: Path) -> bytes:
    """A GGUF with every key read_model_facts reads, a 12-token vocabulary (strings,
    scores, types) and three tensors: a header of a few hundred bytes to corrupt."""
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("fuzz")
    writer.add_context_length(256)
    writer.add_embedding_length(8)
    writer.add_block_count(1)
    writer.add_feed_forward_length(16)
    writer.add_head_count(2)
    writer.add_head_count_kv(1)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_tokenizer_model("llama")
    writer.add_token_list([f"t{i}" for i in range(12)])
    writer.add_token_scores([0.0] * 12)
    writer.add_token_types([1] * 11 + [6])
    writer.add_tensor("token_embd.weight", np.zeros((12, 8), dtype=np.float32))
    writer.add_tensor("output_norm.weight", np.ones(8, dtype=np.float32))
    # Tensor data a wrong count makes the reader take for tensor descriptions: random
    # bits, and enough of them that reading them for ever shows as a missed deadline.
    writer.add_tensor("blk.0.ffn_up.weight", np.random.default_rng(0).standard_normal((16, 8192), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path.read_bytes()


_WORK = Path(tempfile.mkdtemp(prefix="scriptorium-fuzz-"))
atexit.register(shutil.rmtree, _WORK, True)
_SEED = _tiny_model_header(_WORK / "seed.gguf")

# Edits: single bytes anywhere; and 8-byte little-endian integers over any 4-aligned
# offset, where counts and lengths live (a count of 2^40, of one too many...).
_HEADER_END = 1024  # past the header of _SEED, into its first tensor's data
_byte_edits = st.lists(st.tuples(st.integers(0, _HEADER_END), st.integers(0, 255)), max_size=8)
_int_edits = st.lists(
    st.tuples(
        st.integers(0, _HEADER_END // 4).map(lambda i: i * 4),
        st.one_of(
            st.integers(0, 64), st.integers(0, 2**64 - 1), st.sampled_from([2**31, 2**32 - 1, 2**40, 2**63, 2**64 - 1])
        ),
    ),
    max_size=3,
)


_COUNTS = (8, 16)
"""Offsets of the tensor count and the metadata count: the issue's hang began with one of them."""
_count_edits = st.one_of(
    st.none(),
    st.tuples(
        st.sampled_from(_COUNTS),
        st.one_of(st.integers(0, 40), st.integers(0, 2**64 - 1), st.sampled_from([2**31, 2**32, 2**40, 2**63])),
    ),
)


@FUZZ
@given(
    byte_edits=_byte_edits,
    int_edits=_int_edits,
    count_edit=_count_edits,
    cut=st.one_of(st.none(), st.integers(0, _HEADER_END), st.integers(0, len(_SEED))),
)
def test_the_gguf_reader_fails_only_in_its_own_words(byte_edits, int_edits, count_edit, cut) -> None:
    data = bytearray(_SEED)
    for offset, value in byte_edits:
        data[offset] = value
    for offset, value in [*int_edits, *([count_edit] if count_edit else [])]:
        data[offset : offset + 8] = struct.pack("<Q", value)
    path = _WORK / "fuzzed.gguf"
    path.write_bytes(bytes(data[:cut]))
    try:
        header = read_gguf_header(path)
    except ModelFileError as error:
        assert_in_its_own_words(str(error))
    else:
        assert isinstance(header, GGUFHeader)
    try:
        read_model_facts(path)
    except ScriptoriumError as error:  # ModelFileError, or ModelLoadError from the pre-flight checks
        assert_in_its_own_words(str(error))


PYTHON_WORDS = ("unpack_from", "ssize_t", "buffer", "struct.", "codec", "Python", "object", "NoneType", "Traceback")
"""What Python's own errors say, and an author's message never does."""


def assert_in_its_own_words(message: str) -> None:
    assert "\n" not in message
    assert not any(word in message for word in PYTHON_WORDS), message


_toml_scalars = st.one_of(
    st.booleans(), st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=True), st.text(max_size=20)
)
_toml_values = st.recursive(
    _toml_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)
_SECTIONS = ["model", "sampler", "presets", "logit_bias", "keymap", "ui"]
_KEYS = [
    "path",
    "context_size",
    "lora",
    "lora_scale",
    "temperature",
    "top_k",
    "top_p",
    "min_p",
    "seed",
    "max_tokens",
    "stop",
    "ban_byte_tokens",
    "theme",
    "greedy",
    "draft.continue",
    "16000",
    "x",
]
_tables = st.dictionaries(
    st.sampled_from(_SECTIONS + ["zzz"]),
    st.one_of(st.dictionaries(st.sampled_from(_KEYS), _toml_values, max_size=5), _toml_values),
    max_size=4,
)


@FUZZ
@given(
    table=_tables,
    bom=st.booleans(),
    raw=st.one_of(
        st.none(),
        st.binary(max_size=200),
        st.tuples(
            st.sampled_from([b"a = ", b"[sampler]\nstop = "]),
            st.sampled_from([b"[", b"{b = "]),
            st.integers(1, 100_000),
        ).map(lambda parts: parts[0] + parts[1] * parts[2]),
    ),
)
def test_the_config_reader_fails_only_in_its_own_words(table, bom, raw) -> None:
    path = _WORK / "config.toml"
    text = raw if raw is not None else tomli_w.dumps(table).encode()
    path.write_bytes(b"\xef\xbb\xbf" + text if bom else text)  # a byte-order mark changes nothing
    config, problems = load_config_lenient(path)
    assert all(isinstance(line, str) and "\n" not in line for line in problems)
    try:
        assert load_config(path) == config and not problems
    except ConfigError as error:
        assert problems and str(error).startswith(problems[0])


@FUZZ
@given(
    name=st.sampled_from(prompts.NAMES),
    content=st.one_of(
        st.binary(max_size=300),
        st.lists(st.sampled_from([b"{draft}", b"{", b"}", b"draft", b"\n", b"Racconto: "]), max_size=12).map(b"".join),
    ),
    draft=st.text(max_size=100),
)
def test_the_prompt_loader_fails_only_in_its_own_words(name, content, draft) -> None:
    folder = _WORK / "prompts"
    folder.mkdir(exist_ok=True)
    (folder / name).write_bytes(content)
    try:
        template = prompt_templates.load(name, folder)
    except prompt_templates.PromptError as error:
        assert "\n" not in str(error)
        assert "not UTF-8 text" in str(error) or content.count(b"{draft}") > 1 and name == prompts.CONTINUE
        return
    assert template == content.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    assert draft in prompts.render_continue(draft, template)
