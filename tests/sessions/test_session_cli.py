"""`scriptorium sessions` and `scriptorium export` from the shell: output and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scriptorium.app.cli.main import main
from scriptorium.app.sessions import ChatSession, DraftSession, SessionStore


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scriptorium.app.cli.main", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=os.environ.copy(),
        timeout=120,
    )


def test_sessions_lists_newest_first(
    store: SessionStore, rich_draft: DraftSession, chat: ChatSession, capsys: pytest.CaptureFixture[str]
) -> None:
    store.save(rich_draft)
    store.save(chat)
    chat.title = "Questions, later"
    store.save(chat)
    assert main(["sessions"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["ID", "TITLE", "KIND", "UPDATED", "MODEL", "WORDS"]
    assert {line.split()[0] for line in out[1:]} == {rich_draft.id, chat.id}
    draft_line = next(line for line in out if line.startswith(rich_draft.id))
    assert "Chapter: One" in draft_line and "draft" in draft_line and draft_line.endswith(str(rich_draft.word_count()))
    assert main(["sessions", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {item["id"] for item in listed} == {rich_draft.id, chat.id}
    assert next(i for i in listed if i["id"] == rich_draft.id)["model"] == "Other"


def test_sessions_columns_line_up_with_wide_titles(store: SessionStore, capsys: pytest.CaptureFixture[str]) -> None:
    """Padded by characters, a title in Japanese (two cells a character) pushed its row's
    kind, date and model to the right of everyone else's."""
    from rich.cells import cell_len

    store.save(store.create_draft(title="東京の夜は静かだった", text="夜。"))
    store.save(store.create_draft(title="Night", text="Night."))
    store.save(store.create_draft(title="東京の夜は静かだった、彼女は窓の外を見て、遠くの灯りを数えていた", text="x"))
    assert main(["sessions"]) == 0
    out = capsys.readouterr().out.splitlines()
    kind_columns = {cell_len(line[: line.index(" draft ")]) for line in out[1:]}
    assert len(kind_columns) == 1, out
    assert any("…" in line for line in out)


def test_sessions_warns_about_damaged_files_and_goes_on(
    store: SessionStore, rich_draft: DraftSession, capsys: pytest.CaptureFixture[str]
) -> None:
    store.save(rich_draft)
    (store.directory / "broken.json").write_text("{", encoding="utf-8")
    assert main(["sessions"]) == 0
    captured = capsys.readouterr()
    assert rich_draft.id in captured.out
    [warning] = captured.err.splitlines()
    assert warning.startswith("scriptorium: warning: session broken.json is damaged")


