"""Nothing heavy before the first paint: the command and the app are built without
llama.cpp, numpy or the GGUF reader, which load with the model, in the background; nor
with what only a later action uses (bench/startup.py times the whole start)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("llama_cpp", "numpy", "gguf")
LATER = ("httpx", "yaml", "markdown_it", "multiprocessing")
"""The remote backend's client, the export's YAML, chat replies' Markdown, the engine's
child process: each imported when first used, after the first paint."""
ON_DEMAND = tuple(
    f"scriptorium.app.tui.{name}"
    for name in (
        "screens.help_screen",
        "screens.sessions_screen",
        "screens.compare_screen",
        "screens.model_picker",
        "screens.candidates_screen",
        "screens.lore_screen",
        "screens.pinned_screen",
        "screens.file_conflict_screen",
        "screens.unsaved_screen",
        "context_viewing",
        "exporting",
    )
) + ("scriptorium.inference.remote.remote_http",)
"""The screens an action opens, and the remote path a local model never takes: imported
when first used, so that start-up loads only what the first frame shows."""
AFTER_THE_FIRST_FRAME = (
    "scriptorium.inference.core.events",
    "scriptorium.app.models.choice",
    "scriptorium.inference.gguf.discovery",
    "scriptorium.inference.gguf.gguf_header",
    "scriptorium.inference.core.model_facts",
    "scriptorium.inference.core.arithmetic",
    "scriptorium.app.tui.generation",
    "scriptorium.app.models.loading",
    "scriptorium.app.tui.scoring",
    "tomllib",
    "importlib.resources",
    "ctypes",
)
"""Modules the first frame does not use, although the app's reach them: the event classes
(some 13 ms of dataclasses to build) come with the first tokens, in the worker or the
engine; model choice, with discovery and the GGUF reader (some 10 ms), with the model, in
the worker that resolves it; the generation's, the model's and the scoring's messages (some
25 dataclasses), with the first generation, model or scoring, their handlers named by
Textual's convention rather than declared with @on(class); the TOML parser (some 6 ms),
with a config file or a lorebook to read, and the tests' runs have neither; the prompt
templates' reader, with the first prompt; ctypes, with llama.cpp's tokenizer. Each is
imported where it is used, or only for type checking."""
FIRST_FRAME = (
    "import sys\n"
    "from scriptorium.app.tui.app import ScriptoriumApp\n"
    # No model named nor found: nothing loads in the background while the frame is drawn.
    "app = ScriptoriumApp(backend_loader=lambda options, progress: None)\n"
    "async def painted(pilot):\n"
    "    print(' '.join(m for m in {modules!r} if m in sys.modules))\n"
    "    app.exit()\n"
    "app.run(headless=True, size=(120, 40), auto_pilot=painted)\n"
)
"""The app run headless to its first frame (its ready event), where the probe says which of
`modules` are loaded."""
BUILD_APP = (
    "from scriptorium.app.cli.main import build_parser\n"
    "from scriptorium.app.cli.tui_cmd import build_app\n"
    "build_app(build_parser(None).parse_args([]))"
)


def loaded_after(code: str, modules: tuple[str, ...] = HEAVY) -> list[str]:
    probe = f"import sys\n{code}\nprint(' '.join(m for m in {modules!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_the_command_imports_nothing_heavy() -> None:
    assert loaded_after("import scriptorium.app.cli.main") == []


def test_building_the_app_imports_nothing_heavy() -> None:
    assert loaded_after(BUILD_APP) == []


def test_building_the_app_leaves_later_modules_for_later() -> None:
    assert loaded_after(BUILD_APP, LATER) == []


def test_building_the_app_leaves_the_screens_actions_open_for_later() -> None:
    assert loaded_after(BUILD_APP + "\nimport scriptorium.app.tui.app", ON_DEMAND) == []


def test_the_first_frame_leaves_later_modules_for_later() -> None:
    probe = FIRST_FRAME.format(modules=AFTER_THE_FIRST_FRAME)
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == []


def test_importing_the_token_decoder_registers_nothing() -> None:
    """Nothing runs at import: text.py registered its codec error handlers as it was
    imported; they are registered when first used."""
    probe = (
        "import codecs\nimport scriptorium.inference.core.text as text\n"
        "for name in text._HANDLERS:\n"
        "    try:\n        codecs.lookup_error(name)\n        print(name)\n"
        "    except LookupError:\n        pass\n"
        "text.TokenTextDecoder(), text.piece_text(b'\\xff')\n"
        "print(sorted(name for name in text._HANDLERS if codecs.lookup_error(name)))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["['scriptorium-byte-labels', 'scriptorium-drop-unfinished']"]
