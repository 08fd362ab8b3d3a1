"""The model the token-healing tests write: it learned "molo" as the one token "▁molo".

A markov model over the shared vocabulary (gguf_models.py): after "▁il" comes "▁molo",
after "▁mo" (the token "lungo il mo", cut mid-word, ends in) comes "etto", after anything
else </s>, each by a logit margin of 30. Healed, "lungo il mo" backs up over "▁mo", the
model predicts from "▁il", and "▁molo" writes " mo" again: the suggestion is "lo".
Unhealed, it continues "▁mo" with "etto"."""

from __future__ import annotations

from pathlib import Path

from gguf_models import italian_vocab, write_llama_model


def write_molo_model(path: Path) -> Path:
    vocab = italian_vocab()
    transitions = {vocab.id_of("▁il"): vocab.id_of("▁molo"), vocab.id_of("▁mo"): vocab.id_of("etto")}
    return write_llama_model(path, kind="markov", transitions=transitions, name="scriptorium-test-molo")
