"""llama.cpp's own sampler chain, built as its common_sampler builds one, and stepped
sampler by sampler on a candidate array this module owns.

`llama_sampler_sample` fills a candidate array inside llama.cpp and hands back only the
token; the array, where the chain leaves the survivors' probabilities, is never seen.
Here the array is scriptorium's (a numpy buffer laid out as llama.cpp's
`llama_token_data`), filled from the last logits exactly as `llama_sampler_sample` fills
its own, then each sampler of the chain is applied to it in turn with
`llama_sampler_apply` and the drawn token accepted into the chain: the same calls in the
same order, so the same token, and between two samplers a `ChainObserver` may look at
what one did (sampler_trace.py).

Where the samplers before top-k allow it, the array holds only the candidates they can
need, a few hundred of the whole vocabulary, with the same result (sampler_shortlist.py).
"""

from __future__ import annotations

import ctypes
from types import ModuleType
from typing import Any, Protocol

import numpy as np

from ..core import native
from ..core.errors import GenerationError
from ..core.settings import SamplerSettings
from .sampler_shortlist import Shortlist, compiled_at_or_above, compiled_sigma_statistics

TOKEN_DATA = np.dtype([("id", "<i4"), ("logit", "<f4"), ("p", "<f4")])
"""llama.cpp's llama_token_data {int32 id; float logit; float p}."""


class ChainObserver(Protocol):
    """Sees the candidate array before the chain and after each of its samplers."""

    def followed(self) -> np.ndarray:
        """The tokens it reads: a short candidate array holds them all."""
        ...

    def start(self, candidates: "CandidateArray") -> None: ...

    def after(self, stage: str, candidates: "CandidateArray") -> None: ...


class CandidateArray:
    """The candidates of one step (llama_token_data_array), in memory numpy can read."""

    def __init__(self, lib: ModuleType, n_vocab: int):
        self.n_vocab = n_vocab
        self._buffer = np.zeros(n_vocab, dtype=TOKEN_DATA)
        self._ids = np.arange(n_vocab, dtype=np.int32)
        self.logits = np.zeros(n_vocab, dtype=np.float32)
        """The raw logits of the step being drawn (the model's, before any sampler)."""
        self._base = self._buffer.ctypes.data
        self.struct = lib.llama_token_data_array()
        self.pointer = ctypes.addressof(self.struct)

    def fill(self, logits_address: int) -> None:
        """Every token with its raw logit, in id order, as llama_sampler_sample starts."""
        # Two strided numpy copies: measured cheaper in CPU time than a C loop writing the
        # structs (0.27 against 0.45 ms for 262k tokens), and llama.cpp's own fill is such a loop.
        logits = self.raw(logits_address)
        self._buffer["id"] = self._ids
        self._buffer["logit"] = logits
        self._restart(self.n_vocab)

    def fill_some(self, logits_address: int, ids: np.ndarray) -> None:
        """Only the tokens `ids` (ascending) with their raw logits, in id order."""
        logits = self.raw(logits_address)
        count = len(ids)
        self._buffer["id"][:count] = ids
        self._buffer["logit"][:count] = logits[ids]
        self._restart(count)

    def raw(self, logits_address: int) -> np.ndarray:
        """The model's logits at `logits_address`, every token's, read in place."""
        self.logits = np.frombuffer((ctypes.c_float * self.n_vocab).from_address(logits_address), dtype=np.float32)
        return self.logits

    def _restart(self, size: int) -> None:
        struct = self.struct
        # A sampler may move the start (XTC drops the top choices by advancing it).
        struct.data = ctypes.cast(self._base, type(struct.data))
        struct.size = size
        struct.selected = -1
        struct.sorted = False

    def view(self) -> np.ndarray:
        """The candidates still in the array, as the last sampler left them."""
        start = (ctypes.cast(self.struct.data, ctypes.c_void_p).value - self._base) // TOKEN_DATA.itemsize
        return self._buffer[start : start + self.struct.size]

    @property
    def selected(self) -> int:
        return int(self.struct.selected)

    def selected_token(self) -> int:
        view = self.view()
        index = self.selected
        if not 0 <= index < len(view):
            raise RuntimeError("llama.cpp's sampler chain selected no token")
        return int(view[index]["id"])


