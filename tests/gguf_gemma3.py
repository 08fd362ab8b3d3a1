"""A tiny, real Gemma 3 architecture GGUF (`general.architecture = "gemma3"`) for tests
that need llama.cpp's sliding-window (iSWA) KV cache.

The tensors and keys are the ones llama.cpp's gemma3 loader asks for
(vendor/llama.cpp/src/models/gemma3.cpp): besides the llama-style blocks, every layer
has attn_q_norm / attn_k_norm (one weight per head dimension), post_attention_norm and
post_ffw_norm. The vocabulary is the author's 16,256-token SentencePiece layout from
gguf_models, so the model loads in milliseconds and tokenizes Italian like the others.

Defaults: 8 layers, so llama.cpp's default Gemma 3 pattern (every 6th layer dense)
gives 7 sliding-window layers (0-4, 6, 7) and 1 dense layer (5); a 128-token window,
small enough that the SWA cache is smaller than ordinary contexts; 8 query heads over
4 KV heads; and head_dim 64 written as key_length/value_length while
embedding_length / head_count is 16, so a reader that derives the head size from the
embedding width gets the cache four times too small. One cell of one layer costs
4 * 64 * 2 bytes for K and as much for V in f16 (1 KiB), large enough that llama.cpp's
two-decimal MiB log lines pin the byte count down.

The weights are seeded noise: the model computes, its text is meaningless.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import gguf
import numpy as np

from gguf_models import BOS_ID, EOS_ID, N_VOCAB, UNK_ID, finish, italian_vocab

ARCH = "gemma3"


def write_gemma3_model(
    path: str | Path,
    *,
    n_layer: int = 8,
    n_embd: int = 128,
    n_head: int = 8,
    n_head_kv: int = 4,
    head_dim: int = 64,
    n_ff: int = 256,
    sliding_window: int | None = 128,
    swa_pattern: int | Sequence[bool] | None = None,
    context_length: int = 8192,
    seed: int = 0,
) -> Path:
    """Write the model to `path`.

    `sliding_window=None` leaves the key out (llama.cpp then treats every layer as
    dense); `swa_pattern` writes `gemma3.attention.sliding_window_pattern`, either a
    period (int) or one flag per layer (True = sliding window), instead of relying on
    llama.cpp's default period of 6.
    """
    path = Path(path)
    vocab = italian_vocab()
    rng = np.random.default_rng(seed)
    q_width, kv_width = n_head * head_dim, n_head_kv * head_dim

    def w(out: int, inp: int) -> np.ndarray:
        # numpy shapes are llama.cpp's reversed: (output, input).
        return rng.normal(0.0, 1.0 / np.sqrt(inp), (out, inp)).astype(np.float16)

    tensors: dict[str, np.ndarray] = {
        # Gemma scales embeddings by sqrt(n_embd); keep them small so activations stay finite.
        "token_embd.weight": rng.normal(0.0, 1.0 / np.sqrt(n_embd), (N_VOCAB, n_embd)).astype(np.float16),
        "output_norm.weight": np.ones(n_embd, np.float32),
    }
    for i in range(n_layer):
        tensors.update(
            {
                f"blk.{i}.attn_norm.weight": np.ones(n_embd, np.float32),
                f"blk.{i}.attn_q.weight": w(q_width, n_embd),
                f"blk.{i}.attn_k.weight": w(kv_width, n_embd),
                f"blk.{i}.attn_v.weight": w(kv_width, n_embd),
                f"blk.{i}.attn_q_norm.weight": np.ones(head_dim, np.float32),
                f"blk.{i}.attn_k_norm.weight": np.ones(head_dim, np.float32),
                f"blk.{i}.attn_output.weight": w(n_embd, q_width),
                f"blk.{i}.post_attention_norm.weight": np.ones(n_embd, np.float32),
                f"blk.{i}.ffn_norm.weight": np.ones(n_embd, np.float32),
                f"blk.{i}.ffn_gate.weight": w(n_ff, n_embd),
                f"blk.{i}.ffn_up.weight": w(n_ff, n_embd),
                f"blk.{i}.ffn_down.weight": w(n_embd, n_ff),
                f"blk.{i}.post_ffw_norm.weight": np.ones(n_embd, np.float32),
            }
        )

    writer = gguf.GGUFWriter(str(path), ARCH)
    writer.add_name("scriptorium-test-gemma3")
    writer.add_file_type(int(gguf.LlamaFileType.MOSTLY_F16))
    writer.add_context_length(context_length)
    writer.add_embedding_length(n_embd)
    writer.add_block_count(n_layer)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head_kv)
    writer.add_key_length(head_dim)
    writer.add_value_length(head_dim)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_rope_freq_base(1_000_000.0)
    if sliding_window is not None:
        writer.add_sliding_window(sliding_window)
        writer.add_rope_freq_base_swa(10_000.0)
    if swa_pattern is not None:
        if not isinstance(swa_pattern, int) and len(swa_pattern) != n_layer:
            raise ValueError(f"swa_pattern needs one flag per layer ({n_layer}), got {len(swa_pattern)}")
        writer.add_sliding_window_pattern(swa_pattern if isinstance(swa_pattern, int) else list(swa_pattern))
    writer.add_vocab_size(N_VOCAB)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(vocab.tokens)
    writer.add_token_scores(vocab.scores)
    writer.add_token_types(vocab.types)
    writer.add_bos_token_id(BOS_ID)
    writer.add_eos_token_id(EOS_ID)
    writer.add_unk_token_id(UNK_ID)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    for name, data in tensors.items():
        writer.add_tensor(name, data)
    finish(writer)
    return path
