"""Characters a SentencePiece model without byte fallback reads as <unk>: a model trained
on a few pages of prose that never saw «, ?, — or a digit reads each of them as the same
<unk>. The model decides which (SpmModel.unknown_characters); the tokenizer, the engine
in its child process, `vocab` and `continue` ask it and name them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scriptorium.app.cli.main import main
from scriptorium.inference.process.isolated import IsolatedBackend
from scriptorium.inference.core.load_options import LoadOptions
from scriptorium.inference.vocab.spm_model import load_spm
from scriptorium.inference.vocab.tokenizer import SentencePieceTokenizer

DIALOGUE = "«Sei sveglia?» chiese la nonna — erano le 6."
SCRIPTORIUM = str(Path(sys.executable).with_name("scriptorium"))


def test_the_model_names_the_characters_it_reads_as_unk_once_each_in_order(prose_spm: Path) -> None:
    spm = load_spm(prose_spm)
    assert spm.unknown_characters(DIALOGUE) == "«?»—6"
    assert spm.unknown_characters("«1» «2»") == "«1»2"  # each once, "1»" cut as one <unk> too
    assert spm.unknown_characters("La casa sul fiume aveva le persiane verdi.") == ""
    # What SentencePiece does with them: <unk>, which is what the tokenizer feeds the model.
    assert spm.unk_id in spm.encode("«")
    assert SentencePieceTokenizer(spm, spm.bos_id).unknown_characters(DIALOGUE) == "«?»—6"


def test_a_byte_fallback_model_reads_no_character_as_unk(unigram_bytes_spm: Path) -> None:
    assert load_spm(unigram_bytes_spm).unknown_characters("caffè ☕ a 東京") == ""


def test_the_engine_in_its_child_process_answers_as_the_model_does(prose_spm: Path, prose_gguf: Path) -> None:
    backend = IsolatedBackend.load(LoadOptions(model_path=prose_gguf, spm_path=prose_spm, n_ctx=256))
    try:
        assert backend.unknown_characters(DIALOGUE) == "«?»—6"
    finally:
        backend.close()


def test_vocab_says_the_contract_does_not_hold_and_names_the_characters(
    prose_spm: Path, prose_gguf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It listed them under parity, then said "the contract holds"."""
    text = tmp_path / "dialogo.txt"
    text.write_text(DIALOGUE + "\nNel 1987 il treno costava poco.\n", encoding="utf-8")
    assert main(["vocab", "--model", str(prose_gguf), "--spm", str(prose_spm), "--text", str(text)]) == 1
    out = capsys.readouterr().out
    assert (
        "FAILS  unknown characters: the .model (prosa.model) has no piece for '«', '?', '»', '—', '6', '1', "
        "'9', '8' and '7': the model reads each as <unk>" in out
    )
    assert "'«' (U+00AB LEFT-POINTING DOUBLE ANGLE QUOTATION MARK)" in out
    assert out.rstrip().endswith("the contract does not hold: unknown characters")
    clean = tmp_path / "pulito.txt"
    clean.write_text("La casa sul fiume aveva le persiane verdi.\n", encoding="utf-8")
    assert main(["vocab", "--model", str(prose_gguf), "--spm", str(prose_spm), "--text", str(clean), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    unknown = next(c for c in report["clauses"] if c["name"] == "unknown characters")
    assert unknown["holds"] and unknown["data"]["characters"] == []


def test_vocab_judged_for_llama_cpp_warns_instead(
    prose_spm: Path, prose_gguf: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without the .model, llama.cpp spells them in byte tokens: not <unk>, but never seen in training."""
    text = tmp_path / "dialogo.txt"
    text.write_text(DIALOGUE + "\n", encoding="utf-8")
    main(
        [
            "vocab",
            "--model",
            str(prose_gguf),
            "--spm",
            str(prose_spm),
            "--text",
            str(text),
            "--json",
            "--llama-tokenizer",
        ]
    )
    unknown = next(c for c in json.loads(capsys.readouterr().out)["clauses"] if c["name"] == "unknown characters")
    assert unknown["holds"] and "'«', '?', '»', '—' and '6'" in unknown["warnings"][0]


def continue_draft(*args: object, stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCRIPTORIUM, "continue", "-", *map(str, args)], input=stdin, capture_output=True, text=True, timeout=120
    )


def test_continue_warns_in_one_stderr_line_and_json_names_them(prose_spm: Path, prose_gguf: Path) -> None:
    model = ("--model", prose_gguf, "--spm", prose_spm, "--preset", "greedy", "--max-tokens", "2")
    result = continue_draft(*model, stdin=DIALOGUE)
    assert result.returncode == 0, result.stderr
    warned = [line for line in result.stderr.splitlines() if "<unk>" in line]
    assert warned == [
        "scriptorium: warning: SentencePiece (prosa.model) has no piece for '«', '?', '»', '—' and "
        "'6': the model reads each as <unk>, the same token for any unknown character, not as what "
        "you wrote"
    ]
    result = continue_draft(*model, "--json", stdin=DIALOGUE)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]  # stdout is JSON lines only
    assert lines[-1]["unknown_characters"] == ["«", "?", "»", "—", "6"]
    assert "<unk>" in result.stderr
    clean = continue_draft(*model, "--json", stdin="La casa sul fiume")
    assert json.loads(clean.stdout.splitlines()[-1])["unknown_characters"] == []
    assert "<unk>" not in clean.stderr
