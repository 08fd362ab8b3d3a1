"""Build llama.cpp's `llama-server` and `llama-perplexity` once, from the llama.cpp that llama-cpp-python vendors.

    .venv/bin/python tools/build_llama_server.py            build them (or reuse the cache); print the server's path
    .venv/bin/python tools/build_llama_server.py --locate   print the cached server's path, build nothing
    .venv/bin/python tools/build_llama_server.py --locate --tool llama-perplexity

The remote backend's tests compare a real llama-server with the in-process engine on
the same model, so both must be the same llama.cpp: the source is the sdist of the
installed llama-cpp-python version (`pip download`, served from pip's cache after the
first time; never GitHub), and the binary is cached under the user cache dir keyed by
the vendored llama.cpp commit, outside the repository. Only the `llama-server` target
is compiled, with the web UI's download skipped (`LLAMA_USE_PREBUILT_UI=OFF`), and on
Linux x86-64 with Intel AMX off, as install.sh builds llama-cpp-python (llama.cpp's AMX
matmul segfaults under virtualisation).

`SCRIPTORIUM_LLAMA_SERVER` and `SCRIPTORIUM_LLAMA_PERPLEXITY` name binaries to use
instead (built elsewhere). Exit status: 0 the binaries are there (the server's path, or
with --locate the tool's, on stdout), 1 one could not be built or is not cached (one
line on stderr saying why).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import platformdirs

BINARY_ENV = "SCRIPTORIUM_LLAMA_SERVER"
SERVER = "llama-server"
PERPLEXITY = "llama-perplexity"
TOOLS = (SERVER, PERPLEXITY)
"""The targets built and cached; the server first (the remote tests need it most)."""
OVERRIDES = {SERVER: BINARY_ENV, PERPLEXITY: "SCRIPTORIUM_LLAMA_PERPLEXITY"}
DISTRIBUTION = "llama-cpp-python"
AMX_OFF = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"


class BuildError(Exception):
    """Why a tool is not available on this machine, in one line."""


def cache_root() -> Path:
    # Deliberately not scriptorium's SCRIPTORIUM_HOME: tests point that at a temporary
    # folder, and the binary must outlive them.
    return Path(platformdirs.user_cache_dir("scriptorium")) / "llama-server"


def installed_version() -> str:
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError as exc:
        raise BuildError(f"{DISTRIBUTION} is not installed in {sys.executable}") from exc


def _version_pointer(version: str) -> Path:
    """The file recording which llama.cpp commit a llama-cpp-python version vendors."""
    return cache_root() / f"{DISTRIBUTION}-{version}.commit"


def _binary_for(commit: str, tool: str = SERVER) -> Path:
    # The cache folder keeps its name from when it held the server alone: a server cached
    # then is found where it is, and only the other tools are built beside it.
    return cache_root() / commit / tool


def locate(tool: str = SERVER) -> Path:
    """The binary to test against, without building: the override or the cache."""
    override = os.environ.get(OVERRIDES[tool])
    if override:
        path = Path(override).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise BuildError(f"{OVERRIDES[tool]}={override} is not an executable file")
        return path
    version = installed_version()
    pointer = _version_pointer(version)
    if not pointer.is_file():
        raise BuildError(
            f"{tool} for {DISTRIBUTION} {version} is not built (run ./install.sh --test or tools/build_llama_server.py)"
        )
    binary = _binary_for(pointer.read_text(encoding="utf-8").strip(), tool)
    if not binary.is_file():
        raise BuildError(f"{binary} is missing (run tools/build_llama_server.py)")
    return binary


def _download_sdist(version: str, into: Path) -> Path:
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--no-deps",
        "--no-binary",
        ":all:",
        f"{DISTRIBUTION}=={version}",
        "-d",
        str(into),
    ]
    result = subprocess.run(cmd, capture_output=True, text=True)
    archives = sorted(into.glob("*.tar.gz"))
    if result.returncode != 0 or not archives:
        last = (result.stderr.strip().splitlines() or ["no archive"])[-1]
        raise BuildError(f"could not download the {DISTRIBUTION} {version} sdist: {last}")
    return archives[0]


def _vendored_commit(source: Path) -> str:
    """The llama.cpp commit the sdist vendors, from the submodule's git HEAD it ships."""
    head = source / ".git" / "modules" / "vendor" / "llama.cpp" / "HEAD"
    if head.is_file():
        commit = head.read_text(encoding="utf-8").strip()
        if len(commit) == 40 and all(c in "0123456789abcdef" for c in commit):
            return commit
    raise BuildError(f"the {DISTRIBUTION} sdist does not record its llama.cpp commit ({head})")


