"""Arguments shared by the commands that load a model or sample from it; run_settings.py
merges them over the config."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from typing import TYPE_CHECKING, Callable

from scriptorium.inference.core.errors import ScriptoriumError, read_named_text
from scriptorium.inference.core.writer_stop import LENGTH_MODES

from scriptorium.app.config.run_settings import threads_argument

if TYPE_CHECKING:
    from scriptorium.inference.core.backend import Backend, BackendLoader
    from scriptorium.inference.core.load_options import LoadOptions


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("model")
    group.add_argument(
        "--model",
        metavar="PATH|NAME",
        help="GGUF model file, or a name `scriptorium models` lists (default: config, else the demo model)",
    )
    group.add_argument("--lora", type=Path, metavar="PATH", help="GGUF LoRA adapter for the model")
    group.add_argument(
        "--lora-scale",
        type=float,
        metavar="F",
        help="adapter strength, 0 disables it (default 1); with --server, of the server's own adapter",
    )
    group.add_argument(
        "--spm",
        type=Path,
        metavar="PATH",
        help="the SentencePiece .model the model was trained with: tokenize with it (default: config)",
    )
    group.add_argument(
        "--ctx",
        type=int,
        metavar="N",
        help="context size in tokens (default: the model's training context, at most 4096)",
    )
    group.add_argument(
        "--threads",
        type=threads_argument,
        metavar="N|auto",
        help="CPU threads: a number fixes them, 0 at every core; auto measures while writing and "
        "keeps the faster count (default: the config's, else auto)",
    )
    group.add_argument("--gpu-layers", type=int, metavar="N", help="layers offloaded to the GPU (default: all)")
    group.add_argument(
        "--flash-attn",
        choices=("auto", "on", "off"),
        help="flash attention; auto times both paths at a model's first load (default: auto)",
    )


def add_speculation_arguments(parser: argparse.ArgumentParser) -> None:
    from scriptorium.inference.core.speculation import GUESSERS

    group = parser.add_argument_group("speculative decoding (the same text, sooner)")
    group.add_argument(
        "--speculative",
        choices=GUESSERS,
        help="guess tokens ahead and check them in one pass: 'lookup' continues text that already "
        "occurs in the prompt, 'draft' asks --draft-model (default: the config's [speculative], else off)",
    )
    group.add_argument(
        "--draft-max",
        type=int,
        metavar="N",
        help="most tokens guessed per pass (default 6, or 12 for a model without K-quant weights)",
    )
    group.add_argument("--draft-model", type=Path, metavar="FILE", help="GGUF draft model with the model's vocabulary")


def add_server_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--server",
        metavar="URL",
        help="use the llama-server at URL (e.g. http://gpu-box:8080) instead of running the model "
        "here; default: [server] url in the config",
    )


EXIT_INTERRUPTED = 130
"""ctrl+c's exit status (128 + SIGINT), which shells and scripts read as "interrupted"."""

SERVER_MODEL = Path("llama-server")
"""The model path a remote load carries: the server has loaded its model, the path is unused."""


def choose_loader(server: str | None) -> "tuple[BackendLoader, bool]":
    """The composition root's one choice: (the loader, whether it is remote). llama.cpp in
    a child process of ours (an abort there ends the child, not the editor), or the
    llama-server at `server`."""
    if server is not None:
        from scriptorium.inference.remote.remote import remote_loader

        return remote_loader(server), True
    from functools import partial

    from scriptorium.app import paths

    # flash attention "auto": the measured choice is remembered here, per model and build.
    return partial(load_in_child, flash_cache=paths.flash_choice_file()), False


def load_in_child(options: LoadOptions, on_progress: Callable[[float], None], *, flash_cache: Path) -> Backend:
    """The local loader: IsolatedBackend.load, llama.cpp in a child process."""
    # Imported by the first load (a worker thread), not before the first screen: multiprocessing and the wire.
    from scriptorium.inference.process.isolated import IsolatedBackend

    return IsolatedBackend.load(options, on_progress, flash_cache=flash_cache)


