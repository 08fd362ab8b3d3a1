/* One decode step's probabilities in one call: the top N tokens of the raw logits, their
 * softmax probabilities, and the probability of the sampled token.
 *
 * Why C: between two llama_decode calls the weights streamed through the caches have
 * evicted the Python interpreter's own code and data, so every numpy call made there
 * costs several times what it costs in a warm loop: a dozen of them cost 3-12% of the
 * decode speed of small models. Here one call does it all: a pass over the logits for
 * the top N (whole blocks below the N-th best skipped) and one for the normaliser.
 *
 * The normaliser sum(exp(logit - max)) comes from llama.cpp's own SIMD softmax kernel
 * (ggml_vec_soft_max_f32, passed in as a function address); the probabilities reported
 * are computed in double from the raw logits and that sum. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

typedef double (*softmax_kernel)(int n, float *y, const float *x, float max);

enum { BLOCK = 64, MAX_TOP = 256 };

/* Written so that -O3 turns it into vector max instructions (with -ffinite-math-only). */
static float block_max(const float *x) {
    float best = x[0];
    for (int i = 1; i < BLOCK; i++) {
        best = x[i] > best ? x[i] : best;
    }
    return best;
}

/* The file is compiled with -ffinite-math-only, under which compilers may fold isfinite(),
 * x != x and even a look at the exponent bits away: this one function is exempt. One NaN
 * or infinite logit makes the sum NaN or zero. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-finite-math-only")))
#endif
static int finite_positive(double x) {
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return (bits & 0x7ff0000000000000ULL) != 0x7ff0000000000000ULL && x > 0.0;
}

/* Keeps ids[0..*count) sorted by logit, highest first; a later id never displaces an
 * equal logit, so ties come out lowest id first, like a stable sort. */
static void offer(const float *logits, int32_t id, int32_t *ids, int *count, int limit) {
    float value = logits[id];
    int at = *count < limit ? *count : limit - 1;
    if (*count == limit && !(value > logits[ids[limit - 1]])) {
        return;
    }
    while (at > 0 && value > logits[ids[at - 1]]) {
        ids[at] = ids[at - 1];
        at--;
    }
    ids[at] = id;
    if (*count < limit) {
        (*count)++;
    }
}

static int top_ids(const float *logits, Py_ssize_t n, int32_t *ids, int limit) {
    int count = 0;
    Py_ssize_t i = 0;
    for (; i + BLOCK <= n; i += BLOCK) {
        /* A whole block below the current N-th best cannot contribute: skip it. */
        if (count == limit && !(block_max(logits + i) > logits[ids[limit - 1]])) {
            continue;
        }
        for (int j = 0; j < BLOCK; j++) {
            offer(logits, (int32_t)(i + j), ids, &count, limit);
        }
    }
    for (; i < n; i++) {
        offer(logits, (int32_t)i, ids, &count, limit);
    }
    return count;
}

/* top_candidates(logits_address, n_vocab, top_n, token, scratch_address, kernel_address)
 *   -> (p_token, ((id, p), ...))
 * scratch must hold n_vocab floats (the kernel writes exp(logit - max) there); token -1
 * means no sampled token (p_token is then 0.0). FloatingPointError when a logit is NaN or
 * infinite (a broken model or adapter): there is no probability to report. */
static PyObject *top_candidates(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "top_candidates takes 6 arguments");
        return NULL;
    }
    const float *logits = (const float *)PyLong_AsVoidPtr(args[0]);
    Py_ssize_t n = PyLong_AsSsize_t(args[1]);
    long top_n = PyLong_AsLong(args[2]);
    long token = PyLong_AsLong(args[3]);
    float *scratch = (float *)PyLong_AsVoidPtr(args[4]);
    softmax_kernel kernel = (softmax_kernel)PyLong_AsVoidPtr(args[5]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    if (!logits || !scratch || !kernel || n <= 0 || n > INT32_MAX || token >= n) {
        PyErr_SetString(PyExc_ValueError, "top_candidates: invalid logits, vocabulary size or token");
        return NULL;
    }
    int limit = top_n < 1 ? 1 : (top_n > MAX_TOP ? MAX_TOP : (int)top_n);
    if (limit > n) {
        limit = (int)n;
    }
    int32_t ids[MAX_TOP];
    int count = top_ids(logits, n, ids, limit);
    double max = logits[ids[0]];
    double sum = kernel((int)n, scratch, logits, (float)max);
    if (!finite_positive(sum)) {
        PyErr_SetString(PyExc_FloatingPointError, "top_candidates: the logits have no finite softmax");
        return NULL;
    }
    if (top_n < 1) {
        count = 0;
    }
    double p_token = token >= 0 ? exp((double)logits[token] - max) / sum : 0.0;
    PyObject *pairs = PyTuple_New(count);
    if (!pairs) {
        return NULL;
    }
    for (int k = 0; k < count; k++) {
        PyObject *pair = Py_BuildValue("(id)", ids[k], exp((double)logits[ids[k]] - max) / sum);
        if (!pair) {
            Py_DECREF(pairs);
            return NULL;
        }
        PyTuple_SET_ITEM(pairs, k, pair);
    }
    PyObject *result = Py_BuildValue("(dN)", p_token, pairs);
    return result;
}

static PyMethodDef methods[] = {
    {"top_candidates", (PyCFunction)(void (*)(void))top_candidates, METH_FASTCALL,
     "top_candidates(logits_address, n_vocab, top_n, token, scratch_address, kernel_address)"
     " -> (p_token, ((id, p), ...))"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_step", "One decode step's top-N probabilities in one call.", -1, methods,
};

PyMODINIT_FUNC PyInit__step(void) { return PyModule_Create(&module_def); }
