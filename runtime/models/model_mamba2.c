/* model_mamba2.c - the forward pass of Mamba-2: a selective state-space model with a conv window
 * and a matrix-valued state per head instead of attention over a KV cache.
 *
 *   x = embed(token)
 *   per layer:  h = rmsnorm(x);  z | xBC | dt = W_in h                    (in_proj split)
 *               xBC = silu(causal depthwise conv1d(xBC) + b)   (window: d_conv-1 saved columns)
 *               x_ | B | C = xBC  (x_: n_head heads of head_dim; B, C: n_group groups of d_state)
 *               per head h (group g = h / (n_head / n_group)):
 *                   dt_h = softplus(dt_h + dt_bias_h);  dA = exp(dt_h * A_h)       (A = -exp(A_log))
 *                   S_h[i][:] = S_h[i][:] * dA + B_g * (x_[i] * dt_h);  y[i] = S_h[i][:] . C_g
 *               y = y + x_ * D;  y = silu(z) * y
 *               y = rmsnorm per group of d_inner / n_group (weight ssm_norm);  x += W_out y
 *   logits = W_head rmsnorm(x_last)
 *
 * The state per layer is the conv window ((d_conv-1) columns of the conv channels) and the SSM
 * state (n_head x head_dim x d_state floats), in llama.cpp's layout; its size does not depend on the
 * context. A prompt is processed as whole micro-batches (the conv and the scan run over all its
 * tokens), as llama.cpp's graph does. Numerics follow llama.cpp's CPU backend: ggml_ssm_conv's
 * float sum (FMA-contracted, as the compiler builds it), ggml_ssm_scan's SIMD path (per 4 vectors
 * of states: two multiplies, an add and an FMA per lane, its 4-accumulator reduction, 16 lanes on
 * the AVX-512 builds of ggml and 8 on AVX2 - we take the width of the kernel table in use, which is
 * chosen from the same CPUID bits), ggml's silu and swiglu (ggml_v_expf), norms from ops.c; the
 * matmuls come from ops.c. The scan's SIMD path covers d_state in multiples of 4 vectors (64 or 32
 * states); the states past that run the same formula one at a time, where llama.cpp's result
 * depends on how its compiler contracted the scalar loop.
 *
 * The gated norm is per group, as llama.cpp and mamba_ssm compute it; transformers' Mamba2
 * normalises over the whole d_inner (they differ when n_groups > 1; see docs/MAMBA2.md). */
#include "ops.h"

#include "cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

enum { MAXL = 16, VECS = 4 };
enum { PART_CONV = 0, PART_SSM = 1 };

typedef struct {
    int64_t n_embd, n_layer, n_vocab, d_conv, d_inner, d_state, n_head, head_dim, n_group, conv_ch, d_in_proj;
    float eps;
} mamba2_hparams;

typedef struct {
    const float *attn_norm, *conv_w, *conv_b, *dt_b, *A, *D, *norm;
    sn_matrix in, out;
} mamba2_layer;

typedef struct {
    mamba2_hparams hp;
    sn_matrix tok_embd;
    const float *out_norm;
    sn_matrix output;
    mamba2_layer *layers;
    sn_f32_store f32s; /* converted small tensors */
    sn_ops ops;
    int lanes;      /* vector width of ggml's scan on this CPU (16 or 8) */
    int scan_avx2;  /* 8 lanes and AVX2 usable: scan_head_avx2 */
    int64_t cap_T;
    float *x, *h, *zxbcdt, *convx, *xbc, *dt, *y, *o, *ones;
} mamba2_state;

/* ---- loading ---- */

/* An F32 (or F16/BF16, converted) tensor of exactly this shape. */
static sn_status f32_tensor(sn_model *m, mamba2_state *s, const char *name, int n_dims, const int64_t *ne, const float **out,
                      sn_err *err) {
    return sn_ops_f32_tensor(m, &s->f32s, name, n_dims, ne, out, err);
}

