"""`scriptorium vocab` on real SentencePiece models and their conversions: the contract
holds on faithful ones, and each way of breaking it fails with its own message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import spm_models
from scriptorium.app.cli.main import main
from scriptorium.inference.gguf.gguf_vocab import read_gguf_vocab
from scriptorium.inference.vocab.spm_model import load_spm
from scriptorium.inference.vocab.vocab_contract import check_model_type, piece_text_mismatch


def vocab(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, dict]:
    code = main(["vocab", *map(str, args), "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out) if out else {}


def clause(report: dict, name: str) -> dict:
    return next(c for c in report["clauses"] if c["name"] == name)


@pytest.mark.parametrize("fixture", ["unigram_spm", "unigram_bytes_spm", "bpe_spm", "bpe_bytes_spm"])
def test_the_contract_holds_on_a_faithful_conversion(
    fixture: str, request: pytest.FixtureRequest, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spm = request.getfixturevalue(fixture)
    model = spm_models.convert_to_gguf(spm, tmp_path / "model.gguf")
    code, report = vocab(capsys, "--model", model, "--spm", spm, "--text", spm_models.TEXT)  # what it was trained on
    assert (code, report["failed"]) == (0, [])
    byte_tokens = clause(report, "byte tokens")
    n = load_spm(spm).byte_piece_ids
    if n:  # byte_fallback: the bytes are SentencePiece's own pieces
        assert "inside the SentencePiece vocabulary" in byte_tokens["summary"]
    else:
        assert f"appended after the {len(load_spm(spm)):,} SentencePiece pieces" in byte_tokens["summary"]
    assert "type_mapping" in clause(report, "pieces")["data"]
    # The built-in sample's ☕ and 東京 are no piece of a model trained on Italian alone, and
    # without byte fallback it reads them as <unk>: for that text the contract does not hold.
    code, report = vocab(capsys, "--model", model, "--spm", spm)
    assert report["failed"] == ([] if n else ["unknown characters"])


def test_a_unigram_model_is_cut_differently_by_llama_cpp(
    unigram_spm: Path, unigram_gguf: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With the .model named, the divergence is a warning with its figures; judged for
    llama.cpp's own tokenizer, it breaks the contract."""
    text = spm_models.TEXT
    code, report = vocab(capsys, "--model", unigram_gguf, "--spm", unigram_spm, "--text", text)
    parity = clause(report, "parity")
    assert code == 0 and parity["holds"] and parity["warnings"]
    assert parity["data"]["identical"] < parity["data"]["lines"] / 2
    assert "unigram" in clause(report, "model type")["warnings"][0]
    code, report = vocab(capsys, "--model", unigram_gguf, "--spm", unigram_spm, "--text", text, "--llama-tokenizer")
    assert code == 1 and report["failed"] == ["parity"]


