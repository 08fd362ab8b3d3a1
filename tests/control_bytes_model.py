"""The "control bytes" test model: after "▁casa" it writes the byte tokens <0x1F> <0x0E>
<0x16> <0x17>, then "▁casa" again, over and over, each by a wide margin (a markov model,
gguf_models.py). With the byte ban lifted, control characters are what it writes."""

from __future__ import annotations

from pathlib import Path

import gguf_models
from italian_vocab import byte_id, italian_vocab

CONTROLS = (0x1F, 0x0E, 0x16, 0x17)
PICTURES = "␟␎␖␗"
"""How the text shows them (inference/core/text.py, visible_controls)."""


def write_control_bytes_model(path: Path) -> Path:
    casa = italian_vocab().id_of("▁casa")
    chain = [casa, *map(byte_id, CONTROLS), casa]
    return gguf_models.write_llama_model(path, kind="markov", transitions=dict(zip(chain, chain[1:])))
