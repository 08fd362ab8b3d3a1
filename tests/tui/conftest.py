"""The TUI tests. Model fixtures (random_model, byte_loop_model, sentence_model,
lora_adapter, ...) and the isolated SCRIPTORIUM_HOME come from tests/conftest.py;
shared helpers are in tui_helpers.py next to this file."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