def add_sampler_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("sampling")
    group.add_argument(
        "--preset",
        metavar="NAME",
        help="starting values: greedy, prose, creative, anti-loop or one of the config's presets",
    )
    group.add_argument("--temperature", type=float, metavar="T")
    group.add_argument("--top-k", type=int, metavar="K")
    group.add_argument("--top-p", type=float, metavar="P")
    group.add_argument("--min-p", type=float, metavar="P")
    group.add_argument("--repeat-penalty", type=float, metavar="F")
    group.add_argument("--repeat-window", type=int, metavar="N")
    group.add_argument("--presence-penalty", type=float, metavar="F")
    group.add_argument("--frequency-penalty", type=float, metavar="F")
    group.add_argument(
        "--dry-multiplier",
        type=float,
        metavar="F",
        help="DRY: penalise a token that extends a repetition (0 off; llama.cpp suggests 0.8)",
    )
    group.add_argument("--dry-base", type=float, metavar="F", help="DRY: how fast the penalty grows (default 1.75)")
    group.add_argument(
        "--dry-allowed-length", type=int, metavar="N", help="DRY: repetitions this long go free (default 2)"
    )
    group.add_argument(
        "--dry-penalty-last-n", type=int, metavar="N", help="DRY: tokens scanned for repetitions (default 64)"
    )
    group.add_argument(
        "--dry-sequence-breaker",
        action="append",
        metavar="TEXT",
        help="DRY: a repetition is not followed across TEXT (repeatable; replaces the defaults)",
    )
    group.add_argument(
        "--xtc-probability", type=float, metavar="P", help="XTC: chance of removing the top choices at a step (0 off)"
    )
    group.add_argument(
        "--xtc-threshold", type=float, metavar="P", help="XTC: what counts as a top choice (default 0.1)"
    )
    group.add_argument("--typical-p", type=float, metavar="P", help="locally typical sampling (1 off)")
    group.add_argument(
        "--top-n-sigma", type=float, metavar="N", help="keep logits within N standard deviations (-1 off)"
    )
    group.add_argument("--dynatemp-range", type=float, metavar="F", help="dynamic temperature: ± range (0 off)")
    group.add_argument("--dynatemp-exponent", type=float, metavar="F", help="dynamic temperature: exponent (default 1)")
    group.add_argument("--mirostat", type=int, metavar="N", help="Mirostat version 1 or 2 (0 off)")
    group.add_argument("--mirostat-tau", type=float, metavar="F", help="Mirostat target surprise (default 5)")
    group.add_argument("--mirostat-eta", type=float, metavar="F", help="Mirostat learning rate (default 0.1)")
    group.add_argument(
        "--samplers",
        metavar="LIST",
        help="the chain's order, as llama.cpp's --samplers: e.g. "
        "'penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature'",
    )
    group.add_argument("--seed", type=int, metavar="N", help="fixed seed for a reproducible run")
    group.add_argument("--max-tokens", type=int, metavar="N")
    group.add_argument(
        "--length",
        choices=LENGTH_MODES,
        help="where else to stop: after --max-tokens only (tokens, the default), at the end of the "
        "sentence, or at the end of the paragraph",
    )
    group.add_argument("--stop", action="append", metavar="TEXT", help="stop at this text (repeatable)")
    group.add_argument(
        "--heal",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="token healing: back the prompt up over the token the cursor cut and have the model write it "
        "again (default on; --no-heal ends the prompt before the spaces ending the text)",
    )
    group.add_argument("--no-byte-ban", action="store_true", help="allow the vocabulary's byte tokens")
    group.add_argument(
        "--bias",
        action="append",
        metavar="ID=VALUE",
        default=[],
        help="add VALUE to token ID's logit (repeatable), e.g. --bias 16001=-100",
    )


def read_draft(source: str | None) -> str:
    """The draft from a file, or from stdin for '-' or when piped."""
    if source in (None, "-"):
        if sys.stdin is None:  # started with it closed (`<&-`), which is not an empty draft
            raise ScriptoriumError("no draft: standard input is closed; give a FILE")
        if source is None and sys.stdin.isatty():
            raise ScriptoriumError("no draft: give a FILE, or pipe the text on standard input")
        # The bytes, decoded strictly: sys.stdin's own decoder may smuggle invalid bytes
        # through as surrogates, which then fail far away when the text is tokenized.
        try:
            text = sys.stdin.buffer.read().decode("utf-8")
        except UnicodeDecodeError:
            raise ScriptoriumError("draft on standard input is not UTF-8 text") from None
    else:
        text = read_text_file(source, "draft")
    from scriptorium.app.sessions.draft_files import inside_form

    # As the app's editor holds it, so the model reads the same text there and here: no
    # byte-order mark (it marks the file, not the text), every line break "\n" (a form
    # feed or U+2028 is one line break in the editor).
    return inside_form(text)


def read_text_file(source: str, what: str) -> str:
    """A UTF-8 text file the author names as `what` (draft, memory, author's note); one line if not."""
    return read_named_text(Path(source), what)
