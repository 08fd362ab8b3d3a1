"""The same instrument against llama.cpp's own llama-server: a `Backend` over HTTP.

A 7B that outgrows the laptop runs on a bigger machine under `llama-server`; this backend
asks it for what the local engine computes in-process. What it learns at connection:

- `/health` (it is up and has loaded its model) and `/props` (its context `n_ctx`, the
  model file it serves, its build, its sampler fields): a server without them is not a
  llama-server.
- `/v1/models` (vocabulary size, parameters, training context, file size and type).
- `/lora-adapters` (the adapters it was started with and their scales; the scale is then
  sent with every request as `lora: [{id, scale}]`, so changing it reloads nothing).
- the byte tokens, by `POST /detokenize` over candidate runs of ids (see byte_tokens.py).
- `/slots`, where the server allows it and has one slot, for the tokens its cache holds
  now. A server with several slots (`--parallel`) gives a request the slot whose cache
  shares most of its prompt, or the one used least recently: which is this app's is
  unknown until its first generation (another client's figure is not this app's).

What it cannot give: the logits at every prompt position (llama-server returns only the
generated tokens' probabilities), so `score` is refused with that reason; and the KV
cache's bytes (the server reports neither its cache types nor the model's layers and
heads), shown as unknown.

`LoadOptions.model_path` is not used: the server has loaded its model already. The loader
(`remote_loader`) keeps the BackendLoader signature so the app loads either backend alike.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterator

from ..core.backend import BackendLoader
from ..core.errors import ScriptoriumError
from ..core.events import Event, KVCacheUsage
from ..core.load_options import LoadOptions, beyond_training
from ..core.model_facts import AdapterFacts, ModelFacts
from ..core.settings import LogitBias, SamplerSettings, SettingsError, rule_for
from ..core.speculation import OFF, Speculation
from .remote_http import RequestRejected, ServerChanged, ServerClient, ServerError, Timeouts

SCORING_UNAVAILABLE = (
    "scoring the draft is not available with a llama-server: it needs the probabilities at "
    "every position of the text, and llama-server returns them only for the tokens it generates"
)
UNKNOWN = "unknown"
CHATML_START = "<|im_start|>"


class RemoteBackend:
    """A model served by llama-server at `client.url`. Requests take turns, like the local engine's."""

    def __init__(
        self,
        client: ServerClient,
        options: LoadOptions,
        facts: ModelFacts,
        *,
        n_ctx: int,
        n_vocab: int,
        byte_token_ids: tuple[int, ...],
        adapters: list[dict[str, Any]],
        server_fields: frozenset[str],
        build: str,
        kv_tokens: int | None = None,
    ) -> None:
        self.client = client
        self.options = options
        self.facts = facts
        self.n_ctx = n_ctx
        self.n_vocab = n_vocab
        self.byte_token_ids = byte_token_ids
        self.longest_piece_chars: int | None = None
        """Unknown: the server detokenizes ids but lists no pieces, and asking for each of
        n_vocab ids is a request apiece (the window search then assumes a safe length)."""
        self.server_fields = server_fields
        """The sampler fields this server's build knows (from /props), to refuse what it lacks."""
        self.build = build
        self._adapters = adapters
        first = adapters[0] if adapters else None
        self.adapter = _adapter_facts(first, facts) if first else None
        self.lora_scale = float(first.get("scale", 0.0)) if first else 0.0
        self.other_adapters = tuple((_adapter_facts(a, facts), float(a.get("scale", 0.0))) for a in adapters[1:])
        """The adapters after the first (started with several --lora), at the server's own scales,
        which every request sends them with (lora_request): each generation records them."""
        self.origin = f"llama-server {build} at {client.url}"
        self.arithmetic = None  # a server reports neither its attention path nor its KV types
        self.fim_texts: tuple[str, str, str] | None = None  # not asked of the server: inserts stop at the sentence end
        self.heals = False
        """Not yet over HTTP: the prompt ends before the spaces ending the text, the rule
        from before healing (window.prompt_end)."""
        self.tokenizer_name = "llama.cpp (server)"  # short: the side panel cut a longer one
        self.tokenizer_note = (
            f"the server tokenizes with llama.cpp; {options.spm_path.name} is not used"
            if options.spm_path is not None
            else ""
        )
        """Why a SentencePiece model named with --spm (or the config's) is not used."""
        self.tokenizer_warning = self.tokenizer_note
        self.kv_tokens = kv_tokens
        """Tokens this app's slot holds, as of its last request (or /slots at connection, when
        the server has one slot); None while unknown."""
        self.bos_text = ""
        """The BOS token's text (/props), for a chat template rendered here."""
        self.served_model: tuple[object, ...] = ()
        """What /props said of the model at connection beyond its name (_model_identity)."""

    # ---- connecting ------------------------------------------------------------------------
    @classmethod
    def connect(
        cls,
        url: str,
        options: LoadOptions,
        on_progress: Callable[[float], None] | None = None,
        timeouts: Timeouts = Timeouts(),
    ) -> "RemoteBackend":
        """Ask the server at `url` what it serves; ServerError (one line) when it cannot be used."""
        progress = on_progress or (lambda fraction: None)
        client = ServerClient(url, timeouts)
        try:
            health = client.get("/health", allow=(503,))
            if health is None:
                raise ServerError(f"llama-server at {client.url} is still loading its model; try again in a moment")
            progress(0.2)
            props = client.get("/props")
            if isinstance(props, dict) and props.get("role") == "router":
                # Started with --models-dir, it serves several models, each request naming one.
                raise ServerError(
                    f"llama-server at {client.url} is a router of several models (--models-dir): "
                    "scriptorium writes with one model, so start llama-server with --model FILE"
                )
            settings = props.get("default_generation_settings") if isinstance(props, dict) else None
            if not isinstance(settings, dict) or "n_ctx" not in settings:
                raise ServerError(f"{client.url} answers, but not as a llama-server (its /props has no n_ctx)")
            meta = _model_meta(client.get("/v1/models"))
            progress(0.4)
            adapters = client.get("/lora-adapters")
            progress(0.6)
            n_vocab = int(meta.get("n_vocab") or 0)
            from .byte_tokens import find_byte_tokens

            byte_ids = find_byte_tokens(client, n_vocab)
            progress(0.8)
            slots = client.get("/slots", allow=(404, 501)) if props.get("endpoint_slots", True) else None
            if not _one_slot(props, slots):
                slots = None
            facts = _facts(props, meta, byte_ids, _own_chat_template(client, props))
            backend = cls(
                client,
                replace(options, n_ctx=int(settings["n_ctx"]), lora_path=None, model_path=facts.path),
                facts,
                n_ctx=int(settings["n_ctx"]),
                n_vocab=n_vocab,
                byte_token_ids=byte_ids,
                adapters=[a for a in adapters or [] if isinstance(a, dict) and "id" in a],
                server_fields=frozenset(settings.get("params", {})),
                build=str(props.get("build_info") or UNKNOWN),
                kv_tokens=_slot_tokens(slots),
            )
            backend.bos_text = str(props.get("bos_token") or "")
            backend.served_model = _model_identity(props)
        except BaseException:
            client.close()
            raise
        if options.lora_path is not None and backend.adapter is not None:
            backend.set_lora_scale(options.lora_scale)
        progress(1.0)
        return backend

    def check_unchanged(self) -> None:
        """ServerChanged when the server no longer serves the model, context and LoRA adapters
        it did at connection (restarted with others): a request built from the old facts would
        ban the old vocabulary's byte ids, which are ordinary tokens in the new one, and send
        the author's scale to whichever adapter now has the old one's id."""
        props = self.client.get("/props")
        name, n_ctx = _served(props)
        # The file's name, not its folder: replicas behind a load balancer may keep the same
        # model in different places, and each would otherwise read as a restart.
        if (name, n_ctx) != (self.facts.path.name, self.n_ctx):
            raise ServerChanged(
                f"llama-server at {self.client.url} now serves {name} with a context of {n_ctx}, "
                f"not {self.facts.path.name} with {self.n_ctx}: it restarted"
            )
        if self.served_model and _model_identity(props) != self.served_model:
            # Converted again to the same path on the server's machine: its tokens may be others now.
            raise ServerChanged(
                f"llama-server at {self.client.url} now serves another {name} (its file type, "
                "special tokens or chat template differ): it restarted"
            )
        # /props does not list the adapters (--lora): one more small request, never one per token.
        adapters = _adapter_names(self.client.get("/lora-adapters"))
        if adapters != _adapter_names(self._adapters):
            raise ServerChanged(
                f"llama-server at {self.client.url} now applies the LoRA adapters "
                f"{_listed(adapters)}, not {_listed(_adapter_names(self._adapters))}: it restarted"
            )

    # ---- the Backend protocol -----------------------------------------------------------------
    def set_lora_scale(self, scale: float) -> None:
        """The scale sent with every request from now on (the server's own is left alone)."""
        if self.adapter is None:
            raise SettingsError(f"llama-server at {self.client.url} was started without a LoRA adapter (--lora)")
        rule_for(LoadOptions, "lora_scale").check(scale)
        self.lora_scale = scale

    def lora_request(self) -> list[dict[str, Any]]:
        """`lora` for a request: the first adapter at this backend's scale, the others at the
        server's (a request's list replaces the server's scales; unlisted adapters get 0)."""
        return [
            {"id": a["id"], "scale": self.lora_scale if index == 0 else float(a.get("scale", 0.0))}
            for index, a in enumerate(self._adapters)
        ]

    def kv_usage(self) -> KVCacheUsage:
        return KVCacheUsage(
            tokens=self.kv_tokens, n_ctx=self.n_ctx, bytes_allocated=None, bytes_used=None, bytes_per_token=None
        )

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
        """`speculation` is the server's own: it drafts only when started with a draft model
        (`--model-draft`), whatever a request asks; what it reports is shown."""
        from .remote_stream import run_remote_generation

        settings = settings.validated()
        speculation.validated()
        bias = bias.validated(self.n_vocab)
        if top_n < 0:
            raise SettingsError(f"top must be 0 or more, not {top_n}")
        return run_remote_generation(
            self, prompt, settings, bias, top_n=top_n, should_stop=should_stop, special=special
        )

    def score(self, text: str, *, top_n: int = 10, should_stop: Callable[[], bool] | None = None) -> Iterator[Event]:
        raise ScriptoriumError(SCORING_UNAVAILABLE)

    def chat_prompt(self, messages: list[dict[str, str]], fallback_template: str | None = None) -> str:
        """The server renders the chat with the model's own template (/apply-template); a
        model without one talks in the fallback's turns, rendered here as locally."""
        if not self.facts.has_chat_template:
            from ..window.chat import render_chat

            return render_chat(messages, None, fallback_template, self.bos_text)
        answer = self.client.post("/apply-template", {"messages": messages})
        prompt = answer.get("prompt") if isinstance(answer, dict) else None
        if not isinstance(prompt, str):
            raise ServerError(f"llama-server at {self.client.url} did not render the chat (/apply-template)")
        return prompt

    def count_tokens(self, text: str) -> int:
        """How many tokens `text` is as a prompt, as the server tokenizes it (with its BOS)."""
        from .remote_stream import _tokenize

        return len(_tokenize(self, text, False))

    def unknown_characters(self, text: str) -> str:
        """'': the server tokenizes with llama.cpp, which writes no <unk> (tokenizer.py)."""
        return ""

    @property
    def context_warning(self) -> str:
        """The server's context past the model's training context, when /props says both."""
        return beyond_training(self.n_ctx, self.facts.context_length)

    def close(self) -> None:
        self.client.close()