def test_a_bpe_model_is_cut_the_same_by_llama_cpp(
    bpe_spm: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every line of the test text (single spaces, no NFKC-changed characters) agrees."""
    model = spm_models.convert_to_gguf(bpe_spm, tmp_path / "bpe.gguf")
    lines = [line for line in spm_models.italian_lines() if "…" not in line]
    text = tmp_path / "text.txt"
    text.write_text("\n".join(lines), encoding="utf-8")
    code, report = vocab(capsys, "--model", model, "--spm", bpe_spm, "--text", text, "--llama-tokenizer")
    assert code == 0, report["failed"]
    assert clause(report, "parity")["data"]["share"] == 1.0


def _shift_ids(v: spm_models.Converted) -> None:
    v.tokens.insert(10, "▁inserito")
    v.scores.insert(10, 0.0)
    v.types.insert(10, 1)
    del v.tokens[-1], v.scores[-1], v.types[-1]


def _drop_bytes(v: spm_models.Converted) -> None:
    del v.tokens[-256:], v.scores[-256:], v.types[-256:]


def _swap_bytes(v: spm_models.Converted) -> None:
    v.tokens[-256], v.tokens[-255] = v.tokens[-255], v.tokens[-256]


def _flip_prefix(v: spm_models.Converted) -> None:
    v.add_space_prefix = not v.add_space_prefix


def _nfkc_piece(v: spm_models.Converted) -> None:
    v.tokens[v.tokens.index("e")] = "ｅ"  # FULLWIDTH LATIN SMALL LETTER E: NFKC makes it "e"


def _change_piece(v: spm_models.Converted) -> None:
    v.tokens[v.tokens.index("▁casa")] = "▁cosa"


def _short_output(v: spm_models.Converted) -> None:
    v.output_rows = len(v.tokens) - 256


BREAKAGES = {
    "ids shifted": (_shift_ids, "pieces", "shifted by 1 from id 10"),
    "bytes missing": (_drop_bytes, "byte tokens", "no byte tokens"),
    "bytes out of order": (_swap_bytes, "byte tokens", "out of order"),
    "prefix flipped": (
        _flip_prefix,
        "specials and settings",
        "add_space_prefix is false in the GGUF but add_dummy_prefix is true",
    ),
    "NFKC-only difference": (_nfkc_piece, "pieces", "differ only by NFKC normalization"),
    "piece changed": (_change_piece, "pieces", "'▁casa' in the .model, '▁cosa' in the GGUF"),
    "output rows missing": (_short_output, "byte tokens", "output has"),
}


@pytest.mark.parametrize("breakage", list(BREAKAGES))
def test_each_breakage_fails_with_its_own_message(
    breakage: str, unigram_spm: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit, name, message = BREAKAGES[breakage]
    model = spm_models.convert_to_gguf(unigram_spm, tmp_path / "broken.gguf", edit=edit)
    code, report = vocab(capsys, "--model", model, "--spm", unigram_spm)
    assert code == 1
    assert name in report["failed"]
    broken = clause(report, name)
    assert message in broken["summary"] + " ".join(broken["details"]), broken


def test_parity_is_judged_for_llama_cpp_when_the_pieces_do_not_match(
    unigram_spm: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a piece's text changed the engine does not use the .model (it tokenizes with
    llama.cpp and says why), so parity is what llama.cpp does, not what SentencePiece would."""

    def rename(v: spm_models.Converted) -> None:
        v.tokens[v.tokens.index("▁casa")] = "▁casa~"  # no other piece's text: llama.cpp loads it

    model = spm_models.convert_to_gguf(unigram_spm, tmp_path / "renamed.gguf", edit=rename)
    code, report = vocab(capsys, "--model", model, "--spm", unigram_spm)
    parity = clause(report, "parity")
    assert code == 1 and parity["data"]["tokenizer"] == "llama.cpp"
    assert not parity["holds"] and "pieces do not match" in parity["summary"]


def test_a_gguf_whose_tokenizer_is_not_sentencepiece_fails_the_model_type(
    unigram_spm: Path, unigram_gguf: Path
) -> None:
    """A byte-level BPE ('gpt2', SmolLM2) or WordPiece GGUF was not converted from a .model:
    the clause must not say it holds."""
    from dataclasses import replace

    spm, gguf = load_spm(unigram_spm), read_gguf_vocab(unigram_gguf)
    assert check_model_type(spm, gguf).holds
    for other in ("gpt2", "bert", ""):
        verdict = check_model_type(spm, replace(gguf, tokenizer_model=other))
        assert not verdict.holds and "not a SentencePiece vocabulary" in verdict.summary


def test_the_plain_report_names_the_failed_clause(
    unigram_spm: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = spm_models.convert_to_gguf(unigram_spm, tmp_path / "broken.gguf", edit=_flip_prefix)
    assert main(["vocab", "--model", str(model), "--spm", str(unigram_spm), "--text", str(spm_models.TEXT)]) == 1
    out = capsys.readouterr().out
    assert "FAILS  specials and settings: add_space_prefix is false" in out
    assert out.rstrip().endswith("the contract does not hold: specials and settings")


def test_an_nfkc_model_is_reported_as_a_risk_with_its_effect_on_the_sample(
    unigram_spm: Path, unigram_gguf: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = vocab(capsys, "--model", unigram_gguf, "--spm", unigram_spm)
    settings = clause(report, "specials and settings")
    assert settings["holds"] and settings["data"]["normalization"] == "nmt_nfkc"  # a risk, not a failure
    assert any("nmt_nfkc" in w and "'…' (U+2026 HORIZONTAL ELLIPSIS) -> '...'" in w for w in settings["warnings"])


@pytest.mark.parametrize("bad", ["missing", "not_spm", "not_gguf", "missing_text", "empty_text"])
def test_bad_input_is_one_line_and_exit_2(
    bad: str, unigram_spm: Path, unigram_gguf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("non è un modello", encoding="utf-8")
    args = {
        "missing": ["--model", tmp_path / "nowhere.gguf", "--spm", unigram_spm],
        "not_spm": ["--model", unigram_gguf, "--spm", text],
        "not_gguf": ["--model", text, "--spm", unigram_spm],
        "missing_text": ["--model", unigram_gguf, "--spm", unigram_spm, "--text", tmp_path / "nowhere.txt"],
        # No line to compare would make parity hold for any pair: 0 of 0 lines differ.
        "empty_text": [
            "--model",
            unigram_gguf,
            "--spm",
            unigram_spm,
            "--text",
            tmp_path / "empty.txt",
            "--llama-tokenizer",
        ],
    }[bad]
    (tmp_path / "empty.txt").write_text("\n  \n", encoding="utf-8")
    assert main(["vocab", *map(str, args)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1
    assert "draft" not in captured.err  # a --text file is the author's sample, not a draft


def test_the_engine_check_names_the_first_difference() -> None:
    pieces = ["<unk>", "<s>", "</s>", "▁", "a", "b", "c"]
    assert piece_text_mismatch(pieces, pieces + ["<0x00>"]) == ""
    assert "the GGUF has 3 tokens" in piece_text_mismatch(pieces, pieces[:3])
    assert "first at id 5: 'b' in the .model, 'x'" in piece_text_mismatch(pieces, pieces[:5] + ["x", "c"])


def test_the_gguf_vocabulary_is_read_whole(unigram_spm: Path, unigram_gguf: Path) -> None:
    spm, gguf = load_spm(unigram_spm), read_gguf_vocab(unigram_gguf)
    assert gguf.tokens[: len(spm)] == spm.pieces and gguf.tokens[-1] == "<0xFF>"
    assert gguf.tokenizer_model == "llama" and gguf.embedding_rows == len(gguf)
