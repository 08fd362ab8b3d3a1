"""`scriptorium models` and `scriptorium config`: output, exit codes, one-line errors."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from scriptorium.app import paths
from scriptorium.app.cli.main import main
from scriptorium.app.config.text import DEFAULT_CONFIG_TEXT


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def populated(fake_home: Path, models_dir: Path, tmp_path: Path, make_gguf, no_demo) -> Path:
    """An LM Studio model and adapter, a file in the data dir, a configured folder with a broken file."""
    lm = fake_home / ".lmstudio" / "models" / "pub" / "tiny-GGUF"
    make_gguf(lm / "tiny-Q8_0.gguf", name="Tiny")
    make_gguf(lm / "tiny-lora.gguf", adapter=True, name="tiny-lora")
    make_gguf(models_dir / "dropped.gguf", name="Dropped", arch="gemma3")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "broken.gguf").write_text("not a model")
    config = paths.config_file()
    config.parent.mkdir(parents=True)
    config.write_text(f'[model]\nfolders = ["{mine}"]\n', encoding="utf-8")
    return mine


def test_models_table(capsys, populated: Path) -> None:
    code, out, err = run(capsys, "models")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "KIND", "ARCH", "QUANT", "SIZE", "SOURCE", "PATH"]
    assert lines[1].split()[:4] == ["Dropped", "model", "gemma3", "Q8_0"]
    assert lines[2].split()[:8] == ["pub/tiny-GGUF", "·", "Tiny", "model", "llama", "Q8_0", "928", "B"]
    assert "LM Studio" in lines[2]
    assert "LoRA for llama" in lines[3]
    assert lines[-2:] == ["Unusable files:", f"  {populated / 'broken.gguf'} is not a GGUF file (only 11 bytes)"]


def test_models_json(capsys, populated: Path) -> None:
    code, out, _ = run(capsys, "models", "--json")
    report = json.loads(out)
    assert code == 0 and report["problems"] == []
    assert [(m["name"], m["kind"], m["usable"]) for m in report["models"]] == [
        ("broken.gguf", "unreadable", False),
        ("Dropped", "model", True),
        ("Tiny", "model", True),
        ("tiny-lora", "LoRA", True),
    ]
    assert report["folders"][0] == {"path": str(populated), "source": "config"}


def test_models_nothing_found(capsys, no_demo) -> None:
    code, out, _ = run(capsys, "models")
    assert code == 0 and out.startswith("No GGUF models found. Searched: ")
    assert f"Put .gguf files in {paths.models_dir()}" in out


def test_models_warns_about_config_problems_but_lists(capsys, tmp_path: Path, no_demo) -> None:
    config = tmp_path / "c.toml"
    config.write_text(f'[model]\nfolders = ["{tmp_path / "gone"}"]\ncontext_size = 1\n')
    code, _, err = run(capsys, "models", "--config", str(config))
    assert code == 0
    assert err.splitlines() == [
        f"scriptorium: warning: {config}: model.context_size: must be a whole number from 64 to 1048576, not 1",
        f"scriptorium: warning: model folder {tmp_path / 'gone'} does not exist",
    ]


def test_config_path(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run(capsys, "config", "path") == (0, f"{paths.config_file()}\n", "")
    assert run(capsys, "config", "path", "--config", str(tmp_path / "x.toml")) == (0, f"{tmp_path / 'x.toml'}\n", "")
    monkeypatch.setenv("SCRIPTORIUM_CONFIG", str(tmp_path / "env.toml"))
    assert run(capsys, "config", "path") == (0, f"{tmp_path / 'env.toml'}\n", "")


@pytest.mark.parametrize(
    "argv",
    [
        ("--config", "{file}", "config", "show"),
        ("config", "--config", "{file}", "show"),
        ("config", "show", "--config", "{file}"),
    ],
)
def test_config_option_goes_before_or_after_the_subcommand_and_its_action(capsys, tmp_path: Path, argv) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[ui]\ntheme = "nord"\n')
    code, out, err = run(capsys, *(arg.format(file=config) for arg in argv))
    assert (code, err) == (0, "")
    assert out.startswith(f"# effective configuration ({config})\n")


def test_config_init_then_refuse(capsys) -> None:
    path = paths.config_file()
    assert run(capsys, "config", "init") == (0, f"wrote {path}\n", "")
    assert path.read_text(encoding="utf-8") == DEFAULT_CONFIG_TEXT
    code, out, err = run(capsys, "config", "init")
    assert (code, out) == (2, "")
    assert err == f"scriptorium: config file {path} already exists: edit it, or remove it first\n"


def test_config_show(capsys, tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[sampler]\ntop_k = 5\n[ui]\ntheme = "nord"\n')
    code, out, err = run(capsys, "config", "show", "--config", str(config))
    shown = tomllib.loads(out)
    assert (code, err) == (0, "")
    assert (
        shown["sampler"]["top_k"] == 5 and shown["ui"] == {"theme": "nord"} and "context_size" not in shown["model"]
    )  # unset: the training context
    assert out.startswith(f"# effective configuration ({config})\n")


def test_config_show_with_problems(capsys, tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[sampler]\ntop_k = -5\ntop_kk = 1\n")
    code, out, err = run(capsys, "config", "show", "--config", str(config))
    assert code == 2 and tomllib.loads(out)["sampler"]["top_k"] == 50
    assert err.splitlines() == [
        f"scriptorium: {config}: sampler.top_k: top-k must be 0 (off) or a positive whole number, not -5",
        f"scriptorium: {config}: sampler.top_kk: unknown key (did you mean 'top_k'?)",
    ]


def test_config_show_reports_keymap_ids_no_binding_has(capsys, tmp_path: Path) -> None:
    """Only the app said so, in a notification at start; `config show` said all was well."""
    config = tmp_path / "c.toml"
    config.write_text('[keymap]\n"draft.continue" = "f13"\n"draft.xyzzy" = "f6"\n"app.quitt" = "ctrl+x"\n')
    code, out, err = run(capsys, "config", "show", "--config", str(config))
    assert code == 2 and tomllib.loads(out)["keymap"]["draft.continue"] == "f13"
    assert err.splitlines() == [  # by key, as other config problems are; a near miss corrected
        f"scriptorium: {config}: keymap.app.quitt: no such binding (did you mean 'app.quit'?)",
        f"scriptorium: {config}: keymap.draft.xyzzy: no such binding (F1 lists the ids)",
    ]


def test_config_show_names_a_key_the_keymap_gives_to_two_bindings(capsys, tmp_path: Path) -> None:
    """F2 moved onto draft.continue left the draft no key to switch modes, and nothing said so.
    Keys in places never active together (the draft, the sampler panel's letters) are not a
    clash, nor a key a binding has by default."""
    config = tmp_path / "c.toml"
    config.write_text('[keymap]\n"draft.continue" = "f2"\n"chat.regenerate" = "t"\n"draft.stop" = "escape"\n')
    code, _, err = run(capsys, "config", "show", "--config", str(config))
    assert code == 2
    assert err.splitlines() == [
        f"scriptorium: {config}: keymap.draft.continue: f2 is already app.mode's key (Mode): one of them will not work"
    ]


def test_config_file_not_found(capsys) -> None:
    assert run(capsys, "config", "show", "--config", "/no/such.toml") == (
        2,
        "",
        "scriptorium: config file not found: /no/such.toml\n",
    )


@pytest.mark.parametrize(
    "argv, error",
    [
        (("config",), "scriptorium config: the following arguments are required: ACTION"),
        (("config", "burn"), "scriptorium config: argument ACTION: invalid choice: 'burn'"),
        (("models", "--jsn"), "scriptorium models: unrecognized arguments: --jsn"),
    ],
)
def test_usage_errors_are_one_line(capsys, argv: tuple[str, ...], error: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(list(argv))
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.startswith(error) and err.count("\n") == 1


def test_config_show_of_a_broken_file_prints_no_defaults(capsys, tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[model\n")
    code, out, err = run(capsys, "config", "show", "--config", str(config))
    assert (
        (code, out) == (2, "") and err.startswith(f"scriptorium: {config}: not valid TOML: ") and err.count("\n") == 1
    )


def test_config_nested_too_deeply_is_one_line(capsys, tmp_path: Path) -> None:
    """Found by the fuzz tests: TOML's parser recursed into `[[[[...` until RecursionError."""
    config = tmp_path / "c.toml"
    config.write_text("a = " + "[" * 50_000)
    code, out, err = run(capsys, "config", "show", "--config", str(config))
    assert (code, out, err) == (2, "", f"scriptorium: {config}: not valid TOML: nested too deeply\n")


def test_models_cuts_a_long_name_and_escapes_control_characters(
    capsys, fake_home: Path, models_dir: Path, make_gguf, no_demo
) -> None:
    """A 1 MB general.name padded every row of the table to a megabyte (123 MB of output for
    217 rows); a name is anyone's text, escape sequences too."""
    make_gguf(models_dir / "huge-name.gguf", name="a" * 1_000_000)
    make_gguf(models_dir / "escapes.gguf", name="\x1b[2Jclear")
    make_gguf(models_dir / "short.gguf", name="Short")
    code, out, _ = run(capsys, "models")
    assert code == 0
    assert max(len(line) for line in out.splitlines()) < 400
    huge = next(line for line in out.splitlines() if "huge-name.gguf" in line)
    assert "a…" in huge
    assert "\x1b" not in out and "\\x1b[2Jclear" in out
