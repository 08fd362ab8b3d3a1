"""Quantize a GGUF model through llama.cpp's own `llama_model_quantize`.

llama.cpp offers no progress callback for quantizing, but it logs one line per tensor
("[  12/  30] blk.1.attn_q.weight ..."), and its log reaches us (native.py): the counter
in those lines is the progress. A dry run computes the tensors' new sizes without
writing; the file it would give is the input's header and padding plus those sizes.
"""

from __future__ import annotations

import ctypes
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ..core import native
from ..core.errors import ModelFileError, ScriptoriumError

QUANT_TYPES: dict[str, int] = {
    # llama.h's llama_ftype for the types people use; the K-quants' rows must be
    # multiples of 256 (llama.cpp falls back to an older type for a tensor whose are not).
    "F32": 0,
    "F16": 1,
    "BF16": 32,
    "Q8_0": 7,
    "Q6_K": 18,
    "Q5_K_M": 17,
    "Q5_K_S": 16,
    "Q5_0": 8,
    "Q5_1": 9,
    "Q4_K_M": 15,
    "Q4_K_S": 14,
    "Q4_0": 2,
    "Q4_1": 3,
    "IQ4_NL": 25,
    "IQ4_XS": 30,
    "Q3_K_L": 13,
    "Q3_K_M": 12,
    "Q3_K_S": 11,
    "Q2_K": 10,
}
_TENSOR_LINE = re.compile(r"\[\s*(\d+)/\s*(\d+)\]")
_SIZES = re.compile(r"model size\s*=\s*([\d.]+) MiB.*|quant size\s*=\s*([\d.]+) MiB")
FAILED = "failed to quantize: "
MIB = 1024 * 1024
COPY = "COPY"
"""The 'type' that copies every tensor as it is (llama_model_quantize_params.only_copy)."""
POLL_S = 0.1


class QuantizeError(ScriptoriumError):
    """A quantization llama.cpp refused or could not finish."""


@dataclass(frozen=True, slots=True)
class QuantizeResult:
    input_path: Path
    output_path: Path
    type_name: str
    input_bytes: int
    output_bytes: int
    """The file written, or for a dry run the size it would have."""
    dry_run: bool
    seconds: float
    warnings: tuple[str, ...] = ()


def quant_type_id(name: str) -> int:
    try:
        return QUANT_TYPES[name.upper()]
    except KeyError:
        raise QuantizeError(f"unknown quantization type '{name}' (choose from {', '.join(QUANT_TYPES)})") from None


def default_output(input_path: Path, type_name: str) -> Path:
    """model.gguf -> model-Q4_K_M.gguf, beside it."""
    return input_path.with_name(f"{input_path.stem}-{type_name.upper()}.gguf")


