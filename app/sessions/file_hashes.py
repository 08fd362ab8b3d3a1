"""The SHA-256 of the model and adapter files generations ran on, as they arrive (computed
in a worker: app/model_hash.py), and the generation records still waiting for theirs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scriptorium.app.sessions.records import LoraRef, ModelRef

if TYPE_CHECKING:
    from scriptorium.inference.core.backend import Backend


class FileHashes:
    def __init__(self) -> None:
        self._known: dict[str, str] = {}
        self._awaiting: dict[str, list[ModelRef | LoraRef]] = {}
        """The models and adapters generations recorded before the file's hash arrived, per file."""

    def of(self, path: object) -> str | None:
        return self._known.get(str(path))

    def loaded(self, engine: "Backend") -> None:
        """`engine` was loaded: the hashes known of its model's (and adapter's) files may be of
        the files they replaced (a GGUF re-converted in place), so they wait for the new ones."""
        for path in (str(f.path) for f in (engine.facts, engine.adapter) if f is not None):
            self._known.pop(path, None)
            self._awaiting.pop(path, None)  # ran on the file as it was before: its hash is unknown

    def arrived(self, path: str, sha256: str) -> None:
        """A model or adapter file's hash arrived: fill it in where missing."""
        self._known[path] = sha256
        for ref in self._awaiting.pop(path, ()):
            ref.sha256 = sha256

    def wait_for(self, *refs: ModelRef | LoraRef | None) -> None:
        """These records' files have no hash yet: they get it when it arrives."""
        for ref in refs:
            if ref is not None and ref.sha256 is None:
                self._awaiting.setdefault(ref.path, []).append(ref)
