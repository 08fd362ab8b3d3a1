"""A generation on llama-server: the request built from the sampler settings, and the
stream of `POST /completion` chunks turned into the same events the local engine yields.

The prompt is tokenized by the server (`/tokenize`, control-token text parsed only when
asked, as locally) and sent as ids. Each chunk's `completion_probabilities` (asked with
`n_probs`) carries the chosen token and the top N with their ids, bytes and log
probabilities: llama-server's defaults are a softmax of the raw logits, before bias and
samplers, the meaning of the local panel (`post_sampling_probs` is never asked for).
Token bytes are reassembled into text by the local decoder (text.py), so a character
split over byte tokens reads the same as in-process. `timings_per_token` puts the
server's own timings on every chunk: prefill time and speed, reused prompt tokens
(`cache_n`), decode speed, and while it speculates its draft totals, which tell the tokens it
accepted from its draft (server_draft.py). The tokens of its verifying passes come with no
probabilities at all: their events carry NO_PROBABILITY, never a number made up for them.
"""

from __future__ import annotations

import math
import time
from contextlib import closing
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Protocol

from ..core.events import (
    Candidate,
    Event,
    GenerationDone,
    NO_PROBABILITY,
    KVCacheUsage,
    PrefillDone,
    PrefillProgress,
    TokenEvent,
)
from ..core.settings import BAN, LogitBias, SamplerSettings, SettingsError
from ..core.text import CompletionText, piece_text
from .remote_http import ServerClient, ServerError
from .remote_tokens import server_tokens
from .server_draft import AcceptedGuesses, server_speculation


class ServedModel(Protocol):
    """What a generation needs of the remote backend (remote.py's RemoteBackend)."""

    client: ServerClient
    n_ctx: int
    n_vocab: int
    byte_token_ids: tuple[int, ...]
    server_fields: frozenset[str]
    build: str
    kv_tokens: int | None
    bos_text: str

    def lora_request(self) -> list[dict[str, Any]]: ...

    def check_unchanged(self) -> None: ...

    def kv_usage(self) -> KVCacheUsage: ...


# SamplerSettings field -> llama-server's request field; each is checked against the
# fields the server's build lists in /props, so a setting it lacks is refused, not ignored.
# `logit_bias` is not in that list (/props leaves it out) but belongs to /completion in
# every build.
SERVER_FIELDS = {
    "temperature": "temperature",
    "top_k": "top_k",
    "top_p": "top_p",
    "min_p": "min_p",
    "repeat_penalty": "repeat_penalty",
    "repeat_window": "repeat_last_n",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
    "seed": "seed",
    "max_tokens": "n_predict",
    "samplers": "samplers",
}
# The samplers added after those: their fields have the same names in llama-server, save
# typical-p. A build without one of them is only refused while it acts (its value not the
# default, which is off): an older server leaves out what it does not know, which then
# changes nothing.
LATER_SERVER_FIELDS = {
    "dry_multiplier": "dry_multiplier",
    "dry_base": "dry_base",
    "dry_allowed_length": "dry_allowed_length",
    "dry_penalty_last_n": "dry_penalty_last_n",
    "xtc_probability": "xtc_probability",
    "xtc_threshold": "xtc_threshold",
    "typical_p": "typical_p",
    "top_n_sigma": "top_n_sigma",
    "dynatemp_range": "dynatemp_range",
    "dynatemp_exponent": "dynatemp_exponent",
    "mirostat": "mirostat",
    "mirostat_tau": "mirostat_tau",
    "mirostat_eta": "mirostat_eta",
}
STOP_REASONS = {"eos": "eos", "limit": "length"}
_DEFAULTS = SamplerSettings()


