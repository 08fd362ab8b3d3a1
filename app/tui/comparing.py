"""Comparing models on the draft from the app: what the compare screen asked for, read from
its fields, and the worker that runs the comparison (app/models/comparing.py, each model in
a child process of its own: the app never loads llama.cpp for it) and posts what happens.

It runs in a thread worker of the compare screen: it only posts messages and asks
`should_stop` (Esc, ctrl+c, the screen closing) between windows.
"""

from __future__ import annotations

import itertools
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from textual.message import Message

from scriptorium.app.i18n.language import ENGLISH, Language
from scriptorium.app.models.comparing import CompareRequest

if TYPE_CHECKING:
    from scriptorium.inference.core.load_options import LoadOptions

_run_ids = itertools.count(1)


def new_run_id() -> int:
    return next(_run_ids)


@dataclass
class ComparisonMessage(Message):
    run_id: int


@dataclass
class ComparisonProgressed(ComparisonMessage):
    label: str
    row: int
    rows: int
    windows_done: int
    windows: int

    def can_replace(self, message: Message) -> bool:
        # Only the latest count matters.
        return isinstance(message, ComparisonProgressed) and message.run_id == self.run_id


@dataclass
class ComparisonRowFinished(ComparisonMessage):
    record: dict
    """app/models/comparing.row_record's, or one with an "error" for a model that failed."""


@dataclass
class ComparisonEnded(ComparisonMessage):
    stopped: bool
    """Stopped before every row finished (Esc, ctrl+c)."""


@dataclass
class ComparisonFailed(ComparisonMessage):
    error: str


def request_from_fields(
    models: str, lora: str, scales: str, loaded: LoadOptions | None, language: Language = ENGLISH
) -> CompareRequest:
    """The request the screen's fields make: `models` as a shell would split them (quote a
    path with spaces), `scales` numbers parted by spaces or commas; threads, flash
    attention and the SentencePiece model as the loaded model runs. Raises ValueError
    with the line to show, in `language`."""
    _ = language.gettext
    try:
        paths = tuple(Path(word).expanduser() for word in shlex.split(models))
    except ValueError as error:  # an unclosed quote (shlex's words: "No closing quotation")
        raise ValueError(_("Model files: {error}").format(error=error)) from None
    if not paths:
        raise ValueError(_("Name at least one model file to compare."))
    adapter = Path(lora.strip()).expanduser() if lora.strip() else None
    numbers = []
    for word in scales.replace(",", " ").split():
        try:
            numbers.append(float(word))
        except ValueError:
            raise ValueError(_("LoRA scales: {word} is not a number.").format(word=repr(word))) from None
    if numbers and adapter is None:
        raise ValueError(_("LoRA scales need a LoRA adapter file."))
    return CompareRequest(
        models=paths,
        lora=adapter,
        lora_scales=tuple(numbers),
        spm=loaded.spm_path if loaded is not None else None,
        threads=loaded.n_threads if loaded is not None else None,
        flash_attn=loaded.flash_attn if loaded is not None else None,
    )


def run_comparison_posting(
    request: CompareRequest,
    text: str,
    run_id: int,
    post: Callable[[Message], object],
    should_stop: Callable[[], bool],
) -> None:
    """Check the models, score `text` with each, and post what happens (the worker's body)."""
    from scriptorium.app.models.comparing import plan_comparison, run_comparison
    from scriptorium.inference.core.errors import ScriptoriumError

    try:
        plan = plan_comparison(request)
        with tempfile.TemporaryDirectory(prefix="scriptorium-compare-") as scratch:
            run_comparison(
                plan,
                text,
                request,
                Path(scratch),
                lambda *progress: post(ComparisonProgressed(run_id, *progress)),
                lambda record: post(ComparisonRowFinished(run_id, record)),
                should_stop,
            )
    except ScriptoriumError as error:
        post(ComparisonFailed(run_id, str(error)))
        return
    except Exception as error:  # noqa: BLE001 - a bug must not take the author's draft down with it
        post(ComparisonFailed(run_id, f"the comparison crashed ({type(error).__name__}: {error})"))
        return
    post(ComparisonEnded(run_id, should_stop()))
