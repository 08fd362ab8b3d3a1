"""The TUI tests. Model fixtures (random_model, byte_loop_model, sentence_model,
lora_adapter, ...) and the isolated SCRIPTORIUM_HOME come from tests/conftest.py;
shared helpers are in tui_helpers.py next to this file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from gguf_models import italian_vocab, write_llama_model

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture(scope="session")
def comma_stop_model(gguf_dir: Path) -> Path:
    """After a line break writes " La" then ",." and stops: what is left once the word " La"
    is kept is as long as a note's paragraph break ("\\n\\n")."""
    vocab = italian_vocab()
    chain = {vocab.id_of(a): vocab.id_of(b) for a, b in (("\n", "▁La"), ("▁La", ","), (",", "."))}
    return write_llama_model(gguf_dir / "comma-stop.gguf", kind="markov", transitions=chain)


@pytest.fixture
def fixed_key_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app's clock for 'TTFT from key' (key_timing) steps a quarter of a second at each
    reading, so a screenshot's Speed panel reads 250.0 ms on any machine, as the engine's
    own times are fixed (FixedClockEngine): the key is read once, the first token once."""
    from itertools import count

    from scriptorium.app.tui import key_timing

    readings = count()
    monkeypatch.setattr(key_timing, "now", lambda: 1000.0 + 0.25 * next(readings))
