"""The real `scriptorium` executable: no native abort on unencodable text, and the
tokenizer in use named by continue --json and info, from --spm or the config."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runs import scriptorium

HOSTILE = "Perché così? Città, caffè ☕ 東京\n\x1b[31m 🍰"


def test_continue_refuses_unencodable_text_in_one_line_instead_of_aborting(no_bytes_gguf: Path) -> None:
    result = scriptorium("continue", "-", "--model", no_bytes_gguf, "--max-tokens", "4", stdin=HOSTILE)
    assert result.returncode == 2, result.stderr  # llama.cpp alone: 134 (std::out_of_range)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert "cannot encode '☕' (U+2615 HOT BEVERAGE) at character 27 (line 1, column 27)" in lines[0]
    assert result.stdout == ""


def test_unencodable_text_is_placed_in_the_draft_or_the_memory_where_the_author_wrote_it(
    no_bytes_gguf: Path, tmp_path: Path
) -> None:
    """The window the model sees starts far into a long draft: the character's place is
    counted in the author's file (or the memory), not in the prompt built from it."""
    draft = tmp_path / "draft.md"
    draft.write_text("La casa era buia. " * 200 + "Poi ☃ nevicò.", encoding="utf-8")
    result = scriptorium("continue", draft, "--model", no_bytes_gguf, "--ctx", "256", "--max-tokens", "4")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "cannot encode '☃' (U+2603 SNOWMAN) at character 3605 (line 1, column 3605) of the draft" in result.stderr
    memory = tmp_path / "memory.txt"
    memory.write_text("Neve ☃.", encoding="utf-8")
    draft.write_text("La casa era buia.", encoding="utf-8")
    result = scriptorium("continue", draft, "--model", no_bytes_gguf, "--max-tokens", "4", "--memory", memory)
    assert result.returncode == 2 and "at character 6 (line 1, column 6) of the memory" in result.stderr


def test_continue_json_names_the_tokenizer_from_the_flag_and_from_the_config(
    unigram_spm: Path, unigram_gguf: Path, tmp_path: Path
) -> None:
    def done(*args: object) -> dict:
        result = scriptorium(
            "continue",
            "-",
            "--model",
            unigram_gguf,
            "--preset",
            "greedy",
            "--max-tokens",
            "3",
            "--json",
            *args,
            stdin="La casa sul fiume",
        )
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout.splitlines()[-1])

    assert done()["tokenizer"] == "llama.cpp"
    flagged = done("--spm", unigram_spm)
    assert flagged["tokenizer"] == f"SentencePiece ({unigram_spm.name})" and flagged["tokenizer_warning"] is None
    config = tmp_path / "config.toml"
    config.write_text(f'[model]\ntokenizer = "{unigram_spm}"\n', encoding="utf-8")
    assert done("--config", config)["tokenizer"] == f"SentencePiece ({unigram_spm.name})"


def test_info_shows_the_tokenizer_facts_and_warns_without_byte_tokens(
    no_bytes_gguf: Path, unigram_gguf: Path, unigram_spm: Path
) -> None:
    result = scriptorium("info", "--model", no_bytes_gguf)
    assert result.returncode == 0
    assert "tokenizer         llama (add_bos true, add_space_prefix true); scriptorium uses llama.cpp" in result.stdout
    assert "byte tokens       none" in result.stdout
    assert result.stderr.startswith("scriptorium: warning: no byte tokens")
    report = json.loads(scriptorium("info", "--model", unigram_gguf, "--spm", unigram_spm, "--json").stdout)
    assert report["tokenizer"]["used"] == f"SentencePiece ({unigram_spm.name})"
    assert report["byte_tokens"] == {"count": 256, "ids": "500–755"}


def test_a_file_that_is_no_sentencepiece_model_is_said_to_be_one_in_plain_words(
    unigram_gguf: Path, unigram_spm: Path, tmp_path: Path
) -> None:
    """An empty --spm file said "(INTERNAL: unk is not defined.)", a bit-flipped one
    "'utf-8' codec can't decode byte...": the library's words, not the author's."""
    empty = tmp_path / "empty.model"
    empty.write_bytes(b"")
    data = bytearray(unigram_spm.read_bytes())
    data[data.index("▁".encode())] = 0xFF  # a piece's text is no longer UTF-8
    flipped = tmp_path / "flipped.model"
    flipped.write_bytes(bytes(data))
    for spm, reason in ((empty, "it is empty"), (flipped, "a piece's text is not UTF-8")):
        result = scriptorium("info", "--model", unigram_gguf, "--spm", spm)
        assert result.returncode == 2, result.stderr
        assert result.stderr.strip() == f"scriptorium: {spm} is not a SentencePiece model ({reason})"
