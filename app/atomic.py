"""Atomic file writes: a reader, a crash or a power cut sees the old file or the new one, whole.

The recipe: write a temp file in the target's own folder (os.replace is only atomic within
one file system), flush, fsync it, rename it over the target, then fsync the folder so the
rename itself is on disk. Sessions, the author's draft file, the model-hash cache and
exports all go through `write_text`/`write_bytes`.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from scriptorium.inference.core.errors import ScriptoriumError

TEMP_PREFIX = "."
TEMP_SUFFIX = ".tmp"


class WriteError(ScriptoriumError):
    """A file could not be written; the message names the file and the reason in one line."""


class FileExistsRefused(WriteError):
    """The target exists and the caller asked not to overwrite it."""


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def fsync_directory(directory: Path) -> None:
    # Directories cannot be opened for fsync on Windows, and some file systems refuse it;
    # the rename is still atomic there, only its durability depends on the OS flushing later.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _new_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def is_temp_file(path: Path) -> bool:
    """True for the temp files this module leaves behind when a process dies mid-write."""
    return path.name.startswith(TEMP_PREFIX) and path.name.endswith(TEMP_SUFFIX)


def write_bytes(path: str | os.PathLike[str], data: bytes, *, overwrite: bool = True, mode: int | None = None) -> Path:
    """Write `data` to `path` atomically and durably; return the path written.

    A symlink is followed, so the link keeps pointing at the author's file; anything but a
    regular file there (a device, a FIFO) is refused, never replaced. An existing
    file keeps its permission bits; a new one gets `mode` (default: 0o666 less the umask).
    With overwrite=False an existing target raises FileExistsRefused, decided atomically
    (a hard link that fails if the name is taken) where the file system allows it.
    Raises WriteError (one line) for anything the OS refuses; the target is then untouched.
    """
    target = Path(os.path.realpath(Path(path).expanduser()))
    directory = target.parent
    if not directory.is_dir():
        problem = "is not a folder" if directory.exists() else "does not exist"
        raise WriteError(f"cannot write {target}: {directory} {problem}")
    if target.is_dir():
        raise WriteError(f"cannot write {target}: it is a folder")
    if target.exists() and not target.is_file():
        # A device, FIFO or socket: the rename would put a plain file in its place.
        raise WriteError(f"cannot write {target}: it is not a regular file")
    if not overwrite and target.exists():
        raise FileExistsRefused(f"{target} already exists")
    try:
        existing_mode = target.stat().st_mode & 0o7777
    except OSError:
        existing_mode = None
    try:
        fd, temp_name = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{target.name}.", suffix=TEMP_SUFFIX, dir=directory)
    except OSError as error:
        # The new text is written beside the target first: a folder that takes no new file
        # (/proc says "No such file or directory") refuses that, whatever the target is.
        raise WriteError(f"cannot write {target}: {directory} does not take new files ({_reason(error)})") from None
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, existing_mode if existing_mode is not None else (mode if mode is not None else _new_file_mode()))
        if overwrite:
            os.replace(temp, target)
        else:
            _link_new(temp, target)
    except FileExistsRefused:
        _discard(temp)
        raise
    except OSError as error:
        _discard(temp)
        raise WriteError(f"cannot write {target}: {_reason(error)}") from None
    except BaseException:
        _discard(temp)
        raise
    fsync_directory(directory)
    return target


def _link_new(temp: Path, target: Path) -> None:
    """Give `temp` the name `target` only if that name is free, then drop the temp name."""
    try:
        os.link(temp, target)
    except FileExistsError:
        raise FileExistsRefused(f"{target} already exists") from None
    except OSError:
        # No hard links here (FAT, some network shares): check, then rename. The window
        # between the two is the best such a file system allows.
        if target.exists():
            raise FileExistsRefused(f"{target} already exists") from None
        os.replace(temp, target)
        return
    os.unlink(temp)


def _discard(temp: Path) -> None:
    with contextlib.suppress(OSError):
        temp.unlink()


def write_text(path: str | os.PathLike[str], text: str, *, overwrite: bool = True, mode: int | None = None) -> Path:
    """`write_bytes` for UTF-8 text, written exactly as given (no newline translation)."""
    return write_bytes(path, text.encode("utf-8"), overwrite=overwrite, mode=mode)
