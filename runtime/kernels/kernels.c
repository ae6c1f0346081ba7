/* kernels.c - weight type -> activation type mapping, run-time table choice, and the blocked
 * matrix multiply every projection goes through (see kernels.h). */
#include "kernels.h"

#include "cpu.h"
#include "int4.h"
#include "recurrent.h"

#include <math.h>

int sn_kernel_act_type(int wtype) {
    switch (wtype) {
    case SN_GGML_F32: return SN_GGML_F32;
    case SN_GGML_F16: return SN_GGML_F16;
    case SN_GGML_BF16: return SN_GGML_BF16;
    case SN_GGML_Q8_0:
    case SN_GGML_Q4_0:
    case SN_GGML_Q5_0:
    case SN_GGML_IQ4_NL:
    case SN_GGML_MXFP4: return SN_GGML_Q8_0;
    case SN_GGML_Q4_1:
    case SN_GGML_Q5_1: return SN_GGML_Q8_1;
    case SN_GGML_Q2_K:
    case SN_GGML_Q3_K:
    case SN_GGML_Q4_K:
    case SN_GGML_Q5_K:
    case SN_GGML_Q6_K:
    case SN_GGML_IQ4_XS: return SN_GGML_Q8_K;
    case SN_KTYPE_INT4G32: return SN_KTYPE_INT4G32;
    default: return -1;
    }
}

uint64_t sn_kernel_act_row_size(int wtype, int64_t n) {
    const int at = sn_kernel_act_type(wtype);
    if (at < 0 || n < 0) return 0;
    switch (at) {
    case SN_GGML_F32: return (uint64_t)n * 4;
    case SN_GGML_F16:
    case SN_GGML_BF16: return (uint64_t)n * 2;
    case SN_GGML_Q8_0: return n % SN_QK8_0 ? 0 : (uint64_t)(n / SN_QK8_0) * sizeof(sn_block_q8_0);
    case SN_GGML_Q8_1: return n % 32 ? 0 : (uint64_t)(n / 32) * 36; /* sn_block_q8_1 */
    case SN_GGML_Q8_K: return n % SN_QK_K ? 0 : (uint64_t)(n / SN_QK_K) * sizeof(sn_block_q8_K);
    case SN_KTYPE_INT4G32: return n % SN_INT4_COLS ? 0 : sn_int4_act_bytes(n);
    default: return 0;
    }
}

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

int sn_kernel_q2_K_repacked(void) { return (sn_cpu_features() & SN_CPU_AVX512) != 0; }

static void swiglu_scalar8(int64_t n, float *y, const float *g, const float *u) { sn_swiglu_scalar(8, n, y, g, u); }
static void swiglu_scalar16(int64_t n, float *y, const float *g, const float *u) { sn_swiglu_scalar(16, n, y, g, u); }
static void exp_sub_scalar8(int64_t n, float *y, const float *x, float m) { sn_exp_sub_scalar(8, n, y, x, m); }
static void exp_sub_scalar16(int64_t n, float *y, const float *x, float m) { sn_exp_sub_scalar(16, n, y, x, m); }

/* The parts of a table every instruction set shares the choice of: the activation twins in the
 * lanes' order where this level has them, and the recurrent kernels of the level. */
static void finish(sn_kernels *k, const char *name, int level) {
    const int lanes = k->tuning.lanes;
    k->name = name;
    for (int t = 0; t < SN_KTYPE_COUNT; t++) k->type[t].act_type = sn_kernel_act_type(t);
    k->swiglu = level == 2 && lanes == 16 ? sn_swiglu_avx512 : level >= 1 && lanes == 8 ? sn_swiglu_avx2
                : lanes == 8 ? swiglu_scalar8 : swiglu_scalar16;
    k->exp_sub = level == 2 && lanes == 16 ? sn_exp_sub_avx512 : level >= 1 && lanes == 8 ? sn_exp_sub_avx2
                 : lanes == 8 ? exp_sub_scalar8 : exp_sub_scalar16;
    k->geglu = level == 2 ? sn_geglu_avx512 : level == 1 ? sn_geglu_avx2 : sn_geglu_scalar;
    k->rec = sn_recurrent_kernels_at(level);
}

/* The objects of one settled tuning at each level this CPU runs (lv[l].name NULL: not here). */
typedef struct kset {
    struct kset *next;
    sn_kernels lv[3];
} kset;

/* The tuning fields the kernels read (the rest, repacks and page handling, is the loader's). */
static int same_kernels(const sn_tuning *a, const sn_tuning *b) {
    return a->isa == b->isa && a->lanes == b->lanes && a->far_streams == b->far_streams &&
           a->page_kick == b->page_kick && a->mm_f16_convert == b->mm_f16_convert;
}