def test_sessions_when_there_are_none(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sessions"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "no sessions yet" in captured.err


def test_export_latest_by_default(
    tmp_path: Path,
    store: SessionStore,
    rich_draft: DraftSession,
    chat: ChatSession,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store.save(chat)
    store.save(rich_draft)
    os.utime(store.path_for(chat.id), (1, 1))
    monkeypatch.chdir(tmp_path)
    assert main(["export", "--mark-model", "--settings-changes"]) == 0
    written = Path(capsys.readouterr().out.strip())
    assert written == tmp_path / f"{rich_draft.id}.md"
    text = written.read_text(encoding="utf-8")
    assert '<mark class="model"' in text and "[^g2]: " in text
    assert main(["export", chat.id[:-2], "--out", "-"]) == 0
    head = capsys.readouterr().out.split("\n---\n")[0].removeprefix("---\n")
    assert yaml.safe_load(head)["kind"] == "chat"


def test_export_by_path(tmp_path: Path, store: SessionStore, chat: ChatSession, capsys) -> None:
    store.save(chat)
    out = tmp_path / "chat.md"
    assert main(["export", str(store.path_for(chat.id)), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8").startswith("---\ntitle: Questions\n")


@pytest.mark.parametrize(
    "case", ["no_sessions", "unknown_id", "exists", "unwritable", "damaged", "a_draft", "missing_file", "proc_file"]
)
def test_export_errors_are_one_line_with_exit_2(
    case: str, tmp_path: Path, store: SessionStore, request: pytest.FixtureRequest
) -> None:
    args = ["export"]
    expected = {
        "no_sessions": "no sessions to export yet",
        "unknown_id": "no session 'nope'",
        "exists": "already exists; use --force",
        "unwritable": "Permission denied",
        "damaged": "is damaged (invalid JSON",
        # Both were "no session '...'", as if the name had been taken for an id.
        "a_draft": "novel.md is not a session: give a session's id or its .json file",
        "missing_file": "session file not found: gone/s.json",
        # Was "No such file or directory", of a file that is there.
        "proc_file": "cannot write /proc/version: /proc does not take new files",
    }[case]
    if case != "no_sessions":
        store.save(request.getfixturevalue("rich_draft"))
    if case == "unknown_id":
        args.append("nope")
    elif case == "exists":
        (tmp_path / "taken.md").write_text("mine", encoding="utf-8")
        args += ["--out", str(tmp_path / "taken.md")]
    elif case == "unwritable":
        args += ["--out", str(request.getfixturevalue("unwritable_dir") / "x.md")]
    elif case == "damaged":
        (store.directory / "broken.json").write_text("{", encoding="utf-8")
        args.append("broken")
    elif case == "a_draft":
        (tmp_path / "novel.md").write_text("La casa era buia.", encoding="utf-8")
        args.append("novel.md")
    elif case == "missing_file":
        args.append("gone/s.json")
    elif case == "proc_file":
        args += ["--out", "/proc/version", "--force"]
    result = run_cli(*args, cwd=tmp_path)
    assert result.returncode == 2, result
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("scriptorium: ") and expected in line and "Traceback" not in result.stderr
    if case == "exists":
        assert (tmp_path / "taken.md").read_text(encoding="utf-8") == "mine"


def test_a_deeply_nested_session_file_is_moved_aside_from_the_shell(
    tmp_path: Path, store: SessionStore, rich_draft: DraftSession
) -> None:
    """`[` x 200,000 made the JSON parser raise RecursionError, and the file stayed to break
    every later `sessions`, `export` and `--resume`."""
    store.save(rich_draft)
    deep = store.directory / "zzz-deep.json"
    deep.write_bytes(b"[" * 200_000)
    os.utime(deep, None)  # the newest file: export picks it first
    exported = run_cli("export", "--out", "-", cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    assert "Traceback" not in exported.stderr and exported.stdout.startswith("---\ntitle: 'Chapter: One'")
    assert not deep.exists() and list(store.directory.glob("zzz-deep.json.corrupt-*"))
    listed = run_cli("sessions")
    assert listed.returncode == 0 and rich_draft.id in listed.stdout and listed.stderr == ""
    deep.write_bytes(b"[" * 200_000)
    listed = run_cli("sessions")
    assert listed.returncode == 0 and rich_draft.id in listed.stdout
    [warning] = listed.stderr.splitlines()
    assert "zzz-deep.json is damaged (JSON nested too deeply to be a session); moved aside" in warning


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("kind", ["fifo", "link-to-dev-null"])
def test_export_force_refuses_what_is_not_a_regular_file(
    kind: str, tmp_path: Path, store: SessionStore, rich_draft: DraftSession
) -> None:
    """--force replaced a FIFO, or /dev/null behind a link, with a plain file."""
    store.save(rich_draft)
    target = tmp_path / "out.md"
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to(os.devnull)
    result = run_cli("export", "--out", str(target), "--force", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    [line] = result.stderr.splitlines()
    assert line.endswith("it is not a regular file")
    assert not target.is_file() and (target.is_fifo() if kind == "fifo" else target.is_symlink())
    assert Path(os.devnull).is_char_device()


def test_sessions_shows_a_titles_control_characters_escaped(
    store: SessionStore, capsys: pytest.CaptureFixture[str]
) -> None:
    """A title holding the sequences that set the terminal's title and clear its screen was
    printed raw: the terminal obeyed them."""
    store.save(store.create_draft(title="\x1b]0;pwned\x07\x1b[2JNight\nfall", text="x"))
    assert main(["sessions"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b]0;pwned\\x07\\x1b[2JNight\\nfall" in out
    assert len(out.splitlines()) == 2  # the newline in the title took no row of its own
