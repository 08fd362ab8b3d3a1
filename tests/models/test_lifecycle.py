"""The model lifecycle as a plain object: what a death, a reload and a give-up mean."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from scriptorium.app.models.lifecycle import RELOADS_IN_A_ROW, ModelLifecycle
from scriptorium.inference.load_options import LoadOptions

ORIGIN = "llama-server b1 at http://127.0.0.1:8080"


def test_a_server_restarting_too_often_in_a_row_is_left_to_connect_to_again() -> None:
    """The give-up said "the model's engine stopped 3 times" of a server, and left no
    origin on the status: the load key then opened the file dialog, for a file on the
    server's machine, instead of connecting again."""
    lifecycle = ModelLifecycle(None, 1)
    options = LoadOptions(model_path=Path("/server/models/model.gguf"))
    for _ in range(RELOADS_IN_A_ROW + 1):
        load_id = lifecycle.asked()
        lifecycle.begin_load(options)
        backend = SimpleNamespace(origin=ORIGIN, options=options, facts=SimpleNamespace(file_size=0), n_ctx=512,
                                  adapter=None, tokenizer_name="", tokenizer_warning="", arithmetic=None)
        assert lifecycle.loaded(load_id, backend)  # type: ignore[arg-type]
        options = lifecycle.crashed(backend, None)  # type: ignore[arg-type]
        assert options is not None
        gave_up = lifecycle.gives_up(options)
    assert gave_up and lifecycle.status.state == "failed"
    assert lifecycle.status.error == f"{ORIGIN} restarted {RELOADS_IN_A_ROW + 1} times in a row, so it was not connected to again."
    assert lifecycle.server_to_connect_again(None) is not None
