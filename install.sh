#!/usr/bin/env bash
# Installs scriptorium into ./.venv from this checkout.
#   ./install.sh          the app, with the Gemma 3 270M demo model
#   ./install.sh --test   the same plus what the tests need (pytest, snapshots, tmux, llama-server)
#   ./install.sh --test --generic   into .venv-generic, llama.cpp built for any x86-64 (no -march=native): the suite on a second CPU profile
# llama-cpp-python is compiled from source here; pip caches the wheel, so only the
# first run pays the ~5 minute build.
set -euo pipefail
cd "$(dirname "$0")"

with_tests=0
generic=0
for arg in "$@"; do
    case "$arg" in
        --test) with_tests=1 ;;
        --generic) generic=1 ;;
        *) echo "install.sh: unknown option '$arg' (only --test, --generic)" >&2; exit 2 ;;
    esac
done
venv=.venv
if [ "$generic" = 1 ]; then
    # Without -march=native llama.cpp picks a fixed instruction set (AVX2, no AVX512),
    # so float32 rounds as on another CPU: the suite must pass there too.
    venv=.venv-generic
    export CMAKE_ARGS="${CMAKE_ARGS:-} -DGGML_NATIVE=OFF"
fi

python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    echo "install.sh: scriptorium needs Python 3.10 or newer ('$python' is missing or older)" >&2
    exit 2
fi

amx_off='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16'
needs_amx_off=0
case "$(uname -s)-$(uname -m)" in
    Linux-x86_64|Linux-amd64)
        # -march=native turns on Intel AMX on Sapphire Rapids, and llama.cpp's AMX
        # matmul segfaults on the first decode under virtualisation (llama.cpp #20824).
        export CMAKE_ARGS="${CMAKE_ARGS:-} -DCMAKE_C_FLAGS='$amx_off' -DCMAKE_CXX_FLAGS='$amx_off'"
        needs_amx_off=1
        ;;
    Darwin-*)
        export CMAKE_ARGS="${CMAKE_ARGS:-} -DGGML_METAL=on"
        ;;
esac

[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip

if [ "$generic" = 1 ] && ! "$venv/bin/python" -c 'import llama_cpp' 2>/dev/null; then
    # pip's cached wheel is the native build whatever CMAKE_ARGS says: build this one
    # apart and keep it out of the cache, where it would replace the native one.
    echo "install.sh: building llama-cpp-python for generic x86-64 (about five minutes)"
    "$venv/bin/python" -m pip install --quiet --force-reinstall --no-deps --no-cache-dir "llama-cpp-python==0.3.36"
fi

extras=demo
[ "$with_tests" = 1 ] && extras=demo,test
echo "install.sh: installing scriptorium[$extras] (the first build of llama-cpp-python takes a few minutes)"
# setuptools boxes a warning about editable installs (folders named like the package may
# shadow it) into every such install; --quiet does not reach the build backend. This one
# warning is silenced by its text, nothing else: the layout it warns of is this project's own.
export PYTHONWARNINGS="ignore:Editable installation"
"$venv/bin/python" -m pip install --quiet --editable ".[$extras]"

# pip reuses a cached llama-cpp-python wheel whatever CMAKE_ARGS says; one built
# elsewhere with AMX on would crash, so check the library that was actually installed.
if [ "$needs_amx_off" = 1 ]; then
    if "$venv/bin/python" -c 'import llama_cpp, sys; sys.exit(b"AMX_INT8 = 1" not in llama_cpp.llama_print_system_info())'; then
        echo "install.sh: the cached llama-cpp-python was built with AMX; rebuilding it without"
        "$venv/bin/python" -m pip cache remove llama_cpp_python >/dev/null 2>&1 || true
        "$venv/bin/python" -m pip install --quiet --force-reinstall --no-deps --no-cache-dir "llama-cpp-python==0.3.36"
    fi
fi
if [ "$generic" = 1 ] && "$venv/bin/python" -c 'import llama_cpp, sys; sys.exit(b"AVX512 = 1" not in llama_cpp.llama_print_system_info())'; then
    echo "install.sh: $venv's llama-cpp-python uses AVX512, so it is a native build, not a generic one" >&2
    exit 1
fi

# The C helpers (inference/local/_step.c for per-token probabilities, inference/core/_pieces.c
# for every token's bytes at once) are optional to the build: without this Python's C headers
# pip skips them, numpy does the first's work, a few percent slower, and ctypes the second's.
helper_built() {
    "$venv/bin/python" -c 'import scriptorium.inference.local._step, scriptorium.inference.core._pieces' 2>/dev/null
}
if ! helper_built; then
    if [ "$with_tests" = 1 ] && command -v apt-get >/dev/null 2>&1; then
        # The tests check the helpers are there; Debian ships the headers apart.
        sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
        $sudo_cmd apt-get update -qq && $sudo_cmd apt-get install -y -qq python3-dev >/dev/null || true
        "$venv/bin/python" -m pip install --quiet --no-deps --editable .
    fi
    helper_built || echo "install.sh: the C helpers were not built (no C headers for this Python:" \
        "install python3-dev); scriptorium works, decoding a few percent slower" >&2
fi

# An editable install leaves the sources uncompiled: the first start would compile them,
# and every start would where Python may not write bytecode (PYTHONDONTWRITEBYTECODE),
# about 50 ms before the first screen. Compile them once here, as pip does for a wheel.
"$venv/bin/python" -m compileall -q -x '/(build|\.venv[^/]*|tests|bench|tools)/' . >/dev/null || true

if [ "$with_tests" = 1 ] && ! command -v tmux >/dev/null 2>&1; then
    # One test drives the real `scriptorium` command inside tmux.
    if command -v apt-get >/dev/null 2>&1; then
        sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
        $sudo_cmd apt-get update -qq && $sudo_cmd apt-get install -y -qq tmux >/dev/null
    elif command -v brew >/dev/null 2>&1; then
        brew install tmux
    else
        echo "install.sh: tmux not found; the tmux test will be skipped" >&2
    fi
fi
if [ "$with_tests" = 1 ]; then
    # The remote backend's tests run a real llama-server, and compare's tests llama-perplexity,
    # built from the llama.cpp that llama-cpp-python vendors (cached under the user cache dir,
    # keyed by that commit: only the first run compiles, about 14 minutes on 2 cores). Without
    # them those tests skip.
    if ! "$venv/bin/python" tools/build_llama_server.py >/dev/null; then
        echo "install.sh: llama-server or llama-perplexity was not built; the tests that need them will be skipped" >&2
    fi
fi
echo "install.sh: done"
