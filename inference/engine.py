"""A loaded model and its context: llama.cpp in-process, nothing between it and the numbers.

The engine owns the llama.cpp model, context, optional LoRA adapter and the tokens held
in the KV cache. `generate` (in generation.py) streams plain events; everything here is
loading, tokens, adapters and accounting.
"""

from __future__ import annotations

import ctypes
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from . import native
from .errors import ModelLoadError
from .events import Event, KVCacheUsage
from .gguf_file import AdapterFacts, ModelFacts, read_adapter_facts, read_model_facts
from .kv_cache import CACHE_TYPES, KVLayout
from .settings import LogitBias, SamplerSettings, SettingsError
from .text import piece_text
from .tokenizer import TOKEN_ATTR_BYTE, LlamaTokenizer, Tokenizer, guard_for, sentencepiece_tokenizer

# ggml_type ids for the KV cache types llama.cpp accepts (ggml.h).
GGML_TYPE_IDS = {"f32": 0, "f16": 1, "q4_0": 2, "q4_1": 3, "q5_0": 6, "q5_1": 7, "q8_0": 8, "iq4_nl": 20, "bf16": 30}
ALL_LAYERS = 0x7FFFFFFF


@dataclass(frozen=True, slots=True)
class LoadOptions:
    """How to load a model. Validated before llama.cpp is touched."""

    model_path: Path
    """The GGUF model file."""
    lora_path: Path | None = None
    """A GGUF LoRA adapter made for this model, or None."""
    lora_scale: float = 1.0
    """How strongly the adapter applies: 0 disables it, 1 is as trained."""
    n_ctx: int = 4096
    """Context size in tokens; llama.cpp rounds it up to a multiple of 256."""
    n_threads: int | None = None
    """CPU threads for decoding one token at a time; None uses every core."""
    n_threads_batch: int | None = None
    """CPU threads for prompt batches (prefill, scoring); None uses every core. Prefill is
    compute-bound and wants them all; an app that keeps one core for its UI lowers only
    n_threads."""
    n_gpu_layers: int = -1
    """Layers offloaded to the GPU (Metal on a Mac); -1 offloads all, 0 none."""
    n_batch: int = 512
    """Prompt tokens evaluated per llama_decode call during prefill."""
    type_k: str = "f16"
    """KV-cache type for keys (f16, q8_0, ...)."""
    type_v: str = "f16"
    """KV-cache type for values; a quantized V cache needs flash attention."""
    swa_full: bool = False
    """Give sliding-window layers a full-size cache (more memory, more prefix reuse)."""
    flash_attn: bool | None = None
    """Flash attention on or off; None lets llama.cpp decide for the backend."""
    spm_path: Path | None = None
    """The SentencePiece `.model` the model was trained with: when its pieces match the
    GGUF's, text is tokenized with it instead of llama.cpp (tokenizer.py)."""

    def validated(self) -> "LoadOptions":
        if self.n_ctx < 64:
            raise SettingsError(f"context size must be at least 64 tokens, not {self.n_ctx}")
        if not 0.0 <= self.lora_scale <= 4.0:
            raise SettingsError(f"LoRA scale must be between 0 and 4, not {self.lora_scale}")
        for threads in (self.n_threads, self.n_threads_batch):
            if threads is not None and threads < 1:
                raise SettingsError(f"threads must be at least 1, not {threads}")
        if not 1 <= self.n_batch <= 8192:
            raise SettingsError(f"batch size must be between 1 and 8192, not {self.n_batch}")
        for name in (self.type_k, self.type_v):
            if name not in CACHE_TYPES:
                raise SettingsError(f"unknown KV-cache type '{name}' (choose from {', '.join(CACHE_TYPES)})")
        return self


@dataclass(slots=True)
class _Handles:
    """The C objects, freed in reverse order of creation."""

    lib: Any
    model: Any = None
    ctx: Any = None
    vocab: Any = None
    adapter: Any = None
    callbacks: list[Any] = field(default_factory=list)  # ctypes callbacks must outlive their use
    abort_callback: Any = None
    abort_check: Callable[[], bool] | None = None


