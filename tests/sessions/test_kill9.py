"""kill -9 a real process that types, accepts suggestions and saves, at random moments, many times.

Each round a fresh process reopens the draft (as `scriptorium novel.md` would), goes on
typing and accepting, and reports each accepted suggestion only after save() returned.
After every kill: the session file and the draft file parse and are complete versions, and
every reported suggestion is in both, accepted, with its passage marked as the model's.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from scriptorium.app import atomic
from scriptorium.app import paths
from scriptorium.app.sessions import DraftSession, SessionStore

ROUNDS = 30
MAX_DELAY_S = 0.3
PREAMBLE = "Chapter one.\n\n" + "The sea was grey and the sky was grey. " * 3000  # ~120 KB: writes take a while

CHILD = textwrap.dedent("""
    import os, sys
    from scriptorium.app.sessions import ModelRef, SessionStore
    from scriptorium.inference.core.events import GenerationDone, KVCacheUsage
    from scriptorium.inference.core.settings import LogitBias, preset

    draft_path, preamble_path = sys.argv[1], sys.argv[2]
    store = SessionStore()
    session = store.open_draft(draft_path)
    if not session.text:
        session.set_text(open(preamble_path, encoding="utf-8").read())
        store.save(session)
    model = ModelRef(path="/m/tiny.gguf", name="tiny", size=1, sha256="0" * 64, quantization="Q4_K_M")
    kv = KVCacheUsage(tokens=0, n_ctx=512, bytes_allocated=0, bytes_used=0, bytes_per_token=0)
    print("ready", flush=True)
    step = 0
    while True:
        step += 1
        session.set_text(session.text + f" w{os.getpid()}.{step}")  # the author types
        if step % 3:
            store.save(session)  # autosave after typing
            continue
        marker = f" [S{os.getpid()}.{step}]"
        generation = session.start_generation(model=model, lora=None, settings=preset("prose"),
                                              bias=LogitBias(), anchor=len(session.text))
        generation.finish(GenerationDone(stop_reason="eos", prompt_tokens=1, completion_tokens=1, reused_tokens=0,
                                         prefill_ms=0, ttft_ms=0, decode_ms=0, decode_tokens_per_s=0,
                                         prefill_tokens_per_s=0, kv_cache=kv, text=marker + " rest", seed=step))
        session.accept(generation, marker, len(session.text))
        store.save(session)
        print("accepted" + marker, flush=True)
""")

VERSION_SHAPE = re.compile(r"( w\d+\.\d+| \[S\d+\.\d+\])*")


def _check_complete(text: str) -> None:
    assert text.startswith(PREAMBLE), "the draft lost its beginning"
    assert VERSION_SHAPE.fullmatch(text[len(PREAMBLE) :]), "the draft ends in a partial write"


def _check_session(session: DraftSession, acknowledged: list[str]) -> None:
    _check_complete(session.text)
    passages = {session.text[s.start : s.end] for s in session.spans}
    accepted = {g.accepted_text for g in session.generations if g.outcome == "partly_accepted"}
    for marker in acknowledged:
        assert marker in session.text, f"accepted suggestion{marker} was lost"
        assert marker in passages and marker in accepted, f"suggestion{marker} lost its record"


def test_kill_minus_nine_never_loses_an_accepted_suggestion(tmp_path: Path) -> None:
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    draft = tmp_path / "novel.md"
    preamble = tmp_path / "preamble.txt"
    preamble.write_text(PREAMBLE, encoding="utf-8")
    acknowledged: list[str] = []
    kills_after_acceptance = 0
    for round_number in range(ROUNDS):
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(draft), str(preamble)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ.copy(),
        )
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n", child.stderr.read() if child.stderr else ""
        # Most rounds let the child accept a suggestion or two first, then kill it a random
        # moment later: on a loaded machine a delay alone mostly killed it before any, and
        # tested nothing. A round in four is killed from the start, whatever it is doing.
        lines: list[str] = []
        wanted = rng.choice((0, 1, 1, 2))
        while sum(line.startswith("accepted") for line in lines) < wanted:
            line = child.stdout.readline()
            if not line:  # the child ended by itself: its stderr says why, below
                break
            lines.append(line.rstrip("\n"))
        time.sleep(rng.uniform(0, MAX_DELAY_S))
        child.kill()
        child.wait(timeout=30)
        lines += child.stdout.read().splitlines()
        child.stdout.close()
        assert child.stderr is not None
        errors = child.stderr.read()
        child.stderr.close()
        assert not errors, f"round {round_number} (seed {seed}): {errors}"
        new = [line.removeprefix("accepted") for line in lines if line.startswith("accepted")]
        kills_after_acceptance += bool(new)
        acknowledged.extend(new)

        store = SessionStore()
        sessions = store.list()
        assert store.take_problems() == [], f"round {round_number} (seed {seed})"
        assert len(sessions) == 1, f"round {round_number} (seed {seed}): {sessions}"
        session = store.load(sessions[0].id)
        assert isinstance(session, DraftSession)
        _check_session(session, acknowledged)
        on_disk = draft.read_text(encoding="utf-8")
        _check_complete(on_disk)
        for marker in acknowledged:
            assert marker in on_disk, f"round {round_number} (seed {seed}): draft file lost{marker}"

    assert kills_after_acceptance >= ROUNDS // 2, "the children were killed too early to test anything"
    leftovers = [p for p in paths.sessions_dir().iterdir() if atomic.is_temp_file(p)]
    # A kill between mkstemp and rename leaves a temp file; it is never mistaken for a session.
    assert all(p.name.startswith(".") for p in leftovers)