static sn_status read_hparams(const sn_model *m, mamba2_hparams *hp, sn_err *err) {
    sn_status st;
    hp->n_embd = m->hp.n_embd;
    hp->n_layer = m->hp.n_layer;
    hp->n_vocab = m->hp.n_vocab;
    const int64_t BIG = (int64_t)1 << 20;
    if ((st = sn_model_key_int(m, "ssm.conv_kernel", 1, 1, 64, &hp->d_conv, err))) return st;
    if ((st = sn_model_key_int(m, "ssm.inner_size", 1, 1, BIG, &hp->d_inner, err))) return st;
    if ((st = sn_model_key_int(m, "ssm.state_size", 1, 1, 4096, &hp->d_state, err))) return st;
    if ((st = sn_model_key_int(m, "ssm.time_step_rank", 1, 1, BIG, &hp->n_head, err))) return st;
    if ((st = sn_model_key_int(m, "ssm.group_count", 1, 1, BIG, &hp->n_group, err))) return st;
    if ((st = sn_model_key_float(m, "attention.layer_norm_rms_epsilon", 1, &hp->eps, err))) return st;
    if (!(hp->eps >= 0.0f))
        return sn_err_set(err, SN_EFORMAT, "%s: mamba2.attention.layer_norm_rms_epsilon must be >= 0", m->path);
    if (hp->d_inner % hp->n_head || hp->d_inner % hp->n_group || hp->n_head % hp->n_group)
        return sn_err_set(err, SN_EFORMAT, "%s: mamba2.ssm.inner_size %lld, time_step_rank %lld and group_count %lld "
                          "do not divide", m->path, (long long)hp->d_inner, (long long)hp->n_head, (long long)hp->n_group);
    hp->head_dim = hp->d_inner / hp->n_head;
    hp->conv_ch = hp->d_inner + 2 * hp->n_group * hp->d_state;
    hp->d_in_proj = hp->d_inner + hp->conv_ch + hp->n_head;
    return SN_OK;
}

static sn_status load_layer(sn_model *m, mamba2_state *s, int il, sn_err *err) {
    const mamba2_hparams *hp = &s->hp;
    mamba2_layer *L = &s->layers[il];
    char name[SN_GGUF_MAX_NAME + 32];
    sn_status st;
#define NAME(suffix) (snprintf(name, sizeof(name), "blk.%d." suffix, il), name)
#define F32(suffix, nd, dst, ...)                                                                \
    do {                                                                                         \
        const int64_t ne_[] = {__VA_ARGS__};                                                     \
        if ((st = f32_tensor(m, s, NAME(suffix), nd, ne_, &(dst), err))) return st;              \
    } while (0)
    F32("attn_norm.weight", 1, L->attn_norm, hp->n_embd);
    F32("ssm_conv1d.weight", 2, L->conv_w, hp->d_conv, hp->conv_ch);
    F32("ssm_conv1d.bias", 1, L->conv_b, hp->conv_ch);
    F32("ssm_dt.bias", 1, L->dt_b, hp->n_head);
    F32("ssm_a", 2, L->A, 1, hp->n_head);
    F32("ssm_d", 2, L->D, 1, hp->n_head);
    F32("ssm_norm.weight", 2, L->norm, hp->d_inner / hp->n_group, hp->n_group);
#undef F32
    if ((st = sn_model_matrix(m, NAME("ssm_in.weight"), hp->n_embd, hp->d_in_proj, 1, &L->in, err))) return st;
    if ((st = sn_model_matrix(m, NAME("ssm_out.weight"), hp->d_inner, hp->n_embd, 1, &L->out, err))) return st;
#undef NAME
    if ((st = sn_model_repack(m, &L->in, err))) return st;
    return sn_model_repack(m, &L->out, err);
}

static void mamba2_free(sn_model *m) {
    mamba2_state *s = m->impl;
    sn_f32_store_free(&s->f32s);
    free(s->layers);
    sn_ops_free(&s->ops);
    float *bufs[] = {s->x, s->h, s->zxbcdt, s->convx, s->xbc, s->dt, s->y, s->o, s->ones};
    for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++) free(bufs[i]);
}

