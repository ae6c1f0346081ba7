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
 * of states: the new state as fma(state, dA, B * x dt), as GCC contracts ggml's multiply, multiply and
 * add, then an FMA into the sum per lane, its 4-accumulator reduction, 16 lanes on
 * the AVX-512 builds of ggml and 8 on AVX2 - we take the width of the kernel table in use, which is
 * chosen from the same CPUID bits), ggml's silu and swiglu (ggml_v_expf), norms from ops.c; the
 * matmuls come from ops.c, the conv and the scan from kernels/recurrent.h. The elementwise steps
 * run as token ranges on the thread pool, the scan as head ranges. The scan's SIMD path covers d_state in multiples of 4 vectors (64 or 32
 * states); the states past that run ggml's scalar loop as written (multiply, multiply, add), where
 * llama.cpp's result depends on how its compiler contracted that loop.
 *
 * The gated norm is per group, as llama.cpp and mamba_ssm compute it; transformers' Mamba2
 * normalises over the whole d_inner (they differ when n_groups > 1; see docs/MAMBA2.md). */
#include "model_mamba2.h"

#include "recurrent.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PART_CONV = 0, PART_SSM = 1 };

typedef struct {
    sn_mamba2 mx;          /* the mixer's sizes and scratch (model_mamba2.h) */
    int64_t n_layer, n_vocab;
    sn_matrix tok_embd;
    const float *out_norm;
    sn_matrix output;
    const float **attn_norm; /* per layer */
    sn_mamba2_layer *layers;
    sn_ops ops;
    float *x, *h, *o;      /* activations (sn_ops allocates them) */
} mamba2_state;

/* ---- the mixer (model_mamba2.h) ---- */

sn_status sn_mamba2_read_hparams(const sn_model *m, sn_mamba2_hparams *hp, sn_err *err) {
    *hp = (sn_mamba2_hparams){.n_embd = m->hp.n_embd};
    sn_status st;
    const int64_t BIG = (int64_t)1 << 20;
    const sn_key_int keys[] = {{"ssm.conv_kernel", 1, 64, &hp->d_conv}, {"ssm.inner_size", 1, BIG, &hp->d_inner},
                               {"ssm.state_size", 1, 4096, &hp->d_state}, {"ssm.time_step_rank", 1, BIG, &hp->n_head},
                               {"ssm.group_count", 1, BIG, &hp->n_group}};
    if ((st = sn_model_keys_int(m, keys, (int)(sizeof(keys) / sizeof(keys[0])), err))) return st;
    if ((st = sn_model_key_eps(m, "attention.layer_norm_rms_epsilon", &hp->eps, err))) return st;
    if (hp->d_inner % hp->n_head || hp->d_inner % hp->n_group || hp->n_head % hp->n_group)
        return sn_err_set(err, SN_EFORMAT, "%s: %s.ssm.inner_size %lld, time_step_rank %lld and group_count %lld "
                          "do not divide", m->path, m->hp.arch, (long long)hp->d_inner, (long long)hp->n_head,
                          (long long)hp->n_group);
    hp->head_dim = hp->d_inner / hp->n_head;
    hp->conv_ch = hp->d_inner + 2 * hp->n_group * hp->d_state;
    hp->d_in_proj = hp->d_inner + hp->conv_ch + hp->n_head;
    return SN_OK;
}

void sn_mamba2_bufs(sn_mamba2 *mx, sn_ops_buf *out) {
    const sn_mamba2_hparams *hp = &mx->hp;
    const sn_ops_buf b[SN_MAMBA2_BUFS] = {{&mx->zxbc, hp->d_in_proj, hp->d_conv - 1}, {&mx->xbc, hp->conv_ch, 0},
                                          {&mx->dt, hp->n_head, 0}, {&mx->dA, hp->n_head, 0}, {&mx->y, hp->d_inner, 0}};
    memcpy(out, b, sizeof b);
}

