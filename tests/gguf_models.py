"""Tiny, real GGUF models for the test suite, written with the `gguf` package.

The vocabulary copies the layout of the author's converted SentencePiece model:
16,000 pieces (ids 0..15999) then the 256 byte tokens `<0x00>`..`<0xFF>` (ids
16000..16255). Ids 3 and 4 are "▁" and "\\n" (a piece, so newlines need no bytes),
ids 5..98 are ASCII "!".."~". Every model is a llama-architecture network (2 layers,
64-wide, GQA 4 query / 2 KV heads) of about 9 MB that llama.cpp loads in milliseconds.

Model kinds (`write_llama_model(kind=...)`) and what they emit:

- "random": seeded random weights, context-dependent. The next-token distribution
  is spread (top-1 about 5-10 %, top-10 all above 0.3 %) and favours whole Italian
  words (`Vocab.word_ids`); byte tokens are unlikely (< 1 % in total) and `</s>`
  practically never comes (~1e-9), so generation runs to max_tokens.
- "byte_loop": from any context the 256 byte tokens outrank everything, <0xFF>
  (id 16255) first, then <0xFE>, <0xFD>...; greedy decoding repeats <0xFF> forever.
  The best non-byte tokens are always whole Italian words, so with the byte ids
  banned greedy decoding emits plain Italian words.
- "markov": next token = `transitions[current]` (else `default_next`, `</s>` unless
  given) with a logit margin of about 30; attention and FFN write nothing, so the
  prediction depends only on the last token. Keys: at most n_embd - 1 tokens.
- "utf8_bytes": a markov model (see UTF8_CHAINS) built for UTF-8 handling:
    prompt ending in "▁notte": <0xFF> ▁casa then <0xC3> <0xA8> forever
                               bytes b"\\xff casa" + b"\\xc3\\xa8" * n
    prompt ending in "▁era":   <0xE2> <0x80> <0x99> then <0xC3> <0xA8> forever ("’èèè")
    any other last token:      <0xC3> <0xA8> <0xC3> <0xA8> ...  ("èèè")
- "sentence": a markov model (see SENTENCE_PIECES): from a prompt ending in any
  token outside the chain it emits ▁La ▁casa ▁era ▁buia . </s> (" La casa era buia.")
  and stops; a prompt ending inside the chain continues from there ("▁casa" gives
  ▁era ▁buia . </s>; "." gives </s> at once).
- "crlf_lines": a markov model whose newline piece (id 4) is "\\r\\n", as SmolLM2's
  newline tokens are (see CRLF_PIECES): ▁La ▁casa . then "\\r\\n" forever
  (" La casa.\\r\\n\\r\\n..."); a prompt ending in "▁casa" starts at ".".

The LoRA adapter for these models and the files that must fail to load are written by
gguf_adapters.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Union

import gguf
import numpy as np
from gguf_phrases import PHRASES, PHRASES_GREEDY  # noqa: F401  (PHRASES_GREEDY: for the tests)

from italian_vocab import (  # noqa: F401  (also imported from here by the tests)
    BOS_ID,
    CHARS,
    EOS_ID,
    FIRST_BYTE_ID,
    LORA_PUSH_PIECE,
    N_PIECES,
    N_VOCAB,
    UNK_ID,
    Vocab,
    byte_id,
    italian_vocab,
)


def _chain(*pieces: str) -> dict[int, int]:
    ids = [italian_vocab().id_of(p) for p in pieces]
    return dict(zip(ids, ids[1:]))


UTF8_CHAINS = (
    ("▁notte", "<0xFF>", "▁casa", "<0xC3>"),
    ("▁era", "<0xE2>", "<0x80>", "<0x99>", "<0xC3>"),
    ("<0xC3>", "<0xA8>", "<0xC3>"),
)
UTF8_DEFAULT_PIECE = "<0xC3>"
SENTENCE_PIECES = ("▁La", "▁casa", "▁era", "▁buia", ".", "</s>")
CRLF_PIECES = ("▁La", "▁casa", ".", "\n", "\n")
"""The "crlf_lines" chain, in the shared vocabulary's pieces: its "\\n" is written "\\r\\n"."""


