"""`scriptorium continue`: continue a draft headless, streaming to stdout (or JSON lines).

The engine runs in a child process, as the app's does: llama.cpp's asserts abort the
process they happen in, and only from outside it can `continue` say so in one line and
exit with status 2. It costs the child's start and a pipe between the tokens and stdout.
If this process ends early (an error, a closed pipe), the child sees its requests' pipe
close and exits too.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
from dataclasses import dataclass
from typing import Iterator

from scriptorium.inference.window.window import DEFAULT_NOTE_DEPTH

from scriptorium.app.cli.common import (
    EXIT_INTERRUPTED,
    SERVER_MODEL,
    add_model_arguments,
    add_sampler_arguments,
    add_server_argument,
    add_speculation_arguments,
    choose_loader,
    read_draft,
    read_text_file,
)

HELP = "Continue a draft and stream the continuation to stdout (for editors and pipes)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from scriptorium.app.config.run_settings import add_config_argument

    parser.add_argument("file", nargs="?", metavar="FILE|-", help="the draft (default: standard input)")
    add_config_argument(parser)
    add_model_arguments(parser)
    add_server_argument(parser)
    add_sampler_arguments(parser)
    add_speculation_arguments(parser)
    window = parser.add_argument_group("window")
    window.add_argument(
        "--memory", metavar="FILE", help="text pinned at the top of the prompt (synopsis, characters, style)"
    )
    window.add_argument("--note", metavar="FILE", help="an author's note, put a few paragraphs before the end")
    window.add_argument(
        "--note-depth",
        type=int,
        metavar="N",
        help=f"paragraphs between the note and the end (default {DEFAULT_NOTE_DEPTH})",
    )
    window.add_argument(
        "--lore",
        metavar="FILE",
        help="a lorebook (TOML, docs/lorebook-format.md): entries whose keys the end of the draft "
        "mentions go between the memory and the draft",
    )
    parser.add_argument(
        "--top", type=int, default=10, metavar="N", help="candidates reported per token with --json (default 10)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per line: tokens, then a summary")


def _candidate_json(candidate) -> dict:
    return {"id": candidate.id, "text": candidate.text, "p": candidate.p, "banned": candidate.banned}


INTERRUPTED = "interrupted"
"""The done line's stop reason after ctrl+c: the engine's "cancelled", said as the user did it."""


@contextlib.contextmanager
def _ctrl_c_stops_the_stream() -> Iterator[threading.Event]:
    """While the stream runs, ctrl+c (SIGINT) asks the engine to stop, as Esc does in the
    app, and the stream ends as any other: the done line, the text's tail. A
    KeyboardInterrupt raised anywhere in the loop (mid-write) lost the done line, and could
    cut a token line in two. A second ctrl+c interrupts at once, for an engine that does
    not stop."""
    asked = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield asked  # only the main thread may set a handler (tests calling run() from another)
        return

    def stop(signum: int, frame: object) -> None:
        if asked.is_set():
            raise KeyboardInterrupt
        asked.set()

    previous = signal.signal(signal.SIGINT, stop)
    try:
        yield asked
    finally:
        signal.signal(signal.SIGINT, previous)


class _AfterTheInput:
    """The plain text output, read after the input as it was given: the prompt left out the
    spaces and tabs ending it (window.prompt_end), so the model writes its own ("▁balenu"),
    which the input already has. Up to that many leading spaces and tabs of the output
    are not printed: "pronto. " + "balenu", not "pronto.  balenu"."""

    def __init__(self, spaces: int) -> None:
        self._spaces = spaces

    def __call__(self, text: str) -> str:
        if self._spaces and text:
            kept = text.lstrip(" \t")
            eaten = min(self._spaces, len(text) - len(kept))
            text = text[eaten:]
            self._spaces = 0 if text else self._spaces - eaten
        return text


def _done_json(done, engine, window, unknown: str) -> dict:
    return {
        "type": "done",
        "stop_reason": INTERRUPTED if done.stop_reason == "cancelled" else done.stop_reason,
        "prompt_tokens": done.prompt_tokens,
        "completion_tokens": done.completion_tokens,
        "reused_tokens": done.reused_tokens,
        "cache_reuse": done.cache_reuse,
        "window": window.as_json(engine.n_ctx),
        "healed": done.healed,
        "lore": [fired.as_json() for fired in window.lore],
        "prefill_ms": done.prefill_ms,
        "ttft_ms": done.ttft_ms,
        "decode_tokens_per_s": done.decode_tokens_per_s,
        "prefill_tokens_per_s": done.prefill_tokens_per_s,
        "seed": done.seed,
        "tokenizer": engine.tokenizer_name,
        "tokenizer_warning": engine.tokenizer_warning or None,
        "unknown_characters": list(unknown),
        "arithmetic": engine.arithmetic.as_dict() if engine.arithmetic else None,
        "text": done.text,
        "speculation": done.speculation.as_dict() if done.speculation is not None else None,
        "kv_cache": {
            "tokens": done.kv_cache.tokens,
            "n_ctx": done.kv_cache.n_ctx,
            "bytes": done.kv_cache.bytes_used,
            "bytes_allocated": done.kv_cache.bytes_allocated,
            "bytes_per_token": done.kv_cache.bytes_per_token,
        },
    }


def run(args: argparse.Namespace) -> int:
    from scriptorium.inference.core.settings import SettingsError

    from scriptorium.app.config.file import load_config
    from scriptorium.app.config.run_settings import run_settings

    if args.top < 0:
        raise SettingsError(f"--top must be 0 or more, not {args.top}")
    config = load_config(args.config, warn=lambda line: print(f"scriptorium: warning: {line}", file=sys.stderr))
    chosen = run_settings(args, config)
    inputs = _Inputs.read(args)
    engine = _load_engine(chosen, config)
    try:
        window, dropped, unknown = _fit_window(inputs, engine, chosen.sampler)
    except BaseException:
        engine.close()
        raise
    _say_what_the_model_sees(window, dropped, unknown, engine, args.json)
    interrupted = _stream(args, inputs, engine, window, unknown, chosen)
    engine.close()
    if interrupted:
        print("scriptorium: interrupted (ctrl+c); the text so far is kept", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0


@dataclass(frozen=True)
class _Inputs:
    """What the author gave: the draft and what goes around it in the prompt."""

    draft: str
    memory: str
    note: str
    depth: int
    lorebook: object | None
    template: str

    @classmethod
    def read(cls, args: argparse.Namespace) -> _Inputs:
        from scriptorium import prompts
        from scriptorium.app.config import prompt_templates
        from scriptorium.inference.window.window import check_note_depth

        from scriptorium.app import paths
        from scriptorium.app.sessions.draft_files import end_of_writing, inside_form
        from scriptorium.app.sessions.lorebook_file import read_lorebook

        depth = check_note_depth(args.note_depth, "--note-depth") if args.note_depth is not None else DEFAULT_NOTE_DEPTH
        memory = inside_form(read_text_file(args.memory, "memory")) if args.memory else ""
        note = inside_form(read_text_file(args.note, "author's note")) if args.note else ""
        lorebook = read_lorebook(args.lore) if args.lore else None
        draft = read_draft(args.file)
        draft = draft[: end_of_writing(draft)]  # where the app continues it too
        template = prompt_templates.load(prompts.CONTINUE, paths.prompts_dir())
        return cls(draft, memory, note, depth, lorebook, template)


def _load_engine(chosen, config):
    """The engine for the chosen model (here, in a child process, or on a server), with the
    notes about it said once, before the text."""
    from scriptorium.inference.core.load_options import context_rounded

    from scriptorium.app.config.run_settings import SERVER_ADAPTER
    from scriptorium.app.models.choice import resolve_model, stderr_progress

    loader, remote = choose_loader(chosen.server)
    model_path = SERVER_MODEL if remote else resolve_model(chosen.model, config, stderr_progress())
    engine = loader(chosen.load_options(model_path), lambda fraction: None)
    if remote and chosen.lora_path == SERVER_ADAPTER and engine.adapter is None:
        engine.set_lora_scale(chosen.lora_scale)  # refused in one line: the server has no adapter to scale
    if chosen.spm_path is not None and engine.tokenizer_warning:
        # The .model named is not used (it does not match): said once, before the text.
        print(f"scriptorium: warning: {engine.tokenizer_warning}", file=sys.stderr)
    if not remote and (rounded := context_rounded(chosen.n_ctx, engine.n_ctx)):
        print(f"scriptorium: note: {rounded}", file=sys.stderr)
    if engine.context_warning:
        print(f"scriptorium: warning: {engine.context_warning}", file=sys.stderr)
    return engine


def _fit_window(inputs: _Inputs, engine, sampler):
    """(the window, the tokens before it, the characters the model reads as <unk>)."""
    from scriptorium import prompts
    from scriptorium.inference.window.window import build_window, prompt_budget

    if sampler.heal and not engine.heals:  # as the app says it, once
        print(
            "scriptorium: note: this llama-server cannot heal the token the text's end may have cut: "
            "the prompt ends before the spaces ending the text, as without healing (--no-heal)",
            file=sys.stderr,
        )
    window = build_window(
        inputs.draft,
        budget=prompt_budget(engine.n_ctx, sampler.max_tokens),
        count=engine.count_tokens,
        longest_piece=engine.longest_piece_chars,
        memory=inputs.memory,
        note=inputs.note,
        note_depth=inputs.depth,
        lorebook=inputs.lorebook,
        wrap=lambda text: prompts.render_continue(text, inputs.template),
        heals=sampler.heal and engine.heals,
    )
    # Counted now, between requests: the --json line reads it while the stream below
    # holds the engine, which a child process answers one request at a time.
    dropped = window.dropped_tokens
    # What the model will read as <unk> (memory and note too): said before the text, as
    # the app says it once per draft, and in the --json summary.
    return window, dropped, engine.unknown_characters(window.prompt)


def _say_what_the_model_sees(window, dropped: int, unknown: str, engine, as_json: bool) -> None:
    from scriptorium.inference.window.lore import lore_summary
    from scriptorium.inference.core.text import unknown_warning

    if unknown:
        print(f"scriptorium: warning: {unknown_warning(unknown, engine.tokenizer_name)}", file=sys.stderr)
    if dropped and not as_json:
        print(
            f"scriptorium: the model sees the draft from character {window.start + 1:,} on; the "
            f"{dropped:,} tokens before it do not fit its {engine.n_ctx:,}-token context",
            file=sys.stderr,
        )
    if window.lore and not as_json:
        print(f"scriptorium: {lore_summary(window.lore)}", file=sys.stderr)


def _stream(args: argparse.Namespace, inputs: _Inputs, engine, window, unknown: str, chosen) -> bool:
    """Write the continuation as it comes (text, or JSON lines); True if ctrl+c ended it."""
    from scriptorium.inference.core.events import ContextTrimmed, GenerationDone, TokenEvent
    from scriptorium.inference.window.window_layout import note_break

    out = sys.stdout
    lead = note_break(inputs.draft[: window.end], inputs.note, inputs.depth)
    after_the_input = _AfterTheInput(0 if lead else window.spaces_left_out)
    if not args.json:  # the paragraph break a depth-0 note leaves: the text printed is what follows the draft
        out.write(lead)
    # Plain text shows no candidates: ranking them cost the whole run (--top 200000: 69 s, not 3).
    top_n = args.top if args.json else 0
    interrupted = False
    with (
        _ctrl_c_stops_the_stream() as ctrl_c,
        contextlib.closing(
            engine.generate(
                window.prompt,
                chosen.sampler,
                chosen.bias,
                top_n=top_n,
                should_stop=ctrl_c.is_set,
                speculation=chosen.speculation,
            )
        ) as events,
    ):
        for event in events:
            if isinstance(event, TokenEvent):
                out.write(_token_line(event) if args.json else after_the_input(event.text))
            elif isinstance(event, ContextTrimmed):
                _write_trimmed(event, out, args.json)
            elif isinstance(event, GenerationDone):
                interrupted = event.stop_reason == "cancelled"
                _write_done(event, out, args.json, engine, window, unknown, after_the_input)
            out.flush()
    return interrupted


def _token_line(event) -> str:
    from scriptorium.inference.core.events import has_probability

    # The token's own bytes: a character spelled in byte tokens has text only on
    # the line completing it, and a reader joins the bytes of the lines before.
    line = {
        "type": "token",
        "id": event.id,
        "text": event.text,
        "bytes": list(event.piece),
        # null where the backend gave none (a speculating llama-server's token from a verifying pass): JSON has no NaN.
        "p": event.p if has_probability(event.p) else None,
        "top": [_candidate_json(c) for c in event.top],
    }
    if event.drafted:  # guessed by speculative decoding and accepted; its numbers are its own
        line["drafted"] = True
    if event.healing is not None:
        line["healing"] = _healing_json(event.healing)
    return json.dumps(line, ensure_ascii=False) + "\n"


def _healing_json(healing) -> dict:
    """A step token healing held: what it had to write again, how many tokens were
    allowed, and the allowed candidates with the model's raw probability and the one
    renormalised over the allowed set (what the chain drew from)."""
    return {
        "rest": healing.rest,
        "allowed_tokens": healing.allowed_count,
        "allowed_mass": healing.mass,
        "allowed": [
            {**_candidate_json(c), "p_allowed": c.p / healing.mass if healing.mass > 0 else 0.0}
            for c in healing.allowed
        ],
    }


def _write_trimmed(event, out, as_json: bool) -> None:
    if as_json:
        line = {"type": "context_trimmed", "dropped_tokens": event.dropped_tokens, "kept_tokens": event.kept_tokens}
        out.write(json.dumps(line) + "\n")
    else:
        print(
            f"scriptorium: the draft is longer than the context; its first {event.dropped_tokens} tokens were left out",
            file=sys.stderr,
        )


def _write_done(done, out, as_json: bool, engine, window, unknown: str, after_the_input: _AfterTheInput) -> None:
    if as_json:
        out.write(json.dumps(_done_json(done, engine, window, unknown), ensure_ascii=False) + "\n")
        return
    out.write(after_the_input(done.tail_text) + ("\n" if out.isatty() else ""))
    if done.stop_reason == "context":
        print(
            f"scriptorium: stopped because the context is full ({done.kv_cache.n_ctx} tokens; "
            "a larger --ctx gives it room)",
            file=sys.stderr,
        )