def remote_loader(url: str, timeouts: Timeouts = Timeouts()) -> BackendLoader:
    """A BackendLoader for the llama-server at `url`; the options' model path is not used."""

    def load(options: LoadOptions, on_progress: Callable[[float], None]) -> RemoteBackend:
        return RemoteBackend.connect(url, options, on_progress, timeouts)

    return load


def _model_meta(models: Any) -> dict[str, Any]:
    data = models.get("data") if isinstance(models, dict) else None
    if not data or not isinstance(data[0], dict):
        return {}
    meta = data[0].get("meta")
    return meta if isinstance(meta, dict) else {}


def _model_identity(props: Any) -> tuple[object, ...]:
    """What /props says of the model beyond its file's name, to tell a file converted again from the same."""
    fields = ("model_ftype", "bos_token", "eos_token", "chat_template")
    return tuple(props.get(field) for field in fields) if isinstance(props, dict) else ()


def _served(props: Any) -> tuple[str, int]:
    """The model file's name and the context /props gives, as `connect` reads them."""
    settings = props.get("default_generation_settings") if isinstance(props, dict) else None
    n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
    path = props.get("model_path") if isinstance(props, dict) else None
    return Path(str(path or "model.gguf")).name, int(n_ctx) if isinstance(n_ctx, int) else 0