def phrases_transitions() -> tuple[dict[int, dict[int, float]], dict[int, float]]:
    """(transitions, default_next) of the "phrases" kind, with probabilities."""
    vocab = italian_vocab()

    def ids(choices: Mapping[str, float]) -> dict[int, float]:
        return {vocab.id_of(piece): p for piece, p in choices.items()}

    table = {vocab.id_of(word): ids(choices) for word, choices in PHRASES.items()}
    return table, ids(PHRASES["."])


def utf8_transitions() -> tuple[dict[int, int], int]:
    """(transitions, default_next) of the "utf8_bytes" kind."""
    table = {k: v for chain in UTF8_CHAINS for k, v in _chain(*chain).items()}
    return table, italian_vocab().id_of(UTF8_DEFAULT_PIECE)


def crlf_transitions() -> tuple[dict[int, int], int]:
    """(transitions, default_next) of the "crlf_lines" kind."""
    return _chain(*CRLF_PIECES), italian_vocab().id_of(CRLF_PIECES[0])


def sentence_transitions() -> tuple[dict[int, int], int]:
    """(transitions, default_next) of the "sentence" kind."""
    return _chain(*SENTENCE_PIECES), italian_vocab().id_of(SENTENCE_PIECES[0])


# Renders "user: ciao\nassistant:"; used by the sentence_model fixture.
SIMPLE_CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)

STRICT_CHAT_TEMPLATE = (  # as Gemma's and Mistral's: refuses roles that do not alternate
    "{% for m in messages %}{% if m['role'] != 'system' and (m['role'] == 'user') != (loop.index0 % 2 == 1) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
    "{% endif %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}"
)

FIM_TOKENS = ("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>")
"""Fill-in-the-middle tokens as Qwen's vocabularies spell them."""

KINDS = ("random", "byte_loop", "markov", "utf8_bytes", "sentence", "phrases", "crlf_lines")

# Channel 0 of the residual stream holds a constant in the "random" and "byte_loop"
# models (nothing writes to it), so output-matrix column 0 acts as a per-token bias
# and the LoRA adapter can read it to push one token from any context.
_BIAS_LEVEL = 4.0
_MARKOV_MARGIN = 30.0
_RMS_EPS = 1e-5


@dataclass(frozen=True)
class _Shape:
    n_layer: int
    n_embd: int
    n_head: int
    n_head_kv: int
    n_ff: int

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head


def _layers(s: _Shape, rng: np.random.Generator, *, silent: bool) -> dict[str, np.ndarray]:
    """Random blocks; `silent` zeroes the writes to the residual stream."""
    E, D = s.n_embd, s.head_dim

    def w(out: int, inp: int) -> np.ndarray:
        return rng.normal(0.0, 1.0 / np.sqrt(inp), (out, inp)).astype(np.float32)

    tensors: dict[str, np.ndarray] = {}
    for i in range(s.n_layer):
        attn_out, ffn_down = w(E, s.n_head * D), w(E, s.n_ff)
        for m in (attn_out, ffn_down):
            m[0] = 0.0  # keep the bias channel constant
            if silent:
                m[:] = 0.0
        tensors.update(
            {
                f"blk.{i}.attn_norm.weight": np.ones(E, np.float32),
                f"blk.{i}.attn_q.weight": w(s.n_head * D, E),
                f"blk.{i}.attn_k.weight": w(s.n_head_kv * D, E),
                f"blk.{i}.attn_v.weight": w(s.n_head_kv * D, E),
                f"blk.{i}.attn_output.weight": attn_out,
                f"blk.{i}.ffn_norm.weight": np.ones(E, np.float32),
                f"blk.{i}.ffn_gate.weight": w(s.n_ff, E),
                f"blk.{i}.ffn_up.weight": w(s.n_ff, E),
                f"blk.{i}.ffn_down.weight": ffn_down,
            }
        )
    return tensors