def sampler_fields(settings: SamplerSettings) -> dict[str, Any]:
    """The sampler settings as llama-server's request fields, the chain's order included."""
    values = {
        field: getattr(settings, name)
        for name, field in {**SERVER_FIELDS, **LATER_SERVER_FIELDS}.items()
        if name not in ("seed", "max_tokens")
    }
    values["samplers"] = list(settings.samplers)
    # Not in the fields /props lists (as `logit_bias`), but read by /completion in every build with DRY.
    values["dry_sequence_breakers"] = list(settings.dry_sequence_breakers)
    if not settings.dry_sequence_breakers:
        # llama-server refuses an empty list; without DRY acting none is needed.
        if "dry" in settings.acting_samplers():
            raise SettingsError("llama-server needs at least one DRY sequence breaker")
        del values["dry_sequence_breakers"]
    return values


def missing_fields(settings: SamplerSettings, known: frozenset[str]) -> list[str]:
    """The settings this server's build has no field for: each of the first samplers', and
    each later one that acts."""
    missing = [name for name, field in SERVER_FIELDS.items() if field not in known]
    missing += [
        name
        for name, field in LATER_SERVER_FIELDS.items()
        if field not in known and getattr(settings, name) != getattr(_DEFAULTS, name)
    ]
    return missing


def request_body(
    backend: ServedModel, tokens: list[int], settings: SamplerSettings, bias: LogitBias, top_n: int, seed: int
) -> dict[str, Any]:
    missing = missing_fields(settings, backend.server_fields)
    if missing and backend.server_fields:
        raise SettingsError(f"llama-server {backend.build} has no {', '.join(missing)}: not available remotely")
    if settings.length != "tokens":  # writer_stop.py runs in the local generation loop only, for now
        raise SettingsError(f"length {settings.length!r} is not available with a llama-server: use length 'tokens'")
    bias_map = bias.resolve(backend.byte_token_ids)
    outside = [token for token in bias_map if not 0 <= token < backend.n_vocab]
    if outside:  # the server would drop them without a word
        raise SettingsError(f"logit bias names token {outside[0]}, outside the server's {backend.n_vocab} tokens")
    return {
        "prompt": tokens,
        "stream": True,
        "n_predict": settings.max_tokens,
        "n_probs": max(top_n, 1),  # the chosen token's bytes come with its probabilities
        **sampler_fields(settings),
        "seed": seed,
        # No "stop": stop strings are matched here, on the text as the author sees it
        # (CompletionText), and the stream is dropped at one. The server would match them on
        # the raw text, where "\n\n" never meets a model's "\r\n\r\n", and it withholds the
        # bytes of every token that might begin one ("\r\n" ends in "\n"), so they never came.
        "logit_bias": [[token, value] for token, value in sorted(bias_map.items())],
        "lora": backend.lora_request(),
        "cache_prompt": True,
        "timings_per_token": True,
        "return_progress": True,  # prefill progress chunks: a long prompt shows it, and can be cancelled
    }


def _tokenize(backend: ServedModel, prompt: str, special: bool) -> list[int]:
    tokens = server_tokens(backend.client, prompt, special)
    if special and len(tokens) > 1 and tokens[0] == tokens[1]:
        tokens = tokens[1:]  # the chat template wrote its own BOS
    return tokens


