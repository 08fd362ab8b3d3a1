/* The work of one decode step that cannot wait in Python: the step's probabilities in one
 * call (the top N tokens of the raw logits, their softmax probabilities, and the probability
 * of the sampled token); the tokens of the sampler chain's short array; top-n-sigma's
 * statistics over the whole vocabulary; and where the tokens a trace follows stand after
 * each sampler of the chain.
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
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h> /* abs */
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
 *   -> (p_token, ((id, p), ...), max, sum)
 * Every probability is exp((double)logit - max) / sum; max and sum are returned so that the
 * caller computes any other token's by the same formula, to the same bits.
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
    PyObject *result = Py_BuildValue("(dNdd)", p_token, pairs, max, sum);
    return result;
}

/* at_or_above(logits_address, n, rank, out_address, capacity) -> (count, level)
 *
 * The short candidate array's tokens (sampler_shortlist.py) in two quick passes: level is the
 * rank-th highest logit (the pass of top_candidates, whole blocks below it skipped), and every
 * id whose logit reaches it is written to out (int64), ascending, up to capacity. count is how
 * many reach it, which may exceed capacity: the caller then has too many for a short array. */
static PyObject *at_or_above(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "at_or_above takes 5 arguments");
        return NULL;
    }
    const float *logits = (const float *)PyLong_AsVoidPtr(args[0]);
    Py_ssize_t n = PyLong_AsSsize_t(args[1]);
    long rank = PyLong_AsLong(args[2]);
    int64_t *out = (int64_t *)PyLong_AsVoidPtr(args[3]);
    Py_ssize_t capacity = PyLong_AsSsize_t(args[4]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    if (!logits || n <= 0 || n > INT32_MAX || rank < 1 || rank > MAX_TOP || rank > n || !out || capacity < 0) {
        PyErr_SetString(PyExc_ValueError, "at_or_above: invalid logits, vocabulary size, rank or buffer");
        return NULL;
    }
    int32_t ids[MAX_TOP];
    top_ids(logits, n, ids, (int)rank);
    float level = logits[ids[rank - 1]];
    Py_ssize_t count = 0;
    Py_ssize_t i = 0;
    for (; i + BLOCK <= n; i += BLOCK) {
        if (!(block_max(logits + i) >= level)) {
            continue;
        }
        for (int j = 0; j < BLOCK; j++) {
            if (logits[i + j] >= level) {
                if (count < capacity) {
                    out[count] = i + j;
                }
                count++;
            }
        }
    }
    for (; i < n; i++) {
        if (logits[i] >= level) {
            if (count < capacity) {
                out[count] = i;
            }
            count++;
        }
    }
    return Py_BuildValue("(nd)", count, (double)level);
}

/* llama.cpp's top-n-sigma (llama_sampler_top_n_sigma_apply) walks the whole candidate array
 * for two sums: a float sum of the logits in array order, and, from the mean it gives, the
 * squares each taken in double (C++'s pow(float, 2)) and added back into a float. Each is one
 * long chain of dependent additions, 1 ms over 262k logits on a 2.9 GHz EPYC. The same floats
 * come out of independent work: while a running sum stays within one binade [2^(e-1), 2^e),
 * every float it can hold is a multiple of g = 2^(e-24), and adding x to it rounds to the
 * nearest such multiple, so the sum moves by g times x/g rounded to an integer, whatever the
 * sum was. A run of RUN additions that provably stays in its binade, with no term exactly half
 * way between two multiples (where the rounding to even reads the sum's last bit), is added as
 * one exact sum of integers; any other run is added one term at a time, as llama.cpp does. */

enum { RUN = 256 };
/* 0 <= x < 2^51 plus MAGIC is x rounded to the nearest integer, ties to even, held in the low
 * bits of a double of one fixed exponent: minus MAGIC it is that integer as a double, and its
 * bits minus MAGIC_BITS the same integer as an int64, whose sums the vectoriser may reorder
 * (a double sum it may not). No flag this file is compiled with lets the compiler fold it. */
