"""The model's lifecycle in the app: which backend is loaded, which load is current, and
what the author is told about it. A plain object, no Textual: the app runs the workers and
hands their messages here, so one place decides what a load, a switch or a failure means.

A newer load makes an older one's messages moot (the author picked another model while
the first was still reading), so every load has an id and stale news is dropped.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from scriptorium.inference.core.backend import Backend
from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.inference.core.settings import SettingsError

from scriptorium.app.config.run_settings import SERVER_ADAPTER, RunSettings
from scriptorium.app.i18n.language import ENGLISH, Language
from scriptorium.app.models.hashing import cached_sha256
from scriptorium.app.models.replaced import REPLACED_TITLE, ReplacedModelFiles, file_stamp
from scriptorium.app.models.session_model import session_model
from scriptorium.app.models.status import ModelStatus
from scriptorium.app.sessions.records import Generation, ModelRef
from scriptorium.app.units import format_bytes

if TYPE_CHECKING:
    from scriptorium.inference.core.events import ThreadsChosen
    from scriptorium.app.models.startup import ModelSource


RELOADS_IN_A_ROW = 2
"""Engine deaths reloaded automatically with no generation finished between them; at the
next the model is left for the author to load: an engine that dies on what the app asks
by itself as a model is ready (the window marker's count) would die at every reload."""


class ModelLifecycle:
    """Owns the loaded backend, the current load, and the ModelStatus the panels draw."""

    def __init__(
        self,
        run_config: RunSettings | None,
        generation_threads: int | None,
        on_change: Callable[[], None] = lambda: None,
        key_display: Callable[[str], str] = str,
        language: Language = ENGLISH,
    ) -> None:
        """`on_change` is called after every change of the backend or the status; `key_display`
        names the key of an action id ("app.models") as the author's keymap has it; `language`
        is the interface's, which what the author is told is written in (no Textual here)."""
        self._key_display = key_display
        self._language = language
        self.backend: Backend | None = None
        """The model ready to generate, or None while loading, after a failure, or before any."""
        self.status = ModelStatus("none")
        self._on_change = on_change
        self._run_config = run_config
        self._generation_threads = generation_threads
        self._load_id = 0
        self._failed_options: LoadOptions | None = None
        self._demo = False
        self._first_load = True
        self._crashes_in_a_row = 0
        self._configured_model: Path | None = None
        """The model the command line or config named, which their SentencePiece .model is for."""
        self._reloading: LoadOptions | None = None
        """The options a death is being reloaded with: any other load is the author's, a new count."""
        self._replaced = ReplacedModelFiles(language.gettext)
        self._replaced_notes: list[str] = []
        self._session_note: str | None = None
        self._lost_origin = ""
        """Where the model `crashed` lost ran: a llama-server's origin, or "" (this machine)."""

    # ---- choosing what to load ---------------------------------------------------------
    def options_for(self, model: Path, lora: Path | None, scale: float) -> LoadOptions:
        """Options for `model`: those of the model running now (context, threads...), else the
        command line and config's, else the defaults. SettingsError names a bad value."""
        if self.backend is not None:
            running = self.backend.options
            # A SentencePiece .model belongs to the model it was named for, not to the next one.
            spm = running.spm_path if Path(model) == Path(running.model_path) else None
            return replace(running, model_path=model, lora_path=lora, lora_scale=scale, spm_path=spm).validated()
        if self._run_config is not None:
            options = replace(self._run_config.load_options(model), lora_path=lora, lora_scale=scale)
            if self._configured_model is None or Path(model) != self._configured_model:
                options = replace(options, spm_path=None)  # the .model is the named model's (above)
        else:
            options = LoadOptions(model_path=model, lora_path=lora, lora_scale=scale)
        if options.n_threads is None and self._generation_threads is not None:
            # The TUI's own setting (TuiSettings.threads) when neither flag nor config sets one.
            options = replace(options, n_threads=self._generation_threads, n_threads_batch=self._generation_threads)
        return options.validated()

    def options_from_config(self, model: Path) -> LoadOptions:
        """Options for a model the command line or the config named (with their LoRA)."""
        run = self._run_config
        self._configured_model = Path(model)
        return self.options_for(model, run.lora_path if run else None, run.lora_scale if run else 1.0)

    def session_options(self, source: "ModelSource | None", last: Generation | None) -> LoadOptions | None:
        """Options for the model the session reopened at start was last written with
        (startup.session_model), the author told when the config names another; None: resolve `source`."""
        if source is None or (kept := session_model(source.named, source.reference, last)) is None:
            return None
        try:
            options = self.options_for(kept.path, kept.lora, kept.lora_scale)
        except SettingsError:  # a session file edited by hand (a scale no load accepts): start as without it
            return None
        self.chose(kept.path)
        notes = []
        if kept.unlike_config:
            notes.append(
                f"Writing with {kept.path.name}, as this session last did; --model on the command line chooses another."
            )
        if kept.lora_gone is not None:
            notes.append(
                f"This session's LoRA adapter {kept.lora_gone} is gone or is another file now: "
                f"writing with {kept.path.name} without it."
            )
        self._session_note = " ".join(notes) or None
        return options

    def dialog_options(self) -> LoadOptions | None:
        """What the load dialog starts from: the options that just failed, else the running ones."""
        return self._failed_options or (self.backend.options if self.backend else None)

    def server_to_connect_again(self, lora_scale: float | None) -> LoadOptions | None:
        """On a llama-server, what the load key connects to again, at once (the adapter at
        `lora_scale`, the one in use): the server's model is the one it was started with,
        so the load dialog's file and adapter fields would mean nothing there. None on
        this machine."""
        options = self.dialog_options() if self.status.origin else None
        return _scaled(options, lora_scale, on_server=True) if options is not None else None

    def chose(self, model: Path) -> None:
        """The author (or the start-up) picked `model`: remember whether it is the demo."""
        # Imported when first used: model choice brings discovery and the GGUF reader (some 10 ms
        # to import), which the first frame does not need (tests/packaging/test_startup_imports.py).
        from scriptorium.app.models import choice as model_choice

        self._demo = model_choice.is_demo_model(model)

    # ---- a load and its news -------------------------------------------------------------
    def asked(self) -> int:
        """A load was asked for: the id its messages will carry (a newer load's makes them
        moot). The model running stays until `begin_load`: the new files may be refused."""
        self._load_id += 1
        return self._load_id

    def is_current(self, load_id: int) -> bool:
        return load_id == self._load_id

    def checks_files_first(self) -> bool:
        """Whether a load's files are checked (loading.check_files) before anything stops: a
        model runs on this machine, which a mistyped path must leave writing. A llama-server
        connected to again has no files here."""
        return self.backend is not None and not self.backend.origin

    def begin_load(self, options: LoadOptions) -> Backend | None:
        """Start loading `options` (the load last `asked`): returns the backend to close first
        (two big models rarely fit in memory together)."""
        old, self.backend = self.backend, None
        if options is not self._reloading:
            self._crashes_in_a_row = 0
        self._reloading = None
        self._show(ModelStatus("loading", path=options.model_path, file_size=_size_or_zero(options.model_path)))
        return old

    def progressed(self, load_id: int, progress: float) -> None:
        if load_id == self._load_id and self.status.state == "loading":
            self._show(replace(self.status, progress=progress))

    def loaded(self, load_id: int, backend: Backend) -> bool:
        """True when `backend` is the one wanted; False when a newer load superseded it (the
        caller closes it)."""
        if load_id != self._load_id:
            return False
        self._failed_options = None
        self._ready(backend)
        if not backend.origin:  # a server's files are on its machine (a restart there is found by the backend)
            said = (self._replaced.loaded(facts) for facts in (backend.facts, backend.adapter) if facts is not None)
            self._replaced_notes = [note for note in said if note]
        return True

    def hashed(self, path: str, sha256: str) -> str | None:
        """A file loaded here was hashed: what to tell the author if it now holds another model
        than at its last load (a GGUF re-converted in place), else None."""
        return self._replaced.hashed(path, sha256)

    def failed(self, load_id: int, options: LoadOptions, error: str, server: bool = False) -> str | None:
        """None when a newer load superseded this one; else what to tell the author (the model
        running is still loaded when the files were refused before `begin_load`). `server`: a
        llama-server could not be used, so the remedy is to connect again (the load key does),
        not another file; the status's origin says so."""
        if load_id != self._load_id:
            return None
        self._failed_options, kept = options, self.backend
        if kept is None:
            self._show(
                ModelStatus("failed", path=options.model_path, error=error, origin="llama-server" if server else "")
            )
        _ = self._language.gettext
        load_key = self._key_display("app.load_model")
        if server:
            remedy = _("press {key} to connect to the llama-server again.").format(key=load_key)
        else:
            remedy = _("press {key} to load another model.").format(key=load_key)
        safe = (
            _("Still writing with {model}").format(model=kept.facts.name)
            if kept is not None
            else _("Your text is safe")
        )
        return f"{error}\n{safe}; {remedy}"

    def _ready(self, backend: Backend) -> None:
        self.backend = backend
        self._show(
            ModelStatus(
                "ready",
                path=backend.options.model_path,
                progress=1.0,
                facts=backend.facts,
                n_ctx=backend.n_ctx,
                adapter=backend.adapter,
                file_size=backend.facts.file_size,
                tokenizer=backend.tokenizer_name,
                tokenizer_warning=backend.tokenizer_warning,
                origin=backend.origin,
                arithmetic=backend.arithmetic,
                file_stamp=None if backend.origin else file_stamp(backend.options.model_path),
            )
        )

    def crashed(self, backend: Backend, lora_scale: float | None) -> LoadOptions | None:
        """`backend`'s engine died: the options to load it again with (its last good
        settings, the adapter at the scale in use), or None when it is no longer the one
        loaded (replaced already, or its crash already reported by another request)."""
        if backend is not self.backend:
            return None
        # Gone, not kept: a reload whose files are refused keeps the model running (check_files),
        # and a dead one kept "ready" is found dead by the next request and reloaded, for ever.
        self.backend, self._lost_origin = None, backend.origin
        return _scaled(
            backend.options, lora_scale if backend.adapter is not None else None, on_server=bool(backend.origin)
        )

    def reload_said(self, options: LoadOptions) -> tuple[str, str]:
        """(title, text) for the author as the model `crashed` lost is loaded again: a
        llama-server's engine is not here to restart; the server restarted (with another
        model or adapters), and the model is now whatever it serves."""
        _ = self._language.gettext
        if self._lost_origin:
            # The request that found the restart was not sent: nothing comes unless asked again.
            return _("llama-server restarted"), _(
                "Connecting again to {server}, with the model it serves "
                "now; what you asked was not sent: ask again once it is connected."
            ).format(server=self._lost_origin)
        return _("Model engine restarting"), _("Reloading {name} with the same settings.").format(
            name=options.model_path.name
        )

    def gives_up(self, options: LoadOptions) -> bool:
        """True, and the model shown failed, when the engine has died once too often in a
        row to be reloaded again (RELOADS_IN_A_ROW); else counts this death."""
        self._crashes_in_a_row += 1
        if self._crashes_in_a_row <= RELOADS_IN_A_ROW:
            self._reloading = options
            return False
        self._failed_options = options
        _ = self._language.gettext
        # A server's: its origin kept, so the load key connects again, not asks for a file on its machine.
        error = (
            _("{server} restarted {times} times in a row, so it was not connected to again.").format(
                server=self._lost_origin, times=RELOADS_IN_A_ROW + 1
            )
            if self._lost_origin
            else _("the model's engine stopped {times} times in a row, so it was not loaded again.").format(
                times=RELOADS_IN_A_ROW + 1
            )
        )
        self._show(ModelStatus("failed", path=options.model_path, error=error, origin=self._lost_origin))
        return True

    def generation_finished(self, threads: "ThreadsChosen | None" = None) -> None:
        """A generation ended well: the engine's deaths so far do not come back every time,
        and a llama-server not answering before does now. `threads`: the thread counts
        the engine measured and chose while it wrote, which the Model panel says with why."""
        self._crashes_in_a_row = 0
        status = self.status
        if status.not_answering:
            status = replace(status, not_answering=False)
        if threads is not None and status.arithmetic is not None and status.arithmetic.threads != threads:
            status = replace(status, arithmetic=status.arithmetic.with_threads(threads))
        if status is not self.status:
            self._show(status)

    def not_answering(self, backend: Backend) -> None:
        """Nothing answered at `backend`'s llama-server: kept (there is nothing to connect to
        until it runs again, and then the next request just works, or finds it restarted with
        another model and connects again), the panels saying what they show is the last known."""
        if backend is self.backend and self.status.state == "ready":
            self._show(replace(self.status, not_answering=True))

    def notes_when_ready(self, last: Generation | None) -> list[tuple[str, str]]:
        """What the author is told, as (title, text), when a model is ready: that it is the
        demo model, which they did not choose; and, at the first load, that the session
        reopened last ran on another model file (the command line named another, or its
        file is gone: startup.session_model)."""
        backend, notes = self.backend, []
        if backend is None:
            return notes
        _ = self._language.gettext
        notes.extend((_(REPLACED_TITLE), note) for note in self._replaced_notes)
        self._replaced_notes = []
        from scriptorium.app.models import choice as model_choice  # as in `chose`
        from scriptorium.inference.gguf.demo_model import DEMO_DISPLAY_NAME

        if self._demo and model_choice.is_demo_model(backend.options.model_path):
            said = _(
                "Writing with {model}: a small demo model, good for trying "
                "scriptorium out. Press {key} to choose your own GGUF model."
            )
            notes.append((_("Demo model"), said.format(model=DEMO_DISPLAY_NAME, key=self._key_display("app.models"))))
        self._demo = False
        if self._first_load and self._session_note:
            notes.append((_("Session"), self._session_note))
        if self._first_load and (other := self.written_with_another(last)):
            notes.append((_("Session"), other))
        self._first_load = False
        return notes

    def session_opened(self, title: str, last: Generation | None) -> str:
        """What the author is told on opening a session in the app (the sessions screen)."""
        opened = self._language.gettext("Opened “{title}”.").format(title=title)
        return f"{opened} {self.written_with_another(last)}".strip()

    def written_with_another(self, last: Generation | None) -> str:
        """What the author is told of a session whose last generation ran on another model
        than the one loaded (a session is opened with the model loaded, not switched); ''."""
        backend, written_with = self.backend, last.model if last else None
        if backend is None or written_with is None or _same_model(written_with, backend):
            return ""
        _ = self._language.gettext
        # A server's model is switched where it runs: the picker lists this machine's files.
        switch = (
            _("Start the llama-server with it to switch.")
            if backend.origin
            else _("Press {key} to switch.").format(key=self._key_display("app.models"))
        )
        said = _("This session was last written with {name} ({path}); {differs}. {switch}")
        return said.format(
            name=written_with.name,
            path=written_with.path,
            differs=_what_differs(written_with, backend, self._language),
            switch=switch,
        )

    def picking_refused(self) -> str | None:
        """Why the model picker is not offered, or None. A llama-server's model is the one it
        was started with: the picker lists this machine's files, and choosing one only
        connected to the same server again, its model unchanged."""
        backend = self.backend
        if backend is None or not backend.origin:
            return None
        return self._language.gettext(
            "The model is the one {server} serves: start the llama-server with another "
            "--model to switch (the model picker lists the models on this machine)."
        ).format(server=backend.origin)

    # ---- before a file is known (start-up resolution, the demo's first assembly) ----------
    def resolving(self, reference: str | None, configured: str | None) -> None:
        self._show(ModelStatus("loading", path=Path(reference or configured or "model")))

    def preparing_demo(self, display_name: str, fraction: float) -> None:
        said = self._language.gettext("{name}, first run: preparing").format(name=display_name)
        self._show(ModelStatus("loading", path=Path(said), progress=fraction))

    def none_found(self) -> None:
        self._show(ModelStatus("none"))

    def not_resolved(self, error: str) -> str:
        """The model named could not be found or assembled: what to tell the author."""
        self._show(ModelStatus("failed", error=error))
        said = self._language.gettext("Your text is safe; press {key} to choose a model.")
        return f"{error}\n" + said.format(key=self._key_display("app.models"))

    def _show(self, status: ModelStatus) -> None:
        self.status = status
        self._on_change()

    def close(self) -> None:
        if self.backend is not None:
            self.backend.close()
            self.backend = None
        # A load still waiting on its engine's child (hung, or a big model) would hold the app's
        # exit, which waits for the load's worker: its child is ended. Never imported, none ran.
        if (isolated := sys.modules.get("scriptorium.inference.process.isolated")) is not None:
            isolated.end_loading("the app closed while the model was loading")


def _size_or_zero(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _what_differs(recorded: ModelRef, backend: Backend, language: Language) -> str:
    """The loaded model beside the one a session recorded. Under the same name (another
    conversion of one model) naming it twice says nothing: say what is not the same."""
    _, number = language.gettext, language.number
    loaded = backend.facts
    if recorded.name != loaded.name:
        return _("the model loaded is {name}").format(name=loaded.name)
    where = (
        _("another file of that name, {path}").format(path=loaded.path)
        if str(recorded.path) != str(loaded.path)
        else _("the file at that path has been written again since")
    )
    size = (
        _("{size}, not {recorded}").format(
            size=format_bytes(loaded.file_size, number), recorded=format_bytes(recorded.size, number)
        )
        if loaded.file_size != recorded.size
        else _("the same size, {size}, other contents").format(size=format_bytes(loaded.file_size, number))
    )
    stamp = None if backend.origin else file_stamp(Path(loaded.path))
    when = f"{datetime.fromtimestamp(stamp[2] / 1e9):%Y-%m-%d %H:%M}" if stamp else ""
    dated = _(", modified {when}").format(when=when) if stamp else ""
    return _("the model loaded is {where} ({size}{dated})").format(where=where, size=size, dated=dated)


def _same_model(recorded: ModelRef, backend: Backend) -> bool:
    # By what the file holds, not where: a copy elsewhere is the same model, and the same path
    # may hold another since (a GGUF converted again in place).
    if (recorded.name, recorded.size) != (backend.facts.name, backend.facts.file_size):
        return False
    known = None if backend.origin else cached_sha256(backend.options.model_path)  # never reads the file
    return recorded.sha256 is None or known is None or recorded.sha256 == known


def _scaled(options: LoadOptions, lora_scale: float | None, *, on_server: bool) -> LoadOptions:
    """`options` with the adapter at `lora_scale` (None: as they are). A llama-server's
    adapter is the one it was started with (SERVER_ADAPTER names it): its options carry no
    path, and connecting again set the server's own scale over the author's."""
    if lora_scale is None:
        return options
    return replace(options, lora_scale=lora_scale, lora_path=SERVER_ADAPTER if on_server else options.lora_path)
