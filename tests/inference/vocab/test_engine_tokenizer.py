"""The engine's tokenizer: SentencePiece's ids when the .model is named and matches, and
no native abort on text a vocabulary without byte tokens cannot encode."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import pytest

import spm_models
from scriptorium.inference.local.engine import Engine, LoadOptions
from scriptorium.inference.core.events import GenerationDone, ScoreDone, TokenEvent, TokenScore
from scriptorium.inference.core.settings import LogitBias, preset
from scriptorium.inference.vocab.spm_model import load_spm
from scriptorium.inference.vocab.tokenizer import UnencodableTextError

GREEDY = preset("greedy").with_changes(max_tokens=4)
HOSTILE = "Perché così? Città, caffè ☕ 🍰 東京 \x07 \U0001f600 va bene"


def load(model: Path, **options: object) -> Engine:
    return Engine.load(LoadOptions(model_path=model, n_ctx=512, n_threads=1, **options))


def run_all(events) -> list:
    with closing(events) as stream:
        return list(stream)


def test_the_guard_refuses_unencodable_text_naming_the_character_and_its_place(no_bytes_gguf: Path) -> None:
    engine = load(no_bytes_gguf)
    try:
        assert engine.tokenizer.guard is not None
        with pytest.raises(UnencodableTextError) as refused:
            engine.tokenize(HOSTILE)
        message = str(refused.value)
        assert "'☕' (U+2615 HOT BEVERAGE) at character 27 (line 1, column 27)" in message
        assert "5 other characters too" in message  # 🍰 東 京 \x07 😀
        with pytest.raises(UnencodableTextError, match="'\\\\n' \\(U\\+000A\\) at character 5 \\(line 1"):
            engine.tokenize("casa\nnotte")
        # Generation, chat and scoring all tokenize through the engine: the same refusal.
        with pytest.raises(UnencodableTextError):
            run_all(engine.generate(HOSTILE, GREEDY, LogitBias()))
        with pytest.raises(UnencodableTextError):
            run_all(
                engine.generate(
                    engine.chat_prompt([{"role": "user", "content": "東京?"}]), GREEDY, LogitBias(), special=True
                )
            )
        with pytest.raises(UnencodableTextError):
            run_all(engine.score(HOSTILE))
        # Every line of the training text is encodable, and the engine still works after a refusal.
        for line in spm_models.italian_lines():
            assert engine.tokenize(line)
        done = run_all(engine.generate("La casa sul fiume", GREEDY, LogitBias()))[-1]
        assert isinstance(done, GenerationDone) and done.completion_tokens >= 1
    finally:
        engine.close()


def test_a_vocabulary_with_byte_tokens_has_no_guard(unigram_gguf: Path) -> None:
    engine = load(unigram_gguf)
    try:
        assert engine.tokenizer.guard is None and engine.tokenizer.name == "llama.cpp"
        assert engine.tokenize(HOSTILE)  # llama.cpp falls back to <0xNN> tokens
    finally:
        engine.close()


def test_with_the_model_named_llama_cpp_is_fed_sentencepiece_ids_on_every_line(
    unigram_spm: Path, unigram_gguf: Path
) -> None:
    spm = load_spm(unigram_spm)
    engine = load(unigram_gguf, spm_path=unigram_spm)
    try:
        assert engine.tokenizer.name == f"SentencePiece ({unigram_spm.name})" and engine.tokenizer_note == ""
        lines = spm_models.italian_lines()
        for line in lines:
            assert engine.tokenize(line) == [engine.bos_id] + spm.encode(line), line
        # What llama.cpp evaluates is what is in its KV cache afterwards: SentencePiece's ids.
        unhealed = GREEDY.with_changes(heal=False)  # healing would back the prompt up over its cut last token
        for line in lines[:3] + [lines[2] + " " + lines[3]]:  # the last re-uses the third's prefix
            events = run_all(engine.generate(line, unhealed, LogitBias()))
            done = events[-1]
            expected = [engine.bos_id] + spm.encode(line)
            assert isinstance(done, GenerationDone) and done.prompt_tokens == len(expected)
            assert list(engine.cached_tokens[: len(expected)]) == expected
            generated = [e.id for e in events if isinstance(e, TokenEvent)]
            assert generated and all(0 <= i < engine.n_vocab for i in generated)
        assert done.reused_tokens > 0  # the fourth prompt starts with the third
        scored = run_all(engine.score(lines[5]))
        assert [e.id for e in scored if isinstance(e, TokenScore)] == spm.encode(lines[5])
        assert isinstance(scored[-1], ScoreDone)
    finally:
        engine.close()


def test_a_model_that_does_not_match_is_not_used_and_says_why(bpe_spm: Path, unigram_gguf: Path) -> None:
    engine = load(unigram_gguf, spm_path=bpe_spm)
    try:
        assert engine.tokenizer.name == "llama.cpp"
        assert engine.tokenizer_note.startswith(f"{bpe_spm.name} does not match the model's vocabulary")
    finally:
        engine.close()


def test_a_missing_model_file_fails_the_load(unigram_gguf: Path, tmp_path: Path) -> None:
    with pytest.raises(Exception, match="SentencePiece model not found"):
        load(unigram_gguf, spm_path=tmp_path / "nowhere.model")
