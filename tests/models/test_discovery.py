"""Discovery over temporary folders laid out like LM Studio, the HF hub cache and plain folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scriptorium.inference.gguf.discovery import (
    KIND_LORA,
    KIND_MODEL,
    KIND_PROJECTOR,
    KIND_UNREADABLE,
    LAYOUT_HF_CACHE,
    SOURCE_CONFIG,
    SOURCE_HUGGING_FACE,
    SOURCE_LM_STUDIO,
    ModelFolder,
    discover_models,
    hugging_face_cache,
    standard_folders,
)


def by_file(discovery) -> dict[str, object]:
    return {model.path.name: model for model in discovery.models}


def test_lm_studio_layout(fake_home: Path, make_gguf) -> None:
    repo = fake_home / ".lmstudio" / "models" / "lmstudio-community" / "tiny-GGUF"
    make_gguf(repo / "tiny-Q8_0.gguf", name="Tiny Model", context_length=8192)
    make_gguf(repo / "mmproj-tiny-f16.gguf", arch="clip", name="tiny projector")
    make_gguf(fake_home / ".lmstudio" / "models" / "me" / "style" / "style-lora.gguf", adapter=True, name="style")
    make_gguf(fake_home / ".cache" / "lm-studio" / "models" / "old" / "legacy-GGUF" / "legacy.gguf", arch="gemma3")

    found = by_file(discover_models(standard_folders()))

    model = found["tiny-Q8_0.gguf"]
    assert (model.kind, model.source, model.name, model.architecture) == (
        KIND_MODEL,
        SOURCE_LM_STUDIO,
        "Tiny Model",
        "llama",
    )
    assert (model.repo, model.quantization, model.context_length) == ("lmstudio-community/tiny-GGUF", "Q8_0", 8192)
    assert model.size_bytes == model.path.stat().st_size and model.parameters == 2 * 64
    assert model.usable and model.problem is None
    lora = found["style-lora.gguf"]
    assert (lora.kind, lora.architecture, lora.kind_label, lora.usable) == (KIND_LORA, "llama", "LoRA for llama", True)
    assert found["mmproj-tiny-f16.gguf"].kind == KIND_PROJECTOR and not found["mmproj-tiny-f16.gguf"].usable
    assert found["legacy.gguf"].architecture == "gemma3" and found["legacy.gguf"].repo == "old/legacy-GGUF"


def _hf_file(cache: Path, repo: str, revision: str, filename: str, blob: str, make_gguf, **facts) -> Path:
    repo_dir = cache / ("models--" + repo.replace("/", "--"))
    blob_path = repo_dir / "blobs" / blob
    if not blob_path.exists():
        make_gguf(blob_path, **facts)
    link = repo_dir / "snapshots" / revision / filename
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(blob_path, link.parent))
    return link


def test_hugging_face_cache_layout_dedupes_blobs(fake_home: Path, make_gguf) -> None:
    cache = fake_home / ".cache" / "huggingface" / "hub"
    first = _hf_file(cache, "org/tiny-GGUF", "rev1", "tiny.Q8_0.gguf", "aaa", make_gguf, name="HF Tiny")
    _hf_file(cache, "org/tiny-GGUF", "rev2", "tiny.Q8_0.gguf", "aaa", make_gguf)  # same blob, newer revision
    _hf_file(cache, "org/tiny-GGUF", "rev2", "sub/tiny.F16.gguf", "bbb", make_gguf, name="HF Tiny f16")
    (cache / "models--org--tiny-GGUF" / "blobs" / "not-a-gguf-name").write_bytes(b"GGUF")  # blobs are not scanned
    (cache / "datasets--org--data" / "snapshots" / "r").mkdir(parents=True)

    discovery = discover_models(standard_folders())

    assert [m.path.name for m in discovery.models] == ["tiny.Q8_0.gguf", "tiny.F16.gguf"]
    model = discovery.models[0]
    assert model.path == first and model.source == SOURCE_HUGGING_FACE and model.repo == "org/tiny-GGUF"
    assert model.name == "HF Tiny" and model.usable


@pytest.mark.parametrize(
    "environ, expected",
    [
        ({"HF_HUB_CACHE": "/x/hub-cache", "HF_HOME": "/y"}, "/x/hub-cache"),
        ({"HUGGINGFACE_HUB_CACHE": "/legacy"}, "/legacy"),
        ({"HF_HOME": "/y", "XDG_CACHE_HOME": "/xdg"}, "/y/hub"),
        ({"XDG_CACHE_HOME": "/xdg"}, "/xdg/huggingface/hub"),
        ({}, "/home/me/.cache/huggingface/hub"),
    ],
)
def test_hugging_face_cache_location(environ: dict[str, str], expected: str) -> None:
    assert hugging_face_cache(Path("/home/me"), environ) == Path(expected)


def test_hf_home_is_followed(tmp_path: Path, make_gguf) -> None:
    hf_home = tmp_path / "hf"
    _hf_file(hf_home / "hub", "a/b", "r", "m.gguf", "blob", make_gguf)
    folders = standard_folders(home=tmp_path / "nobody", environ={"HF_HOME": str(hf_home)})
    assert [m.repo for m in discover_models(folders).models] == ["a/b"]


def test_split_models_are_listed_once(tmp_path: Path, make_gguf) -> None:
    shards = [make_gguf(tmp_path / f"big-0000{i}-of-00003.gguf", split=(i, 3), name="Big") for i in (1, 2, 3)]
    (model,) = discover_models([ModelFolder(tmp_path, SOURCE_CONFIG)]).models
    assert model.path == shards[0] and model.shards == 3 and model.usable
    assert model.size_bytes == sum(path.stat().st_size for path in shards)
    assert model.parameters == 3 * 2 * 64


def test_split_model_with_a_missing_shard(tmp_path: Path, make_gguf) -> None:
    for i in (1, 3):
        make_gguf(tmp_path / f"big-0000{i}-of-00003.gguf", split=(i, 3))
    (model,) = discover_models([ModelFolder(tmp_path, SOURCE_CONFIG)]).models
    assert not model.usable
    assert model.problem == f"{tmp_path / 'big-00001-of-00003.gguf'} is split in 3 files but only 2 are here"


def test_split_model_without_its_first_shard(tmp_path: Path, make_gguf) -> None:
    make_gguf(tmp_path / "big-00002-of-00002.gguf", split=(2, 2))
    (model,) = discover_models([ModelFolder(tmp_path, SOURCE_CONFIG)]).models
    assert model.kind == KIND_UNREADABLE and model.name == "big"
    assert model.problem == f"{tmp_path / 'big'} is a split model whose first file (-00001-of-00002) is missing"


def test_unreadable_files_are_listed_with_the_reason(tmp_path: Path, make_gguf, bad_gguf_files) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    for name, path in bad_gguf_files.items():
        (folder / path.name).symlink_to(path)
    make_gguf(folder / "good.gguf")
    make_gguf(folder / "no-arch.gguf", arch="")

    found = by_file(discover_models([ModelFolder(folder, SOURCE_CONFIG)]))

    assert found["good.gguf"].usable
    assert "is not a GGUF file (it does not start with 'GGUF')" in found["notes.gguf"].problem
    assert "is not a GGUF file (only 0 bytes)" in found["empty.gguf"].problem
    assert "is truncated: tensor" in found["truncated.gguf"].problem
    assert found["truncated.gguf"].kind == KIND_MODEL and not found["truncated.gguf"].usable
    assert found["no-arch.gguf"].problem.endswith("has no general.architecture: not a llama.cpp model")
    assert all("\n" not in model.problem for model in found.values() if model.problem)


def test_folders_dedupe_and_order(tmp_path: Path, make_gguf) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    model = make_gguf(first / "a.gguf")
    second.mkdir()
    (second / "link-to-a.gguf").symlink_to(model)
    make_gguf(second / "b.gguf")
    make_gguf(second / ".partial-download.gguf")  # hidden: an interrupted write
    make_gguf(second / "notes.txt")
    folders = [ModelFolder(first, "one"), ModelFolder(second, "two"), ModelFolder(first, "again")]

    discovery = discover_models(folders)

    assert [(m.path.name, m.source) for m in discovery.models] == [("a.gguf", "one"), ("b.gguf", "two")]


def test_a_symlink_loop_is_walked_once(tmp_path: Path, make_gguf) -> None:
    folder = tmp_path / "models"
    make_gguf(folder / "sub" / "x.gguf")
    (folder / "sub" / "a-loop").symlink_to(folder)  # sorts before x.gguf: walked first

    discovery = discover_models([ModelFolder(folder, "mine")])

    assert [m.path.relative_to(folder).as_posix() for m in discovery.models] == ["sub/x.gguf"]


def test_missing_folders(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    discovery = discover_models(
        [
            ModelFolder(tmp_path / "configured", SOURCE_CONFIG, required=True),
            ModelFolder(tmp_path / "file", SOURCE_CONFIG, required=True),
            ModelFolder(tmp_path / "lmstudio", SOURCE_LM_STUDIO),
            ModelFolder(tmp_path / "hf", SOURCE_HUGGING_FACE, LAYOUT_HF_CACHE),
        ]
    )
    assert discovery.models == ()
    assert discovery.problems == (
        f"model folder {tmp_path / 'configured'} does not exist",
        f"model folder {tmp_path / 'file'} is not a folder",
    )


def test_usable_and_adapters_for(tmp_path: Path, make_gguf) -> None:
    make_gguf(tmp_path / "m.gguf")
    make_gguf(tmp_path / "l-llama.gguf", adapter=True)
    make_gguf(tmp_path / "l-gemma.gguf", adapter=True, arch="gemma3")
    discovery = discover_models([ModelFolder(tmp_path, SOURCE_CONFIG)])
    assert [m.path.name for m in discovery.usable()] == ["m.gguf"]
    assert [m.path.name for m in discovery.adapters_for("gemma3")] == ["l-gemma.gguf"]
    assert discovery.models[0].as_dict()["path"] == str(tmp_path / "l-gemma.gguf")