def _one_slot(props: dict[str, Any], slots: Any) -> bool:
    """Whether the server has one slot: the one every request of this app will use."""
    total = props.get("total_slots")
    return total == 1 if isinstance(total, int) else isinstance(slots, list) and len(slots) == 1


def _slot_tokens(slots: Any) -> int | None:
    """The tokens the server's one slot holds (what the first request may reuse); None when
    unknown (/slots disabled, or several slots: which one is this app's)."""
    if not isinstance(slots, list) or len(slots) != 1 or not isinstance(slots[0], dict):
        return None
    return int(slots[0].get("n_prompt_tokens") or 0)


def _adapter_facts(adapter: dict[str, Any], model: ModelFacts) -> AdapterFacts:
    """An adapter /lora-adapters lists: its path on the server's machine, nothing more known."""
    return AdapterFacts(
        path=Path(str(adapter.get("path", ""))), architecture=model.architecture, alpha=None, file_size=0
    )


def _adapter_names(adapters: Any) -> tuple[tuple[int, str], ...]:
    """Each adapter /lora-adapters lists, as (id, file name): by name, as the model, for replicas."""
    listed = adapters if isinstance(adapters, list) else []
    return tuple((int(a["id"]), Path(str(a.get("path", ""))).name) for a in listed if isinstance(a, dict) and "id" in a)


