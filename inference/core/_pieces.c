/* Every token's bytes in one call: token healing's index (healing.py) needs the piece of each
 * token of the vocabulary, and one ctypes call per token cost 3 us, 0.8 s over Gemma's 262k
 * tokens, on the path of a first generation. Here llama.cpp's own llama_token_to_piece
 * (passed in as a function address, as native.py binds it) is called in a C loop, with the
 * interpreter's lock released, and the pieces become bytes objects afterwards. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int32_t (*to_piece_fn)(const void *vocab, int32_t token, char *buf, int32_t length, int32_t lstrip,
                               bool special);

/* The pieces laid end to end: token i's bytes are blob[starts[i] .. starts[i + 1]). */
typedef struct {
    char *blob;
    size_t used, capacity;
    size_t *starts;
} Pieces;

static bool reserve(Pieces *pieces, size_t more) {
    if (pieces->used + more <= pieces->capacity) {
        return true;
    }
    size_t capacity = pieces->capacity ? pieces->capacity : 1 << 16;
    while (capacity < pieces->used + more) {
        capacity *= 2;
    }
    char *blob = realloc(pieces->blob, capacity);
    if (!blob) {
        return false;
    }
    pieces->blob = blob;
    pieces->capacity = capacity;
    return true;
}

/* Writes every token's piece (special false, no lstrip: as token healing reads them); false
 * when memory ran out. llama_token_to_piece returns minus the size it needs when the room
 * given is short: the room grows and the token is asked again. */
static bool collect(to_piece_fn to_piece, const void *vocab, int32_t n_vocab, Pieces *pieces) {
    int32_t room = 256;
    for (int32_t token = 0; token < n_vocab; token++) {
        pieces->starts[token] = pieces->used;
        for (;;) {
            if (!reserve(pieces, (size_t)room)) {
                return false;
            }
            int32_t written = to_piece(vocab, token, pieces->blob + pieces->used, room, 0, false);
            if (written >= 0) {
                pieces->used += (size_t)written;
                break;
            }
            room = -written;
        }
    }
    pieces->starts[n_vocab] = pieces->used;
    return true;
}

/* token_pieces(to_piece_address, vocab_address, n_vocab) -> [bytes, ...] */
static PyObject *token_pieces(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "token_pieces takes 3 arguments");
        return NULL;
    }
    to_piece_fn to_piece = (to_piece_fn)PyLong_AsVoidPtr(args[0]);
    const void *vocab = PyLong_AsVoidPtr(args[1]);
    Py_ssize_t n = PyLong_AsSsize_t(args[2]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    if (!to_piece || !vocab || n < 0 || n > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "token_pieces: invalid function, vocabulary or size");
        return NULL;
    }
    Pieces pieces = {NULL, 0, 0, malloc(((size_t)n + 1) * sizeof(size_t))};
    if (!pieces.starts) {
        return PyErr_NoMemory();
    }
    bool collected;
    Py_BEGIN_ALLOW_THREADS
    collected = collect(to_piece, vocab, (int32_t)n, &pieces);
    Py_END_ALLOW_THREADS
    if (!collected) {
        free(pieces.blob);
        free(pieces.starts);
        return PyErr_NoMemory();
    }
    PyObject *list = PyList_New(n);
    for (Py_ssize_t token = 0; list && token < n; token++) {
        PyObject *piece = PyBytes_FromStringAndSize(pieces.blob + pieces.starts[token],
                                                    (Py_ssize_t)(pieces.starts[token + 1] - pieces.starts[token]));
        if (!piece) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, token, piece);
    }
    free(pieces.blob);
    free(pieces.starts);
    return list;
}

static PyMethodDef methods[] = {
    {"token_pieces", (PyCFunction)(void (*)(void))token_pieces, METH_FASTCALL,
     "token_pieces(to_piece_address, vocab_address, n_vocab) -> every token's bytes, as llama_token_to_piece"
     " writes them (special false, no lstrip)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_pieces", "Every token's bytes in one call.", -1, methods,
};

PyMODINIT_FUNC PyInit__pieces(void) { return PyModule_Create(&module_def); }