class Engine:
    """One model in one llama.cpp context. Generations are serialised by a lock."""

    def __init__(self, options: LoadOptions, facts: ModelFacts, adapter: AdapterFacts | None, handles: _Handles):
        self.options = options
        self.facts = facts
        self.adapter = adapter
        self.lora_scale = options.lora_scale if adapter else 0.0
        self._h = handles
        lib = handles.lib
        self.n_ctx = int(lib.llama_n_ctx(handles.ctx))
        self.n_vocab = int(lib.llama_vocab_n_tokens(handles.vocab))
        self.byte_token_ids = tuple(
            i for i in range(self.n_vocab) if lib.llama_vocab_get_attr(handles.vocab, i) & TOKEN_ATTR_BYTE
        )
        self._byte_tokens = frozenset(self.byte_token_ids)
        self.add_bos = bool(lib.llama_vocab_get_add_bos(handles.vocab))
        self.bos_id = int(lib.llama_vocab_bos(handles.vocab))
        self.kv_layout = KVLayout.for_model(
            facts, self.n_ctx, type_k=options.type_k, type_v=options.type_v,
            n_ubatch=int(lib.llama_n_ubatch(handles.ctx)), swa_full=options.swa_full,
        )
        self.cached_tokens: list[int] = []
        """Tokens whose K and V are in the cache, in position order."""
        self.lock = threading.Lock()
        self._pieces: dict[int, bytes] = {}
        self._labels: dict[int, str] = {}
        self._ends_generation: dict[int, bool] = {}
        guard = guard_for(lib, handles.vocab, add_space_prefix=facts.add_space_prefix,
                          has_byte_tokens=bool(self.byte_token_ids))
        self.tokenizer: Tokenizer = LlamaTokenizer(lib, handles.vocab, guard)
        self.tokenizer_note = ""
        """Why the named `.model` is not used (it does not match), else ''."""

    # ---- loading -------------------------------------------------------------------
    @classmethod
    def load(cls, options: LoadOptions, on_progress: Callable[[float], None] | None = None) -> "Engine":
        """Validate the files, then load; raises a ScriptoriumError with a one-line reason."""
        options = options.validated()
        facts = read_model_facts(options.model_path)
        adapter = read_adapter_facts(options.lora_path, facts.architecture) if options.lora_path else None
        lib = native.llama()
        handles = _Handles(lib)
        mark = native.log_mark()
        try:
            cls._load_model(handles, options, on_progress)
            cls._create_context(handles, options)
            if adapter is not None:
                handles.adapter = lib.llama_adapter_lora_init(handles.model, str(adapter.path).encode())
                if not handles.adapter:
                    raise ModelLoadError(cls._failure(f"llama.cpp rejected the LoRA adapter {adapter.path}", mark))
            engine = cls(options, facts, adapter, handles)
        except BaseException:
            _free(handles)
            raise
        if adapter is not None:
            engine.set_lora_scale(options.lora_scale)
        if options.spm_path is not None:
            try:
                spm_tokenizer, engine.tokenizer_note = sentencepiece_tokenizer(Path(options.spm_path), lib, handles.vocab)
            except BaseException:
                engine.close()
                raise
            engine.tokenizer = spm_tokenizer or engine.tokenizer
        return engine

    @staticmethod
    def _failure(message: str, mark: int) -> str:
        reason = native.last_error_since(mark)
        return f"{message}: {reason}" if reason else message

    @classmethod
    def _load_model(cls, h: _Handles, options: LoadOptions, on_progress: Callable[[float], None] | None) -> None:
        lib = h.lib
        params = lib.llama_model_default_params()
        params.n_gpu_layers = ALL_LAYERS if options.n_gpu_layers < 0 else options.n_gpu_layers
        if on_progress is not None:
            @lib.llama_progress_callback
            def report(progress: float, user_data: ctypes.c_void_p) -> bool:
                on_progress(float(progress))
                return True
            h.callbacks.append(report)
            params.progress_callback = report
        mark = native.log_mark()
        h.model = lib.llama_model_load_from_file(str(options.model_path).encode(), params)
        if not h.model:
            raise ModelLoadError(cls._failure(f"llama.cpp could not load {options.model_path}", mark))
        h.vocab = lib.llama_model_get_vocab(h.model)

    @classmethod
    def _create_context(cls, h: _Handles, options: LoadOptions) -> None:
        lib = h.lib
        params = lib.llama_context_default_params()
        params.n_ctx = options.n_ctx
        params.n_batch = options.n_batch
        params.n_ubatch = options.n_batch
        cores = os.cpu_count() or 1
        params.n_threads = options.n_threads or cores
        params.n_threads_batch = options.n_threads_batch or cores
        params.type_k = GGML_TYPE_IDS[options.type_k]
        params.type_v = GGML_TYPE_IDS[options.type_v]
        params.swa_full = options.swa_full
        if options.flash_attn is not None:
            params.flash_attn_type = lib.LLAMA_FLASH_ATTN_TYPE_ENABLED if options.flash_attn else lib.LLAMA_FLASH_ATTN_TYPE_DISABLED
        params.no_perf = False
        mark = native.log_mark()
        h.ctx = lib.llama_init_from_model(h.model, params)
        if not h.ctx:
            raise ModelLoadError(cls._failure(f"llama.cpp could not create a {options.n_ctx}-token context", mark))

        @lib.ggml_abort_callback
        def abort_requested(user_data: ctypes.c_void_p) -> bool:
            check = h.abort_check
            return bool(check and check())
        h.abort_callback = abort_requested

    def interruptible(self, should_stop: Callable[[], bool] | None) -> None:
        """Let `should_stop` interrupt llama_decode mid-batch, or (None) stop asking.

        llama.cpp calls the abort callback for every graph node; a Python callback there
        costs the GIL hundreds of times per token, so it is installed for prefill only,
        and between-token checks serve decoding."""
        h = self._h
        h.abort_check = should_stop
        callback = h.abort_callback if should_stop else h.lib.ggml_abort_callback()  # () is NULL
        h.lib.llama_set_abort_callback(h.ctx, callback, None)

    # ---- adapters ------------------------------------------------------------------
    def set_lora_scale(self, scale: float) -> None:
        """Change the adapter's strength without reloading; 0 disables it."""
        if self.adapter is None:
            raise SettingsError("no LoRA adapter is loaded")
        if not 0.0 <= scale <= 4.0:
            raise SettingsError(f"LoRA scale must be between 0 and 4, not {scale}")
        lib = self._h.lib
        with self.lock:
            if scale == 0.0:
                result = lib.llama_set_adapters_lora(self._h.ctx, None, 0, None)
            else:
                adapters = (lib.llama_adapter_lora_p_ctypes * 1)(self._h.adapter)
                scales = (ctypes.c_float * 1)(scale)
                result = lib.llama_set_adapters_lora(self._h.ctx, adapters, 1, scales)
            if result != 0:
                raise ModelLoadError(f"llama.cpp could not apply the LoRA adapter (error {result})")
            self.lora_scale = scale
            # Keys and values computed under the old scale are stale for the new one.
            self.clear_cache()

    # ---- tokens --------------------------------------------------------------------
    def tokenize(self, text: str, *, add_bos: bool | None = None, special: bool = False) -> list[int]:
        """Tokens of `text`; `special` parses control-token text such as <start_of_turn>.
        UnencodableTextError for text the vocabulary cannot encode (tokenizer.py)."""
        return self.tokenizer.tokenize(text, add_bos=self.add_bos if add_bos is None else add_bos, special=special)

    def token_bytes(self, token_id: int) -> bytes:
        piece = self._pieces.get(token_id)
        if piece is None:
            piece = self._pieces[token_id] = native.token_piece(self._h.lib, self._h.vocab, token_id)
        return piece

    def token_text(self, token_id: int) -> str:
        """How a token reads in a candidate list: control tokens by name, byte tokens as
        the vocabulary writes them (<0xFF>), other invalid UTF-8 as \\xNN."""
        label = self._labels.get(token_id)
        if label is None:
            if token_id in self._byte_tokens:
                label = self._h.lib.llama_vocab_get_text(self._h.vocab, token_id).decode("utf-8", "replace")
            else:
                label = piece_text(native.token_piece(self._h.lib, self._h.vocab, token_id, special=True))
            self._labels[token_id] = label
        return label

    def is_end_of_generation(self, token_id: int) -> bool:
        # Asked once per generated token: remembered, it is a dict lookup, not a foreign call.
        ends = self._ends_generation.get(token_id)
        if ends is None:
            ends = self._ends_generation[token_id] = bool(self._h.lib.llama_vocab_is_eog(self._h.vocab, token_id))
        return ends

    # ---- cache ---------------------------------------------------------------------
    def kv_usage(self) -> KVCacheUsage:
        return self.kv_layout.usage(len(self.cached_tokens))

    def clear_cache(self) -> None:
        lib = self._h.lib
        lib.llama_memory_clear(lib.llama_get_memory(self._h.ctx), True)
        self.cached_tokens = []

    # ---- generation ----------------------------------------------------------------
    def generate(
        self,
        prompt: str,
        settings: SamplerSettings,
        bias: LogitBias,
        *,
        top_n: int = 10,
        should_stop: Callable[[], bool] | None = None,
        special: bool = False,
    ) -> Iterator[Event]:
        """Stream a continuation of `prompt` as events; the last one is GenerationDone."""
        from .generation import run_generation

        settings = settings.validated()
        bias = bias.validated(self.n_vocab)
        if top_n < 0:
            raise SettingsError(f"top must be 0 or more, not {top_n}")
        return run_generation(self, prompt, settings, bias, top_n=top_n, should_stop=should_stop, special=special)

    def score(
        self, text: str, *, top_n: int = 10, should_stop: Callable[[], bool] | None = None
    ) -> Iterator[Event]:
        """Stream how probable the model finds each token of `text` (the author's own
        words): TokenScore per token, ScoreProgress per chunk, then ScoreDone. Leaves the
        text in the KV cache, so continuing it right after costs nothing more."""
        from .scoring import run_scoring

        if top_n < 0:
            raise SettingsError(f"top must be 0 or more, not {top_n}")
        return run_scoring(self, text, top_n=top_n, should_stop=should_stop)

    def chat_prompt(self, messages: list[dict[str, str]], fallback_template: str | None = None) -> str:
        """The prompt for the assistant's next reply, in the model's own chat format."""
        from .chat import render_chat

        template = self._h.lib.llama_model_chat_template(self._h.model, None)
        return render_chat(self, messages, template.decode("utf-8") if template else None, fallback_template)

    @property
    def handles(self) -> _Handles:
        return self._h

    def close(self) -> None:
        with self.lock:
            _free(self._h)


def _free(h: _Handles) -> None:
    lib = h.lib
    if h.ctx:
        lib.llama_free(h.ctx)
        h.ctx = None
    # Adapters are freed with their model in this llama.cpp.
    h.adapter = None
    if h.model:
        lib.llama_model_free(h.model)
        h.model = None