def quantize(
    input_path: Path,
    type_name: str,
    output_path: Path | None = None,
    *,
    dry_run: bool = False,
    threads: int = 0,
    on_progress: Callable[[int, int], None] | None = None,
    prune_layers: Sequence[int] = (),
) -> QuantizeResult:
    """Quantize `input_path` to `type_name`, writing `output_path` (atomically: a partial
    file is never left under that name). Raises a ScriptoriumError with one line.
    Type COPY copies the tensors as they are; `prune_layers` leaves those layers out
    (llama.cpp renumbers the rest): a self-speculative draft of the same model."""
    from .gguf_file import read_model_facts

    only_copy = type_name.upper() == COPY
    ftype = 0 if only_copy else quant_type_id(type_name)
    type_name = type_name.upper()
    facts = read_model_facts(input_path)  # not a GGUF, an adapter, or what llama.cpp would abort on
    output_path = output_path or default_output(input_path, type_name)
    if not dry_run:
        _check_output(input_path, output_path)
    partial = output_path.with_name(f".{output_path.name}.partial")
    lib = native.llama()
    params = lib.llama_model_quantize_default_params()
    params.ftype = ftype
    params.nthread = threads
    params.dry_run = dry_run
    params.only_copy = only_copy
    # llama.cpp reads the layers up to a -1 (llama_model_quantize_params.prune_layers).
    pruned = (ctypes.c_int32 * (len(prune_layers) + 1))(*prune_layers, -1)
    if prune_layers:
        params.prune_layers = ctypes.cast(pruned, ctypes.POINTER(ctypes.c_int32))
    mark = native.log_mark()
    outcome: list[int] = []
    started = time.perf_counter()

    def work() -> None:
        outcome.append(int(lib.llama_model_quantize(str(input_path).encode(), str(partial).encode(), params)))

    worker = threading.Thread(target=work, name="quantize", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(POLL_S)
            if on_progress is not None:
                _report(native.log_since(mark), on_progress)
    except BaseException:
        # ctrl+c: the native call cannot be stopped, but nothing half-written stays behind.
        partial.unlink(missing_ok=True)
        raise
    lines = native.log_since(mark)
    if not outcome or outcome[0] != 0:
        partial.unlink(missing_ok=True)
        reason = native.last_error_since(mark) or "no reason given"
        # The failure ends the line of the tensor it happened on: keep only the reason.
        reason = reason.rpartition(FAILED)[2] if FAILED in reason else _plain(reason)
        raise QuantizeError(f"llama.cpp could not quantize {input_path} to {type_name}: {reason}")
    warnings = tuple(_plain(line) for line in lines if "WARNING" in line)
    if dry_run:
        size = _dry_run_size(lines, facts.file_size)
    else:
        os.replace(partial, output_path)
        size = output_path.stat().st_size
    return QuantizeResult(
        input_path, output_path, type_name, facts.file_size, size, dry_run, time.perf_counter() - started, warnings
    )


def draft_layers(n_layer: int, keep: int) -> list[int]:
    """The layers to prune for a draft keeping `keep` of `n_layer`: the first keep - 1 and the
    last stay (the first layers build the representation, the last maps it onto the vocabulary)."""
    if not 1 <= keep < n_layer:
        raise QuantizeError(
            f"--keep-layers must be from 1 to {n_layer - 1} (the model has {n_layer} layers), not {keep}"
        )
    return list(range(keep - 1, n_layer - 1))


def make_draft(
    input_path: Path, output_path: Path, keep_layers: int, on_progress: Callable[[int, int], None] | None = None
) -> QuantizeResult:
    """A self-speculative draft of `input_path`: its tensors copied, all but `keep_layers`
    layers left out (same vocabulary, so speculative decoding can check its guesses)."""
    from .gguf_file import read_model_facts

    layers = draft_layers(read_model_facts(input_path).n_layer, keep_layers)
    return quantize(input_path, COPY, output_path, on_progress=on_progress, prune_layers=layers)


def _check_output(input_path: Path, output_path: Path) -> None:
    if output_path.exists() and output_path.resolve() == input_path.resolve():
        raise QuantizeError(f"the output {output_path} is the input: name another file")
    if output_path.is_dir():
        raise QuantizeError(f"the output {output_path} is a folder")
    if not output_path.parent.is_dir():
        raise ModelFileError(f"the output's folder {output_path.parent} does not exist")


def _report(lines: list[str], on_progress: Callable[[int, int], None]) -> None:
    for line in reversed(lines):
        match = _TENSOR_LINE.search(line)
        if match:
            # "[i/n]" opens tensor i's line: i - 1 are done. Nothing is shown until one
            # is, so a request refused at the first tensor is one line, not two.
            if int(match.group(1)) > 1:
                on_progress(int(match.group(1)) - 1, int(match.group(2)))
            return


def _dry_run_size(lines: list[str], input_bytes: int) -> int:
    """The file a dry run describes: the input's bytes outside its tensors (header,
    padding) and the tensors' new sizes, which llama.cpp logs in MiB to 2 decimals."""
    original = quantized = None
    for line in lines:
        match = _SIZES.search(line)
        if match and match.group(1):
            original = float(match.group(1))
        elif match and match.group(2):
            quantized = float(match.group(2))
    if original is None or quantized is None:
        raise QuantizeError("llama.cpp's dry run did not say the sizes")
    return max(0, input_bytes - round(original * MIB)) + round(quantized * MIB)


def _plain(line: str) -> str:
    """llama.cpp's log line without its function prefix: "llama_model_quantize: failed to
    quantize: x" -> "failed to quantize: x"."""
    text = line.strip()
    head, colon, rest = text.partition(": ")
    return rest if colon and re.fullmatch(r"[a-z_]+", head) else text
