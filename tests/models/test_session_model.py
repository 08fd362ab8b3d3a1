"""Which model a session reopened at start brings back (app/models/session_model.py)."""

from __future__ import annotations

from pathlib import Path

from scriptorium.app.models.session_model import session_model
from scriptorium.app.sessions.records import BiasRecord, Generation, LoraRef, ModelRef


def generation(model: Path, lora: Path | None = None, origin: str = "") -> Generation:
    size = model.stat().st_size if model.exists() else 1
    adapter = LoraRef(path=str(lora), name="a", size=lora.stat().st_size, sha256=None, scale=0.25) if lora else None
    return Generation(id="g1", kind="continue", started_at="2026-12-01T00:00:00", origin=origin,
                      model=ModelRef(path=str(model), name="m", size=size, sha256=None), lora=adapter,
                      sampler={}, bias=BiasRecord(ban_byte_tokens=True))


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
    lora.write_bytes(b"y" * 6)  # another adapter written to the path
    assert session_model(named=False, configured=None, last=written) is None
    lora.unlink()
    assert session_model(named=False, configured=None, last=written) is None
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
