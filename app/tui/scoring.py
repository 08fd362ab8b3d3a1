"""Scoring the author's draft as the app sees it: the messages the scoring worker posts
and the loop that turns Engine.score events into them.

It runs in its own thread worker (group 'scoring'), apart from generations: it only
posts messages and asks `should_stop` between chunks, like generation.py.
"""

from __future__ import annotations

import itertools
import time
from contextlib import closing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from textual.message import Message

from scriptorium.inference.core.errors import EngineCrashed, ScriptoriumError

from scriptorium.app.i18n.language import ENGLISH, Language

if TYPE_CHECKING:
    from scriptorium.inference.core.backend import Backend
    from scriptorium.inference.core.events import ScoreDone, ScoreProgress, TokenScore
    from scriptorium.inference.window.window import Window

_score_ids = itertools.count(1)


def new_score_id() -> int:
    return next(_score_ids)


@dataclass
class ScoringMessage(Message):
    score_id: int


@dataclass
class ScoresArrived(ScoringMessage):
    """Scored tokens since the previous message of this kind, in text order."""

    scores: tuple[TokenScore, ...]


@dataclass
class ScoringProgressed(ScoringMessage):
    progress: ScoreProgress

    def can_replace(self, message: Message) -> bool:
        # Only the latest count matters.
        return isinstance(message, ScoringProgressed) and message.score_id == self.score_id


@dataclass
class ScoringFinished(ScoringMessage):
    done: ScoreDone


@dataclass
class ScoringFailed(ScoringMessage):
    error: str


@dataclass
class ScoringWindowMade(ScoringMessage):
    """What the model sees, made in the worker: its prompt is what is scored."""

    window: "Window"


def scored_note(
    done: ScoreDone, scored: int, branch_key: str, window_start: int = 0, language: Language = ENGLISH
) -> str:
    """What the author is told when scoring ends, of the `scored` tokens of their text
    (from `window_start` on: the window the model sees when it continues)."""
    _, number = language.gettext, language.number
    counts = {"scored": number(scored, ","), "trimmed": number(done.trimmed_tokens, ","), "key": branch_key}
    if done.cancelled:
        return _("Scoring stopped after {scored} tokens; what was scored stays coloured.").format(**counts)
    skipped = _(" (the first {trimmed} did not fit the context)").format(**counts) if done.trimmed_tokens else ""
    which = (
        _(
            "the last {scored} tokens of your text, the window the model sees when it continues (the dimmed "
            "text before them is not scored)"
        )
        if window_start
        else _("{scored} tokens of your text")
    ).format(**counts)
    said = _(
        "Scored {which}{skipped}. Move the cursor over a word to see what the model expected there; {key} writes on from one of its words."
    )
    return said.format(which=which, skipped=skipped, key=branch_key)


def stream_scoring(
    engine: "Backend",
    window: "Callable[[], Window]",
    top_n: int,
    score_id: int,
    post: Callable[[Message], object],
    should_stop: Callable[[], bool],
    frame_interval: float,
) -> None:
    """Make the `window` (counting tokens asks the engine's process or a server: not on the
    UI thread), then score its prompt, posting its tokens at most once per frame."""
    # Imported here, in the worker: the first frame is not kept waiting for the event classes.
    from scriptorium.inference.core.events import ScoreDone, ScoreProgress, TokenScore

    batch: list[TokenScore] = []
    last_post = -frame_interval

    def flush() -> None:
        nonlocal last_post
        if batch:
            post(ScoresArrived(score_id, tuple(batch)))
            batch.clear()
            last_post = time.monotonic()

    try:
        made = window()
        post(ScoringWindowMade(score_id, made))
        with closing(engine.score(made.prompt, top_n=top_n, should_stop=should_stop)) as events:
            for event in events:
                if isinstance(event, TokenScore):
                    batch.append(event)
                    if time.monotonic() - last_post >= frame_interval:
                        flush()
                elif isinstance(event, ScoreProgress):
                    flush()
                    post(ScoringProgressed(score_id, event))
                elif isinstance(event, ScoreDone):
                    flush()
                    post(ScoringFinished(score_id, event))
    except ScriptoriumError as error:
        flush()
        post(ScoringFailed(score_id, str(error)))
        if isinstance(error, EngineCrashed):
            from scriptorium.app.models.loading import BackendCrashed  # loaded with the model

            post(BackendCrashed(engine, str(error)))
    except Exception as error:  # noqa: BLE001 - a bug must not take the author's draft down with it
        flush()
        post(ScoringFailed(score_id, f"scoring crashed ({type(error).__name__}: {error})"))