def run_remote_generation(
    backend: ServedModel,
    prompt: str,
    settings: SamplerSettings,
    bias: LogitBias,
    *,
    top_n: int,
    should_stop: Callable[[], bool] | None,
    special: bool,
) -> Iterator[Event]:
    """How llama-server streams shapes this loop (tools/server/server-context.cpp, process_token):

    - a token that leaves a UTF-8 character unfinished is sent with no chunk at all; the
      token that completes it carries the whole character's bytes (and only its own
      probabilities), so the text is whole but those steps have no event of their own;
    - stop strings are not sent (request_body): the local filter ends the stream at one;
    - a token of a verifying pass (a server started with a guesser) comes with no probabilities
      (streamed_tokens); the totals on its chunk tell whether it was a guess the server accepted;
    - the end-of-generation token is sent as an empty chunk before the final one says
      `stop_type: eos`; the local engine emits no event for it, so an empty chunk waits
      until the next one shows it was not the last."""
    stop_requested = should_stop or (lambda: False)
    started = time.perf_counter()
    backend.check_unchanged()  # a server restarted with another model or adapters is not sent the old ones' bias or scale
    tokens = _tokenize(backend, prompt, special)
    if not tokens:  # an empty prompt to a model that adds no BOS: start from its BOS, as locally
        tokens = _tokenize(backend, backend.bos_text, True)[:1] if backend.bos_text else []
    seed = settings.resolved_seed()
    body = request_body(backend, tokens, settings, bias, top_n, seed)
    bias_map = bias.resolve(backend.byte_token_ids)
    byte_ids = frozenset(backend.byte_token_ids)
    completion = CompletionText(settings.stop)
    pieces: list[str] = []
    timings: dict[str, Any] = {}
    final: dict[str, Any] | None = None
    prefill_done = False
    empty: list[TokenEvent] = []  # empty chunks not yet known not to be the end-of-generation token
    emitted = 0
    guesses = AcceptedGuesses()

    def usage(held: int) -> KVCacheUsage:
        backend.kv_tokens = held
        return backend.kv_usage()

    def event(token: StreamedToken, index: int, chunk_timings: dict[str, Any]) -> TokenEvent:
        text = completion.feed(token.piece)
        pieces.append(text)
        scored = token.scored
        return TokenEvent(
            index=index,
            id=token.id,
            text=text,
            p=_probability(scored.get("logprob")) if scored is not None else NO_PROBABILITY,
            top=_candidates(scored.get("top_logprobs") or (), top_n, bias_map, byte_ids) if scored is not None else (),
            elapsed_ms=(time.perf_counter() - started) * 1000.0,
            kv_tokens=len(tokens) + index,
            piece=token.piece,
            drafted=guesses.accepted(index + 1, chunk_timings),
        )

    with closing(backend.client.stream("/completion", body, stop_requested)) as chunks:
        for chunk in chunks:
            timings = chunk.get("timings") or timings
            progress = chunk.get("prompt_progress")
            if isinstance(progress, dict) and not prefill_done:
                yield PrefillProgress(done=int(progress.get("processed", 0)), total=int(progress.get("total", 0)))
            streamed = streamed_tokens(chunk)
            if not prefill_done and (streamed or chunk.get("stop")):
                prefill_done = True
                reused = int(timings.get("cache_n", 0))
                yield PrefillDone(
                    prompt_tokens=len(tokens),
                    reused_tokens=reused,
                    prefill_tokens=int(timings.get("prompt_n", len(tokens) - reused)),
                    prefill_ms=float(timings.get("prompt_ms", 0.0)),
                    kv_cache=usage(len(tokens)),
                )
            for streamed_token in streamed:
                index = int(chunk.get("tokens_predicted") or emitted + 1) - 1
                token = event(streamed_token, index, timings)
                if not streamed_token.piece:
                    empty.append(token)
                    continue
                yield from empty
                emitted += len(empty) + 1
                empty.clear()
                usage(len(tokens) + index)
                yield token
            if completion.stopped or chunk.get("stop"):
                final = chunk
                break

    # The stream itself ends at a stop (ServerClient.stream), dropping the connection.
    cancelled = final is None and not completion.stopped and stop_requested()
    if final is None and not completion.stopped and not cancelled:
        raise ServerError(
            f"llama-server at {backend.client.url} ended the stream before the generation finished; "
            "the text so far is kept"
        )
    reason = "cancelled"
    if completion.stopped:
        reason = "stop"
    elif final is not None:
        reason = STOP_REASONS.get(str(final.get("stop_type")), "length")
    # Every token the server sampled, the end-of-generation token included.
    sampled = int((final or {}).get("tokens_predicted") or (emitted + len(empty)))
    if reason == "eos" and empty:
        empty.pop()  # the end-of-generation token: no event, as locally
    yield from empty
    produced = sampled - (reason == "eos")
    # The last token sampled is never decoded into the cache (the generation ends on it),
    # so the slot holds one token fewer than prompt + sampled, as the local cache does.
    # A cancelled stream is counted as locally (its last token decoded): the server's
    # slot, stopped when it sees the connection gone, is not asked.
    held = len(tokens) + (produced if reason == "cancelled" else max(sampled - 1, 0))
    # The server says "limit" for both; as locally, the length asked for is reached first.
    if reason == "length" and produced < settings.max_tokens and len(tokens) + produced >= backend.n_ctx:
        reason = "context"
    tail = completion.finish()
    pieces.append(tail)
    prompt_ms = float(timings.get("prompt_ms", 0.0))
    yield GenerationDone(
        stop_reason=reason,
        prompt_tokens=len(tokens),
        completion_tokens=produced,
        reused_tokens=int(timings.get("cache_n", 0)),
        prefill_ms=prompt_ms,
        # As the server measured it: prefill to the first token's logits (the network adds its round trip).
        ttft_ms=prompt_ms if prefill_done else 0.0,
        decode_ms=float(timings.get("predicted_ms", 0.0)),
        decode_tokens_per_s=float(timings.get("predicted_per_second", 0.0)) if produced > 1 else 0.0,
        prefill_tokens_per_s=float(timings.get("prompt_per_second", 0.0)) if prompt_ms > 0 else 0.0,
        kv_cache=usage(held),
        text="".join(pieces),
        tail_text=tail,
        seed=seed if settings.temperature > 0 else None,
        speculation=server_speculation(timings),
    )