def _listed(adapters: tuple[tuple[int, str], ...]) -> str:
    return ", ".join(name for _, name in adapters) or "(none)"


def _own_chat_template(client: ServerClient, props: dict[str, Any]) -> bool:
    """Whether the chat template /props shows is the model's own. For a GGUF without one,
    llama-server puts ChatML in its place, whose <|im_start|> is then no token of the
    vocabulary: a model made for ChatML has it as one special token, so that tells them apart."""
    template = props.get("chat_template")
    if not isinstance(template, str) or not template:
        return False
    if CHATML_START not in template:
        return True
    try:
        answer = client.post("/tokenize", {"content": CHATML_START, "add_special": False, "parse_special": True})
    except RequestRejected:
        # A vocabulary with no byte tokens and no piece for a character of it cannot write
        # it at all (HTTP 500 "unordered_map::at"): it is no token of this model's either.
        return False
    return isinstance(answer, dict) and len(answer.get("tokens") or ()) == 1


def _facts(
    props: dict[str, Any], meta: dict[str, Any], byte_ids: tuple[int, ...], own_chat_template: bool
) -> ModelFacts:
    """What the server says about its model. The shape (layers, heads) it does not report:
    zero there means unknown, and the Model panel shows the server instead."""
    path = Path(str(props.get("model_path") or "model.gguf"))
    alias = str(props.get("model_alias") or "")
    if alias == str(path):
        alias = ""  # llama-server's alias without --alias: the path, too long for a name
    return ModelFacts(
        path=path,
        name=alias or path.stem,
        architecture="",  # not reported; empty as in a session's record of a model whose is unknown
        parameters=int(meta.get("n_params") or 0),
        file_type=str(meta.get("ftype") or props.get("model_ftype") or UNKNOWN),
        file_size=int(meta.get("size") or 0),
        vocab_size=int(meta.get("n_vocab") or 0),
        context_length=int(meta.get("n_ctx_train") or 0),
        n_layer=0,
        n_embd=int(meta.get("n_embd") or 0),
        n_head=0,
        n_head_kv=(0,),
        key_length=0,
        value_length=0,
        sliding_window=None,
        swa_layers=(),
        has_chat_template=own_chat_template,
        byte_token_ids=byte_ids,
    )