static sn_status mamba2_load(sn_model *m, sn_err *err) {
    mamba2_state *s = m->impl;
    sn_ops_init(&s->ops, m);
    s->lanes = sn_ops_lanes(&s->ops);
    s->scan_avx2 = s->lanes == 8 && (sn_cpu_usable() & SN_CPU_AVX2);
    mamba2_hparams *hp = &s->hp;
    sn_status st;
    if ((st = read_hparams(m, hp, err))) return st;
    const int64_t E = hp->n_embd;
    if ((st = sn_model_matrix(m, "token_embd.weight", E, hp->n_vocab, 1, &s->tok_embd, err))) return st;
    const int64_t ne_norm[] = {E};
    if ((st = f32_tensor(m, s, "output_norm.weight", 1, ne_norm, &s->out_norm, err))) return st;
    if ((st = sn_model_matrix(m, "output.weight", E, hp->n_vocab, 0, &s->output, err))) return st;
    if (!s->output.data) s->output = s->tok_embd; /* tied head: llama.cpp duplicates token_embd */
    if ((st = sn_model_repack(m, &s->output, err))) return st;
    s->layers = calloc((size_t)hp->n_layer, sizeof(*s->layers));
    if (!s->layers) return sn_err_set(err, SN_ENOMEM, "out of memory");
    for (int il = 0; il < hp->n_layer; il++)
        if ((st = load_layer(m, s, il, err))) return st;
    const sn_state_decl decl = {2, {"conv", "ssm"},
                                {(uint64_t)((hp->d_conv - 1) * hp->conv_ch),
                                 (uint64_t)(hp->n_head * hp->head_dim * hp->d_state)}};
    return sn_model_state_declare(m, &decl, err);
}

static sn_status ensure_batch(mamba2_state *s, int64_t T, sn_err *err) {
    if (T <= s->cap_T) return SN_OK;
    const mamba2_hparams *hp = &s->hp;
    float **bufs[] = {&s->x, &s->h, &s->zxbcdt, &s->convx, &s->xbc, &s->dt, &s->y, &s->o};
    const int64_t widths[] = {hp->n_embd, hp->n_embd, hp->d_in_proj, hp->conv_ch, hp->conv_ch, hp->n_head,
                              hp->d_inner, hp->n_embd};
    for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++) {
        free(*bufs[i]);
        /* convx: the conv window [channel][d_conv - 1 + T] */
        const int64_t rows = bufs[i] == &s->convx ? (T + hp->d_conv - 1) : T;
        *bufs[i] = malloc((size_t)(rows * widths[i]) * sizeof(float));
        if (!*bufs[i]) return sn_err_set(err, SN_ENOMEM, "out of memory (activations)");
    }
    if (!s->ones) {
        const int64_t n = hp->conv_ch > hp->d_inner ? hp->conv_ch : hp->d_inner;
        if (!(s->ones = malloc((size_t)n * sizeof(float)))) return sn_err_set(err, SN_ENOMEM, "out of memory");
        for (int64_t i = 0; i < n; i++) s->ones[i] = 1.0f;
    }
    const int64_t widest = hp->d_inner > hp->n_embd ? hp->d_inner : hp->n_embd;
    sn_status st = sn_ops_reserve(&s->ops, T, widest, err);
    if (st) return st;
    s->cap_T = T;
    return SN_OK;
}

/* ---- the scan (ggml_ssm_scan, Mamba-2 branch), one job per head range ---- */

static float softplusf_(float x) { return x > 20.0f ? x : logf(1.0f + expf(x)); }

typedef struct {
    const mamba2_state *s;
    const mamba2_layer *L;
    float *S;       /* this layer's SSM state [head][dim][d_state] */
    int64_t T;
} scan_job;

static void scan_head(const scan_job *j, int64_t h) {
    const mamba2_hparams *hp = &j->s->hp;
    const int64_t N = hp->d_state, P = hp->head_dim, G = hp->n_group, CH = hp->conv_ch;
    const int lanes = j->s->lanes;
    const int64_t g = h / (hp->n_head / G), np = N & ~(int64_t)(VECS * lanes - 1);
    float *Sh = j->S + h * P * N;
    for (int64_t t = 0; t < j->T; t++) {
        const float *xbc = j->s->xbc + t * CH;
        const float *x = xbc, *B = xbc + hp->d_inner + g * N, *C = xbc + hp->d_inner + G * N + g * N;
        const float dt = softplusf_(j->s->dt[t * hp->n_head + h]);
        const float dA = expf(dt * j->L->A[h]);
        float *y = j->s->y + t * hp->d_inner + h * P;
        for (int64_t i = 0; i < P; i++) {
            float *Si = Sh + i * N;
            const float x_dt = x[h * P + i] * dt;
            float acc[VECS][MAXL];
            memset(acc, 0, sizeof acc);
            for (int64_t k0 = 0; k0 < np; k0 += VECS * lanes)
                for (int q = 0; q < VECS; q++)
                    for (int l = 0; l < lanes; l++) {
                        const int64_t k = k0 + q * lanes + l;
                        const float st = Si[k] * dA + B[k] * x_dt; /* two multiplies, then an add */
                        acc[q][l] = fmaf(st, C[k], acc[q][l]);
                        Si[k] = st;
                    }
            float sum = 0.0f;
            if (np) {
                for (int l = 0; l < lanes; l++) {
                    acc[0][l] += acc[2][l];
                    acc[1][l] += acc[3][l];
                }
                for (int l = 0; l < lanes; l++) acc[0][l] += acc[1][l];
                sum = lanes == 16 ? sn_ops_hsum16(acc[0]) : sn_ops_hsum8(acc[0]);
            }
            for (int64_t k = np; k < N; k++) { /* states past the last 64 */
                const float st = Si[k] * dA + B[k] * x_dt;
                sum += st * C[k];
                Si[k] = st;
            }
            y[i] = sum;
        }
    }
}