static const double MAGIC = 6755399441055744.0; /* 1.5 * 2^52 */
static const int64_t MAGIC_BITS = 0x4338000000000000LL;

/* The runs vectorise with AVX2 (GCC finds no SSE2 form for their mix of float, double and
 * int): on x86-64 with GCC both forms are built and the CPU's own is chosen at load. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define VECTOR_CLONES
#endif

/* e with |x| in [2^(e-1), 2^e), as frexpf gives it, read off the bits (x normal and finite). */
static int binade(float x) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    return (int)((bits >> 23) & 0xff) - 126;
}

/* 2^e as a double, built from its bits (-1022 <= e <= 1023). */
static double power_of_two(int e) {
    uint64_t bits = (uint64_t)(e + 1023) << 52;
    double x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

static const float FLOAT_MAGIC = 12582912.0f; /* 1.5 * 2^23 */

/* llama.cpp's llama_token_data. */
typedef struct {
    int32_t id;
    float logit;
    float p;
} token_data;

/* The logits top-n-sigma reads, over the whole vocabulary, as the samplers before it left
 * them: those ran on a short array of candidates (`kept`, ids ascending, as they left it),
 * and the logit bias moved its tokens outside it too (`raw + bias`, one float addition, as
 * llama.cpp adds it). They are read a run at a time, copied and patched only in the runs
 * where a change falls, so that the vocabulary (1 MB at 262k tokens) is never copied whole:
 * that copy cost a third as much again as both sums. */
typedef struct {
    const float *raw;
    Py_ssize_t n;
    const int64_t *bias_ids; /* ascending */
    const float *bias;
    Py_ssize_t n_bias;
    const token_data *kept;
    Py_ssize_t n_kept;
} vocabulary;

/* Where one pass over a vocabulary has got to (passes go through the runs in order). */
typedef struct {
    Py_ssize_t bias_at, kept_at;
    float buffer[RUN];
} reader;

/* The logits [i, end) of the vocabulary: the raw ones where nothing changed among them. */
static const float *run_at(const vocabulary *v, reader *r, Py_ssize_t i, Py_ssize_t end) {
    int biased = r->bias_at < v->n_bias && v->bias_ids[r->bias_at] < end;
    int kept = r->kept_at < v->n_kept && v->kept[r->kept_at].id < end;
    if (!biased && !kept) {
        return v->raw + i;
    }
    memcpy(r->buffer, v->raw + i, (size_t)(end - i) * sizeof(float));
    for (; r->bias_at < v->n_bias && v->bias_ids[r->bias_at] < end; r->bias_at++) {
        r->buffer[v->bias_ids[r->bias_at] - i] += v->bias[r->bias_at];
    }
    for (; r->kept_at < v->n_kept && v->kept[r->kept_at].id < end; r->kept_at++) {
        r->buffer[v->kept[r->kept_at].id - i] = v->kept[r->kept_at].logit; /* the bias included */
    }
    return r->buffer;
}

/* The largest of the logits and their float sum in order, as `sum += x[i]` adds them. A run's
 * loop is written for the vectoriser, in floats only (8 to an AVX2 register): x times a power
 * of two is exact, rounded to a whole number as the magic constant is added and taken away
 * (|x / g| < 2^22, as where a run passes its bounds), and the reductions are a maximum and
 * sums of whole numbers held to +-2^22, whose order cannot change them. The sum can move from
 * where the run starts by no more than the steps' sizes added up (`moved`), plus half a step
 * before the last rounding: that, not the run's length times its largest term, is how far it
 * may reach, so that fewer runs near the edge of a binade go one term at a time. A step held
 * at 2^22 alone reaches beyond any binade it could stay in, so such a run is never taken. */
VECTOR_CLONES static float ordered_sum(const vocabulary *v, float *largest) {
    reader r = {0, 0, {0.0f}};
    float sum = 0.0f, top = 0.0f;
    Py_ssize_t i = 0, n = v->n;
    while (i < n) {
        Py_ssize_t end = n - i >= RUN ? i + RUN : n;
        const float *x = run_at(v, &r, i, end);
        top = i == 0 ? x[0] : top;
        if (end - i == RUN && fabsf(sum) >= 1024.0f) {
            int e = binade(sum); /* |sum| in [2^(e-1), 2^e) */
            float per_g = (float)power_of_two(24 - e);
            float run_top = top, off = 0.0f;
            int steps = 0, moved = 0;
            for (Py_ssize_t j = 0; j < RUN; j++) {
                float scaled = x[j] * per_g, k = (scaled + FLOAT_MAGIC) - FLOAT_MAGIC;
                float apart = fabsf(scaled - k);
                off = apart > off ? apart : off; /* 0.5 exactly: a tie, rounded to even by the sum's last bit */
                int step = (int)fminf(fmaxf(k, -4194304.0f), 4194304.0f);
                steps += step;
                moved += abs(step);
                run_top = x[j] > run_top ? x[j] : run_top;
            }
            double g = power_of_two(e - 24), reach = ((double)moved + 1.0) * g, magnitude = fabs((double)sum);
            if (off < 0.5f && magnitude - reach >= power_of_two(e - 1) && magnitude + reach < power_of_two(e)) {
                sum = (float)((double)sum + (double)steps * g);
                top = run_top;
                i = end;
                continue;
            }
        }
        for (Py_ssize_t j = 0; j < end - i; j++) {
            top = x[j] > top ? x[j] : top;
            sum += x[j];
        }
        i = end;
    }
    *largest = top;
    return sum;
}

/* The squares of x[i] - mean added as llama.cpp adds them: acc = (float)((double)acc + d * d).
 * A square (exact in double) first joins the double sum, rounded to its spacing g / 2^29, then
 * the float one, rounded to g: the two roundings agree with one to the nearest multiple of g
 * unless the square lies within g / 2^29 of half way, which sends the run one at a time.
 * Squares are never negative, so the sum only grows: it stayed in its binade all through a
 * run if it ends there, and where it ends is known exactly from the steps, whole numbers
 * summed in int64 (a square above 1e15 steps is held there, and ends past the binade). */
VECTOR_CLONES static float ordered_squares(const vocabulary *v, float mean) {
    reader r = {0, 0, {0.0f}};
    float acc = 0.0f;
    Py_ssize_t i = 0, n = v->n;
    const double near_half = 0.5 - power_of_two(-29);
    while (i < n) {
        Py_ssize_t end = n - i >= RUN ? i + RUN : n;
        const float *x = run_at(v, &r, i, end);
        if (end - i == RUN && acc >= 1.0f) {
            int e = binade(acc); /* acc in [2^(e-1), 2^e) */
            double g = power_of_two(e - 24), per_g = power_of_two(24 - e);
            double off = 0.0;
            int64_t steps = 0;
            for (Py_ssize_t j = 0; j < RUN; j++) {
                double d = (double)(x[j] - mean), square = d * d;
                double scaled = fmin(square * per_g, 1e15), shifted = scaled + MAGIC;
                double apart = fabs(scaled - (shifted - MAGIC));
                int64_t bits;
                memcpy(&bits, &shifted, sizeof bits);
                off = apart > off ? apart : off;
                steps += bits - MAGIC_BITS;
            }
            double reached = (double)acc + (double)steps * g;
            if (off < near_half && reached < power_of_two(e)) {
                acc = (float)reached;
                i = end;
                continue;
            }
        }
        for (Py_ssize_t j = 0; j < end - i; j++) {
            double d = (double)(x[j] - mean);
            acc = (float)((double)acc + d * d);
        }
        i = end;
    }
    return acc;
}

/* A float array's address and length, the first two arguments of both functions below. */
static int logits_arguments(PyObject *const *args, const float **logits, Py_ssize_t *n) {
    *logits = (const float *)PyLong_AsVoidPtr(args[0]);
    *n = PyLong_AsSsize_t(args[1]);
    if (PyErr_Occurred()) {
        return 0;
    }
    if (!*logits || *n <= 1 || *n > (1 << 24)) {
        PyErr_SetString(PyExc_ValueError, "sigma statistics: invalid logits or size");
        return 0;
    }
    return 1;
}

/* The changes to the raw logits, checked once: every id within the vocabulary and ascending,
 * as a pass reads them. */
static int vocabulary_arguments(PyObject *const *args, vocabulary *v) {
    if (!logits_arguments(args, &v->raw, &v->n)) {
        return 0;
    }
    v->bias_ids = (const int64_t *)PyLong_AsVoidPtr(args[2]);
    v->bias = (const float *)PyLong_AsVoidPtr(args[3]);
    v->n_bias = PyLong_AsSsize_t(args[4]);
    v->kept = (const token_data *)PyLong_AsVoidPtr(args[5]);
    v->n_kept = PyLong_AsSsize_t(args[6]);
    if (PyErr_Occurred()) {
        return 0;
    }
    int valid = v->n_bias >= 0 && v->n_kept >= 0 && (v->n_bias == 0 || (v->bias_ids && v->bias)) &&
                (v->n_kept == 0 || v->kept);
    for (Py_ssize_t k = 0; valid && k < v->n_bias; k++) {
        valid = v->bias_ids[k] >= (k ? v->bias_ids[k - 1] + 1 : 0) && v->bias_ids[k] < v->n;
    }
    for (Py_ssize_t k = 0; valid && k < v->n_kept; k++) {
        valid = v->kept[k].id >= (k ? v->kept[k - 1].id + 1 : 0) && v->kept[k].id < v->n;
    }
    if (!valid) {
        PyErr_SetString(PyExc_ValueError, "sigma statistics: changed ids must ascend within the vocabulary");
        return 0;
    }
    return 1;
}

/* llama.cpp's standard deviation from its float sum of squares. */
static PyObject *max_and_std(float max, float acc, Py_ssize_t n) {
    float std = (float)sqrt((double)(acc / (float)n));
    return Py_BuildValue("(dd)", (double)max, (double)std);
}

/* sigma_statistics(logits_address, n, bias_ids_address, bias_address, n_bias,
 *                  kept_address, n_kept) -> (max, std)
 *
 * Top-n-sigma's largest logit and standard deviation over the n logits as the samplers
 * before it left them (`vocabulary`), as llama.cpp computes them, bit for bit; the caller
 * applies its cut (max - n * std) to the short array of candidates (sampler_shortlist.py),
 * so that the whole vocabulary is walked here twice and never sorted, as llama.cpp sorts it
 * after its cut. Every value must be finite (the caller checks the result): llama.cpp skips
 * minus infinity, which -ffinite-math-only would not see. */
static PyObject *sigma_statistics(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "sigma_statistics takes 7 arguments");
        return NULL;
    }
    vocabulary v;
    if (!vocabulary_arguments(args, &v)) {
        return NULL;
    }
    float max;
    float mean = ordered_sum(&v, &max) / (float)v.n;
    return max_and_std(max, ordered_squares(&v, mean), v.n);
}