@dataclass(frozen=True)
class StreamedToken:
    """One token as a chunk streams it."""

    id: int
    piece: bytes
    """The bytes sent with it: the whole character's, on the token that completes one."""
    scored: dict[str, Any] | None
    """Its `completion_probabilities` entry (its log-probability and top candidates); None
    where the server sent none: a token of a verifying pass (server_draft.py)."""


def streamed_tokens(chunk: dict[str, Any]) -> list[StreamedToken]:
    """The tokens a chunk carries: each of its `completion_probabilities` entries (asked with
    `n_probs`, so a plainly decoded token always has one), or else, for a token of a verifying
    pass, its id (`tokens`) and text (`content`), which the server sends only as whole UTF-8,
    holding an unfinished character back for the next token, as it does the entry's bytes.
    Prefill progress and the final chunk carry none."""
    entries = chunk.get("completion_probabilities")
    if entries:
        return [StreamedToken(int(e["id"]), bytes(e.get("bytes") or ()), e) for e in entries]
    ids = chunk.get("tokens") or ()
    if not ids or chunk.get("stop") or "prompt_progress" in chunk:
        return []
    return [StreamedToken(int(ids[-1]), str(chunk.get("content") or "").encode("utf-8"), None)]


def _probability(logprob: Any) -> float:
    # The server writes the lowest float for log(0), since JSON has no -inf.
    return math.exp(float(logprob)) if logprob is not None else 0.0


def _candidates(
    entries: Any, top_n: int, bias_map: dict[int, float], byte_ids: frozenset[int]
) -> tuple[Candidate, ...]:
    return tuple(
        Candidate(
            int(e["id"]),
            _label(int(e["id"]), bytes(e.get("bytes") or ()), byte_ids),
            _probability(e.get("logprob")),
            bias_map.get(int(e["id"]), 0.0) <= BAN,
        )
        for e in list(entries)[:top_n]
    )


def _label(token_id: int, piece: bytes, byte_ids: frozenset[int]) -> str:
    """As the local candidate list writes it (Vocabulary.token_text): byte tokens as <0xFF>."""
    if token_id in byte_ids and len(piece) == 1:
        return f"<0x{piece[0]:02X}>"
    return piece_text(piece)