#if defined(__x86_64__)
/* scan_head with 8 lanes as AVX2 vectors: per lane the same two multiplies, add and FMA in the same
 * order, the same pairwise accumulator adds and hsum, so bit-identical to the scalar twin (which
 * SN_CPU=scalar runs; test_mamba2's parity with llama.cpp runs this one). */
__attribute__((target("avx2,fma"))) static void scan_head_avx2(const scan_job *j, int64_t h) {
    const mamba2_hparams *hp = &j->s->hp;
    const int64_t N = hp->d_state, P = hp->head_dim, G = hp->n_group, CH = hp->conv_ch;
    const int64_t g = h / (hp->n_head / G), np = N & ~(int64_t)(VECS * 8 - 1);
    float *Sh = j->S + h * P * N;
    for (int64_t t = 0; t < j->T; t++) {
        const float *xbc = j->s->xbc + t * CH;
        const float *x = xbc, *B = xbc + hp->d_inner + g * N, *C = xbc + hp->d_inner + G * N + g * N;
        const float dt = softplusf_(j->s->dt[t * hp->n_head + h]);
        const float dA = expf(dt * j->L->A[h]);
        const __m256 vdA = _mm256_set1_ps(dA);
        float *y = j->s->y + t * hp->d_inner + h * P;
        for (int64_t i = 0; i < P; i++) {
            float *Si = Sh + i * N;
            const float x_dt = x[h * P + i] * dt;
            const __m256 vx = _mm256_set1_ps(x_dt);
            __m256 acc[VECS];
            for (int q = 0; q < VECS; q++) acc[q] = _mm256_setzero_ps();
            for (int64_t k0 = 0; k0 < np; k0 += VECS * 8)
                for (int q = 0; q < VECS; q++) {
                    const int64_t k = k0 + 8 * q;
                    const __m256 st = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(Si + k), vdA),
                                                    _mm256_mul_ps(_mm256_loadu_ps(B + k), vx));
                    acc[q] = _mm256_fmadd_ps(st, _mm256_loadu_ps(C + k), acc[q]);
                    _mm256_storeu_ps(Si + k, st);
                }
            float sum = 0.0f;
            if (np) { /* hsum(…, 8) as vectors: halves added, then two hadds */
                const __m256 a8 = _mm256_add_ps(_mm256_add_ps(acc[0], acc[2]), _mm256_add_ps(acc[1], acc[3]));
                __m128 t4 = _mm_add_ps(_mm256_castps256_ps128(a8), _mm256_extractf128_ps(a8, 1));
                t4 = _mm_hadd_ps(t4, t4);
                sum = _mm_cvtss_f32(_mm_hadd_ps(t4, t4));
            }
            for (int64_t k = np; k < N; k++) { /* states past the last 32 */
                const float st = Si[k] * dA + B[k] * x_dt;
                sum += st * C[k];
                Si[k] = st;
            }
            y[i] = sum;
        }
    }
}
#endif

static void scan_worker(void *arg, int ith, int nth) {
    const scan_job *j = arg;
    const int64_t H = j->s->hp.n_head;
    for (int64_t h = H * ith / nth; h < H * (ith + 1) / nth; h++) {
#if defined(__x86_64__)
        if (j->s->scan_avx2) {
            scan_head_avx2(j, h);
            continue;
        }
#endif
        scan_head(j, h);
    }
}

