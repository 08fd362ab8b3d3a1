"""A chat template that never ends (nested `range(99999)` loops in a GGUF's own template)
ran in the app's own process at 100% CPU: Esc could not stop it and the process outlived
ctrl+q. Templates render in a process of their own (template_process.py), bounded in
time and output: past the bound, one line says so, and the next render works."""

from __future__ import annotations

import threading
from pathlib import Path

import gguf_models
import pytest

from scriptorium.inference.window import template_process
from scriptorium.inference.window.chat import render_chat
from scriptorium.inference.core.errors import ScriptoriumError
from scriptorium.inference.process.isolated import IsolatedBackend
from scriptorium.inference.core.load_options import LoadOptions

LOOPING = "{% for a in range(99999) %}{% for b in range(99999) %}{% endfor %}{% endfor %}x"
WRITING_FOR_EVER = "{% for a in range(99999) %}{% for b in range(99999) %}{{ 'words ' }}{% endfor %}{% endfor %}"
MESSAGES = [{"role": "user", "content": "Ciao"}]


def _failure_within(seconds: float, template: str) -> ScriptoriumError:
    """How rendering `template` failed, run where a render that never ends cannot take the test run with it."""
    failures: list[ScriptoriumError] = []

    def render() -> None:
        try:
            render_chat(MESSAGES, template, None, "")
        except ScriptoriumError as error:
            failures.append(error)

    thread = threading.Thread(target=render, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"the render still ran after {seconds} s"
    return failures[0]


@pytest.fixture
def short_bound(monkeypatch: pytest.MonkeyPatch) -> float:
    monkeypatch.setattr(template_process, "RENDER_WAIT_S", 0.5)
    monkeypatch.setattr(template_process, "KILL_GRACE_S", 2.0)
    return 0.5


def test_a_template_that_loops_for_ever_is_stopped_in_one_line(short_bound: float) -> None:
    assert str(_failure_within(20, LOOPING)) == (
        "the chat template did not finish within 0.5 s (a loop that never ends?), so it was stopped"
    )
    # Nothing is left spinning, and the next render works.
    assert render_chat(MESSAGES, "{{ messages[0].content }}!", None, "") == "Ciao!"


def test_a_renderer_that_does_not_answer_is_ended_by_the_app(
    short_bound: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loop inside one C call never sees the renderer's own alarm: the app ends the process."""
    monkeypatch.setattr(template_process, "KILL_GRACE_S", 0.5)
    render_chat(MESSAGES, "warm", None, "")  # started, so what is timed is the render
    renderer = template_process._renderers[0]
    process = renderer._process
    assert process is not None
    import os
    import signal

    os.kill(process.pid, signal.SIGSTOP)  # as a render stuck where no alarm reaches it
    with pytest.raises(ScriptoriumError, match="did not finish within 0.5 s"):
        render_chat(MESSAGES, "{{ 1 }}", None, "")
    assert process.poll() is not None, "the stuck renderer was ended"
    assert render_chat(MESSAGES, "{{ 2 }}", None, "") == "2"


def test_a_template_that_writes_for_ever_is_stopped_at_its_output_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(template_process, "RENDERED_CHARS_LIMIT", 10_000)
    assert "wrote more than 10,000 characters" in str(_failure_within(20, WRITING_FOR_EVER))


def test_a_template_that_asks_for_gigabytes_is_one_line() -> None:
    assert "MemoryError" in str(_failure_within(20, "{{ 'x' * 10**10 }}"))
    assert render_chat(MESSAGES, "{{ 3 }}", None, "") == "3"


def test_the_templates_own_refusals_and_errors_are_still_one_line() -> None:
    with pytest.raises(ScriptoriumError, match="refused the conversation: roles must alternate"):
        render_chat(MESSAGES, "{{ raise_exception('roles must alternate') }}", None, "")
    with pytest.raises(ScriptoriumError, match="could not be rendered"):
        render_chat(MESSAGES, "{% for %}", None, "")
    with pytest.raises(ScriptoriumError, match="could not be rendered"):
        render_chat(MESSAGES, "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", None, "")


def test_a_models_looping_template_fails_the_chat_in_time(gguf_dir: Path, short_bound: float) -> None:
    """The GGUF's own template, as the chat renders it (in a generation's worker thread):
    the worker is free again within the bound, so Esc and ctrl+q never wait on it."""
    model = gguf_models.write_llama_model(gguf_dir / "looping-template.gguf", kind="sentence", chat_template=LOOPING)
    backend = IsolatedBackend.load(LoadOptions(model_path=model, n_ctx=256, n_threads=1, n_threads_batch=1))
    failures: list[ScriptoriumError] = []

    def chat() -> None:
        try:
            backend.chat_prompt(MESSAGES)
        except ScriptoriumError as error:
            failures.append(error)

    try:
        worker = threading.Thread(target=chat, daemon=True)
        worker.start()
        worker.join(30)
        assert not worker.is_alive()
    finally:
        backend.close()
    assert "did not finish within 0.5 s" in str(failures[0])
