"""The app on a llama-server: the panels say where the model runs and what is unknown,
scoring is refused with its reason, and a server that cannot be reached is a notification.
A server that restarts or is connected to again: test_remote_reconnect_tui.py."""

from __future__ import annotations

import sys
from pathlib import Path
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Iterator

import pytest
from tui_helpers import generated, ready, typed, window_marked

_TESTS = str(Path(__file__).resolve().parent.parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from llama_server import CONTEXT, LlamaServer, closed_port, server_binary  # noqa: E402

from scriptorium.app.cli.common import SERVER_MODEL  # noqa: E402
from scriptorium.app.sessions.export import front_matter  # noqa: E402
from scriptorium.app.sessions.format import dumps, loads  # noqa: E402
from scriptorium.inference.remote.remote import remote_loader  # noqa: E402


def text_of(panel: Any, width: int = 60) -> str:
    return "\n".join(line.plain for line in panel.lines(width))


@pytest.fixture(scope="module")
def sentence_server(sentence_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    server_binary()
    with LlamaServer(sentence_model, tmp_path_factory.mktemp("llama-server-logs")) as server:
        yield server


@asynccontextmanager
async def served_app(
    model: Path, log_dir: Path, *extra: str, context: int = CONTEXT
) -> AsyncIterator[tuple[LlamaServer, Any, Any]]:
    """(server, app, pilot): the app connected to a llama-server serving `model`."""
    server_binary()
    with LlamaServer(model, log_dir, *extra, context=context) as server:
        async with ready(SERVER_MODEL, loader=remote_loader(server.url), size=(120, 40)) as (app, pilot):
            assert app.engine_state.backend is not None
            yield server, app, pilot


async def test_the_panels_show_the_server_and_unknown_kv_bytes(sentence_server: LlamaServer) -> None:
    async with ready(SERVER_MODEL, loader=remote_loader(sentence_server.url), size=(160, 48)) as (app, pilot):
        await typed(pilot, "Era notte")
        done = await generated(pilot, "ctrl+g")
        assert done.stop_reason == "eos" and done.text == " La casa era buia."
        sidebar = app.main.sidebar
        model = text_of(sidebar.model)
        assert "llama-server" in model and sentence_server.url in model
        kv = text_of(sidebar.kv)
        assert "unknown of unknown" in kv and "unknown per token" in kv
        assert f"/ {app.engine_state.backend.n_ctx:,} tokens" in kv
        # The session says the text came from the server: its model path is the server's.
        session = app.sessions.draft
        assert session is not None
        origin = session.generations[-1].origin
        assert origin.startswith("llama-server") and sentence_server.url in origin
        assert front_matter(session)["server"] == origin
        assert loads(dumps(session)).generations[-1].origin == origin
        await pilot.press("f9")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert any("every position" in n.message for n in app.notices)
        assert app.main.draft.editor.text.startswith("Era notte")


async def test_the_model_panel_shows_the_servers_whole_address_at_the_sidebars_width(
    sentence_server: LlamaServer,
) -> None:
    """At the sidebar's width the server's line was cut to "llama-server b1-… at http…",
    and the tokenizer's to "llama.cpp (on the ser…"."""

    async with ready(SERVER_MODEL, loader=remote_loader(sentence_server.url), size=(160, 48)) as (app, pilot):
        panel = app.main.sidebar.model
        lines = [line.plain for line in panel.lines(panel.content_region.width)]
        assert f"at {sentence_server.url}" in lines and "arithmetic not reported" in lines
        assert len(lines) == panel.LINES, lines
        assert not [line for line in lines if line.endswith("…")], lines
        assert "unknown" not in lines[1] and "params" in lines[1], lines


async def test_a_server_that_cannot_be_reached_is_a_notification_not_a_crash() -> None:
    connect = remote_loader(f"http://127.0.0.1:{closed_port()}")
    tries: list[object] = []

    def counted(*args: Any) -> Any:
        tries.append(args)
        return connect(*args)

    async with ready(SERVER_MODEL, loader=counted, size=(120, 40)) as (app, pilot):
        assert app.engine_state.backend is None
        status = app.models.status
        assert status.state == "failed" and "cannot reach llama-server" in status.error
        await typed(pilot, "ciao")
        assert app.main.draft.editor.text.startswith("ciao")
        # The remedy is to ask the server again (the load key does), not another model file.
        key = app.keys.key_display("app.load_model")
        said = [n.message for n in app.notices if "cannot reach llama-server" in n.message]
        assert said and said[-1].endswith(f"press {key} to connect to the llama-server again.")
        assert text_of(app.main.sidebar.model).rstrip().endswith(f"{key}: connect again")
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert app.notices and list(app.notices)[-1].message == (
            f"No model is loaded: press {key} to connect to the llama-server again."
        )
        # The load key tries the server again at once: no dialog asking for a model file.
        await pilot.press("ctrl+l")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(tries) == 2 and app.screen is app.main


async def test_a_server_gone_when_continuing_is_said_as_the_models_failure(
    sentence_model: Path, tmp_path: Path
) -> None:
    async with served_app(sentence_model, tmp_path) as (server, app, pilot):
        await typed(pilot, "La casa")
        server.kill()
        await pilot.press("ctrl+g")
        await app.main.wait_until_idle()  # the generation's worker finds the server gone
        await pilot.pause()
        said = [n for n in app.notices if "cannot reach llama-server" in n.message]
        assert said and said[-1].title == "Model"
        assert app.main.draft.editor.text == "La casa"


async def test_a_hung_server_holds_no_key_when_continuing(sentence_model: Path, tmp_path: Path) -> None:
    """A server that stops answering (here SIGSTOPped) while the author presses the continue
    key: the prompt is fitted to the window in the generation's worker, so keys are taken
    while the server is silent, and Esc ends the wait at once."""
    import os
    import signal

    server_binary()

    with LlamaServer(sentence_model, tmp_path) as server:
        assert server.process is not None
        async with ready(SERVER_MODEL, loader=remote_loader(server.url), size=(120, 40)) as (app, pilot):
            assert app.engine_state.backend is not None
            await typed(pilot, "La casa")
            await window_marked(pilot)  # the window marker's count, before the server stops
            os.kill(server.process.pid, signal.SIGSTOP)
            try:
                await pilot.press("ctrl+g")
                assert app.main.is_generating
                await pilot.press("home")
                await typed(pilot, "Era ")
                assert app.main.draft.editor.text == "Era La casa"
                await pilot.press("escape")
                assert not app.main.is_generating
            finally:
                os.kill(server.process.pid, signal.SIGCONT)
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert app.main.draft.editor.text == "Era La casa"
            # The wait was the server's: once it answers again, so does the app.
            done = await generated(pilot, "ctrl+g")
            assert done.stop_reason != "cancelled" and app.main.last_generation[1]


async def test_with_a_server_the_model_is_switched_where_it_runs(
    random_model: Path, sentence_server: LlamaServer
) -> None:
    """The picker lists this machine's models, and the remote loader connects to the same
    server whatever is chosen: with a server, neither the note nor the key offers it."""

    async def write_here() -> None:
        async with ready(random_model) as (app, pilot):
            await typed(pilot, "Era notte")
            await generated(pilot, "ctrl+g")
            await pilot.press("ctrl+q")
            await pilot.pause()

    async def resume_on_the_server() -> None:
        async with ready(
            SERVER_MODEL,
            loader=remote_loader(sentence_server.url),
            resume=True,
            size=(160, 48),
        ) as (app, pilot):
            said = [n.message for n in app.notices if "last written with" in n.message]
            assert len(said) == 1 and said[0].endswith("Start the llama-server with it to switch.")
            screens = len(app.screen_stack)
            await pilot.press("f10")
            await pilot.pause()
            assert len(app.screen_stack) == screens
            assert any(sentence_server.url in n.message and "--model to switch" in n.message for n in app.notices)

    await write_here()
    await resume_on_the_server()


def test_a_file_here_by_the_servers_model_path_is_not_hashed_as_its_model(
    sentence_model: Path, sentence_server: LlamaServer
) -> None:
    """Connecting again (after a restart) carries the server's model path: the file at that
    path on this machine may be another, so no hash of it is recorded as the server's model's."""
    from scriptorium.app.models.loading import ModelFileHashed, ModelLoaded, load_backend
    from scriptorium.inference.core.load_options import LoadOptions

    posted: list[object] = []
    load_backend(remote_loader(sentence_server.url), None, LoadOptions(model_path=sentence_model), 1, posted.append)
    loaded = [m for m in posted if isinstance(m, ModelLoaded)]
    assert len(loaded) == 1
    loaded[0].backend.close()
    assert not [m for m in posted if isinstance(m, ModelFileHashed)]


async def test_text_a_served_model_cannot_encode_is_said_as_locally(no_bytes_gguf: Path, tmp_path: Path) -> None:
    """A SentencePiece model with no byte tokens and no newline piece, on llama-server: the
    draft's line break and the chat's (between the turns) were "refused /tokenize (HTTP
    500): unordered_map::at"."""

    async with served_app(no_bytes_gguf, tmp_path) as (_, app, pilot):
        app.main.draft.editor.load_text("La casa era buia.\nE la notte")
        app.notices.clear()
        await pilot.press("ctrl+g")
        await app.workers.wait_for_complete()
        await pilot.pause()
        # Besides the one saying the server cannot heal the cut token, said once for it.
        [said] = [n for n in app.notices if n.title != "Token healing"]
        assert said.message.startswith(
            "the model's vocabulary cannot encode '\\n' (U+000A) at character 18 (line 1, column 18) of the draft"
        )
        await pilot.press("f2")  # chat
        await pilot.pause()
        app.notices.clear()
        await typed(pilot, "ciao")
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await app.main.wait_until_idle()
        await pilot.pause()
        [said] = app.notices
        assert said.title == "Model" and said.message.startswith("this model cannot chat: its chat format writes")
        assert app.main.draft.editor.text == "La casa era buia.\nE la notte"


async def test_on_a_server_with_several_slots_the_kv_figure_waits_for_the_first_generation(
    sentence_model: Path, tmp_path: Path
) -> None:
    """The KV panel showed the fullest slot's tokens at connection: another client's cache,
    not the slot this app's requests will get."""
    import json
    import urllib.request

    async with served_app(sentence_model, tmp_path, "--parallel", "2", context=2 * CONTEXT) as (server, app, pilot):
        body = json.dumps({"prompt": "La casa era buia, e la notte. " * 8, "n_predict": 2}).encode()
        other = urllib.request.Request(
            f"{server.url}/completion", data=body, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(other, timeout=60) as response:  # another program, after connecting
            response.read()
        await pilot.press("ctrl+l")  # connect again: the other client's slot is full now
        await app.workers.wait_for_complete()
        await pilot.pause()
        kv = text_of(app.main.sidebar.kv)
        assert f"unknown / {CONTEXT:,} tokens" in kv and "slot unknown until a generation" in kv
        await typed(pilot, "Era notte")
        done = await generated(pilot, "ctrl+g")
        kv = text_of(app.main.sidebar.kv)
        assert f"{done.kv_cache.tokens:,} / {CONTEXT:,} tokens" in kv and "slot unknown" not in kv