def _biased_head(s: _Shape, rng: np.random.Generator, bias: np.ndarray, spread: float) -> tuple[np.ndarray, np.ndarray]:
    """Embeddings with the bias channel, and an output matrix whose logits are
    roughly `bias` plus noise of standard deviation `spread`."""
    E = s.n_embd
    embd = rng.normal(0.0, 1.0, (N_VOCAB, E)).astype(np.float32)
    embd[:, 0] = _BIAS_LEVEL
    # After RMS norm the bias channel reads about _BIAS_LEVEL / rms(hidden) ~ 3.5 and
    # the other channels together have norm sqrt(E - 3.5^2).
    out = rng.normal(0.0, spread / np.sqrt(E - 3.5**2), (N_VOCAB, E)).astype(np.float32)
    out[:, 0] = bias / 3.5
    return embd, out


Successors = Union[int, Mapping[int, float]]


def _markov_head(
    s: _Shape, transitions: Mapping[int, Successors], default_next: Successors
) -> tuple[np.ndarray, np.ndarray]:
    """One channel per key token; a successor's logit is _MARKOV_MARGIN plus the log of
    its probability relative to the likeliest one (a single id: probability 1)."""
    E = s.n_embd
    if len(transitions) > E - 1:
        raise ValueError(f"at most {E - 1} transitions fit in n_embd={E}")
    embd = np.zeros((N_VOCAB, E), np.float32)
    out = np.zeros((N_VOCAB, E), np.float32)
    embd[:, 0] = 1.0
    # RMS norm maps a one-hot embedding to 1 / sqrt(1/E + eps) on its channel.
    normed = 1.0 / np.sqrt(1.0 / E + _RMS_EPS)

    def write(dim: int, successors: Successors) -> None:
        choices = {successors: 1.0} if isinstance(successors, int) else dict(successors)
        top = max(choices.values())
        for dst, p in choices.items():
            out[dst, dim] = (_MARKOV_MARGIN + np.log(p / top)) / normed

    write(0, default_next)
    for dim, (src, dst) in enumerate(transitions.items(), start=1):
        embd[src] = 0.0
        embd[src, dim] = 1.0
        write(dim, dst)
    return embd, out


def _random_bias(vocab: Vocab, *, words: float, bytes_: float, chars: float) -> np.ndarray:
    bias = np.zeros(N_VOCAB, np.float32)
    bias[list(vocab.word_ids)] = words
    bias[3 : 3 + len(CHARS)] = chars
    bias[FIRST_BYTE_ID:] = bytes_
    bias[[UNK_ID, BOS_ID, EOS_ID]] = -12.0
    return bias