sn_status sn_mamba2_init(sn_mamba2 *mx, sn_ops *ops, sn_err *err) {
    const int64_t n = mx->hp.conv_ch > mx->hp.d_inner ? mx->hp.conv_ch : mx->hp.d_inner;
    mx->ops = ops;
    if (!(mx->ones = malloc((size_t)n * sizeof(float)))) return sn_err_set(err, SN_ENOMEM, "out of memory");
    for (int64_t i = 0; i < n; i++) mx->ones[i] = 1.0f;
    return SN_OK;
}

void sn_mamba2_free(sn_mamba2 *mx) { free(mx->ones); }

uint64_t sn_mamba2_conv_floats(const sn_mamba2_hparams *hp) { return (uint64_t)((hp->d_conv - 1) * hp->conv_ch); }
uint64_t sn_mamba2_ssm_floats(const sn_mamba2_hparams *hp) { return (uint64_t)(hp->n_head * hp->head_dim * hp->d_state); }

sn_status sn_mamba2_load_layer(sn_model *m, int il, const sn_mamba2_hparams *hp, sn_mamba2_layer *L, sn_err *err) {
    sn_status st;
#define VEC(name, dst, ...) if ((st = sn_model_vector(m, il, name, SN_NE(__VA_ARGS__), 1, &(dst), err))) return st
    VEC("ssm_conv1d.weight", L->conv_w, hp->d_conv, hp->conv_ch);
    VEC("ssm_conv1d.bias", L->conv_b, hp->conv_ch);
    VEC("ssm_dt.bias", L->dt_b, hp->n_head);
    VEC("ssm_a", L->A, 1, hp->n_head);
    VEC("ssm_d", L->D, 1, hp->n_head);
    VEC("ssm_norm.weight", L->norm, hp->d_inner / hp->n_group, hp->n_group);
#undef VEC
    if (!(L->conv_wt = malloc((size_t)(hp->d_conv * hp->conv_ch) * sizeof(float))))
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    for (int64_t c = 0; c < hp->conv_ch; c++)
        for (int64_t j = 0; j < hp->d_conv; j++) L->conv_wt[j * hp->conv_ch + c] = L->conv_w[c * hp->d_conv + j];
    if ((st = sn_model_matrix(m, il, "ssm_in.weight", SN_NE(hp->n_embd, hp->d_in_proj), 1, &L->in, err))) return st;
    return sn_model_matrix(m, il, "ssm_out.weight", SN_NE(hp->d_inner, hp->n_embd), 1, &L->out, err);
}

void sn_mamba2_free_layer(sn_mamba2_layer *L) { free(L->conv_wt); }

static float softplusf_(float x) { return x > 20.0f ? x : logf(1.0f + expf(x)); }

/* The elementwise work between the matmuls, the conv and the scan touches each token's rows only,
 * so it runs as token ranges on the pool, as ggml splits its elementwise ops over rows. */
typedef struct {
    const sn_mamba2 *mx;
    const sn_mamba2_layer *L;
} tok_pass;

/* xBC = silu(conv1d(window) + b); dt = softplus(dt + dt_bias), dA = exp(dt * A) per head */
static void pass_conv(const void *arg, int64_t t0, int64_t t1) {
    const tok_pass *p = arg;
    const sn_mamba2 *s = p->mx;
    const sn_mamba2_hparams *hp = &s->hp;
    const sn_mamba2_layer *L = p->L;
    const int64_t CH = hp->conv_ch, NP = hp->d_in_proj, H = hp->n_head, DI = hp->d_inner;
    s->ops->rk->ssm_conv(CH, hp->d_conv, t1 - t0, s->zxbc + t0 * NP + DI, NP, L->conv_wt, CH, L->conv_b,
                         s->xbc + t0 * CH, CH);
    for (int64_t t = t0; t < t1; t++) {
        float *xbc = s->xbc + t * CH;
        s->ops->k->swiglu(CH, xbc, xbc, s->ones); /* silu (times an exact 1) */
        for (int64_t h = 0; h < H; h++) {
            const float dt = softplusf_(s->zxbcdt[t * NP + DI + CH + h] + L->dt_b[h]);
            s->dt[t * H + h] = dt;
            s->dA[t * H + h] = expf(dt * L->A[h]);
        }
    }
}

