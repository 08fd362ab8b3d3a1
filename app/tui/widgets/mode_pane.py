"""What the draft pane and the chat pane share: the state they are given, and the requests
they post up.

Attributes down: the main screen binds the backend, the model's status and the sampler
into each pane (the app's EngineState, tui/engine_state.py), and tells it whether a
generation is running (`generating`) and whether it is this pane's (`streaming`).
Messages up: a pane never calls its screen or the app; it posts what it wants (start,
stop, show a token's numbers, an activity) and the screen or the app, whichever owns
that, handles it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Protocol

from textual.containers import Vertical
from textual.message import Message
from textual.reactive import var
from textual.widget import Widget

from scriptorium import prompts
from scriptorium.app.config import prompt_templates
from scriptorium.inference.core.errors import EngineCrashed
from scriptorium.inference.window.lore import Lorebook
from scriptorium.inference.core.settings import SamplerSettings
from scriptorium.inference.core.text import unknown_warning
from scriptorium.inference.window.window import Fim, Pinned, Window, build_window, prompt_budget

from scriptorium.app import paths
from scriptorium.app.config.tui_settings import TuiSettings
from scriptorium.app.models.replaced import REPLACED_TITLE, changed_under_the_engine
from scriptorium.app.tui.engine_state import EngineState
from scriptorium.app.tui.generation_request import GenerationRequest, Prepared, new_request
from scriptorium.app.tui.keys import KeyDisplay

if TYPE_CHECKING:
    from scriptorium.inference.core.backend import Backend
    from scriptorium.inference.core.events import GenerationDone, KVCacheUsage, TokenEvent

    from scriptorium.app.tui.screens.alternatives_screen import AlternativesScreen
    from scriptorium.app.tui.token_spans import TokenRecord


class StreamSink(Protocol):
    """Where a generation's text goes: the draft's suggestion or a chat reply."""

    async def stream_text(self, text: str) -> None: ...

    async def stream_finished(
        self, done: GenerationDone | None, error: str | None, *, retry_helps: bool = True
    ) -> None:
        """The generation ended: finished (`done`), failed (`error`: asking again may answer
        unless `retry_helps` is False), or stopped before it began."""

    def stream_tokens(self, request: GenerationRequest, events: tuple[TokenEvent, ...]) -> None: ...

    def prompt_prepared(self, request: GenerationRequest, note: str) -> None: ...


class ModePane(Vertical):
    """A mode's pane (draft or chat): given the model and sampler, it asks for generations."""

    engine_state: var[EngineState] = var(EngineState)
    """The model and the sampler the next generation takes (the app's, bound through the screen)."""
    generating: var[bool] = var(False)
    """A generation is running, for this pane or the other (one at a time)."""
    streaming: var[bool] = var(False)
    """A generation is running for this pane."""
    pinned: var[Pinned] = var(Pinned)
    """The session's memory and author's note, pinned into every prompt."""
    lorebook: var[Lorebook] = var(Lorebook)
    """The session's lorebook: entries that enter a draft prompt when its end mentions them."""

    @dataclass
    class GenerationRequested(Message):
        """Start `request`, streaming into `sink`."""

        request: GenerationRequest
        sink: StreamSink

    @dataclass
    class StopRequested(Message):
        """Stop the running generation; `forget` also detaches it at once (its last words
        are not drawn: they were accepted, rejected or are being re-rolled)."""

        forget: bool = False

    @dataclass
    class TokenShown(Message):
        """Show this token's numbers in the probabilities panel."""

        event: TokenEvent
        note: str
        steps: tuple[TokenEvent, ...] = ()
        """A character spelled in several tokens (bytes): each one as llama.cpp computed it."""
        asked: bool = False
        """The author pressed the inspect key for it: told where it shows, or why it cannot."""

    @dataclass
    class ActivityShown(Message):
        """What the pane is doing (scoring...), for the status bar; '' when idle."""

        text: str

    @dataclass
    class CacheShown(Message):
        """The KV cache as the pane's last engine call (scoring) left it, and the window it holds."""

        usage: KVCacheUsage
        window: Window | None = None

    @dataclass
    class SeedChosen(Message):
        """The author took a text made with this seed: 'fix seed' fixes it."""

        seed: int | None

    class Edited(Message):
        """The pane's text changed (the draft typed in, a reply version shown): save soon."""

    @dataclass
    class UnknownCharacters(Message, bubble=False):
        """A prompt holds characters the model reads as <unk> (found in the generation's worker)."""

        characters: str
        tokenizer: str

    def __init__(self, settings: TuiSettings, key_display: KeyDisplay, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.settings = settings
        self.language = settings.language
        """The interface's words and numbers (app/i18n): every notice and label of the pane."""
        self.key_display = key_display
        self._held_blinks: dict[Widget, bool] = {}
        self.unknown_said = ""
        """The characters read as <unk> the author was told of: each is said once per draft."""

    def watch_streaming(self, streaming: bool) -> None:
        # While the model writes, the text cursor stays lit instead of blinking: each blink
        # is a frame drawn, and on a small machine a frame's CPU is taken from llama.cpp's threads.
        if streaming:
            self._held_blinks = {field: field.cursor_blink for field in self.query("TextArea, Input")}
            for field in self._held_blinks:
                field.cursor_blink = False
        else:
            for field, blink in self._held_blinks.items():
                field.cursor_blink = blink
            self._held_blinks = {}

    def ready_backend(self) -> Backend | None:
        """The backend, or None after telling the author why there is none."""
        backend, status = self.engine_state.backend, self.engine_state.model_status
        if backend is not None and status.path is not None:
            changed = changed_under_the_engine(
                status.path, status.file_stamp, self.key_display("app.load_model"), self.language.gettext
            )
            if changed:
                self.notify(changed, title=self.language.gettext(REPLACED_TITLE), severity="warning", timeout=15)
                return None
        if backend is not None:
            return backend
        if status.state == "loading":
            self.notify(
                self.language.gettext("The model is still loading ({percent}); keep writing meanwhile.").format(
                    percent=self.language.number(status.progress, ".0%")
                )
            )
        else:
            # A server that could not be used is connected to again.
            said = (
                "No model is loaded: press {key} to connect to the llama-server again."
                if status.origin
                else "No model is loaded: press {key} to choose one."
            )
            self.notify(self.language.gettext(said).format(key=self.key_display("app.load_model")), severity="warning")
        return None

    def show_record(self, record: "TokenRecord", *, asked: bool = False) -> None:
        """Show a generated or scored token's numbers (a character's, and each of its steps);
        `asked`: by the inspect key, which must visibly do something."""
        self.post_message(self.TokenShown(record.as_event(), record.source.describe(), record.step_events(), asked))

    def alternatives_screen(self, record: "TokenRecord") -> "AlternativesScreen":
        """The dialog to branch at `record`, knowing which of its candidates are not text:
        byte tokens, and tokens the list shows by name (<unk>, </s>)."""
        from scriptorium.app.tui.screens.alternatives_screen import AlternativesScreen

        backend = self.engine_state.backend
        not_text = (*backend.byte_token_ids, *backend.facts.named_token_ids) if backend is not None else ()
        return AlternativesScreen(record, not_text, self.language)

    def prompt_template(self, name: str) -> str | None:
        """The author's prompt template `name` (else the packaged one); None, after a
        notification, when the author's copy cannot be read: nothing on screen changes."""
        try:
            return prompt_templates.load(name, paths.prompts_dir())
        except prompt_templates.PromptError as error:
            self.notify(str(error), title=self.language.gettext("Prompt template"), severity="error", timeout=15)
            return None

    def new_request(
        self,
        kind: str,
        prompt: str | Callable[[], Prepared],
        *,
        special: bool = False,
        extra_stop: tuple[str, ...] = (),
        window: Window | None = None,
        sampler: SamplerSettings | None = None,
    ) -> GenerationRequest:
        """A request with the sampler as it is right now (or `sampler`, its values for this one request)."""
        state = self.engine_state
        return new_request(
            kind,
            prompt,
            sampler or state.sampler,
            state.bias,
            self.settings.top_n,
            state.lora_scale,
            special=special,
            extra_stop=extra_stop,
            window=window,
            speculation=state.speculation,
        )

    def heals(self, backend: Backend) -> bool:
        """Whether the next continuation heals the token the cursor cut (inference/local/healing.py):
        the sampler asks for it and the backend can (a llama-server cannot yet)."""
        return self.engine_state.sampler.heal and backend.heals

    def window_preparer(
        self, backend: Backend, text: str, template: str | None, fim: Fim | None = None
    ) -> Callable[[], Prepared]:
        """What makes the prompt continuing `text` in the generation's worker (GenerationRequest.prepare)."""
        build = self.unknown_checked(backend, self.window_builder(backend, template, fim))

        def prepare() -> Prepared:
            window = build(text)
            return Prepared(window.prompt, window)

        return prepare

    def unknown_checked(self, backend: Backend, build: Callable[[str], Window]) -> Callable[[str], Window]:
        """`build`, also telling the pane (UnknownCharacters) which characters of the prompt
        the model reads as <unk>: memory and note too, as the tokenizer decides (tokenizer.py).
        For the worker that makes a generation's or a scoring's window; never the marker's."""

        def checked(text: str) -> Window:
            window = build(text)
            if unknown := backend.unknown_characters(window.prompt):
                self.post_message(self.UnknownCharacters(unknown, backend.tokenizer_name))
            return window

        return checked

    def on_mode_pane_unknown_characters(self, message: UnknownCharacters) -> None:
        new = "".join(c for c in message.characters if c not in self.unknown_said)
        if new:
            self.unknown_said += new
            self.notify(
                # The warning itself is inference's, one line for the app, `continue` and `vocab`.
                self.language.gettext("{warning}. Said once for this draft.").format(
                    warning=unknown_warning(new, message.tokenizer)
                ),
                title=self.language.gettext("Vocabulary"),
                severity="warning",
                timeout=15,
            )

    def window_builder(self, backend: Backend, template: str | None, fim: Fim | None = None) -> Callable[[str], Window]:
        """build_window with what is pinned and the sampler's length now: a plain function,
        for a worker thread (counting asks the engine's process, or a server, for tokens).
        It raises ScriptoriumError."""
        pinned, lorebook = self.pinned, self.lorebook
        budget = prompt_budget(backend.n_ctx, self.engine_state.sampler.max_tokens)
        heals = self.heals(backend) and fim is None  # a fill-in-the-middle prompt ends in its middle token
        return lambda text: build_window(
            text,
            budget=budget,
            count=backend.count_tokens,
            longest_piece=backend.longest_piece_chars,
            memory=pinned.memory,
            note=pinned.note,
            note_depth=pinned.note_depth,
            lorebook=lorebook,
            wrap=(lambda draft: prompts.render_continue(draft, template)) if template else None,
            heals=heals,
            fim=fim,
        )

    def found_dead(self, backend: Backend, error: EngineCrashed) -> None:
        """The engine was found dead by a request the author did not make (counting the
        window): the app says its last words, once however many requests found it so
        (a generation's own failure may have said them already), and reloads it."""
        from scriptorium.app.models.loading import BackendCrashed  # loaded with the model

        self.post_message(BackendCrashed(backend, str(error), said=False))

    def start(self, request: GenerationRequest) -> None:
        """Ask the screen to run `request` into this pane."""
        self.streaming = self.generating = True
        self.post_message(self.GenerationRequested(request, self))

    def stop(self, *, forget: bool = False) -> None:
        """Ask the screen to stop the running generation (see StopRequested)."""
        if forget:
            self.streaming = self.generating = False
        self.post_message(self.StopRequested(forget))

    def stream_tokens(self, request: GenerationRequest, events: tuple[TokenEvent, ...]) -> None:
        """Each token's numbers, for panes that keep them (inspection, colours)."""

    def prompt_prepared(self, request: GenerationRequest, note: str) -> None:
        """The worker made the prompt; `note` is what the author should know of it."""
        if note:
            self.notify(note, timeout=6)