/* ---- one micro-batch ---- */

static sn_status mixer(sn_model *m, mamba2_state *s, int il, int64_t T, sn_err *err) {
    const mamba2_hparams *hp = &s->hp;
    const mamba2_layer *L = &s->layers[il];
    const int64_t DI = hp->d_inner, CH = hp->conv_ch, K = hp->d_conv, W = K - 1 + T, H = hp->n_head;
    const int64_t P = hp->head_dim, NP = hp->d_in_proj, GS = DI / hp->n_group;
    sn_status st;
    if ((st = sn_ops_project1(&s->ops, s->h, T, &L->in, s->zxbcdt, err))) return st;
    /* conv window per channel: the saved d_conv-1 columns, then this batch's xBC */
    float *cs = sn_model_state_part(m, il, PART_CONV);
    for (int64_t c = 0; c < CH; c++) {
        float *w = s->convx + c * W;
        memcpy(w, cs + c * (K - 1), (size_t)(K - 1) * sizeof(float));
        for (int64_t t = 0; t < T; t++) w[K - 1 + t] = s->zxbcdt[t * NP + DI + c];
        memcpy(cs + c * (K - 1), w + T, (size_t)(K - 1) * sizeof(float));
    }
    for (int64_t t = 0; t < T; t++) {
        float *out = s->xbc + t * CH;
        for (int64_t c = 0; c < CH; c++) {
            const float *w = s->convx + c * W + t, *cw = L->conv_w + c * K;
            float sum = 0.0f;
            for (int64_t k = 0; k < K; k++) sum = fmaf(w[k], cw[k], sum);
            out[c] = sum + L->conv_b[c];
        }
        sn_swiglu(CH, out, out, s->ones); /* silu (times an exact 1) */
        for (int64_t h = 0; h < H; h++) s->dt[t * H + h] = s->zxbcdt[t * NP + DI + CH + h] + L->dt_b[h];
    }
    scan_job sj = {s, L, sn_model_state_part(m, il, PART_SSM), T};
    sn_pool_run(m->pool, scan_worker, &sj);
    for (int64_t t = 0; t < T; t++) {
        float *y = s->y + t * DI;
        const float *x = s->xbc + t * CH, *z = s->zxbcdt + t * NP;
        for (int64_t i = 0; i < DI; i++) {
            const float xd = x[i] * L->D[i / P];
            y[i] = y[i] + xd;
        }
        for (int64_t i = 0; i < DI; i += P) sn_swiglu(P, y + i, z + i, y + i); /* silu(z) * y per head row */
        for (int64_t g = 0; g < hp->n_group; g++) sn_ops_rmsnorm(y + g * GS, y + g * GS, L->norm + g * GS, GS, hp->eps);
    }
    return sn_ops_project1(&s->ops, s->y, T, &L->out, s->o, err);
}

static sn_status forward(sn_model *m, const int32_t *tokens, int64_t T, float *logits, sn_err *err) {
    mamba2_state *s = m->impl;
    const mamba2_hparams *hp = &s->hp;
    const int64_t E = hp->n_embd;
    sn_status st;
    if ((st = ensure_batch(s, T, err))) return st;
    if ((st = sn_ops_embed(&s->tok_embd, tokens, T, s->x, err))) return st;
    for (int il = 0; il < hp->n_layer; il++) {
        const mamba2_layer *L = &s->layers[il];
        for (int64_t t = 0; t < T; t++) sn_ops_rmsnorm(s->h + t * E, s->x + t * E, L->attn_norm, E, hp->eps);
        if ((st = mixer(m, s, il, T, err))) return st;
        for (int64_t i = 0; i < T * E; i++) s->x[i] = s->o[i] + s->x[i];
    }
    if (!logits) return SN_OK;
    sn_ops_rmsnorm(s->h, s->x + (T - 1) * E, s->out_norm, E, hp->eps);
    return sn_ops_project1(&s->ops, s->h, 1, &s->output, logits, err);
}

const sn_family sn_family_mamba2 = {
    .name = "mamba2",
    .impl_size = sizeof(mamba2_state),
    .state_kind = SN_STATE_RECURRENT,
    .load = mamba2_load,
    .forward = forward,
    .free = mamba2_free,
};
