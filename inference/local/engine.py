"""A loaded model and its context: llama.cpp in-process, nothing between it and the numbers.

The engine loads the llama.cpp model, its context and an optional LoRA adapter, and
answers the app's requests (the `Backend` protocol). The context and the mirror of its
KV memory belong to a LlamaContext (context.py), the vocabulary to a Vocabulary;
`generate` and `score` (generation.py, scoring.py) stream plain events using both.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
from contextlib import closing
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from ..core import native
from ..core.arithmetic import Arithmetic, read_arithmetic
from ..core.errors import GenerationError, ModelLoadError
from ..core.events import Event, KVCacheUsage
from ..core.kv_cache import KVLayout
from ..core.load_options import LoadOptions, beyond_training, usable_cores
from ..core.model_facts import AdapterFacts, ModelFacts
from ..core.settings import LogitBias, SamplerSettings, SettingsError, check_top_n, rule_for
from ..core.speculation import OFF, Speculation
from ..gguf.gguf_file import read_adapter_facts, read_model_facts
from ..vocab.tokenizer import Tokenizer, sentencepiece_tokenizer, tokenizer_warning
from .idle_cores import IdleCores
from .thread_choice import ThreadTuner
from .vocabulary import Vocabulary

if TYPE_CHECKING:
    from .context import LlamaContext
    from .speculative import PacingRecord

__all__ = ["Engine", "LoadOptions"]

# ggml_type ids for the KV cache types llama.cpp accepts (ggml.h).
GGML_TYPE_IDS = {"f32": 0, "f16": 1, "q4_0": 2, "q4_1": 3, "q5_0": 6, "q5_1": 7, "q8_0": 8, "iq4_nl": 20, "bf16": 30}
ALL_LAYERS = 0x7FFFFFFF


@dataclass(slots=True)
class _Handles:
    """The model-side C objects; the context (which frees the model) is the LlamaContext's."""

    lib: Any
    model: Any = None
    vocab: Any = None
    adapter: Any = None
    callbacks: list[Any] = field(default_factory=list)  # ctypes callbacks must outlive their use