def build_stages(
    lib: ModuleType,
    vocab: Any,
    n_vocab: int,
    settings: SamplerSettings,
    bias: dict[int, float],
    seed: int,
    dry_prototypes: "DryPrototypes | None" = None,
) -> list[tuple[str, Any]]:
    """(name, llama_sampler) for each sampler of the chain, in order, as llama.cpp's
    common_sampler builds it (common/sampling.cpp) for the same parameters: the logit
    bias, then `settings.applied_chain()`: the samplers of `settings.samplers` that act
    (llama.cpp adds the others too, where they return at once), then the draw; with
    Mirostat, temperature and Mirostat only. Temperature 0 with nothing after it is
    llama.cpp's greedy sampler: the token temperature 0 keeps, without a softmax over
    the vocabulary."""
    stages: list[tuple[str, Any]] = []
    if bias:
        entries = (lib.llama_logit_bias * len(bias))()
        for slot, (token_id, value) in enumerate(bias.items()):
            entries[slot].token = token_id
            entries[slot].bias = value
        stages.append(("logit_bias", lib.llama_sampler_init_logit_bias(n_vocab, len(bias), entries)))
    s = settings
    make = {
        "penalties": lambda: lib.llama_sampler_init_penalties(
            n_vocab, s.repeat_window, s.repeat_penalty, s.frequency_penalty, s.presence_penalty
        ),
        "dry": lambda: dry_prototypes.clone(s) if dry_prototypes is not None else _dry(lib, vocab, s),
        "top_n_sigma": lambda: lib.llama_sampler_init_top_n_sigma(s.top_n_sigma),
        "top_k": lambda: lib.llama_sampler_init_top_k(s.top_k),
        "typ_p": lambda: lib.llama_sampler_init_typical(s.typical_p, 0),
        "top_p": lambda: lib.llama_sampler_init_top_p(s.top_p, 0),
        "min_p": lambda: lib.llama_sampler_init_min_p(s.min_p, 0),
        "xtc": lambda: lib.llama_sampler_init_xtc(s.xtc_probability, s.xtc_threshold, 0, seed),
        # With Mirostat llama.cpp applies the plain temperature, not the dynamic one.
        "temperature": lambda: (
            lib.llama_sampler_init_temp(s.temperature)
            if s.mirostat
            else lib.llama_sampler_init_temp_ext(s.temperature, s.dynatemp_range, s.dynatemp_exponent)
        ),
        "greedy": lib.llama_sampler_init_greedy,
        "dist": lambda: lib.llama_sampler_init_dist(seed),
        "mirostat": lambda: (
            lib.llama_sampler_init_mirostat(n_vocab, seed, s.mirostat_tau, s.mirostat_eta, 100)
            if s.mirostat == 1
            else lib.llama_sampler_init_mirostat_v2(seed, s.mirostat_tau, s.mirostat_eta)
        ),
    }
    stages.extend((name, make[name]()) for name in s.applied_chain())
    return stages


def _dry(lib: ModuleType, vocab: Any, s: SamplerSettings) -> Any:
    encoded = [text.encode("utf-8") for text in s.dry_sequence_breakers]
    breakers = (ctypes.c_char_p * max(len(encoded), 1))(*encoded)
    # llama.cpp tokenizes the breakers and keeps its own copy before this returns.
    return lib.llama_sampler_init_dry(
        vocab, s.dry_multiplier, s.dry_base, s.dry_allowed_length, s.dry_penalty_last_n, breakers, len(encoded)
    )


class DryPrototypes:
    """A DRY sampler per setting, made once per model and cloned into each chain.

    llama_sampler_init_dry reads the whole vocabulary for the tokens that hold a sequence
    breaker: 108 ms for Gemma 3's 262k tokens, before every generation's first token with
    DRY on. A clone (llama_sampler_clone) copies what that read found, with an empty history:
    the same sampler, ready at once. The prototypes are the owner's to free (`free`)."""

    KEPT = 4
    """Settings kept: a few presets' worth; the oldest is freed past that."""

    def __init__(self, lib: ModuleType, vocab: Any) -> None:
        self._lib = lib
        self._vocab = vocab
        self._made: dict[tuple[Any, ...], Any] = {}

    def clone(self, s: SamplerSettings) -> Any:
        key = (s.dry_multiplier, s.dry_base, s.dry_allowed_length, s.dry_penalty_last_n, s.dry_sequence_breakers)
        prototype = self._made.pop(key, None) or _dry(self._lib, self._vocab, s)
        self._made[key] = prototype  # the newest last
        while len(self._made) > self.KEPT:
            self._lib.llama_sampler_free(self._made.pop(next(iter(self._made))))
        return self._lib.llama_sampler_clone(prototype)

    def free(self) -> None:
        for prototype in self._made.values():
            self._lib.llama_sampler_free(prototype)
        self._made.clear()


def _address(pointer: Any) -> int:
    """The address a llama-cpp-python sampler handle holds (its own pointer type, not an int)."""
    return pointer if isinstance(pointer, int) else ctypes.cast(pointer, ctypes.c_void_p).value or 0


