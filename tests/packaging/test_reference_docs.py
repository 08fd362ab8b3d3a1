"""docs/reference.md is what tools/make_reference.py makes from the key registry and the
starter config today: a key or setting changed in the code and not in the reference fails here."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("make_reference", ROOT / "tools" / "make_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_reference_of_keys_and_settings_is_current() -> None:
    tool = _tool()
    assert tool.REFERENCE.read_text(encoding="utf-8") == tool.reference_text(), (
        "docs/reference.md is out of date: run .venv/bin/python tools/make_reference.py"
    )


def test_the_reference_names_every_binding_id_and_config_table() -> None:
    from scriptorium.app.tui.bindings import APP_BINDINGS, binding_sections

    text = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    ids = [b.id for _, bindings in binding_sections(APP_BINDINGS) for b in bindings if getattr(b, "id", None)]
    assert ids and all(f"`{binding_id}`" in text for binding_id in ids)
    for table in ("[model]", "[sampler]", "[logit_bias]", "[keymap]", "[ui]", "[server]"):
        assert table in text
