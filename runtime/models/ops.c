/* ops.c - batched matmuls with llama.cpp's activation conversion and token grouping, thread-pool
 * row splitting, and norms (see ops.h). */
#include "ops.h"

#include "populate.h"
#include "recurrent.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

sn_status sn_ops_init(sn_ops *o, sn_model *m, const sn_ops_buf *bufs, int n, int64_t widest, sn_err *err) {
    memset(o, 0, sizeof(*o));
    m->ops = o;
    o->k = m->k;
    o->rk = m->k->rec;
    o->pool = m->pool;
    o->lanes = m->k->tuning.lanes;
    o->widest = widest;
    if (n < 0 || n > SN_OPS_MAX_BUFS)
        return sn_err_set(err, SN_EINVAL, "sn_ops_init: %d activation buffers (at most %d)", n, SN_OPS_MAX_BUFS);
    memcpy(o->bufs, bufs, (size_t)n * sizeof(*bufs));
    o->n_bufs = n;
    return SN_OK;
}

static sn_status reserve(sn_ops *o, int64_t T, sn_err *err) {
    const int64_t widest = o->widest;
    if (T > o->bufs_T) {
        for (int i = 0; i < o->n_bufs; i++) {
            const sn_ops_buf *b = &o->bufs[i];
            free(*b->p);
            const int64_t rows = T + b->extra_rows;
            *b->p = rows > 0 && b->width > 0 && rows <= (int64_t)(SIZE_MAX / sizeof(float)) / b->width
                        ? malloc((size_t)(rows * b->width) * sizeof(float))
                        : NULL;
            if (!*b->p) return sn_err_set(err, SN_ENOMEM, "out of memory (activations)");
            /* fault the pages in here, on one thread, not in the pool's first pass over them */
            sn_populate(*b->p, (size_t)(rows * b->width) * sizeof(float));
        }
        o->bufs_T = T;
    }
    /* Converted activations: the largest row any activation type needs, times T. */
    uint64_t row = 0;
    const int types[] = {SN_GGML_F32, SN_GGML_F16, SN_GGML_BF16, SN_GGML_Q8_0, SN_GGML_Q4_K};
    for (int i = 0; i < 5; i++) {
        const uint64_t r = sn_kernel_act_row_size(types[i], widest - widest % SN_QK_K + SN_QK_K);
        if (r > row) row = r;
    }
    if (T <= o->cap_T && row <= o->act_cap) return SN_OK;
    if (T < 1 || (uint64_t)T > SIZE_MAX / (row ? row : 1))
        return sn_err_set(err, SN_ENOMEM, "activation batch of %lld rows is too large", (long long)T);
    for (int i = 0; i < SN_KTYPE_COUNT; i++) {
        free(o->act[i]);
        o->act[i] = NULL;
    }
    o->act_cap = row > o->act_cap ? row : o->act_cap;
    o->cap_T = T > o->cap_T ? T : o->cap_T;
    return SN_OK;
}

void sn_ops_free(sn_ops *o) {
    for (int i = 0; i < SN_KTYPE_COUNT; i++) free(o->act[i]);
    for (int i = 0; i < o->n_bufs; i++) {
        free(*o->bufs[i].p);
        *o->bufs[i].p = NULL;
    }
    memset(o, 0, sizeof(*o));
}

/* The converted-activation buffer of type at for cap_T rows, allocated (and faulted in, on this
 * thread) on first use; NULL when memory is short. */
static void *act_buf(sn_ops *o, int at) {
    if (!o->act[at]) {
        const size_t bytes = (size_t)(o->act_cap * (uint64_t)o->cap_T);
        if ((o->act[at] = malloc(bytes))) sn_populate(o->act[at], bytes);
    }
    return o->act[at];
}

sn_status sn_ops_prepare(sn_ops *o, int64_t T, uint64_t act_types, sn_err *err) {
    sn_status st = reserve(o, T, err);
    if (st) return st;
    for (int at = 0; at < SN_KTYPE_COUNT && at < 64; at++)
        if ((act_types & (1ull << at)) && at != SN_GGML_F32 && !act_buf(o, at))
            return sn_err_set(err, SN_ENOMEM, "out of memory (activations)");
    return SN_OK;
}

typedef struct {
    const sn_kernels *k;
    int n;                  /* matrices sharing the input */
    const sn_matrix *w[3];
    const void *x[3];
    uint64_t x_row[3];
    float *y[3];
    int64_t T;
} matmul_job;

