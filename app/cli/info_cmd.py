"""`scriptorium info`: what a GGUF file holds, read from its header without loading weights."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

HELP = "Show a model's facts: architecture, size, attention heads, KV-cache cost, byte tokens."

DEFAULT_CTX = 4096


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", type=Path, metavar="PATH", required=True, help="GGUF model file")
    parser.add_argument("--lora", type=Path, metavar="PATH", help="also check this LoRA adapter against the model")
    parser.add_argument("--ctx", type=int, default=DEFAULT_CTX, metavar="N",
                        help=f"context size for the KV-cache figures (default {DEFAULT_CTX})")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    from scriptorium.inference.gguf_file import read_adapter_facts, read_model_facts
    from scriptorium.inference.kv_cache import KVLayout, pad
    from scriptorium.inference.load_options import LoadOptions
    from scriptorium.inference.settings import describe_ranges, rule_for

    from scriptorium.app.units import format_bytes, format_count

    rule_for(LoadOptions, "n_ctx").check(args.ctx, "--ctx")
    facts = read_model_facts(args.model)
    adapter = read_adapter_facts(args.lora, facts.architecture) if args.lora else None
    n_ctx = pad(args.ctx)
    layout = KVLayout.for_model(facts, n_ctx)
    train_layout = KVLayout.for_model(facts, pad(facts.context_length)) if facts.context_length else None
    report = {
        "name": facts.name,
        "path": str(facts.path),
        "architecture": facts.architecture,
        "parameters": facts.parameters,
        "file_type": facts.file_type,
        "file_size": facts.file_size,
        "vocab_size": facts.vocab_size,
        "context_length": facts.context_length,
        "layers": facts.n_layer,
        "embedding_length": facts.n_embd,
        "attention_heads": facts.n_head,
        "kv_heads": max(facts.n_head_kv),
        "attention": facts.attention_kind,
        "gqa_ratio": facts.gqa_ratio,
        "key_length": facts.key_length,
        "value_length": facts.value_length,
        "sliding_window": facts.sliding_window,
        "sliding_window_layers": sum(facts.swa_layers),
        "chat_template": facts.has_chat_template,
        "byte_tokens": {"count": len(facts.byte_token_ids), "ids": describe_ranges(facts.byte_token_ids)},
        "kv_cache": {
            "type": "f16",
            "bytes_per_token": layout.bytes_per_token,
            "n_ctx": n_ctx,
            "bytes": layout.bytes_allocated,
            "training_context_bytes": train_layout.bytes_allocated if train_layout else None,
        },
        "lora": None if adapter is None else {k: str(v) if isinstance(v, Path) else v for k, v in asdict(adapter).items()},
    }
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
        return 0
    kv = report["kv_cache"]
    rows = [
        ("model", f"{facts.name}  ({facts.path})"),
        ("architecture", facts.architecture),
        ("parameters", f"{format_count(facts.parameters)} ({facts.parameters:,})"),
        ("quantization", facts.file_type),
        ("file size", format_bytes(facts.file_size)),
        ("vocabulary", f"{facts.vocab_size:,} tokens"),
        ("training context", f"{facts.context_length:,} tokens"),
        ("layers", str(facts.n_layer)),
        ("attention", f"{facts.n_head} heads, {max(facts.n_head_kv)} KV heads: {facts.attention_kind}"
                      f" (ratio {facts.gqa_ratio:g}), head dims K {facts.key_length} / V {facts.value_length}"),
        ("sliding window", f"{facts.sliding_window} tokens on {sum(facts.swa_layers)} of {facts.n_layer} layers"
                           if facts.sliding_window else "none"),
        ("chat template", "yes" if facts.has_chat_template else "no (a plain fallback is used)"),
        ("byte tokens", f"{len(facts.byte_token_ids)}: {describe_ranges(facts.byte_token_ids)}"
                        if facts.byte_token_ids else "none"),
        ("KV cache (f16)", f"{format_bytes(kv['bytes_per_token'])} per token; {format_bytes(kv['bytes'])} "
                           f"for {n_ctx:,} tokens"
                           + (f"; {format_bytes(kv['training_context_bytes'])} for the training context"
                              if train_layout else "")),
    ]
    if adapter is not None:
        rows.append(("LoRA", f"{adapter.path} (alpha {adapter.alpha}) fits this model"))
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}")
    return 0
