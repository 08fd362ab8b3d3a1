"""`scriptorium info --server URL`: what a llama-server says of the model it serves, as
the remote backend reads it when the app or `continue` connects. What the server does not
report (the architecture, layers and heads, the KV cache's types and bytes) is said to be
unknown rather than guessed."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from scriptorium.inference.core.errors import ScriptoriumError

LOCAL_FLAGS = (
    ("model", "--model"),
    ("lora", "--lora"),
    ("spm", "--spm"),
    ("ctx", "--ctx"),
    ("flash_attn", "--flash-attn"),
)
"""info's flags for a model file here: with --server they would describe another model."""


def run(args: argparse.Namespace) -> int:
    from scriptorium.inference.core.load_options import LoadOptions
    from scriptorium.inference.remote.remote import RemoteBackend
    from scriptorium.inference.core.settings import describe_ranges

    from scriptorium.app.units import format_bytes, format_count

    for name, flag in LOCAL_FLAGS:
        if getattr(args, name, None) is not None:
            raise ScriptoriumError(f"{flag} is for a model file here: with --server, info describes the server's model")
    backend = RemoteBackend.connect(args.server, LoadOptions(model_path=Path("llama-server")))
    try:
        facts, adapter = backend.facts, backend.adapter
        report = {
            "name": facts.name,
            "path": str(facts.path),
            "server": backend.origin,
            "parameters": facts.parameters or None,
            "file_type": facts.file_type,
            "file_size": facts.file_size or None,
            "vocab_size": facts.vocab_size,
            "context_length": facts.context_length or None,
            "n_ctx": backend.n_ctx,
            "chat_template": facts.has_chat_template,
            "byte_tokens": {"count": len(facts.byte_token_ids), "ids": describe_ranges(facts.byte_token_ids)},
            "tokenizer": backend.tokenizer_name,
            "lora": None if adapter is None else {"path": str(adapter.path), "scale": backend.lora_scale},
            "context_warning": backend.context_warning or None,
            "kv_cache": None,  # the server reports neither its cache types nor the model's layers
        }
    finally:
        backend.close()
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
        return 0
    rows = [
        ("model", f"{facts.name}  ({facts.path}, on the server)"),
        ("server", backend.origin),
        ("parameters", f"{format_count(facts.parameters)} ({facts.parameters:,})" if facts.parameters else "unknown"),
        ("quantization", facts.file_type),
        ("file size", format_bytes(facts.file_size) if facts.file_size else "unknown"),
        ("vocabulary", f"{facts.vocab_size:,} tokens"),
        ("training context", f"{facts.context_length:,} tokens" if facts.context_length else "unknown"),
        ("context", f"{backend.n_ctx:,} tokens (the server's, per slot)"),
        ("chat template", "yes" if facts.has_chat_template else "no (a plain fallback is used)"),
        ("tokenizer", backend.tokenizer_name),
        (
            "byte tokens",
            f"{len(facts.byte_token_ids)}: {describe_ranges(facts.byte_token_ids)}" if facts.byte_token_ids else "none",
        ),
        ("LoRA", f"{adapter.path} at scale {backend.lora_scale:g} (the server's)" if adapter else "none"),
        ("KV cache", "unknown (the server reports neither its cache types nor the model's layers)"),
    ]
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}")
    if report["context_warning"]:
        import sys

        print(f"scriptorium: warning: {report['context_warning']}", file=sys.stderr)
    return 0
