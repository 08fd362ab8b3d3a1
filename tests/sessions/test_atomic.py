"""Atomic writes: a failure or a crash at any step leaves the old file whole."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from scriptorium.app import atomic
from scriptorium.app.sessions import DraftSession, SessionError, SessionStore


def _leftovers(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if atomic.is_temp_file(p)]


@pytest.mark.parametrize("failing", ["replace", "fsync"])
def test_failure_mid_write_keeps_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str) -> None:
    target = tmp_path / "file.txt"
    atomic.write_text(target, "old content\n")

    def boom(*args: object) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, failing, boom)
    with pytest.raises(atomic.WriteError, match="cannot write .*file.txt: Input/output error"):
        atomic.write_text(target, "new content that never lands\n")
    assert target.read_text() == "old content\n"
    assert _leftovers(tmp_path) == []


def test_session_save_failure_keeps_previous_session(
    store: SessionStore, rich_draft: DraftSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.save(rich_draft)
    before = store.path_for(rich_draft.id).read_bytes()
    rich_draft.set_text(rich_draft.text + " Lost?")
    with monkeypatch.context() as patch:
        patch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(OSError(28, "No space left on device")))
        with pytest.raises(SessionError, match="session not saved: .*No space left on device"):
            store.save(rich_draft)
    assert store.path_for(rich_draft.id).read_bytes() == before
    assert store.save(rich_draft) is True  # a later save still goes through
    assert SessionStore().load(rich_draft.id) == rich_draft


def test_process_killed_between_write_and_rename(tmp_path: Path) -> None:
    target = tmp_path / "draft.md"
    script = textwrap.dedent(f"""
        import os, signal
        from scriptorium.app import atomic
        atomic.write_text({str(target)!r}, "version one\\n")
        os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)
        atomic.write_text({str(target)!r}, "version two\\n")
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert result.returncode == -signal.SIGKILL, result.stderr
    assert target.read_text() == "version one\n"
    [temp] = _leftovers(tmp_path)  # the dead process's temp file: complete, but never the target
    assert temp.read_text() == "version two\n"


def test_refuses_to_overwrite_when_asked(tmp_path: Path) -> None:
    target = tmp_path / "export.md"
    target.write_text("precious")
    with pytest.raises(atomic.FileExistsRefused, match="already exists"):
        atomic.write_text(target, "other", overwrite=False)
    assert target.read_text() == "precious" and _leftovers(tmp_path) == []
    fresh = atomic.write_text(tmp_path / "new.md", "hello", overwrite=False)
    assert fresh.read_text() == "hello"


def test_keeps_mode_and_follows_symlinks(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("a")
    real.chmod(0o604)
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    atomic.write_text(link, "b")
    assert link.is_symlink() and real.read_text() == "b" and (real.stat().st_mode & 0o777) == 0o604


def test_unwritable_and_missing_folders_are_one_line_errors(tmp_path: Path, unwritable_dir: Path) -> None:
    with pytest.raises(atomic.WriteError) as missing:
        atomic.write_text(tmp_path / "nope" / "x.md", "x")
    assert "does not exist" in str(missing.value)
    (tmp_path / "plain").write_text("")
    with pytest.raises(atomic.WriteError, match="is not a folder"):
        atomic.write_text(tmp_path / "plain" / "x.md", "x")
    with pytest.raises(atomic.WriteError) as denied:
        atomic.write_text(unwritable_dir / "x.md", "x")
    assert "Permission denied" in str(denied.value) and "\n" not in str(denied.value)
