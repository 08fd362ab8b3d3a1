"""What the app and its engine's child process say to each other (isolated.py, worker.py).

Each message is a tuple, its kind first, pickled whole: the plain events are frozen
dataclasses of numbers and strings, and one pickle of a batch of them names each class
once. Requests carry an id so that a late cancel cannot stop the request after it.

parent -> child                                    child -> parent
("load", LoadOptions, flash cache path or None)    ("progress", fraction)
("generate", id, prompt, settings, bias, top_n,    ("loaded", LoadedModel)
 special, speculation)                             ("events", id, [Event...], kv_tokens, final)
("score", id, text, top_n)                         ("done", id, kv_tokens)
("lora", id, scale)                                ("error", id, ScriptoriumError)
("count", id, text)                                ("done", id, token count)
("unknown", id, text)                              ("done", id, the characters read as <unk>)
("cancel", id)
("close",)
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from typing import Any

from ..core.arithmetic import Arithmetic
from ..core.kv_cache import KVLayout
from ..core.load_options import LoadOptions
from ..core.model_facts import AdapterFacts, ModelFacts

PROTOCOL = pickle.HIGHEST_PROTOCOL


@dataclass(frozen=True, slots=True)
class LoadedModel:
    """What the child tells the parent once the model is loaded: everything the Backend
    protocol answers without asking the child again."""

    options: LoadOptions
    facts: ModelFacts
    adapter: AdapterFacts | None
    lora_scale: float
    n_ctx: int
    n_vocab: int
    byte_token_ids: tuple[int, ...]
    longest_piece_chars: int
    kv_layout: KVLayout
    chat_template: str | None
    """The GGUF's own chat template, rendered in the parent (it is Jinja, not llama.cpp)."""
    bos_text: str
    tokenizer_name: str
    tokenizer_warning: str
    arithmetic: Arithmetic
    fim_texts: tuple[str, str, str] | None = None


def encode(message: tuple[Any, ...]) -> bytes:
    return pickle.dumps(message, protocol=PROTOCOL)


def decode(data: bytes) -> tuple[Any, ...]:
    return pickle.loads(data)