/* The same two sums one addition at a time, as llama.cpp's loops run: what the tests hold
 * the fast ones to. */
static PyObject *sigma_statistics_plain(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    const float *logits;
    Py_ssize_t n;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "sigma_statistics_plain takes 2 arguments: logits_address, n");
        return NULL;
    }
    if (!logits_arguments(args, &logits, &n)) {
        return NULL;
    }
    float max = logits[0], sum = 0.0f, acc = 0.0f;
    for (Py_ssize_t i = 0; i < n; i++) {
        max = logits[i] > max ? logits[i] : max;
        sum += logits[i];
    }
    float mean = sum / (float)n;
    for (Py_ssize_t i = 0; i < n; i++) {
        double d = (double)(logits[i] - mean);
        acc = (float)((double)acc + d * d);
    }
    return max_and_std(max, acc, n);
}

/* llama.cpp's llama_token_data_array. */
typedef struct {
    token_data *data;
    size_t size;
    int64_t selected;
    bool sorted;
} token_data_array;

/* -ffinite-math-only lets the compiler assume no logit is infinite; minus infinity is how
 * llama.cpp's samplers mark a token they cut, so these two read and write the bits. */
static int finite_float(float x) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    return (bits & 0x7f800000u) != 0x7f800000u;
}

static int same_float(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/* follow(array_address, n, ids_address, positions_address, logits_address, present_address)
 *     -> how many changed
 *
 * The trace's look at the candidate array after one sampler (sampler_trace.py), eleven
 * times a step with every sampler on: for each of the n followed tokens (int32 ids) still
 * present (uint8), its logit now, or minus infinity where it left the array, written over
 * logits (float32) where it changed; a token whose logit is not finite is no longer present.
 * Where each was last found (int64 positions) is tried first: most samplers leave the array
 * in place or cut its tail, and the rest are searched for. 0 when nothing changed for any
 * followed token: then the trace has nothing to record. */
static PyObject *follow(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "follow takes 6 arguments");
        return NULL;
    }
    const token_data_array *array = (const token_data_array *)PyLong_AsVoidPtr(args[0]);
    Py_ssize_t n = PyLong_AsSsize_t(args[1]);
    const int32_t *ids = (const int32_t *)PyLong_AsVoidPtr(args[2]);
    int64_t *positions = (int64_t *)PyLong_AsVoidPtr(args[3]);
    float *logits = (float *)PyLong_AsVoidPtr(args[4]);
    uint8_t *present = (uint8_t *)PyLong_AsVoidPtr(args[5]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    if (!array || n < 0 || (n > 0 && (!ids || !positions || !logits || !present))) {
        PyErr_SetString(PyExc_ValueError, "follow: invalid arguments");
        return NULL;
    }
    const token_data *data = array->data;
    size_t size = array->size;
    Py_ssize_t changed = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (!present[k]) {
            continue;
        }
        int64_t at = positions[k];
        if (!(at >= 0 && (size_t)at < size && data[at].id == ids[k])) {
            at = -1;
            for (size_t i = 0; i < size; i++) {
                if (data[i].id == ids[k]) {
                    at = (int64_t)i;
                    break;
                }
            }
            positions[k] = at;
        }
        float value;
        if (at >= 0) {
            value = data[at].logit;
        } else {
            const uint32_t minus_infinity = 0xff800000u;
            memcpy(&value, &minus_infinity, sizeof value);
        }
        if (!finite_float(value)) {
            present[k] = 0;
        } else if (same_float(value, logits[k])) {
            continue;
        }
        logits[k] = value;
        changed++;
    }
    return PyLong_FromSsize_t(changed);
}