/* y += x * D; y = silu(z) * y; rmsnorm per group */
static void pass_gate_norm(const void *arg, int64_t t0, int64_t t1) {
    const tok_pass *p = arg;
    const sn_mamba2 *s = p->mx;
    const sn_mamba2_hparams *hp = &s->hp;
    const sn_mamba2_layer *L = p->L;
    const int64_t DI = hp->d_inner, CH = hp->conv_ch, NP = hp->d_in_proj, P = hp->head_dim, GS = DI / hp->n_group;
    for (int64_t t = t0; t < t1; t++) {
        float *y = s->y + t * DI;
        const float *x = s->xbc + t * CH, *z = s->zxbcdt + t * NP;
        for (int64_t i = 0; i < DI; i++) {
            const float xd = x[i] * L->D[i / P];
            y[i] = y[i] + xd;
        }
        for (int64_t i = 0; i < DI; i += P) s->ops->k->swiglu(P, y + i, z + i, y + i); /* silu(z) * y per head row */
        for (int64_t g = 0; g < hp->n_group; g++) sn_ops_rmsnorm(y + g * GS, y + g * GS, L->norm + g * GS, GS, hp->eps);
    }
}

/* ---- the scan (ggml_ssm_scan, Mamba-2 branch, runtime/kernels/recurrent.h), one job per head range ---- */

typedef struct {
    const sn_mamba2 *mx;
    float *S;       /* this layer's SSM state [head][dim][d_state] */
    int64_t T;
} scan_job;

static void scan_worker(void *arg, int ith, int nth) {
    const scan_job *j = arg;
    const sn_mamba2 *s = j->mx;
    const sn_mamba2_hparams *hp = &s->hp;
    const int64_t H = hp->n_head, N = hp->d_state, P = hp->head_dim, G = hp->n_group, DI = hp->d_inner;
    for (int64_t h = H * ith / nth; h < H * (ith + 1) / nth; h++) {
        const int64_t g = h / (H / G);
        const float *x = s->xbc + h * P, *B = s->xbc + DI + g * N, *C = s->xbc + DI + G * N + g * N;
        s->ops->rk->ssd_scan(N, P, s->ops->lanes, j->T, x, B, C, hp->conv_ch, s->dt + h, s->dA + h, H, j->S + h * P * N,
                             s->y + h * P, DI);
    }
}

sn_status sn_mamba2_mixer(sn_model *m, sn_mamba2 *mx, const sn_mamba2_layer *L, const float *h, int64_t T,
                          float *conv_state, float *ssm_state, float *out, sn_err *err) {
    const sn_mamba2_hparams *hp = &mx->hp;
    const int64_t DI = hp->d_inner, CH = hp->conv_ch, K = hp->d_conv, NP = hp->d_in_proj;
    sn_status st;
    mx->zxbcdt = mx->zxbc + (K - 1) * NP; /* past the conv window's rows */
    if ((st = sn_ops_project1(mx->ops, h, T, &L->in, mx->zxbcdt, err))) return st;
    /* the conv window: the saved d_conv-1 columns ([channel][column]) as the rows before this
     * batch's xBC, and afterwards the last d_conv-1 rows saved */
    float *cs = conv_state;
    for (int64_t c = 0; c < CH; c++)
        for (int64_t j = 0; j < K - 1; j++) mx->zxbc[j * NP + DI + c] = cs[c * (K - 1) + j];
    for (int64_t c = 0; c < CH; c++)
        for (int64_t j = 0; j < K - 1; j++) cs[c * (K - 1) + j] = mx->zxbc[(T + j) * NP + DI + c];
    tok_pass p = {.mx = mx, .L = L};
    sn_ops_rows(m->pool, T, pass_conv, &p);
    scan_job sj = {mx, ssm_state, T};
    sn_pool_run(m->pool, scan_worker, &sj);
    sn_ops_rows(m->pool, T, pass_gate_norm, &p);
    return sn_ops_project1(mx->ops, mx->y, T, &L->out, out, err);
}

/* ---- the mamba2 family ---- */

static sn_status load_layer(sn_model *m, int il, sn_err *err) {
    mamba2_state *s = m->impl;
    sn_status st = sn_model_vector(m, il, "attn_norm.weight", SN_NE(s->mx.hp.n_embd), 1, &s->attn_norm[il], err);
    return st ? st : sn_mamba2_load_layer(m, il, &s->mx.hp, &s->layers[il], err);
}