static void matmul_worker(void *arg, int ith, int nth) {
    const matmul_job *j = arg;
    for (int i = 0; i < j->n; i++) {
        const sn_matrix *w = j->w[i];
        int64_t r0, r1;
        sn_matrix_split(w, ith, nth, &r0, &r1);
        sn_matrix_mul(j->k, w, j->x[i], j->x_row[i], j->T, j->y[i], w->n_out, r0, r1);
    }
}

typedef struct {
    const sn_kernels *k;
    int at;
    const float *x;
    int64_t n, T;
    void *y;
    uint64_t y_row;
} quant_job;

static void quant_worker(void *arg, int ith, int nth) {
    const quant_job *j = arg;
    for (int64_t t = ith; t < j->T; t += nth)
        j->k->quant[j->at](j->x + t * j->n, (char *)j->y + (uint64_t)t * j->y_row, j->n);
}

/* Returns x [T x n] converted to the activation type of weight type wtype (cached per call site
 * through `done`, a bitmask of activation types already converted for this x). */
static const void *activations(sn_ops *o, int wtype, const float *x, int64_t n, int64_t T, unsigned *done,
                               uint64_t *row) {
    const int at = sn_kernel_act_type(wtype);
    *row = sn_kernel_act_row_size(wtype, n);
    if (at == SN_GGML_F32) return x;
    if (!act_buf(o, at)) return NULL;
    if (!(*done & (1u << (at & 31)))) {
        quant_job q = {o->k, at, x, n, T, o->act[at], *row};
        if (T == 1) quant_worker(&q, 0, 1);
        else sn_pool_run(o->pool, quant_worker, &q);
        *done |= 1u << (at & 31);
    }
    return o->act[at];
}

/* One parallel job: tokens [t0, t1) of the matrices of `all` selected by mask. */
static void run_tokens(sn_ops *o, const matmul_job *all, unsigned mask, int64_t t0, int64_t t1) {
    matmul_job j = {.k = all->k, .T = t1 - t0};
    for (int i = 0; i < all->n; i++) {
        if (!(mask & (1u << i))) continue;
        j.w[j.n] = all->w[i];
        j.x[j.n] = (const char *)all->x[i] + (uint64_t)t0 * all->x_row[i];
        j.x_row[j.n] = all->x_row[i];
        j.y[j.n] = all->y[i] + t0 * all->w[i]->n_out;
        j.n++;
    }
    /* 4 row ranges per thread: whoever is scheduled first takes the next range (threadpool.h) */
    const int nth = sn_pool_size(o->pool);
    if (j.n) sn_pool_run_n(o->pool, matmul_worker, &j, nth > 1 ? 4 * nth : 1);
}

/* Tokens llama.cpp multiplies in its batched order go together; the others (sn_kernel_mm_tokens:
 * Q4_K's leftovers beyond a multiple of 4, or a single token) one at a time, so each output rounds
 * as llama.cpp's does. */
sn_status sn_ops_project(sn_ops *o, const float *x, int64_t T, int nw, const sn_matrix *const *w, float *const *y,
                         sn_err *err) {
    if (nw < 1 || nw > 3 || T > o->cap_T)
        return sn_err_set(err, SN_EINVAL, "sn_ops_project: %d matrices, %lld rows (room for %lld)", nw,
                          (long long)T, (long long)o->cap_T);
    matmul_job all = {.k = o->k, .n = nw, .T = T};
    unsigned done = 0;
    int64_t mm[3];
    for (int i = 0; i < nw; i++) {
        if (sn_kernel_act_row_size(w[i]->type, w[i]->n_in) > o->act_cap)
            return sn_err_set(err, SN_EINVAL, "sn_ops_project: %s is wider than the reserved rows", w[i]->name);
        all.w[i] = w[i];
        all.y[i] = y[i];
        all.x[i] = activations(o, w[i]->type, x, w[i]->n_in, T, &done, &all.x_row[i]);
        if (!all.x[i]) return sn_err_set(err, SN_ENOMEM, "out of memory (activations)");
        mm[i] = sn_kernel_mm_tokens(w[i]->type, T);
    }
    unsigned scheduled = 0;
    for (int i = 0; i < nw; i++) { /* batched parts, one job per distinct token count */
        if (mm[i] == 0 || (scheduled & (1u << i))) continue;
        unsigned mask = 0;
        for (int k = i; k < nw; k++)
            if (mm[k] == mm[i]) mask |= 1u << k;
        run_tokens(o, &all, mask, 0, mm[i]);
        scheduled |= mask;
    }
    for (int64_t t = 0; t < T; t++) { /* single-token parts */
        unsigned mask = 0;
        for (int i = 0; i < nw; i++)
            if (mm[i] <= t) mask |= 1u << i;
        run_tokens(o, &all, mask, t, t + 1);
    }
    return SN_OK;
}

