"""The one door to llama_cpp: imported lazily, backend initialised once, llama.cpp's log
captured instead of printed.

llama-cpp-python's `verbose=False` silences llama.cpp by redirecting the process's stdout
and stderr file descriptors, which would blank a running TUI; capturing the log through
`llama_log_set` keeps the terminal intact and keeps llama.cpp's own error lines so a
failed load can say why.
"""

from __future__ import annotations

import collections
import ctypes
import threading
from types import ModuleType
from typing import Any, Callable

_LOG_LINES: collections.deque[str] = collections.deque(maxlen=4000)
_PROBLEM_LINES: collections.deque[tuple[int, str]] = collections.deque(maxlen=50)
"""(position in the log, line) of lines llama.cpp logged as a warning or an error."""
_log_total = 0
_state_lock = threading.Lock()
_library: ModuleType | None = None
_log_callback: Any = None  # kept referenced: llama.cpp holds the raw function pointer

# ggml.h (llama-cpp-python's own _logger.py still has the older numbering).
GGML_LOG_LEVEL_WARN = 3
GGML_LOG_LEVEL_ERROR = 4
GGML_LOG_LEVEL_CONT = 5


def llama() -> ModuleType:
    """`llama_cpp.llama_cpp` (the C bindings), ready to use."""
    global _library, _log_callback
    if _library is not None:
        return _library
    with _state_lock:
        if _library is None:
            from llama_cpp import llama_cpp as lib

            pending: list[str] = []
            line_level = [0]

            @lib.llama_log_callback
            def collect(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
                global _log_total
                if level != GGML_LOG_LEVEL_CONT and not pending:
                    line_level[0] = level
                pending.append(text.decode("utf-8", errors="replace"))
                if pending[-1].endswith("\n"):
                    line = "".join(pending).rstrip("\n")
                    _LOG_LINES.append(line)
                    if line_level[0] in (GGML_LOG_LEVEL_WARN, GGML_LOG_LEVEL_ERROR):
                        _PROBLEM_LINES.append((_log_total, line))
                    _log_total += 1
                    pending.clear()

            _log_callback = collect
            lib.llama_log_set(_log_callback, ctypes.c_void_p(0))
            lib.llama_backend_init()
            _library = lib
    return _library


def own_binding(name: str, restype: Any, *argtypes: Any) -> Any:
    """A binding of llama.cpp function `name` with our own types, independent of the one
    llama-cpp-python declares (changing that one would change it for everyone)."""
    return ctypes.CFUNCTYPE(restype, *argtypes)((name, llama()._lib))


def log_mark() -> int:
    """A position in the captured log, to read what came after it."""
    return _log_total


def log_since(mark: int) -> list[str]:
    """The captured lines logged after `mark` (as many as the bounded buffer still holds)."""
    count = min(_log_total - mark, len(_LOG_LINES))
    return list(_LOG_LINES)[-count:] if count > 0 else []


_BARE_FAILURES = ("failed to load model",)
"""Error lines that only repeat that a step failed: llama.cpp logs one after the line
with the reason ("error loading model: ... has wrong shape"), which is the one to show."""


def last_error_since(mark: int) -> str | None:
    """llama.cpp's most telling line for a failure since `mark`: the last warning or
    error it logged that gives a reason (they name the missing tensor, the bad shape...),
    else the last line that says something failed."""
    problems = [line.strip() for position, line in _PROBLEM_LINES if position >= mark]
    telling = [line for line in problems if not line.endswith(_BARE_FAILURES)]
    if telling or problems:
        return (telling or problems)[-1]
    for line in reversed(log_since(mark)):
        lowered = line.lower()
        if "error" in lowered or "failed" in lowered or "invalid" in lowered:
            return line.strip()
    return None


def token_piece(lib: ModuleType, vocab: Any, token_id: int, *, special: bool = False) -> bytes:
    """The bytes of one token. llama_token_to_piece returns minus the needed size when the
    buffer is short (llama-cpp-python's own 32-byte buffer silently truncates)."""
    size = 64
    while True:
        buffer = ctypes.create_string_buffer(size)
        written = lib.llama_token_to_piece(vocab, token_id, buffer, size, 0, special)
        if written >= 0:
            return buffer.raw[:written]
        size = -written


def all_token_pieces(lib: ModuleType, vocab: Any, n_vocab: int, *, compiled: bool = True) -> list[bytes]:
    """The bytes of every token (control tokens: b''), as llama_token_to_piece writes them.

    One call into the C helper (_pieces.c) where it was built: a ctypes call per token cost
    3 us, 0.8 s over Gemma's 262k tokens. Without it, the same calls from Python, with one
    buffer for all and our own binding (a buffer made per call, and llama-cpp-python's
    wrapper around each call, were most of the cost)."""
    to_piece = own_binding(
        "llama_token_to_piece",
        ctypes.c_int32,
        ctypes.c_void_p,
        ctypes.c_int32,
        ctypes.c_char_p,
        ctypes.c_int32,
        ctypes.c_int32,
        ctypes.c_bool,
    )
    handle = ctypes.cast(vocab, ctypes.c_void_p).value
    token_pieces = _compiled_pieces() if compiled else None
    if token_pieces is not None:
        return token_pieces(ctypes.cast(to_piece, ctypes.c_void_p).value, handle, n_vocab)
    size = 256
    buffer = ctypes.create_string_buffer(size)
    pieces = []
    for token_id in range(n_vocab):
        written = to_piece(handle, token_id, buffer, size, 0, False)
        # string_at copies the piece alone (buffer.raw copied all 256 bytes each time).
        pieces.append(ctypes.string_at(buffer, written) if written >= 0 else token_piece(lib, vocab, token_id))
    return pieces


def _compiled_pieces() -> Callable[[int, int, int], list[bytes]] | None:
    """`_pieces.token_pieces`, or None where the C helper could not be built."""
    try:
        from ._pieces import token_pieces
    except ImportError:
        return None
    return token_pieces


_SoftmaxKernel = Callable[[int, int, int, float], float]
_softmax_kernel: _SoftmaxKernel | None | bool = False  # False: not looked up yet


def softmax_kernel() -> _SoftmaxKernel | None:
    """llama.cpp's own softmax kernel, `ggml_vec_soft_max_f32(n, y, x, max)`: writes
    y = exp(x - max) and returns their sum as a double, in the SIMD code ggml uses for
    its soft_max op (about three times faster than numpy's three passes). Returns None
    when this build does not export it or it does not compute what it should, and the
    caller uses numpy instead."""
    global _softmax_kernel
    if _softmax_kernel is not False:
        return _softmax_kernel  # type: ignore[return-value]
    llama()  # the CPU backend is loaded with llama.cpp; reuse that copy
    with _state_lock:
        if _softmax_kernel is False:
            _softmax_kernel = _load_softmax_kernel()
    return _softmax_kernel  # type: ignore[return-value]


def _load_softmax_kernel() -> _SoftmaxKernel | None:
    import math
    from pathlib import Path

    import llama_cpp

    library_dir = Path(llama_cpp.__file__).parent / "lib"
    for name in ("libggml-cpu.so", "libggml-cpu.dylib", "ggml-cpu.dll"):
        if not (library_dir / name).exists():
            continue
        try:
            kernel = getattr(ctypes.CDLL(str(library_dir / name)), "ggml_vec_soft_max_f32")
        except (OSError, AttributeError):
            return None
        kernel.restype = ctypes.c_double
        kernel.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_float]
        # A symbol is not a contract: check it computes a softmax sum before trusting it.
        values = [(i % 7) * 0.75 - 2.0 for i in range(37)]
        source = (ctypes.c_float * 37)(*values)
        target = (ctypes.c_float * 37)()
        top = max(values)
        expected = math.fsum(math.exp(v - top) for v in values)
        got = kernel(37, ctypes.addressof(target), ctypes.addressof(source), top)
        if abs(got - expected) <= 1e-5 * expected and abs(target[3] - math.exp(values[3] - top)) <= 1e-5:
            return kernel
        return None
    return None