class Engine:
    """One model in one llama.cpp context. Requests take turns on the context."""

    def __init__(
        self,
        options: LoadOptions,
        facts: ModelFacts,
        adapter: AdapterFacts | None,
        handles: _Handles,
        context: "LlamaContext",
        arithmetic: Arithmetic,
        *,
        index_for_healing: bool = True,
    ):
        self.options = options
        # Between two decodes (generation.py calls it there).
        self.threads = ThreadTuner(
            context.set_threads,
            usable_cores(),
            fixed=options.n_threads,
            fixed_batch=options.n_threads_batch,
            idle=IdleCores.of_this_process().sample if options.n_threads is None else None,
        )
        """The thread counts, chosen by measurement while decoding unless the options fix them."""
        self.arithmetic = arithmetic.with_threads(self.threads.chosen())
        self.facts = facts
        self.adapter = adapter
        self.lora_scale = options.lora_scale if adapter else 0.0
        self.origin = ""  # in-process
        self._h = handles
        self.context = context
        self.vocabulary = Vocabulary(
            handles.lib, handles.vocab, add_space_prefix=facts.add_space_prefix, byte_token_ids=facts.byte_token_ids
        )
        self.n_ctx = context.n_ctx
        self.n_vocab = self.vocabulary.n_vocab
        self.byte_token_ids = self.vocabulary.byte_token_ids
        self.add_bos = self.vocabulary.add_bos
        self.bos_id = self.vocabulary.bos_id
        self.heals = True
        """Token healing runs in the generation loop here (healing.py)."""
        self.tokenizer_note = ""
        """Why the named `.model` is not used (it does not match), else ''."""
        self._draft: Engine | None = None
        """The draft model speculative decoding last guessed with, kept for the next generation."""
        self._draft_record: PacingRecord | None = None
        """How its passes went, kept with it and made anew with another draft model."""
        # Token healing's index of every token by its bytes takes about a quarter of a second
        # on a 262k vocabulary (Gemma 3): built now, beside the author's first keys, rather than
        # in the first generation's wait for its first token. A generation that comes sooner waits
        # for the same build (a cached property computes once, under its lock). An engine that
        # never generates (compare's scoring) does not build it: that time is CPU taken from
        # its decoding.
        if index_for_healing:
            threading.Thread(target=self._index_for_healing, name="healing-index", daemon=True).start()

    def _index_for_healing(self) -> None:
        with contextlib.suppress(GenerationError):  # the engine closed first: nothing to index
            self.vocabulary.prefixes

    # ---- loading -------------------------------------------------------------------
    @classmethod
    def load(
        cls,
        options: LoadOptions,
        on_progress: Callable[[float], None] | None = None,
        *,
        flash_cache: Path | None = None,
        index_for_healing: bool = True,
    ) -> "Engine":
        """Validate the files, then load; raises a ScriptoriumError with a one-line reason.

        `options.flash_attn` None: with a `flash_cache` file, the faster path for this model
        and build, measured at its first load and remembered there (flash_choice.py);
        without one, llama.cpp's own default for the backend. `index_for_healing` False:
        token healing's index is built at the first generation that heals, not beside the load."""
        # Absolute: a session records these paths, and is reopened from any folder.
        options = replace(
            options.validated(),
            model_path=options.model_path.absolute(),
            lora_path=options.lora_path.absolute() if options.lora_path else None,
        )
        facts = read_model_facts(options.model_path)
        adapter = read_adapter_facts(options.lora_path, facts.architecture, facts.path) if options.lora_path else None
        lib = native.llama()
        handles = _Handles(lib)
        context: LlamaContext | None = None
        mark = native.log_mark()
        try:
            from .context import LlamaContext

            cls._load_model(handles, options, on_progress)
            # The context as this model is run: its training context unless asked otherwise.
            arithmetic_options = replace(options, n_ctx=options.context_for(facts.context_length))
            if options.flash_attn is None and flash_cache is not None:
                arithmetic_options = replace(
                    arithmetic_options, flash_attn=cls._measured_flash(handles, arithmetic_options, flash_cache)
                )
            context_mark = native.log_mark()
            ctx = cls._create_context(handles, arithmetic_options)
            context = LlamaContext(
                lib, handles.model, ctx, facts, type_k=options.type_k, type_v=options.type_v, swa_full=options.swa_full
            )
            arithmetic = read_arithmetic(
                native.log_since(context_mark),
                asked_flash=arithmetic_options.flash_attn,
                type_k=options.type_k,
                type_v=options.type_v,
                n_threads=int(lib.llama_n_threads(ctx)),
                n_threads_batch=int(lib.llama_n_threads_batch(ctx)),
                repacked_weights=options.repack_weights,
            )
            if adapter is not None:
                handles.adapter = lib.llama_adapter_lora_init(handles.model, str(adapter.path).encode())
                if not handles.adapter:
                    raise ModelLoadError(cls._failure(f"llama.cpp rejected the LoRA adapter {adapter.path}", mark))
            engine = cls(options, facts, adapter, handles, context, arithmetic, index_for_healing=index_for_healing)
        except BaseException:
            if context is not None:
                context.close()  # frees the model too
            elif handles.model:
                lib.llama_model_free(handles.model)
            raise
        if adapter is not None:
            engine.set_lora_scale(options.lora_scale)
        if options.spm_path is not None:
            try:
                spm_tokenizer, engine.tokenizer_note = sentencepiece_tokenizer(
                    Path(options.spm_path), lib, handles.vocab
                )
            except BaseException:
                engine.close()
                raise
            if spm_tokenizer is not None:
                engine.vocabulary.tokenizer = spm_tokenizer
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
        params.use_extra_bufts = options.repack_weights
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
    def _measured_flash(cls, h: _Handles, options: LoadOptions, cache_path: Path) -> bool:
        """Flash attention on or off, whichever decodes this model faster here."""
        from ..core.kv_cache import CACHE_TYPES
        from .flash_choice import PROBE_CONTEXT, FlashChoiceCache, build_id, choice_key, choose_flash, time_decode_paths

        if CACHE_TYPES[options.type_v][0] > 1:
            return True  # a quantized V cache has no other path in llama.cpp
        lib = h.lib
        key = choice_key(options.model_path, build_id(lib), n_gpu_layers=options.n_gpu_layers)

        def probe_params(flash: bool) -> Any:
            probe = replace(options, n_ctx=PROBE_CONTEXT, n_batch=min(options.n_batch, PROBE_CONTEXT), flash_attn=flash)
            return cls._context_params(lib, probe)

        n_vocab = int(lib.llama_vocab_n_tokens(h.vocab))
        return choose_flash(
            key, FlashChoiceCache(cache_path), lambda: time_decode_paths(lib, h.model, probe_params, n_vocab)
        )

    @staticmethod
    def _context_params(lib: Any, options: LoadOptions) -> Any:
        params = lib.llama_context_default_params()
        params.n_ctx = options.n_ctx
        params.n_batch = options.n_batch
        params.n_ubatch = options.n_batch
        cores = usable_cores()
        params.n_threads = options.n_threads or cores
        params.n_threads_batch = options.n_threads_batch or cores
        params.type_k = GGML_TYPE_IDS[options.type_k]
        params.type_v = GGML_TYPE_IDS[options.type_v]
        params.swa_full = options.swa_full
        if options.flash_attn is not None:
            params.flash_attn_type = (
                lib.LLAMA_FLASH_ATTN_TYPE_ENABLED if options.flash_attn else lib.LLAMA_FLASH_ATTN_TYPE_DISABLED
            )
        params.no_perf = False
        return params

    @classmethod
    def _create_context(cls, h: _Handles, options: LoadOptions) -> Any:
        lib = h.lib
        params = cls._context_params(lib, options)
        mark = native.log_mark()
        ctx = lib.llama_init_from_model(h.model, params)
        if not ctx:
            raise ModelLoadError(cls._failure(f"llama.cpp could not create a {options.n_ctx}-token context", mark))
        return ctx

    # ---- adapters ------------------------------------------------------------------
    def set_lora_scale(self, scale: float) -> None:
        """Change the adapter's strength without reloading; 0 disables it."""
        if self.adapter is None:
            raise SettingsError("no LoRA adapter is loaded")
        rule_for(LoadOptions, "lora_scale").check(scale)
        with self.context.claim():
            self.context.set_adapter_scale(self._h.adapter, scale)
            self.lora_scale = scale

    # ---- tokens --------------------------------------------------------------------
    def tokenize(self, text: str, *, add_bos: bool | None = None, special: bool = False) -> list[int]:
        """Tokens of `text`; `special` parses control-token text such as <start_of_turn>.
        UnencodableTextError for text the vocabulary cannot encode (tokenizer.py)."""
        return self.vocabulary.tokenize(text, add_bos=add_bos, special=special)

    @property
    def fim_texts(self) -> tuple[str, str, str] | None:
        """The fill-in-the-middle tokens' texts, or None (Vocabulary.fim_texts)."""
        return self.vocabulary.fim_texts

    @property
    def longest_piece_chars(self) -> int:
        return self.facts.longest_token_chars

    def count_tokens(self, text: str) -> int:
        """How many tokens `text` is as a prompt (a BOS included when the model adds one)."""
        return len(self.vocabulary.tokenize(text))

    def unknown_characters(self, text: str) -> str:
        """The characters of `text` the tokenizer in use turns into <unk> (tokenizer.py)."""
        return self.vocabulary.tokenizer.unknown_characters(text)

    @property
    def context_warning(self) -> str:
        """One line when the context exceeds the model's training context, else ''."""
        return beyond_training(self.n_ctx, self.facts.context_length)

    @property
    def tokenizer(self) -> Tokenizer:
        """What cuts text into ids: llama.cpp's tokenizer, or the author's SentencePiece model."""
        return self.vocabulary.tokenizer

    @property
    def tokenizer_name(self) -> str:
        return self.vocabulary.tokenizer.name

    @property
    def tokenizer_warning(self) -> str:
        return tokenizer_warning(self.vocabulary.tokenizer, self.tokenizer_note)

    def token_bytes(self, token_id: int) -> bytes:
        return self.vocabulary.token_bytes(token_id)

    def token_text(self, token_id: int) -> str:
        """How a token reads in a candidate list (see Vocabulary.token_text)."""
        return self.vocabulary.token_text(token_id)

    def is_end_of_generation(self, token_id: int) -> bool:
        return self.vocabulary.is_end_of_generation(token_id)

    # ---- cache ---------------------------------------------------------------------
    @property
    def cached_tokens(self) -> tuple[int, ...]:
        """Tokens whose K and V are in the cache, in position order (read-only)."""
        return self.context.cached_tokens

    @property
    def kv_layout(self) -> KVLayout:
        return self.context.kv_layout

    def kv_usage(self) -> KVCacheUsage:
        return self.context.kv_usage()

    @property
    def kv_tokens(self) -> int:
        """Tokens in the cache: what every batch of events from the child carries."""
        return self.context.n_cached

    def clear_cache(self) -> None:
        with self.context.claim():
            self.context.clear()

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
        speculation: Speculation = OFF,
    ) -> Iterator[Event]:
        """Stream a continuation of `prompt` as events; the last one is GenerationDone.
        `speculation`: guess tokens ahead and verify them in one pass (speculative.py)."""
        from .generation import run_generation  # imported when first used: it brings numpy

        settings = settings.validated()
        speculation = speculation.validated().for_model(self.facts.tiled_weights)
        bias = bias.validated(self.n_vocab)
        check_top_n(top_n)
        return self._following_threads(
            run_generation(
                self.context,
                self.vocabulary,
                prompt,
                settings,
                bias,
                top_n=top_n,
                should_stop=should_stop,
                special=special,
                threads=self.threads,
                speculation=speculation,
                guesser_for=self._draft_guesser(speculation),
            )
        )

    def _draft_guesser(self, speculation: Speculation) -> Any:
        """What guesses for `speculation`: None for prompt lookup; with a draft model, a
        guesser on its own context (loaded once and kept, its vocabulary checked first)."""
        if speculation.guesser != "draft" or speculation.draft_model is None:
            return None
        from .draft_model import DraftModelGuesser, check_same_vocabulary
        from .speculative import PacingRecord

        path = Path(speculation.draft_model).absolute()
        if self._draft is None or self._draft.options.model_path != path:
            if self._draft is not None:
                self._draft.close()
                self._draft = None
            # It never heals a prompt: no index of its vocabulary, which would take a second of CPU
            # from the first generation that drafts.
            draft = Engine.load(
                replace(self.options, model_path=path, lora_path=None, spm_path=None), index_for_healing=False
            )
            try:
                check_same_vocabulary(self.vocabulary, draft.vocabulary, path)
            except BaseException:
                draft.close()
                raise
            self._draft, self._draft_record = draft, PacingRecord()
        draft, decoding, record = self._draft, self.threads.decode, self._draft_record
        return lambda history: DraftModelGuesser(
            draft.context, draft.n_vocab, history, lambda: decoding.threads, record
        )

    def _following_threads(self, events: Iterator[Event]) -> Iterator[Event]:
        """`events`, the arithmetic kept up with the thread counts they announce."""
        from ..core.events import ThreadsChosen

        with closing(events):  # type: ignore[arg-type]
            for event in events:
                if type(event) is ThreadsChosen:
                    self.arithmetic = self.arithmetic.with_threads(event)
                yield event

    def score(self, text: str, *, top_n: int = 10, should_stop: Callable[[], bool] | None = None) -> Iterator[Event]:
        """Stream how probable the model finds each token of `text` (the author's own
        words): TokenScore per token, ScoreProgress per chunk, then ScoreDone. Leaves the
        text in the KV cache, so continuing it right after costs nothing more."""
        from .scoring import run_scoring

        check_top_n(top_n)
        return run_scoring(self.context, self.vocabulary, text, top_n=top_n, should_stop=should_stop)

    def chat_prompt(self, messages: list[dict[str, str]], fallback_template: str | None = None) -> str:
        """The prompt for the assistant's next reply, in the model's own chat format."""
        from ..window.chat import render_chat

        template, bos = self.chat_format()
        return render_chat(messages, template, fallback_template, bos)

    def chat_format(self) -> tuple[str | None, str]:
        """The GGUF's chat template (None without one) and its BOS token's text ('' without one)."""
        template = self.vocabulary.model_call(self._h.lib.llama_model_chat_template, self._h.model, None)
        bos = self.vocabulary.token_text(self.bos_id) if self.bos_id >= 0 else ""
        return (template.decode("utf-8") if template else None), bos

    @property
    def handles(self) -> _Handles:
        """The model-side C objects (the vocabulary's for benchmarks); the context's is
        `context.handle`."""
        return self._h

    def close(self) -> None:
        """Free llama.cpp's objects once a running request has ended, and the calls into
        the vocabulary under way on other threads (tokenizing, with no request) too."""
        self.context.close(before_freeing=self.vocabulary.close)
        self._h.adapter = self._h.model = self._h.vocab = None
        if self._draft is not None:
            self._draft.close()
            self._draft = None
