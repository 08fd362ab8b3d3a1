"""What the app knows about its model at any moment: the one value the model panel and
the status bar draw, and the model lifecycle (models/lifecycle.py) produces."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass
from pathlib import Path


if TYPE_CHECKING:
    from scriptorium.inference.core.arithmetic import Arithmetic
    from scriptorium.inference.core.model_facts import AdapterFacts, ModelFacts


@dataclass(frozen=True, slots=True)
class ModelStatus:
    """What the model panel and the status bar show about the model."""

    state: str
    """'none', 'loading', 'ready' or 'failed'."""
    path: Path | None = None
    progress: float = 0.0
    """llama.cpp's own load progress, 0..1, while loading."""
    facts: ModelFacts | None = None
    n_ctx: int = 0
    adapter: AdapterFacts | None = None
    error: str = ""
    file_size: int = 0
    tokenizer: str = ""
    """Which tokenizer cuts the text: 'llama.cpp' or 'SentencePiece (NAME.model)'."""
    tokenizer_warning: str = ""
    """Why the named .model is not used, or that the vocabulary has no byte tokens."""
    origin: str = ""
    """Where the model runs: '' in-process, else the llama-server (build and URL)."""
    arithmetic: Arithmetic | None = None
    """Flash attention, KV types and threads in use, once ready: the probabilities depend on them."""
    file_stamp: tuple[int, int, int] | None = None
    """The model file's (inode, size, mtime) as it was loaded on this machine (replaced.file_stamp)."""
    not_answering: bool = False
    """Ready, but its llama-server did not answer the last request (stopped, or the network
    down): what the panels show of it is the last known; the next request asks it again."""
