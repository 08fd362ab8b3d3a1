"""The package's import graph, read from the sources with `ast`: no cycles, and llama_cpp
only where it belongs.

Every import counts, wherever it is written: at module level, inside a function, or
under `if TYPE_CHECKING:` (a type-only import still means one module must know the
other). `import a.b.c` and `from a.b import c` point at the deepest of a.b.c, a.b, a
that is a module of the package.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {
    "scriptorium.app": ROOT / "app",
    "scriptorium.inference": ROOT / "inference",
    "scriptorium.prompts": ROOT / "prompts",
}


def package_modules(packages: dict[str, Path] = PACKAGES) -> dict[str, tuple[Path, bool]]:
    """Module name -> (source file, is a package's __init__)."""
    modules = {}
    for package, folder in packages.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            is_package = parts[-1] == "__init__"
            name = ".".join((package, *(parts[:-1] if is_package else parts)))
            modules[name] = (path, is_package)
    return modules


def _deepest(name: str, modules: dict) -> str | None:
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


def imported_names(module: str, path: Path, is_package: bool) -> list[list[str]]:
    """The absolute dotted names `module` imports, relative imports resolved; for
    `from X import y` both X.y (if y is a module) and X are candidates."""
    here = module.split(".") if is_package else module.split(".")[:-1]
    names: list[list[str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.extend([alias.name] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            names.extend([f"{target}.{alias.name}", target] for alias in node.names)
    return names


def import_graph(packages: dict[str, Path] = PACKAGES) -> dict[str, set[str]]:
    modules = package_modules(packages)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, (path, is_package) in modules.items():
        for candidates in imported_names(name, path, is_package):
            target = next((t for t in (_deepest(c, modules) for c in candidates) if t), None)
            if target is not None and target != name:
                graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """For every import that lies on a cycle, the shortest cycle through it, each listed
    once, starting at its first module in sorted order."""
    found: set[tuple[str, ...]] = set()
    for component in _strongly_connected(graph):
        members = set(component)
        for source in component:
            for target in graph[source] & members:
                path = _shortest_path(target, source, graph, members)
                cycle = [source, *path]  # source -> target ... -> source
                ring = cycle[:-1]
                first = ring.index(min(ring))
                found.add(tuple(ring[first:] + ring[:first] + [ring[first]]))
    return sorted(list(cycle) for cycle in found)


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def _shortest_path(start: str, goal: str, graph: dict[str, set[str]], members: set[str]) -> list[str]:
    """Breadth first within one component, where a path always exists: start ... goal."""
    previous: dict[str, str] = {}
    frontier = [start]
    while goal not in previous:
        following = []
        for node in frontier:
            for nxt in sorted(graph[node] & members):
                if nxt not in previous:
                    previous[nxt] = node
                    following.append(nxt)
        frontier = following
    path = [goal]
    while path[-1] != start or len(path) == 1:
        path.append(previous[path[-1]])
    return path[::-1]


def describe(found: list[list[str]]) -> str:
    return "\n".join(" -> ".join(cycle) for cycle in found)


def test_the_graph_sees_every_kind_of_import(tmp_path: Path) -> None:
    files = {
        "__init__.py": "",
        "a.py": "from . import b\nfrom .sub.d import thing\n",
        "b.py": "def later():\n    from .c import helper\n",
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.sub\n",
        "sub/__init__.py": "from ..b import later\n",
        "sub/d.py": "import pkg.sub.d.missing\nimport os\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    assert import_graph({"pkg": tmp_path}) == {
        "pkg": set(),
        "pkg.a": {"pkg.b", "pkg.sub.d"},  # relative, `from package import module`
        "pkg.b": {"pkg.c"},  # function level
        "pkg.c": {"pkg.sub"},  # type only
        "pkg.sub": {"pkg.b"},  # relative from a package's __init__
        "pkg.sub.d": set(),  # the deepest module that exists is itself; os is not ours
    }


def test_cycles_are_found_and_listed() -> None:
    graph = {"a": {"b"}, "b": {"c", "a"}, "c": {"a", "d"}, "d": set(), "e": {"f"}, "f": {"e"}}
    assert cycles(graph) == [["a", "b", "a"], ["a", "b", "c", "a"], ["e", "f", "e"]]


def test_the_package_has_no_import_cycles() -> None:
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + describe(found)


def test_no_app_module_imports_llama_cpp() -> None:
    modules = package_modules()
    offenders = [
        name
        for name, (path, is_package) in modules.items()
        if name.startswith("scriptorium.app")
        and any(c[-1].split(".")[0] == "llama_cpp" for c in imported_names(name, path, is_package))
    ]
    assert not offenders


def test_importing_the_inference_layer_does_not_load_llama_cpp() -> None:
    modules = [name for name in package_modules() if name.startswith("scriptorium.inference")]
    code = f"import sys\nfor name in {modules!r}: __import__(name)\nassert 'llama_cpp' not in sys.modules, name"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def folder_graph(graph: dict[str, set[str]], packages: set[str], depth: int = 3) -> dict[str, set[str]]:
    """The import graph with each module replaced by its folder (the package it lies in,
    a package being its own), named by at most its first `depth` parts: with 3,
    `scriptorium.app.tui.widgets.chat_pane` is in `scriptorium.app.tui`,
    `scriptorium.app.paths` in `scriptorium.app`. An import between two folders is an edge."""

    def folder(name: str) -> str:
        package = name if name in packages else name.rsplit(".", 1)[0]
        return ".".join(package.split(".")[:depth])

    folders: dict[str, set[str]] = {folder(name): set() for name in graph}
    for source, targets in graph.items():
        folders[folder(source)].update(folder(target) for target in targets if folder(target) != folder(source))
    return folders


def test_folders_are_collapsed_from_their_modules() -> None:
    graph = {
        "pkg": set(),
        "pkg.util": {"pkg.core.c"},
        "pkg.core": set(),
        "pkg.core.c": set(),
        "pkg.core.a": {"pkg.ui.deep.b"},
        "pkg.ui": set(),
        "pkg.ui.d": {"pkg.ui.deep.b"},
        "pkg.ui.deep": set(),
        "pkg.ui.deep.b": {"pkg.core.c", "pkg.ui.d"},
    }
    packages = {"pkg", "pkg.core", "pkg.ui", "pkg.ui.deep"}
    assert folder_graph(graph, packages, depth=2) == {
        "pkg": {"pkg.core"},
        "pkg.core": {"pkg.ui"},
        "pkg.ui": {"pkg.core"},
    }
    assert cycles(folder_graph(graph, packages, depth=2)) == [["pkg.core", "pkg.ui", "pkg.core"]]


def test_the_package_has_no_import_cycles_between_folders() -> None:
    """A folder is a layer: inference/ below app/, prompts/ data that inference may read;
    app's cli/, config/, models/, sessions/ and tui/ each a part of the app; inference's
    seams (core/, gguf/, vocab/, window/, local/, process/, remote/) each a part of the
    engine side. A loop between folders (inference/window/chat.py read prompts/, whose
    loader imported inference/core/errors.py) means neither can be understood, moved or
    tested alone."""
    packages = {name for name, (_, is_package) in package_modules().items() if is_package}
    found = cycles(folder_graph(import_graph(), packages))
    assert not found, "import cycles between folders:\n" + describe(found)


def test_the_inference_core_imports_no_other_seam() -> None:
    """inference/core/ is what every seam speaks in (errors, events, settings, a model's
    facts, the Backend protocol): it stands below them all, so any seam can be read with
    core/ alone beside it (docs/development.md, Layout)."""
    core = "scriptorium.inference.core"
    found = sorted(
        f"{source} -> {target}"
        for source, targets in import_graph().items()
        if source.startswith(core)
        for target in targets
        if target.startswith("scriptorium.inference") and not target.startswith(core)
    )
    assert not found, "inference/core/ imports another seam:\n" + "\n".join(found)


def test_sessions_import_nothing_of_the_tui() -> None:
    """app/sessions/ is sessions on disk, which the command line reads and writes too: the TUI's
    side of them (what the author writes, recorded and saved) is the TUI's manuscript
    (app/tui/manuscript/). A session module that imported the TUI (sessions/keeper.py once
    imported tui/generation.py) would load Textual into `scriptorium sessions` and `export`."""
    sessions, tui = "scriptorium.app.sessions", "scriptorium.app.tui"
    found = sorted(
        f"{source} -> {target}"
        for source, targets in import_graph().items()
        if source == sessions or source.startswith(sessions + ".")
        for target in targets
        if target == tui or target.startswith(tui + ".")
    )
    assert not found, "app/sessions/ imports the TUI:\n" + "\n".join(found)
