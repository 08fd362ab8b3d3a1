"""`scriptorium info`: what a GGUF file holds, read from its header without loading weights."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scriptorium.app.config.schema import Config

NAME_WIDTH = 80
"""general.name is anyone's text: a megabyte of it, or escape sequences, are not printed as they are."""

HELP = "Show a model's facts: architecture, size, attention heads, KV-cache cost, tokenizer and byte tokens."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from scriptorium.app.config.run_settings import add_config_argument, threads_argument

    parser.add_argument(
        "--model",
        metavar="PATH|NAME",
        help="GGUF model file, or a name `scriptorium models` lists (default: config, else the demo model)",
    )
    parser.add_argument("--lora", type=Path, metavar="PATH", help="also check this LoRA adapter against the model")
    parser.add_argument(
        "--spm",
        type=Path,
        metavar="PATH",
        help="the SentencePiece .model the model was trained with: say whether scriptorium would "
        "tokenize with it (scriptorium vocab checks the whole contract)",
    )
    parser.add_argument(
        "--ctx",
        type=int,
        metavar="N",
        help="context size for the KV-cache figures (default: the config's, else the model's "
        "training context, at most 4096, as the model would be loaded)",
    )
    parser.add_argument(
        "--flash-attn",
        choices=("auto", "on", "off"),
        help="the attention path to report (default: the config's, else auto)",
    )
    parser.add_argument(
        "--threads",
        type=threads_argument,
        metavar="N|auto",
        help="the thread setting to report (default: the config's, else auto)",
    )
    parser.add_argument(
        "--server",
        metavar="URL",
        help="describe the model the llama-server at URL serves, as it says (instead of a file here)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_config_argument(parser)


def _arithmetic(args: argparse.Namespace, model: Path, config: "Config") -> dict:
    """The arithmetic the app and `continue` would use for this model: the KV types they
    ask for and the attention path, set in the config or by flag, or (auto) the one timed
    faster at the model's first load with this llama.cpp build."""
    from scriptorium.inference.local.flash_choice import remembered_timing
    from scriptorium.inference.core.load_options import LoadOptions, usable_cores
    from scriptorium.inference.core.settings import rule_for

    from scriptorium.app import paths
    from scriptorium.app.config.run_settings import fixed_threads

    setting = args.flash_attn or config.model.flash_attn
    defaults = LoadOptions(model_path=model)
    report: dict = {
        "flash_attn_setting": setting,
        "flash_attn": {"on": True, "off": False}.get(setting),
        "measured": None,
        "type_k": defaults.type_k,
        "type_v": defaults.type_v,
        "repacked_weights": defaults.repack_weights,
    }
    threads = fixed_threads(args.threads if args.threads is not None else config.model.threads)
    if threads is not None:
        rule_for(LoadOptions, "n_threads").check(threads, "--threads" if args.threads is not None else "model.threads")
    # "auto": chosen while the model writes, so only the start is known here.
    report.update(threads_auto=threads is None, n_threads=threads or usable_cores(), cores=usable_cores())
    if setting == "auto":
        timing = remembered_timing(model, paths.flash_choice_file(), n_gpu_layers=config.model.gpu_layers)
        if timing is not None:
            report["flash_attn"] = timing.faster
            report["measured"] = {"on_ms": timing.on_ms, "off_ms": timing.off_ms}
    return report


def _threads_text(arithmetic: dict) -> str:
    if not arithmetic["threads_auto"]:
        return f"{arithmetic['n_threads']} (set), of {arithmetic['cores']} cores"
    return (
        f"auto: every core ({arithmetic['cores']}) to start, then measured while the model writes; "
        "fewer are kept while other work makes them faster"
    )


def _attention_text(arithmetic: dict) -> str:
    flash = arithmetic["flash_attn"]
    if flash is None:
        return "auto: both paths are timed at the model's first load, the faster one is kept"
    path = f"flash attention {'on' if flash else 'off'}"
    measured = arithmetic["measured"]
    if measured is None:
        return f"{path} (set)"
    return f"{path} (auto: {measured['on_ms']:.2f} ms a token with it, {measured['off_ms']:.2f} without)"


def run(args: argparse.Namespace) -> int:
    from scriptorium.inference.gguf.gguf_file import read_adapter_facts, read_model_facts
    from scriptorium.inference.core.kv_cache import KVLayout, pad
    from scriptorium.inference.core.load_options import LoadOptions, beyond_training, context_rounded, default_context
    from scriptorium.inference.core.settings import describe_ranges, rule_for

    from scriptorium.app.config.file import load_config
    from scriptorium.app.display_text import display_safe, escaped
    from scriptorium.app.models.choice import resolve_model, stderr_progress
    from scriptorium.app.units import format_bytes, format_count

    if args.server is not None:
        from scriptorium.app.cli import info_remote

        return info_remote.run(args)
    if args.ctx is not None:
        rule_for(LoadOptions, "n_ctx").check(args.ctx, "--ctx")
    # The model and context `continue` and the app would load: a name or the demo as well as a path.
    config = load_config(args.config, warn=lambda line: print(f"scriptorium: warning: {line}", file=sys.stderr))
    facts = read_model_facts(resolve_model(args.model, config, stderr_progress()))
    adapter = read_adapter_facts(args.lora, facts.architecture, facts.path) if args.lora else None
    tokenizer = _tokenizer(facts, args.spm)
    asked_ctx = args.ctx if args.ctx is not None else config.model.context_size
    n_ctx = pad(asked_ctx if asked_ctx is not None else default_context(facts.context_length))
    context_warning = beyond_training(n_ctx, facts.context_length)
    layout = KVLayout.for_model(facts, n_ctx)
    train_layout = KVLayout.for_model(facts, pad(facts.context_length)) if facts.context_length else None
    arithmetic = _arithmetic(args, facts.path, config)
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
        "tokenizer": tokenizer,
        "arithmetic": arithmetic,
        "context_warning": context_warning or None,
        "kv_cache": {
            "type": arithmetic["type_k"] if arithmetic["type_k"] == arithmetic["type_v"] else None,
            "bytes_per_token": layout.bytes_per_token,
            "window_tokens": layout.window_cells,
            "bytes_per_token_past_window": layout.bytes_per_token_past_window,
            "n_ctx": n_ctx,
            "bytes": layout.bytes_allocated,
            "training_context_bytes": train_layout.bytes_allocated if train_layout else None,
        },
        "lora": None
        if adapter is None
        else {k: str(v) if isinstance(v, Path) else v for k, v in asdict(adapter).items()},
    }
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
        return 0
    kv = report["kv_cache"]
    rows = [
        ("model", f"{display_safe(facts.name, NAME_WIDTH)}  ({escaped(str(facts.path))})"),
        ("architecture", facts.architecture),
        ("parameters", f"{format_count(facts.parameters)} ({facts.parameters:,})"),
        ("quantization", facts.file_type),
        ("file size", format_bytes(facts.file_size)),
        ("vocabulary", f"{facts.vocab_size:,} tokens"),
        ("training context", f"{facts.context_length:,} tokens"),
        ("layers", str(facts.n_layer)),
        (
            "attention",
            f"{facts.n_head} heads, {max(facts.n_head_kv)} KV heads: {facts.attention_kind}"
            f" (ratio {facts.gqa_ratio:g}), head dims K {facts.key_length} / V {facts.value_length}",
        ),
        (
            "sliding window",
            f"{facts.sliding_window} tokens on {sum(facts.swa_layers)} of {facts.n_layer} layers"
            if facts.sliding_window
            else "none",
        ),
        ("chat template", "yes" if facts.has_chat_template else "no (a plain fallback is used)"),
        (
            "tokenizer",
            f"{tokenizer['model'] or 'none'} (add_bos {_flag(tokenizer['add_bos'])}, "
            f"add_space_prefix {_flag(tokenizer['add_space_prefix'])}); scriptorium uses {tokenizer['used']}",
        ),
        (
            "byte tokens",
            f"{len(facts.byte_token_ids)}: {describe_ranges(facts.byte_token_ids)}" if facts.byte_token_ids else "none",
        ),
        ("attention path", _attention_text(arithmetic)),
        ("KV cache types", f"K {arithmetic['type_k']}, V {arithmetic['type_v']}"),
        ("threads", _threads_text(arithmetic)),
        (
            "weights",
            "repacked for the CPU's kernels"
            if arithmetic["repacked_weights"]
            else "not repacked: a verifying pass computes each token as decoding it alone does",
        ),
        (
            "KV cache",
            f"{format_bytes(kv['bytes_per_token'])} per token"
            # Past the window its layers recycle cells: only the others grow.
            + (
                f" ({format_bytes(kv['bytes_per_token_past_window'])} past {kv['window_tokens']:,})"
                if kv["window_tokens"]
                else ""
            )
            + f"; {format_bytes(kv['bytes'])} "
            f"for {n_ctx:,} tokens"
            + (f"; {format_bytes(kv['training_context_bytes'])} for the training context" if train_layout else ""),
        ),
    ]
    if adapter is not None:
        rows.append(("LoRA", f"{adapter.path} (alpha {adapter.alpha}) fits this model"))
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}")
    if tokenizer["warning"]:
        print(f"scriptorium: warning: {tokenizer['warning']}", file=sys.stderr)
    if rounded := context_rounded(asked_ctx, n_ctx):
        print(f"scriptorium: note: {rounded}", file=sys.stderr)
    if context_warning:
        print(f"scriptorium: warning: {context_warning}", file=sys.stderr)
    return 0