def _cmake_args(commit: str) -> list[str]:
    args = [
        "-DCMAKE_BUILD_TYPE=Release",
        # One self-contained executable that can live in the cache alone.
        "-DBUILD_SHARED_LIBS=OFF",
        "-DLLAMA_BUILD_TESTS=OFF",
        "-DLLAMA_BUILD_EXAMPLES=OFF",
        "-DLLAMA_BUILD_UI=OFF",
        "-DLLAMA_USE_PREBUILT_UI=OFF",
        "-DLLAMA_OPENSSL=OFF",
        f"-DLLAMA_BUILD_COMMIT={commit[:7]}",
    ]
    if platform.system() == "Linux" and platform.machine() in ("x86_64", "amd64"):
        args += [f"-DCMAKE_C_FLAGS={AMX_OFF}", f"-DCMAKE_CXX_FLAGS={AMX_OFF}"]
    if platform.system() == "Darwin":
        args.append("-DGGML_METAL=ON")
    if shutil.which("ninja"):
        args.append("-GNinja")
    return args


def _run(cmd: list[str], log: Path) -> None:
    with log.open("a", encoding="utf-8") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        if subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT).returncode != 0:
            raise BuildError(f"'{' '.join(cmd[:3])} ...' failed; see {log}")


def _missing_tools() -> list[str]:
    missing = []
    for tool in TOOLS:
        try:
            locate(tool)
        except BuildError:
            missing.append(tool)
    return missing


def build(jobs: int) -> Path:
    """Build (or reuse) the binaries for the installed llama-cpp-python; returns the server's path."""
    if not _missing_tools():
        return locate()
    if shutil.which("cmake") is None:
        raise BuildError("cmake is not installed, so llama.cpp's tools cannot be built")
    version = installed_version()
    cache_root().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="llama-server-build-") as tmp:
        work = Path(tmp)
        archive = _download_sdist(version, work)
        with tarfile.open(archive) as tar:
            if hasattr(tarfile, "data_filter"):  # Python >= 3.12 and recent 3.10/3.11
                tar.extractall(work, filter="data")
            else:
                tar.extractall(work)
        source = next(p for p in work.iterdir() if p.is_dir())
        commit = _vendored_commit(source)
        # An overridden tool is not built; of the others, those not cached for this commit.
        targets = [
            tool for tool in TOOLS if not os.environ.get(OVERRIDES[tool]) and not _binary_for(commit, tool).is_file()
        ]
        if targets:
            log = cache_root() / f"build-{commit[:12]}.log"
            log.write_text("", encoding="utf-8")
            llama = source / "vendor" / "llama.cpp"
            build_dir = work / "build"
            started = time.monotonic()
            _run(["cmake", "-S", str(llama), "-B", str(build_dir), *_cmake_args(commit)], log)
            for tool in targets:
                # One target at a time in the same build folder: what they share compiles once,
                # and a tool that fails to build leaves the ones before it cached.
                _run(["cmake", "--build", str(build_dir), "--target", tool, "--parallel", str(jobs)], log)
                built = build_dir / "bin" / tool
                if not built.is_file():
                    raise BuildError(f"the build finished without {built}; see {log}")
                binary = _binary_for(commit, tool)
                binary.parent.mkdir(parents=True, exist_ok=True)
                # Copy then rename: a half-copied binary is never found by locate().
                partial = binary.with_suffix(".partial")
                shutil.copy2(built, partial)
                partial.replace(binary)
                _version_pointer(version).write_text(commit + "\n", encoding="utf-8")
            print(
                f"build_llama_server: built {', '.join(targets)} in {time.monotonic() - started:.0f} s "
                f"with {jobs} jobs (llama.cpp {commit[:12]})",
                file=sys.stderr,
            )
        _version_pointer(version).write_text(commit + "\n", encoding="utf-8")
    return locate()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locate", action="store_true", help="print the cached binary's path; build nothing")
    parser.add_argument(
        "--tool", choices=TOOLS, default=SERVER, help="the binary --locate prints (default: llama-server)"
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel compile jobs")
    args = parser.parse_args(argv)
    try:
        path = locate(args.tool) if args.locate else build(max(1, args.jobs))
    except BuildError as exc:
        print(f"build_llama_server: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
