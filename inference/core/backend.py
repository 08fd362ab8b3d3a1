"""What the app needs of a loaded model: the seam between the app and llama.cpp.

The local engine (engine.py, llama.cpp in-process) implements it, and so does the remote
backend (remote.py, a llama-server over HTTP), so nothing here names a ctypes handle or a local file it must open.
The app depends on `Backend` and `BackendLoader`, never on the engine class.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator, Protocol, runtime_checkable

from .load_options import LoadOptions
from .settings import LogitBias, SamplerSettings
from .speculation import OFF, Speculation

if TYPE_CHECKING:
    from .arithmetic import Arithmetic
    from .events import Event, KVCacheUsage
    from .model_facts import AdapterFacts, ModelFacts


@runtime_checkable
class Backend(Protocol):
    """A loaded model that generates, scores and describes itself with plain events."""

    @property
    def options(self) -> LoadOptions:
        """How it was loaded: model, adapter, context size and the arithmetic (threads, KV types, flash attention)."""

    @property
    def arithmetic(self) -> Arithmetic | None:
        """The arithmetic in use (flash attention, KV types, threads), as llama.cpp used it;
        None where the backend cannot say (a llama-server reports none of it)."""

    @property
    def facts(self) -> ModelFacts:
        """The model's facts: architecture, size, attention heads, sliding window, chat template."""

    @property
    def adapter(self) -> AdapterFacts | None:
        """The LoRA adapter loaded with the model, or None."""

    @property
    def lora_scale(self) -> float:
        """The adapter's current strength (0 without an adapter)."""

    @property
    def n_ctx(self) -> int:
        """The context size in tokens, as allocated."""

    @property
    def origin(self) -> str:
        """Where the model runs, for the Model panel: '' on this machine, else the server (its build and URL)."""

    @property
    def byte_token_ids(self) -> tuple[int, ...]:
        """The vocabulary's <0x00>..<0xFF> byte tokens, which LogitBias can ban."""

    @property
    def longest_piece_chars(self) -> int | None:
        """The most characters one token of the vocabulary stands for (its longest piece),
        which bounds how much draft a window of N tokens can hold (window.py); None where
        the backend cannot say (a llama-server lists no pieces)."""

    @property
    def fim_texts(self) -> tuple[str, str, str] | None:
        """The texts of the model's fill-in-the-middle tokens (prefix, suffix, middle), with
        which an insert's prompt carries the text after the cursor (window.fim_wrap); None
        without them (or where the backend cannot say: a llama-server)."""

    @property
    def heals(self) -> bool:
        """Whether it heals the token the cursor cut (healing.py) when the settings ask:
        the window then keeps the spaces ending the text (window.build_window's `heals`)."""

    @property
    def tokenizer_name(self) -> str:
        """What cuts text into ids: 'llama.cpp', 'SentencePiece (NAME.model)', ..."""

    @property
    def tokenizer_warning(self) -> str:
        """What the author should know about the tokenizer in use, in one line, else ''."""

    @property
    def context_warning(self) -> str:
        """One line when the context exceeds what the model was trained on, else ''."""

    def count_tokens(self, text: str) -> int:
        """How many tokens `text` is as a prompt, BOS included: what the window is fitted with."""

    def unknown_characters(self, text: str) -> str:
        """The characters of `text` the model reads as <unk> (a SentencePiece `.model` without
        byte fallback cuts them so), each once in order; '' for none."""

    def set_lora_scale(self, scale: float) -> None:
        """Change the adapter's strength without reloading (0 disables it); raises SettingsError without one."""

    def kv_usage(self) -> KVCacheUsage:
        """The KV cache now: tokens held and bytes used of the allocation."""

    def generate(
        self,
        prompt: str,
        settings: SamplerSettings,
        bias: LogitBias,
        *,
        top_n: int = 10,
        should_stop: Callable[[], bool] | None = None,
        special: bool = False,
        speculation: Speculation = OFF,
    ) -> Iterator[Event]:
        """Stream a continuation of `prompt` (control-token text parsed if `special`); ends with GenerationDone.
        `speculation`: guess tokens ahead and verify them in one pass, the text unchanged (a
        llama-server speculates only as it was started: it takes no such request)."""

    def score(self, text: str, *, top_n: int = 10, should_stop: Callable[[], bool] | None = None) -> Iterator[Event]:
        """Stream how probable each token of `text` is given the text before it; ends with ScoreDone."""

    def chat_prompt(self, messages: list[dict[str, str]], fallback_template: str | None = None) -> str:
        """The prompt for the assistant's next reply to `messages`, in the model's own chat format."""

    def close(self) -> None:
        """Release the model once a running request has ended; closing twice does nothing."""


BackendLoader = Callable[[LoadOptions, Callable[[float], None]], Backend]
"""Loads a backend for the options, reporting progress (0..1); raises ScriptoriumError with a one-line reason."""