typedef struct {
    sn_rows_fn fn;
    const void *arg;
    int64_t T;
} rows_job;

static void rows_worker(void *a, int ith, int nth) {
    const rows_job *j = a;
    j->fn(j->arg, j->T * ith / nth, j->T * (ith + 1) / nth);
}

void sn_ops_rows(sn_pool *pool, int64_t T, sn_rows_fn fn, const void *arg) {
    const int nth = sn_pool_size(pool);
    if (T < 2 || nth == 1) {
        fn(arg, 0, T);
        return;
    }
    rows_job j = {fn, arg, T};
    sn_pool_run_n(pool, rows_worker, &j, (int)(T < 2 * nth ? T : 2 * nth));
}

void sn_ops_rmsnorm(float *y, const float *x, const float *w, int64_t n, float eps) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += (double)(x[i] * x[i]);
    const float mean = (float)(sum / (double)n);
    const float scale = 1.0f / sqrtf(mean + eps);
    for (int64_t i = 0; i < n; i++) y[i] = x[i] * scale * w[i];
}

/* ggml_vec_cvar_f32's AVX2 block sum: halves, movehl, movehdup: (t0 + t2) + (t1 + t3). */
static float hsum8_movehl(const float *x) {
    float t[4];
    for (int i = 0; i < 4; i++) t[i] = x[i] + x[i + 4];
    return (t[0] + t[2]) + (t[1] + t[3]);
}

enum { MAXL = 16 }; /* the widest reduction (sn_ops.lanes) */

/* Each float is a whole multiple of the smallest nonzero one's ulp; when the nonzero x (no Inf,
 * NaN or subnormal) span at most 29 - ceil(log2 n) binades, every sum of any of them is under 2^53
 * such ulps, so exact in double whatever the order: then two-lane double adds give the scan's bits.
 * (A 768-wide activation spans ~10-15 binades; one value 2^-19 below the largest sends the call to
 * the scan.) The scan waits ~4 cycles per element on the previous add. */
double sn_ops_sum_f64(const float *x, int64_t n) {
    double s = 0.0;
    int64_t i = 0;
#if defined(__SSE2__)
    if (n >= 8) {
        const __m128 absm = _mm_castsi128_ps(_mm_set1_epi32(0x7FFFFFFF)), big = _mm_set1_ps(FLT_MAX);
        const __m128 zero = _mm_setzero_ps();
        __m128 mx = zero, mn = big, bad = zero;
        __m128d s0 = _mm_setzero_pd(), s1 = s0;
        for (; i + 4 <= n; i += 4) {
            const __m128 v = _mm_loadu_ps(x + i), a = _mm_and_ps(v, absm), z = _mm_cmpeq_ps(a, zero);
            bad = _mm_or_ps(bad, _mm_cmpnle_ps(a, big)); /* Inf or NaN */
            mx = _mm_max_ps(a, mx);
            mn = _mm_min_ps(_mm_or_ps(_mm_and_ps(z, big), _mm_andnot_ps(z, a)), mn);
            s0 = _mm_add_pd(s0, _mm_cvtps_pd(v));
            s1 = _mm_add_pd(s1, _mm_cvtps_pd(_mm_movehl_ps(v, v)));
        }
        float t[4], u[4];
        _mm_storeu_ps(t, mx);
        _mm_storeu_ps(u, mn);
        float hi = t[0], lo = u[0];
        for (int k = 1; k < 4; k++) {
            hi = t[k] > hi ? t[k] : hi;
            lo = u[k] < lo ? u[k] : lo;
        }
        for (int64_t k = i; k < n; k++) { /* the tail: no ordering question either */
            const float a = fabsf(x[k]);
            if (!(a <= FLT_MAX)) hi = INFINITY;
            hi = a > hi ? a : hi;
            if (a != 0.0f) lo = a < lo ? a : lo;
        }
        int e_hi, e_lo;
        (void)frexpf(hi, &e_hi);
        (void)frexpf(lo, &e_lo);
        const int span_max = 29 - (64 - __builtin_clzll((unsigned long long)(n - 1)));
        if (!_mm_movemask_ps(bad) && hi <= FLT_MAX && (lo == FLT_MAX || (lo >= FLT_MIN && e_hi - e_lo <= span_max))) {
            double d0[2], d1[2];
            _mm_storeu_pd(d0, s0);
            _mm_storeu_pd(d1, s1);
            s = (d0[0] + d0[1]) + (d1[0] + d1[1]);
            for (; i < n; i++) s += (double)x[i];
            return s;
        }
        s = 0.0;
        i = 0;
    }
#endif
    for (; i < n; i++) s += (double)x[i];
    return s;
}

