"""The model lifecycle as a plain object: what a death, a reload and a give-up mean."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from scriptorium.app.models.lifecycle import RELOADS_IN_A_ROW, ModelLifecycle
from scriptorium.inference.core.load_options import LoadOptions

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
        backend = SimpleNamespace(
            origin=ORIGIN,
            options=options,
            facts=SimpleNamespace(file_size=0),
            n_ctx=512,
            adapter=None,
            tokenizer_name="",
            tokenizer_warning="",
            arithmetic=None,
        )
        assert lifecycle.loaded(load_id, backend)  # type: ignore[arg-type]
        options = lifecycle.crashed(backend, None)  # type: ignore[arg-type]
        assert options is not None
        gave_up = lifecycle.gives_up(options)
    assert gave_up and lifecycle.status.state == "failed"
    assert (
        lifecycle.status.error
        == f"{ORIGIN} restarted {RELOADS_IN_A_ROW + 1} times in a row, so it was not connected to again."
    )
    assert lifecycle.server_to_connect_again(None) is not None


def test_a_second_conversion_of_the_same_model_is_told_by_its_file_size_and_date(tmp_path: Path) -> None:
    """ "last written with X…; the model loaded is X" named the same model twice: under one
    name, what differs is the file, its size and its date."""
    from datetime import datetime
    import os

    from scriptorium.app.sessions.records import ModelRef

    loaded = tmp_path / "gemma-Q8_0.gguf"
    loaded.write_bytes(b"x" * 3072)
    os.utime(loaded, (0, datetime(2026, 12, 1, 9, 30).timestamp()))
    lifecycle = ModelLifecycle(None, 1)
    lifecycle.backend = SimpleNamespace(  # type: ignore[assignment]
        origin="",
        options=LoadOptions(model_path=loaded),
        facts=SimpleNamespace(name="Gemma", file_size=3072, path=loaded),
    )
    recorded = ModelRef(path=str(tmp_path / "gemma-Q4_K_M.gguf"), name="Gemma", size=2048, sha256=None)
    said = lifecycle.written_with_another(SimpleNamespace(model=recorded))  # type: ignore[arg-type]
    assert said.startswith(
        f"This session was last written with Gemma ({tmp_path / 'gemma-Q4_K_M.gguf'}); "
        f"the model loaded is another file of that name, {loaded} "
        f"(3.0 KiB, not 2.0 KiB, modified 2026-12-01 09:30). "
    ), said
    assert said.count("Gemma") == 1