static void build_set(kset *s, const sn_tuning *t) {
    const uint32_t f = sn_cpu_features();
    s->lv[0].tuning = *t;
    sn_kernels_fill_scalar(&s->lv[0]);
    finish(&s->lv[0], "scalar", 0);
    if (!(f & SN_CPU_AVX2)) return;
    s->lv[1] = s->lv[0];
    sn_kernels_fill_avx2(&s->lv[1]);
    finish(&s->lv[1], "avx2", 1);
    if (!(f & SN_CPU_AVX512)) return;
    s->lv[2] = s->lv[1];
    sn_kernels_fill_avx512(&s->lv[2], &s->lv[1]);
    finish(&s->lv[2], "avx512", 2);
}

/* Built sets, newest first; never freed (a handful per process: one per tuning asked for). */
static kset *g_sets;
static pthread_mutex_t g_sets_lock = PTHREAD_MUTEX_INITIALIZER;

static const kset *set_for(const sn_tuning *t) {
    sn_tuning c;
    if (t) c = *t;
    else sn_tuning_default(&c);
    sn_tuning_settle(&c);
    pthread_mutex_lock(&g_sets_lock);
    kset *s = g_sets;
    while (s && !same_kernels(&s->lv[0].tuning, &c)) s = s->next;
    if (!s && (s = calloc(1, sizeof *s))) {
        build_set(s, &c);
        s->next = g_sets;
        g_sets = s;
    }
    pthread_mutex_unlock(&g_sets_lock);
    return s;
}

const sn_kernels *sn_kernels_at(const sn_tuning *t, int level) {
    const kset *s = set_for(t);
    if (!s || level < 0 || level > 2) return NULL;
    return s->lv[level].name ? &s->lv[level] : NULL;
}

const sn_kernels *sn_kernels_for(const sn_tuning *t) {
    const kset *s = set_for(t);
    if (!s) return NULL;
    const uint32_t f = s->lv[0].tuning.isa; /* settled: only what this CPU runs */
    return &s->lv[(f & SN_CPU_AVX512) ? 2 : (f & SN_CPU_AVX2) ? 1 : 0];
}

enum { ROW_BLOCK = 16, TOK_BLOCK = 8 };

void sn_matmul(const sn_kernels *k, int wtype, const void *w, uint64_t w_row_bytes, int64_t n,
               const void *x, uint64_t x_row_bytes, int64_t T, float *y, int64_t ldy, int64_t r0,
               int64_t r1) {
    const sn_dot_fn dot = T > 1 ? k->type[wtype].dot_mm : k->type[wtype].dot;
    const char *wb = w, *xb = x;
    if (T == 1) {
        if (k->type[wtype].mv && k->type[wtype].mv(n, wb + (uint64_t)r0 * w_row_bytes, w_row_bytes, r1 - r0, xb, y + r0)) return;
        for (int64_t r = r0; r < r1; r++) y[r] = dot(n, wb + (uint64_t)r * w_row_bytes, xb);
        return;
    }
    if ((wtype == SN_GGML_Q4_1 || wtype == SN_GGML_Q5_0 || wtype == SN_GGML_Q5_1) && k->mm_as_q8_0 &&
        k->mm_as_q8_0(k, wtype, w, w_row_bytes, n, x, x_row_bytes, T, y, ldy, r0, r1))
        return;
    if (k->type[wtype].mm && k->type[wtype].mm(n, wb + (uint64_t)r0 * w_row_bytes, w_row_bytes, r1 - r0, xb, x_row_bytes, T, y + r0, ldy))
        return;
    /* Full 4x4 tiles through the table's register-tiled kernel when it has one; the rest (and
     * tables without one) row by row, tiled so a block of weight rows stays in cache while it
     * meets every token. Both compute each output in dot_mm's order. */
    int64_t rt = r0;
    if (k->type[wtype].gemm4x4) {
        const int64_t rfull = r0 + (r1 - r0) / 4 * 4, tfull = T / 4 * 4;
        for (int64_t rb = r0; rb < rfull; rb += ROW_BLOCK)
            for (int64_t t = 0; t < tfull; t += 4)
                for (int64_t r = rb; r < rb + ROW_BLOCK && r < rfull; r += 4)
                    k->type[wtype].gemm4x4(n, wb + (uint64_t)r * w_row_bytes, w_row_bytes, xb + (uint64_t)t * x_row_bytes,
                                      x_row_bytes, y + t * ldy + r, ldy);
        for (int64_t r = r0; r < rfull; r++) /* leftover tokens */
            for (int64_t t = tfull; t < T; t++) y[t * ldy + r] = dot(n, wb + (uint64_t)r * w_row_bytes, xb + (uint64_t)t * x_row_bytes);
        rt = rfull;
    }
    for (int64_t rb = rt; rb < r1; rb += ROW_BLOCK) {
        const int64_t re = rb + ROW_BLOCK < r1 ? rb + ROW_BLOCK : r1;
        for (int64_t tb = 0; tb < T; tb += TOK_BLOCK) {
            const int64_t te = tb + TOK_BLOCK < T ? tb + TOK_BLOCK : T;
            for (int64_t r = rb; r < re; r++) {
                const char *wr = wb + (uint64_t)r * w_row_bytes;
                for (int64_t t = tb; t < te; t++)
                    y[t * ldy + r] = dot(n, wr, xb + (uint64_t)t * x_row_bytes);
            }
        }
    }
}