void sn_ops_layernorm(float *y, const float *x, const float *w, const float *b, int64_t n, float eps, int lanes) {
    const float mean = (float)sn_ops_sum_f64(x, n) / (float)n;
    double var = 0.0;
    int64_t i = 0;
#if defined(__SSE2__)
    /* the reduction below, four lanes at a time: the same products and the same tree */
    const __m128 vm = _mm_set1_ps(mean);
    if (lanes == 16 || lanes == 8)
        for (; i + lanes <= n; i += lanes) {
            __m128 q[4];
            for (int j = 0; j < lanes / 4; j++) {
                const __m128 d = _mm_sub_ps(_mm_loadu_ps(x + i + 4 * j), vm);
                _mm_storeu_ps(y + i + 4 * j, d);
                q[j] = _mm_mul_ps(d, d);
            }
            /* 16: (x[i+8] + x[i]) then (a[i+4] + a[i]); 8: x[i] + x[i+4]; both then (t0 + t2) + (t1 + t3) */
            const __m128 bq = lanes == 16 ? _mm_add_ps(_mm_add_ps(q[3], q[1]), _mm_add_ps(q[2], q[0])) : _mm_add_ps(q[0], q[1]);
            const __m128 t = _mm_add_ps(bq, _mm_movehl_ps(bq, bq));
            var += (double)_mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
        }
#endif
    for (; i + lanes - 1 < n; i += lanes) {
        float sq[MAXL];
        for (int l = 0; l < lanes; l++) {
            y[i + l] = x[i + l] - mean;
            sq[l] = y[i + l] * y[i + l];
        }
        var += (double)(lanes == 16 ? sn_hsum16(sq) : hsum8_movehl(sq));
    }
    for (; i < n; i++) {
        float d = x[i] - mean;
        y[i] = d;
        d *= d;
        var += (double)d;
    }
    const float variance = (float)(var / (double)n);
    const float scale = 1.0f / sqrtf(variance + eps);
    int64_t j = 0;
#if defined(__SSE2__)
    const __m128 vs = _mm_set1_ps(scale);
    for (; j + 4 <= n; j += 4) { /* y * scale, * w, + b: each rounded, as ggml's separate ops */
        __m128 t = _mm_mul_ps(_mm_loadu_ps(y + j), vs);
        if (w) t = _mm_mul_ps(t, _mm_loadu_ps(w + j));
        if (b) t = _mm_add_ps(t, _mm_loadu_ps(b + j));
        _mm_storeu_ps(y + j, t);
    }
#endif
    for (; j < n; j++) {
        float t = y[j] * scale;
        if (w) t = t * w[j];
        if (b) t = t + b[j];
        y[j] = t;
    }
}

void sn_ops_resid_norm(const void *arg, int64_t t0, int64_t t1) {
    const sn_resid_norm *p = arg;
    const int64_t n = p->n;
    for (int64_t t = t0; t < t1; t++) {
        float *x = p->x + t * n;
        if (p->add)
            for (int64_t i = 0; i < n; i++) x[i] = p->add[t * n + i] + x[i];
        if (p->lanes) sn_ops_layernorm(p->h + t * n, x, p->w, p->b, n, p->eps, p->lanes);
        else sn_ops_rmsnorm(p->h + t * n, x, p->w, n, p->eps);
    }
}

sn_status sn_ops_project1(sn_ops *o, const float *x, int64_t T, const sn_matrix *w, float *y, sn_err *err) {
    const sn_matrix *ws[1] = {w};
    float *ys[1] = {y};
    return sn_ops_project(o, x, T, 1, ws, ys, err);
}

sn_status sn_ops_embed(const sn_matrix *emb, const int32_t *tokens, int64_t T, float *x, sn_err *err) {
    for (int64_t t = 0; t < T; t++) {
        const void *row = (const char *)emb->data + (uint64_t)tokens[t] * emb->row_bytes;
        if (sn_dequantize_row(emb->type, row, x + t * emb->n_in, emb->n_in) != 0)
            return sn_err_set(err, SN_EUNSUPPORTED, "cannot dequantize token_embd.weight rows");
    }
    return SN_OK;
}

sn_status sn_ops_begin(sn_ops *o, int64_t T, const sn_matrix *emb, const int32_t *tokens, float *const *x, sn_err *err) {
    sn_status st = reserve(o, T, err);
    if (st) return st;
    return sn_ops_embed(emb, tokens, T, *x, err);
}