class SamplerChain:
    """llama.cpp's sampler chain for one generation (owns the C objects)."""

    def __init__(
        self,
        lib: ModuleType,
        vocab: Any,
        n_vocab: int,
        settings: SamplerSettings,
        bias: dict[int, float],
        seed: int,
        dry_prototypes: DryPrototypes | None = None,
    ):
        self._lib = lib
        params = lib.llama_sampler_chain_default_params()
        params.no_perf = True
        self._chain: Any = lib.llama_sampler_chain_init(params)
        self.seed = seed
        stages = build_stages(lib, vocab, n_vocab, settings, bias, seed, dry_prototypes)
        for _name, sampler in stages:
            lib.llama_sampler_chain_add(self._chain, sampler)  # the chain owns and frees them
        self.stage_names = tuple(name for name, _sampler in stages)
        self._samplers = tuple(_address(sampler) for _name, sampler in stages)
        self._apply = native.own_binding("llama_sampler_apply", None, ctypes.c_void_p, ctypes.c_void_p)
        self._accept = native.own_binding("llama_sampler_accept", None, ctypes.c_void_p, ctypes.c_int32)
        self._chain_address = _address(self._chain)
        self.candidates = CandidateArray(lib, n_vocab)
        self.observer: ChainObserver | None = None
        self.shortlist = Shortlist.plan(
            self.stage_names,
            settings.top_k,
            settings.history_length(),
            bias,
            n_vocab,
            settings.top_n_sigma,
            compiled_sigma_statistics(),
            compiled_at_or_above(),
        )
        self.short_steps = 0
        """Steps drawn on a short array (the rest went over the whole vocabulary)."""

    def remember(self, tokens: list[int]) -> None:
        """Feed context tokens to the history of the penalties and DRY, as llama.cpp does with the prompt."""
        for token in tokens:
            self.accept(token)

    def accept(self, token: int) -> None:
        """Record `token` in the chain's history: llama.cpp's samplers' and the shortlist's,
        which must hold the same window (a token accepted past it could be penalised
        unseen by the short array)."""
        self._accept(self._chain_address, token)
        if self.shortlist is not None:
            self.shortlist.accept(token)

    def sample(self, logits_address: int) -> int:
        """Draw from the logits at `logits_address` and record the token in the history."""
        candidates = self.candidates
        observer = self.observer
        applied = self._through_cut(logits_address)
        if applied:
            self.short_steps += 1
        else:
            candidates.fill(logits_address)
            if observer is not None:
                observer.start(candidates)
        self._run(applied, len(self._samplers))
        token = candidates.selected_token()
        self.accept(token)
        return token

    def _run(self, first: int, last: int) -> None:
        """Apply the samplers first..last-1 of the chain to the candidate array."""
        observer, pointer, apply = self.observer, self.candidates.pointer, self._apply
        for name, sampler in zip(self.stage_names[first:last], self._samplers[first:last]):
            apply(sampler, pointer)
            if observer is not None:
                observer.after(name, self.candidates)

    def _through_cut(self, logits_address: int) -> int:
        """The chain up to its cut (top-k, or the greedy draw) applied to a short array: how
        many samplers were applied, or 0 where the short array would not give llama.cpp's
        result (then nothing counts)."""
        shortlist, candidates, observer = self.shortlist, self.candidates, self.observer
        if shortlist is None:
            return 0
        raw = candidates.raw(logits_address)
        followed = observer.followed() if observer is not None else np.empty(0, dtype=np.int64)
        ids = shortlist.select(raw, followed)
        if ids is None:
            return 0
        candidates.fill_some(logits_address, ids)
        if observer is not None:
            observer.start(candidates)
        cut = shortlist.cut_at
        for index, name in enumerate(self.stage_names[:cut]):
            if name == "top_n_sigma":
                if not self._sigma_cut():
                    return 0
                if observer is not None:
                    observer.after(name, candidates)
            else:
                self._run(index, index + 1)
        before_cut = candidates.view()["logit"].copy()
        self._run(cut, cut + 1)
        return cut + 1 if shortlist.clear_cut(before_cut) else 0

    def _sigma_cut(self) -> bool:
        """Top-n-sigma on the short array, with its threshold from the whole vocabulary as
        the samplers before it left it: the short array's tokens as they stand, every other
        one raw or biased. False where a logit sits on the threshold, or one is not finite."""
        shortlist, candidates = self.shortlist, self.candidates
        assert shortlist is not None
        view = candidates.view()
        biased = "logit_bias" in self.stage_names[: self.stage_names.index("top_n_sigma")]
        bounds = shortlist.sigma_bounds(candidates.logits, view, biased)
        if bounds is None:
            return False
        low, high = bounds
        logits = view["logit"]
        if np.any((logits >= low) & (logits <= high)):
            return False
        logits[logits < low] = -np.inf
        candidates.struct.sorted = False
        return True

    def close(self) -> None:
        if self._chain is not None:
            self._lib.llama_sampler_free(self._chain)
            self._chain = None


class LastLogits:
    """The address of the last position's logits (valid until the next decode), read with
    one foreign call: the binding llama-cpp-python declares returns a pointer object that
    then needs a cast, and between decodes every Python step shows in tokens per second."""

    def __init__(self, ctx: Any):
        self._ctx = ctx
        self._get = native.own_binding("llama_get_logits_ith", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32)

    def __call__(self) -> int:
        address = self._get(self._ctx, -1)
        if not address:
            raise GenerationError("llama.cpp returned no logits for the last position")
        return address