def write_llama_model(
    path: str | Path,
    *,
    kind: str = "random",
    seed: int = 0,
    n_layer: int = 2,
    n_embd: int = 64,
    n_head: int = 4,
    n_head_kv: int = 2,
    n_ff: int = 128,
    context_length: int = 2048,
    name: str | None = None,
    chat_template: str | None = None,
    transitions: Mapping[int, int] | None = None,
    default_next: int = EOS_ID,
    f16: bool = False,
    unused_tokens: int = 0,
    add_bos: bool = True,
    fim_tokens: bool = False,
) -> Path:
    """Write a llama-architecture GGUF of `kind` (see the module docstring) to `path`.

    `transitions`/`default_next` apply to kind="markov" only. `f16` stores the 2-D
    weights as float16 (general.file_type 1) instead of float32 (0). `unused_tokens`
    appends that many `<unusedN>` tokens after the byte tokens, which then sit neither
    first nor last (as in Gemma 3); their logits are far below every other token's.
    `add_bos=False` writes a model that adds no BOS to a prompt (as SmolLM2). `fim_tokens`
    appends FIM_TOKENS (control tokens, found by llama.cpp from their text, as Qwen's) after
    everything else, each read by the network as <unk> (a markov model's default state).
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    if kind == "markov" and transitions is None:
        raise ValueError('kind="markov" needs transitions')
    path = Path(path)
    vocab = italian_vocab()
    shape = _Shape(n_layer, n_embd, n_head, n_head_kv, n_ff)
    rng = np.random.default_rng(seed)
    markov = {
        "markov": lambda: (transitions, default_next),
        "utf8_bytes": utf8_transitions,
        "sentence": sentence_transitions,
        "crlf_lines": crlf_transitions,
        "phrases": phrases_transitions,
    }.get(kind, lambda: None)()

    tensors = _layers(shape, rng, silent=markov is not None)
    if markov is not None:
        embd, out = _markov_head(shape, *markov)
    elif kind == "random":
        bias = _random_bias(vocab, words=4.0, bytes_=-4.0, chars=1.0)
        embd, out = _biased_head(shape, rng, bias, 2.5)
    else:  # byte_loop: every byte above every word, <0xFF> first
        bias = _random_bias(vocab, words=8.0, bytes_=0.0, chars=0.0)
        bias[FIRST_BYTE_ID:] = np.linspace(30.0, 34.0, 256)
        embd, out = _biased_head(shape, rng, bias, 1.0)
        # Byte logits come from the bias channel alone, so their order never changes.
        out[FIRST_BYTE_ID:, 1:] = 0.0
    if unused_tokens:
        embd = np.concatenate([embd, np.zeros((unused_tokens, n_embd), np.float32)])
        low = np.zeros((unused_tokens, n_embd), np.float32)
        low[:, 0] = -40.0
        out = np.concatenate([out, low])
    if fim_tokens:
        embd = np.concatenate([embd, np.repeat(embd[UNK_ID : UNK_ID + 1], len(FIM_TOKENS), axis=0)])
        low = np.zeros((len(FIM_TOKENS), n_embd), np.float32)
        low[:, 0] = -40.0
        out = np.concatenate([out, low])
    tensors.update(
        {
            "token_embd.weight": embd,
            "output_norm.weight": np.ones(n_embd, np.float32),
            "output.weight": out,
        }
    )

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name(name or f"scriptorium-test-{kind}")
    w.add_file_type(int(gguf.LlamaFileType.MOSTLY_F16 if f16 else gguf.LlamaFileType.ALL_F32))
    _add_hparams(w, shape, context_length)
    fim = list(FIM_TOKENS) if fim_tokens else []
    w.add_vocab_size(N_VOCAB + unused_tokens + len(fim))
    w.add_tokenizer_model("llama")
    tokens = list(vocab.tokens)
    if kind == "crlf_lines":
        tokens[vocab.id_of("\n")] = "\r\n"
    w.add_token_list(tokens + [f"<unused{i}>" for i in range(unused_tokens)] + fim)
    w.add_token_scores(list(vocab.scores) + [0.0] * (unused_tokens + len(fim)))
    w.add_token_types(
        list(vocab.types) + [int(gguf.TokenType.UNUSED)] * unused_tokens + [int(gguf.TokenType.CONTROL)] * len(fim)
    )
    w.add_bos_token_id(BOS_ID)
    w.add_eos_token_id(EOS_ID)
    w.add_unk_token_id(UNK_ID)
    w.add_add_bos_token(add_bos)
    w.add_add_eos_token(False)
    if chat_template is not None:
        w.add_chat_template(chat_template)
    for tname, data in tensors.items():
        w.add_tensor(tname, data.astype(np.float16) if f16 and data.ndim == 2 else data)
    finish(w)
    return path


def _add_hparams(w: gguf.GGUFWriter, s: _Shape, context_length: int) -> None:
    w.add_context_length(context_length)
    w.add_embedding_length(s.n_embd)
    w.add_block_count(s.n_layer)
    w.add_feed_forward_length(s.n_ff)
    w.add_head_count(s.n_head)
    w.add_head_count_kv(s.n_head_kv)
    w.add_layer_norm_rms_eps(_RMS_EPS)
    w.add_rope_freq_base(10000.0)


def finish(w: gguf.GGUFWriter) -> None:
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
