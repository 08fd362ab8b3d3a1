"""Nothing heavy before the first paint: the command and the app are built without
llama.cpp, numpy or the GGUF reader, which load with the model, in the background."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("llama_cpp", "numpy", "gguf")


def loaded_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_the_command_imports_nothing_heavy() -> None:
    assert loaded_after("import scriptorium.app.cli.main") == []


def test_building_the_app_imports_nothing_heavy() -> None:
    code = ("from scriptorium.app.cli.main import build_parser\n"
            "from scriptorium.app.cli.tui_cmd import build_app\n"
            "build_app(build_parser(None).parse_args([]))")
    assert loaded_after(code) == []
