"""Content hashes of model and LoRA files, computed once per file version and cached.

The hash is the plain SHA-256 of the whole file, so it can be checked against the checksum
a model hub publishes for the same GGUF. Hashing a 4 GB file takes seconds, so the result is
cached in `<cache dir>/model-hashes.json`, keyed by the file's real path, size and mtime:
a file replaced or rewritten in place gets hashed again. Reading the file also warms the
page cache that llama.cpp's mmap load is about to use, so the first load pays less than it seems.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from scriptorium.app import atomic
from scriptorium.app import paths
from scriptorium.inference.core.errors import ScriptoriumError

CHUNK = 4 * 1024 * 1024
CACHE_NAME = "model-hashes.json"
CACHE_FORMAT = "scriptorium-model-hashes"


class HashError(ScriptoriumError):
    """A model file could not be read for hashing."""


def cache_file() -> Path:
    return paths.cache_dir() / CACHE_NAME


def _key(path: Path) -> tuple[str, int, int]:
    real = Path(os.path.realpath(path))
    stat = real.stat()
    return str(real), stat.st_size, stat.st_mtime_ns


def _read_cache() -> dict[str, dict[str, object]]:
    try:
        data = json.loads(cache_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # a missing or damaged cache only costs a re-hash
    if not isinstance(data, dict) or data.get("format") != CACHE_FORMAT or not isinstance(data.get("files"), dict):
        return {}
    return data["files"]


def cached_sha256(path: str | os.PathLike[str]) -> str | None:
    """The cached hash of the file as it is now, or None (never reads the file's content)."""
    try:
        real, size, mtime_ns = _key(Path(path))
    except OSError:
        return None
    entry = _read_cache().get(real)
    if isinstance(entry, dict) and entry.get("size") == size and entry.get("mtime_ns") == mtime_ns:
        digest = entry.get("sha256")
        return digest if isinstance(digest, str) else None
    return None


def file_sha256(path: str | os.PathLike[str], progress: Callable[[int, int], None] | None = None) -> str:
    """The SHA-256 hex digest of a file, from the cache when the file has not changed.

    Blocking (seconds for a large model the first time): call it from a worker thread.
    `progress(done_bytes, total_bytes)` is called after each 4 MiB read.
    """
    path = Path(path)
    cached = cached_sha256(path)
    if cached is not None:
        return cached
    try:
        real, size, mtime_ns = _key(path)
        import hashlib  # with the first model's hash, not with the app (OpenSSL's binding: some 3 ms)

        digest = hashlib.sha256()
        done = 0
        with open(real, "rb") as handle:
            while chunk := handle.read(CHUNK):
                digest.update(chunk)
                done += len(chunk)
                if progress is not None:
                    progress(done, size)
    except OSError as error:
        raise HashError(f"cannot read {path} to hash it: {error.strerror or error}") from None
    result = digest.hexdigest()
    files = _read_cache()
    files[real] = {"size": size, "mtime_ns": mtime_ns, "sha256": result}
    try:
        paths.cache_dir().mkdir(parents=True, exist_ok=True)
        atomic.write_text(cache_file(), json.dumps({"format": CACHE_FORMAT, "files": files}, indent=1))
    except (OSError, atomic.WriteError):
        pass  # the hash is still right; only the next call will compute it again
    return result