static PyMethodDef methods[] = {
    {"sigma_statistics", (PyCFunction)(void (*)(void))sigma_statistics, METH_FASTCALL,
     "sigma_statistics(logits_address, n, bias_ids_address, bias_address, n_bias, kept_address, n_kept)"
     " -> (max, std), as llama.cpp's top-n-sigma computes them"},
    {"sigma_statistics_plain", (PyCFunction)(void (*)(void))sigma_statistics_plain, METH_FASTCALL,
     "sigma_statistics_plain(logits_address, n) -> (max, std), one addition at a time"},
    {"follow", (PyCFunction)(void (*)(void))follow, METH_FASTCALL,
     "follow(array_address, n, ids_address, positions_address, logits_address, present_address)"
     " -> how many of the followed tokens changed"},
    {"at_or_above", (PyCFunction)(void (*)(void))at_or_above, METH_FASTCALL,
     "at_or_above(logits_address, n, rank, out_address, capacity) -> (count, level): the ids whose"
     " logit reaches the rank-th highest, ascending"},
    {"top_candidates", (PyCFunction)(void (*)(void))top_candidates, METH_FASTCALL,
     "top_candidates(logits_address, n_vocab, top_n, token, scratch_address, kernel_address)"
     " -> (p_token, ((id, p), ...))"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_step", "The work of one decode step that cannot wait in Python.", -1, methods,
};

PyMODINIT_FUNC PyInit__step(void) { return PyModule_Create(&module_def); }