def _flag(value: bool | None) -> str:
    return "llama.cpp's default" if value is None else str(value).lower()


def _tokenizer(facts, spm_path: Path | None) -> dict:
    """The tokenizer facts; with a .model, whether its pieces match (the engine's own test)."""
    from scriptorium.inference.gguf.gguf_vocab import read_gguf_vocab
    from scriptorium.inference.vocab.spm_model import load_spm
    from scriptorium.inference.vocab.tokenizer import NO_BYTE_TOKENS
    from scriptorium.inference.vocab.vocab_contract import piece_text_mismatch

    used, warnings = "llama.cpp", []
    if spm_path is not None:
        spm = load_spm(spm_path)
        mismatch = piece_text_mismatch(spm.pieces, read_gguf_vocab(facts.path).tokens)
        if mismatch:
            warnings.append(f"{spm_path.name} does not match the model's vocabulary ({mismatch}): llama.cpp tokenizes")
        else:
            used = f"SentencePiece ({spm_path.name})"
    if not facts.byte_token_ids and facts.tokenizer_model == "llama":
        warnings.append(
            f"{NO_BYTE_TOKENS} (llama.cpp alone would abort on it)"
            if used == "llama.cpp"
            else "no byte tokens: SentencePiece turns a character it has no piece for into <unk>"
        )
    return {
        "model": facts.tokenizer_model,
        "add_bos": facts.add_bos,
        "add_space_prefix": facts.add_space_prefix,
        "used": used,
        "warning": "; ".join(warnings) or None,
    }