/* ggml_v_expf (AVX-512 flavour), one lane at a time: same constants, same fused steps. */
float sn_v_expf(float x) {
    const float r = 0x1.8p23f;
    const float z = fmaf(x, 0x1.715476p+0f, r);
    const float n = z - r;
    const float b = fmaf(-n, 0x1.7f7d1cp-20f, fmaf(-n, 0x1.62e4p-1f, x));
    const float u = b * b;
    const float j = fmaf(fmaf(fmaf(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, fmaf(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)), u,
                         fmaf(0x1.ffffecp-1f, b, 1.0f));
    if (fabsf(n) > 192) return n <= 0 ? 0.0f : INFINITY; /* ggml's out-of-range blend */
    return ldexpf(j, (int)n);
}

/* ggml_v_expf (AVX2 flavour), one lane at a time: the polynomial ends in b*c instead of fma(c, b,
 * 1), the result is fma(j, k, k) with k = 2^n built from z's bits, and |n| > 126 takes ggml's
 * two-factor blend (s1 * s1 beyond 192). */
static float f_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t u_of(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

float sn_v_expf8(float x) {
    const float r = 0x1.8p23f;
    const float z = fmaf(x, 0x1.715476p+0f, r);
    const float n = z - r;
    const float b = fmaf(-n, 0x1.7f7d1cp-20f, fmaf(-n, 0x1.62e4p-1f, x));
    const uint32_t e = u_of(z) << 23;
    const float k = f_of(e + u_of(1.0f));
    const float u = b * b;
    const float j = fmaf(fmaf(fmaf(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, fmaf(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)), u,
                         0x1.ffffecp-1f * b);
    if (!(fabsf(n) > 126)) return fmaf(j, k, k);
    const uint32_t g = n <= 0 ? 0x82000000u : 0;
    const float s1 = f_of(g + 0x7f000000u), s2 = f_of(e - g);
    if (fabsf(n) > 192) return s1 * s1;
    return fmaf(s2, j, s2) * s1;
}

void sn_swiglu_scalar(int L, int64_t n, float *y, const float *gate, const float *up) {
    const int64_t nv = n & ~(int64_t)(L - 1);
    if (L == 8)
        for (int64_t i = 0; i < nv; i++) y[i] = (gate[i] / (1.0f + sn_v_expf8(0.0f - gate[i]))) * up[i];
    else
        for (int64_t i = 0; i < nv; i++) y[i] = (gate[i] / (1.0f + sn_v_expf(0.0f - gate[i]))) * up[i];
    for (int64_t i = nv; i < n; i++) y[i] = (gate[i] / (1.0f + expf(-gate[i]))) * up[i];
}

static uint16_t g_gelu_f16[(1 << 16) + 1];
static pthread_once_t g_gelu_once = PTHREAD_ONCE_INIT;

static void gelu_table_init(void) {
    const float coef_a = 0.044715f, sqrt_2_over_pi = 0.79788456080286535587989211986876f;
    for (uint32_t i = 0; i < (1u << 16); i++) {
        const float x = sn_k_h2f((uint16_t)i);
        /* 0.5x(1 + tanh(sqrt(2/pi) x (1 + a x^2))), the inner a*x*x + 1 contracted into an FMA as
         * the x86 builds of ggml compile it */
        const float y = 0.5f * x * (1.0f + tanhf(sqrt_2_over_pi * x * fmaf(coef_a * x, x, 1.0f)));
        g_gelu_f16[i] = sn_k_f2h(y);
    }
}

const uint16_t *sn_gelu_f16_table(void) {
    pthread_once(&g_gelu_once, gelu_table_init);
    return g_gelu_f16;
}

void sn_geglu_scalar(int64_t n, float *y, const float *g, const float *u) {
    const uint16_t *tab = sn_gelu_f16_table();
    for (int64_t i = 0; i < n; i++) {
        if (g[i] <= -10.0f) y[i] = 0.0f;
        else if (g[i] >= 10.0f) y[i] = g[i] * u[i];
        else y[i] = sn_k_h2f(tab[sn_k_f2h(g[i])]) * u[i];
    }
}

void sn_exp_sub_scalar(int lanes, int64_t n, float *y, const float *x, float m) {
    if (lanes == 8)
        for (int64_t i = 0; i < n; i++) y[i] = sn_v_expf8(x[i] - m);
    else
        for (int64_t i = 0; i < n; i++) y[i] = sn_v_expf(x[i] - m);
}
