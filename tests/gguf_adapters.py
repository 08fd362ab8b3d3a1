"""More tiny GGUF files for the tests, beside gguf_models.py's models: a LoRA adapter
for them, and files llama.cpp must refuse.

`write_lora_adapter` writes an adapter that, at scale 1, makes LORA_PUSH_PIECE
("▁gatto") the greedy choice of a "random" base from any context (its logit rises by
about 15-20); scale 0 leaves the logits bit-identical. `write_bad_files` writes files
that must fail to load.
"""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
from gguf_models import LORA_PUSH_PIECE, finish, italian_vocab


def write_lora_adapter(
    path: str | Path,
    base_model: str | Path,
    *,
    rank: int = 4,
    alpha: float | None = None,
    seed: int = 0,
    targets: tuple[str, ...] = ("output", "attn_q", "attn_v"),
    push_piece: str = LORA_PUSH_PIECE,
    strength: float = 8.0,
    architecture: str | None = None,
) -> Path:
    """Write a llama.cpp LoRA adapter for the GGUF at `base_model`.

    Tensor shapes and the architecture come from the base file. "output" (the LM
    head, which llama.cpp routes through its LoRA matmul) gets a rank-1 push of
    `push_piece` read off the bias channel: at scale 1 it adds about
    2-2.5 * strength * alpha / rank (16-20 by default) to that logit, enough to win
    greedy decoding on a "random" base, not on "byte_loop" whose bytes sit higher.
    Other targets (attn_q, attn_k, attn_v, attn_output, ffn_gate, ffn_up, ffn_down)
    get small random deltas; token_embd is not supported.
    `architecture` overrides general.architecture, e.g. "gemma3" for an adapter that
    llama.cpp must refuse on these models.
    """
    path = Path(path)
    alpha = float(rank if alpha is None else alpha)
    rng = np.random.default_rng(seed)
    reader = gguf.GGUFReader(str(base_model))
    field_ = reader.fields["general.architecture"]
    base_arch = bytes(field_.parts[field_.data[0]]).decode()
    shapes = {t.name: tuple(int(n) for n in reversed(t.shape)) for t in reader.tensors}

    w = gguf.GGUFWriter(str(path), architecture or base_arch)
    w.add_type(gguf.GGUFType.ADAPTER)
    w.add_string(gguf.Keys.Adapter.TYPE, "lora")
    w.add_float32(gguf.Keys.Adapter.LORA_ALPHA, alpha)
    w.add_name(f"scriptorium-test-lora-{push_piece.lstrip('▁')}")
    wanted = set(targets)
    for tname, (n_out, n_in) in ((n, s) for n, s in shapes.items() if len(s) == 2):
        stem = tname.removesuffix(".weight").split(".")[-1]
        if stem not in wanted or tname == "token_embd.weight":
            continue
        a = rng.normal(0.0, 1.0 / np.sqrt(n_in), (rank, n_in)).astype(np.float32)
        b = rng.normal(0.0, 0.02, (n_out, rank)).astype(np.float32)
        if stem == "output":
            a[0] = 0.0
            a[0, 0] = 1.0
            b[:, 0] = 0.0
            b[italian_vocab().id_of(push_piece), 0] = strength
        w.add_tensor(f"{tname}.lora_a", a)
        w.add_tensor(f"{tname}.lora_b", b)
    finish(w)
    return path


def write_bad_files(directory: str | Path, model_path: str | Path) -> dict[str, Path]:
    """Files named *.gguf that llama.cpp must refuse: {"not_gguf", "truncated", "empty"}.

    "truncated" is the first half of the real model at `model_path`.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    files = {
        "not_gguf": directory / "notes.gguf",
        "truncated": directory / "truncated.gguf",
        "empty": directory / "empty.gguf",
    }
    files["not_gguf"].write_text("Questo non è un modello.\n", encoding="utf-8")
    data = Path(model_path).read_bytes()
    files["truncated"].write_bytes(data[: len(data) // 2])
    files["empty"].write_bytes(b"")
    return files