static void mamba2_free(sn_model *m) {
    mamba2_state *s = m->impl;
    for (int64_t il = 0; s->layers && il < s->n_layer; il++) sn_mamba2_free_layer(&s->layers[il]);
    free(s->layers);
    free(s->attn_norm);
    sn_ops_free(&s->ops);
    sn_mamba2_free(&s->mx);
}

static sn_status mamba2_load(sn_model *m, sn_err *err) {
    mamba2_state *s = m->impl;
    sn_mamba2_hparams *hp = &s->mx.hp;
    sn_status st;
    if ((st = sn_mamba2_read_hparams(m, hp, err))) return st;
    s->n_layer = m->hp.n_layer;
    s->n_vocab = m->hp.n_vocab;
    const int64_t E = hp->n_embd, DI = hp->d_inner;
    sn_ops_buf bufs[3 + SN_MAMBA2_BUFS] = {{&s->x, E, 0}, {&s->h, E, 0}, {&s->o, E, 0}};
    sn_mamba2_bufs(&s->mx, bufs + 3);
    const int64_t widest = DI > E ? DI : E;
    if ((st = sn_ops_init(&s->ops, m, bufs, (int)(sizeof(bufs) / sizeof(bufs[0])), widest, err))) return st;
    if ((st = sn_mamba2_init(&s->mx, &s->ops, err))) return st;
    if ((st = sn_model_matrix(m, SN_MODEL_GLOBAL, "token_embd.weight", SN_NE(E, s->n_vocab), 1, &s->tok_embd, err)))
        return st;
    if ((st = sn_model_vector(m, SN_MODEL_GLOBAL, "output_norm.weight", SN_NE(E), 1, &s->out_norm, err))) return st;
    if ((st = sn_model_output_head(m, &s->tok_embd, 0, &s->output, err))) return st;
    if (!(s->layers = calloc((size_t)s->n_layer, sizeof(*s->layers))) ||
        !(s->attn_norm = calloc((size_t)s->n_layer, sizeof(*s->attn_norm))))
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    if ((st = sn_model_each_layer(m, load_layer, err))) return st;
    const sn_state_decl decl = {2, {"conv", "ssm"}, {sn_mamba2_conv_floats(hp), sn_mamba2_ssm_floats(hp)}};
    return sn_model_state_declare(m, &decl, err);
}

static sn_status forward(sn_model *m, const int32_t *tokens, int64_t T, float *logits, sn_err *err) {
    mamba2_state *s = m->impl;
    const sn_mamba2_hparams *hp = &s->mx.hp;
    const int64_t E = hp->n_embd;
    sn_status st = sn_ops_begin(&s->ops, T, &s->tok_embd, tokens, &s->x, err);
    if (st) return st;
    for (int il = 0; il < s->n_layer; il++) { /* x += the previous mixer's output; h = rmsnorm(x) */
        const sn_resid_norm rn = {.x = s->x, .h = s->h, .add = il ? s->o : NULL, .w = s->attn_norm[il],
                                  .n = E, .eps = hp->eps};
        sn_ops_rows(m->pool, T, sn_ops_resid_norm, &rn);
        if ((st = sn_mamba2_mixer(m, &s->mx, &s->layers[il], s->h, T, sn_model_state_part(m, il, PART_CONV),
                                  sn_model_state_part(m, il, PART_SSM), s->o, err)))
            return st;
    }
    if (!logits) return SN_OK;
    const sn_resid_norm last = {.x = s->x + (T - 1) * E, .h = s->h, .add = s->o + (T - 1) * E, .w = s->out_norm,
                                .n = E, .eps = hp->eps};
    sn_ops_resid_norm(&last, 0, 1);
    return sn_ops_project1(&s->ops, s->h, 1, &s->output, logits, err);
}

const sn_family sn_family_mamba2 = {.name = "mamba2", .impl_size = sizeof(mamba2_state), .state_kind = SN_STATE_RECURRENT,
                                    .load = mamba2_load, .forward = forward, .free = mamba2_free};
