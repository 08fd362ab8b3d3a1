"""The generated test models behave as gguf_models documents, checked through
llama-cpp-python directly (the app's own tests rely on these promises)."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import llama_cpp
import numpy as np
import pytest
from llama_cpp import Llama

import gguf_models
from gguf_models import EOS_ID, N_VOCAB, byte_id, italian_vocab

SENTENCE = "La casa era buia, e la notte più lunga."
BYTES = list(range(gguf_models.FIRST_BYTE_ID, N_VOCAB))


@contextlib.contextmanager
def loaded(path: Path, **kwargs):
    llm = Llama(model_path=str(path), n_ctx=256, verbose=False, **kwargs)
    try:
        yield llm
    finally:
        llm.close()


def last_logits(llm: Llama, prompt: str | list[int]) -> np.ndarray:
    tokens = llm.tokenize(prompt.encode()) if isinstance(prompt, str) else prompt
    llm.reset()
    llm.eval(tokens)
    ptr = llama_cpp.llama_get_logits_ith(llm.ctx, -1)
    return np.ctypeslib.as_array(ptr, shape=(N_VOCAB,)).copy()


def greedy(llm: Llama, prompt: str, n: int, ban: list[int] | None = None) -> list[int]:
    logits = last_logits(llm, prompt)
    out: list[int] = []
    for _ in range(n):
        if ban:
            logits[ban] = -np.inf
        token = int(np.argmax(logits))
        out.append(token)
        if token == EOS_ID:
            break
        llm.eval([token])
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1), shape=(N_VOCAB,)).copy()
    return out


def pieces(ids: list[int]) -> list[str]:
    return [italian_vocab().tokens[i] for i in ids]


def test_vocab_layout():
    vocab = italian_vocab()
    assert len(vocab) == N_VOCAB == len(set(vocab.tokens))
    assert vocab.tokens[:3] == ("<unk>", "<s>", "</s>")
    assert vocab.types[:3] == (2, 3, 3)
    assert vocab.tokens[16000] == "<0x00>" and vocab.tokens[16255] == "<0xFF>"
    assert [i for i, t in enumerate(vocab.types) if t == 6] == BYTES
    assert all(t == 1 for t in vocab.types[3:16000])
    for ch in "▁aZ?àèéìòùÀÈÉÌÒÙ’«»":
        assert vocab.types[vocab.id_of(ch)] == 1
    assert vocab.id_of("<0xC3>") == byte_id(0xC3) == 16195
    assert vocab.scores[vocab.id_of("▁casa")] > vocab.scores[vocab.id_of("▁cas")]
    assert len(vocab.word_ids) > 300


@pytest.mark.parametrize("fixture", ["random_model", "byte_loop_model", "utf8_model", "sentence_model"])
def test_models_load_fast_with_the_authors_vocabulary(fixture, request):
    path = request.getfixturevalue(fixture)
    start = time.perf_counter()
    with loaded(path) as llm:
        assert time.perf_counter() - start < 1.0
        vocab = llama_cpp.llama_model_get_vocab(llm.model)
        assert llama_cpp.llama_vocab_n_tokens(vocab) == N_VOCAB
        is_byte = [
            bool(llama_cpp.llama_vocab_get_attr(vocab, i) & llama_cpp.LLAMA_TOKEN_ATTR_BYTE) for i in range(N_VOCAB)
        ]
        assert [i for i, b in enumerate(is_byte) if b] == BYTES
        meta = llm.metadata
        assert meta["general.architecture"] == "llama"
        assert meta["llama.attention.head_count"] == "4"
        assert meta["llama.attention.head_count_kv"] == "2"
        assert meta["general.file_type"] == "0"
        assert meta["general.name"].startswith("scriptorium-test-")
        tokens = llm.tokenize(SENTENCE.encode())
        assert tokens[0] == 1
        assert pieces(tokens[1:]) == [
            "▁La",
            "▁casa",
            "▁era",
            "▁buia",
            ",",
            "▁e",
            "▁la",
            "▁notte",
            "▁più",
            "▁lunga",
            ".",
        ]
        assert llm.detokenize(tokens[1:]).decode() == " " + SENTENCE


def test_italian_text_never_needs_byte_tokens(random_model):
    text = "«Perché?» chiese lei.\nÈ così: l’uomo tornò a casa — dopo la guerra… (3 x 2)"
    with loaded(random_model) as llm:
        ids = llm.tokenize(text.encode())
    assert not set(ids) & set(BYTES)


def test_random_model_has_a_spread_distribution(random_model):
    with loaded(random_model) as llm:
        for prompt in ("La casa era", "C'era una volta", "Il gatto"):
            logits = last_logits(llm, prompt)
            probs = np.exp(logits - logits.max())
            probs /= probs.sum()
            top = np.sort(probs)[::-1][:10]
            assert 0.02 < top[0] < 0.6
            assert top[9] > 0.003
            assert probs[EOS_ID] < 1e-6
            assert probs[BYTES].sum() < 0.05
        # The whole context matters, not only the last token.
        assert not np.allclose(last_logits(llm, "La casa"), last_logits(llm, "Il gatto e la casa"))

        def sample(seed: int) -> str:
            # Prefilled afresh each time: a reused prefix evaluates the last prompt token
            # in another batch shape, and a float32 difference can move a sample across
            # one of the 16k boundaries of this spread distribution.
            llm.reset()
            return llm.create_completion("La casa", max_tokens=12, temperature=1.0, seed=seed)["choices"][0]["text"]

        samples = [sample(seed) for seed in (1, 2, 3)]
        assert len(set(samples)) == 3
        assert sample(1) == samples[0]


def test_byte_loop_model_loops_on_ff_unless_bytes_are_banned(byte_loop_model):
    words = set(italian_vocab().word_ids)
    with loaded(byte_loop_model) as llm:
        for prompt in ("La casa era", "C'era una volta", "x"):
            logits = last_logits(llm, prompt)
            top3 = [int(i) for i in np.argsort(-logits)[:3]]
            assert top3 == [byte_id(0xFF), byte_id(0xFE), byte_id(0xFD)]
            assert logits[BYTES].min() > logits[:16000].max() + 5
            assert greedy(llm, prompt, 6) == [byte_id(0xFF)] * 6
            banned = greedy(llm, prompt, 8, ban=BYTES)
            assert len(banned) == 8 and set(banned) <= words
            text = llm.detokenize(banned).decode("utf-8")
            assert text.startswith(" ") and text.replace(" ", "").isalpha()


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("La notte", ["<0xFF>", "▁casa", "<0xC3>", "<0xA8>", "<0xC3>", "<0xA8>"]),
        ("Lui era", ["<0xE2>", "<0x80>", "<0x99>", "<0xC3>", "<0xA8>", "<0xC3>"]),
        ("Il gatto", ["<0xC3>", "<0xA8>"] * 3),
    ],
)
def test_utf8_model_emits_the_documented_bytes(utf8_model, prompt, expected):
    with loaded(utf8_model) as llm:
        out = greedy(llm, prompt, len(expected))
        assert pieces(out) == expected
        logits = last_logits(llm, prompt)
        top2 = np.sort(logits)[::-1][:2]
        assert top2[0] - top2[1] > 20
        raw = b"".join(llm.detokenize([t]) for t in out)
    assert (
        raw
        == {"La notte": b"\xff casa\xc3\xa8\xc3\xa8", "Lui era": "’è".encode() + b"\xc3", "Il gatto": "èèè".encode()}[
            prompt
        ]
    )


def test_sentence_model_says_its_sentence_and_stops(sentence_model):
    with loaded(sentence_model) as llm:
        out = greedy(llm, "Dimmi qualcosa", 10)
        assert pieces(out) == ["▁La", "▁casa", "▁era", "▁buia", ".", "</s>"]
        assert llm.detokenize(out[:-1]).decode() == " La casa era buia."
        assert pieces(greedy(llm, "Una casa", 10)) == ["▁era", "▁buia", ".", "</s>"]
        assert llm.metadata["tokenizer.chat_template"] == gguf_models.SIMPLE_CHAT_TEMPLATE
        text = llm.create_completion("Dimmi qualcosa", max_tokens=20, temperature=0)["choices"][0]
        assert text["text"] == " La casa era buia." and text["finish_reason"] == "stop"


def test_phrases_model_gives_the_table_s_probabilities(phrases_model):
    vocab = italian_vocab()
    with loaded(phrases_model) as llm:
        assert llm.detokenize(greedy(llm, "C'era una volta una casa sul lago.", 24)).decode() == (
            gguf_models.PHRASES_GREEDY * 2
        )
        for word, choices in {**gguf_models.PHRASES, "Ecco": gguf_models.PHRASES["."]}.items():
            logits = last_logits(llm, "Ecco " + word.lstrip("▁")).astype(np.float64)
            probs = np.exp(logits - logits.max())
            probs /= probs.sum()
            # 1e-4 is far looser than float32 rounding (1e-6) and far tighter than the
            # table's step (0.002).
            assert sum(choices.values()) == pytest.approx(1.0)
            assert all(round(p * 500) % 5 and p * 500 == pytest.approx(round(p * 500)) for p in choices.values())
            for piece, p in choices.items():
                assert probs[vocab.id_of(piece)] == pytest.approx(p, abs=1e-4), (word, piece)
        samples = {
            llm.create_completion("Ecco.", max_tokens=12, temperature=1.0, seed=seed)["choices"][0]["text"]
            for seed in (1, 2, 3)
        }
        assert len(samples) == 3


def test_markov_kind_follows_any_table(tmp_path):
    vocab = italian_vocab()
    a, b, c = (vocab.id_of(p) for p in ("▁il", "▁gatto", "▁nero"))
    path = gguf_models.write_llama_model(
        tmp_path / "m.gguf", kind="markov", transitions={a: b, b: c, c: a}, default_next=a, f16=True
    )
    with loaded(path) as llm:
        assert llm.metadata["general.file_type"] == "1"
        assert greedy(llm, "Ecco", 4) == [a, b, c, a]
    with pytest.raises(ValueError):
        gguf_models.write_llama_model(tmp_path / "x.gguf", kind="markov", transitions={i: 5 for i in range(100, 200)})


def test_lora_changes_greedy_output_and_scale_zero_is_the_base(random_model, lora_adapter):
    push = italian_vocab().id_of(gguf_models.LORA_PUSH_PIECE)
    prompts = ("La casa era", "C'era una volta", "Il gatto", "x")
    with loaded(random_model) as llm:
        base = [last_logits(llm, p) for p in prompts]
    with loaded(random_model, lora_path=str(lora_adapter), lora_scale=1.0) as llm:
        tuned = [last_logits(llm, p) for p in prompts]
    with loaded(random_model, lora_path=str(lora_adapter), lora_scale=0.0) as llm:
        off = [last_logits(llm, p) for p in prompts]
    for b, t, o in zip(base, tuned, off):
        assert int(np.argmax(b)) != push
        assert int(np.argmax(t)) == push
        np.testing.assert_array_equal(o, b)


def test_foreign_lora_is_refused_by_llama_cpp(random_model, lora_adapter, foreign_lora_adapter):
    # Through Llama(lora_path=...) a refused adapter crashes the process on the first
    # decode, so probe llama.cpp's loader directly: NULL means refused.
    with loaded(random_model) as llm:
        good = llama_cpp.llama_adapter_lora_init(llm.model, str(lora_adapter).encode())
        assert good
        llama_cpp.llama_adapter_lora_free(good)
        assert not llama_cpp.llama_adapter_lora_init(llm.model, str(foreign_lora_adapter).encode())


@pytest.mark.parametrize("kind", ["not_gguf", "truncated", "empty"])
def test_bad_files_fail_to_load(bad_gguf_files, kind):
    path = bad_gguf_files[kind]
    assert path.suffix == ".gguf"
    with pytest.raises(ValueError):
        Llama(model_path=str(path), n_ctx=256, verbose=False)


def test_scriptorium_home_is_isolated(scriptorium_home, models_dir, tmp_path):
    assert os.environ["SCRIPTORIUM_HOME"] == str(scriptorium_home)
    assert scriptorium_home.is_relative_to(tmp_path)
    assert models_dir.is_dir() and not any(models_dir.iterdir())
