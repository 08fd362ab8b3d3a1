"""Which model a session reopened at start brings back (app/models/session_model.py)."""

from __future__ import annotations

from pathlib import Path

from scriptorium.app.models.session_model import session_model
from scriptorium.app.sessions.records import BiasRecord, Generation, LoraRef, ModelRef


def generation(model: Path, lora: Path | None = None, origin: str = "") -> Generation:
    size = model.stat().st_size if model.exists() else 1
    adapter = LoraRef(path=str(lora), name="a", size=lora.stat().st_size, sha256=None, scale=0.25) if lora else None
    return Generation(
        id="g1",
        kind="continue",
        started_at="2026-12-01T00:00:00",
        origin=origin,
        model=ModelRef(path=str(model), name="m", size=size, sha256=None),
        lora=adapter,
        sampler={},
        bias=BiasRecord(ban_byte_tokens=True),
    )


def test_the_sessions_model_and_adapter_are_brought_back(tmp_path: Path) -> None:
    model, lora = tmp_path / "m.gguf", tmp_path / "a.gguf"
    model.write_bytes(b"x" * 10)
    lora.write_bytes(b"y" * 5)
    kept = session_model(named=False, configured=str(model), last=generation(model, lora))
    assert kept is not None and (kept.path, kept.lora, kept.lora_scale) == (model, lora, 0.25)
    assert not kept.unlike_config
    other = tmp_path / "other.gguf"
    other.write_bytes(b"z")
    assert session_model(named=False, configured=str(other), last=generation(model)).unlike_config


def test_nothing_is_brought_back_when_it_would_not_be_the_same_model(tmp_path: Path) -> None:
    model, lora = tmp_path / "m.gguf", tmp_path / "a.gguf"
    model.write_bytes(b"x" * 10)
    lora.write_bytes(b"y" * 5)
    written = generation(model, lora)
    assert session_model(named=True, configured=None, last=written) is None  # --model on the command line
    assert session_model(named=False, configured=None, last=None) is None  # never generated
    assert session_model(named=False, configured=None, last=generation(model, origin="llama-server at x")) is None
    model.unlink()
    assert session_model(named=False, configured=None, last=generation(model)) is None


def test_a_recorded_scale_no_load_accepts_starts_as_without_a_session(tmp_path: Path) -> None:
    """A session edited by hand (a LoRA scale of 9, past the 4 a load accepts) stopped the
    app at start with a traceback: it now starts as it would with no session to follow."""
    from dataclasses import replace

    from scriptorium.app.models.lifecycle import ModelLifecycle
    from scriptorium.app.models.startup import ModelSource
    from scriptorium.app.config.schema import Config

    model, lora = tmp_path / "m.gguf", tmp_path / "a.gguf"
    model.write_bytes(b"x" * 10)
    lora.write_bytes(b"y" * 5)
    written = generation(model, lora)
    written.lora = replace(written.lora, scale=9.0)
    lifecycle = ModelLifecycle(None, 1)
    assert lifecycle.session_options(ModelSource(None, Config()), written) is None
    written.lora = replace(written.lora, scale=0.5)
    assert lifecycle.session_options(ModelSource(None, Config()), written).lora_scale == 0.5


def test_an_adapter_gone_leaves_the_model_and_says_so(tmp_path: Path) -> None:
    """--resume with the session's LoRA file gone loaded the demo model and never said
    why: the session's model now runs without it, and the author is told."""
    from scriptorium.app.config.schema import Config
    from scriptorium.app.models.lifecycle import ModelLifecycle
    from scriptorium.app.models.startup import ModelSource

    model, lora = tmp_path / "m.gguf", tmp_path / "a.gguf"
    model.write_bytes(b"x" * 10)
    lora.write_bytes(b"y" * 5)
    written = generation(model, lora)
    for change in (lambda: lora.write_bytes(b"y" * 6), lora.unlink):  # another adapter at the path, then none
        change()
        kept = session_model(named=False, configured=str(model), last=written)
        assert kept is not None and (kept.path, kept.lora, kept.lora_gone) == (model, None, lora)
    lifecycle = ModelLifecycle(None, 1)
    options = lifecycle.session_options(ModelSource(str(model), Config()), written)
    assert options is not None and options.model_path == model and options.lora_path is None
    assert lifecycle._session_note == (
        f"This session's LoRA adapter {lora} is gone or is another file now: writing with m.gguf without it."
    )
