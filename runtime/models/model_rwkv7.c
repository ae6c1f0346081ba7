/* model_rwkv7.c - the forward pass of RWKV-7 ("Goose"): a recurrent network with a matrix-valued
 * state per head instead of attention over a KV cache. Reads top to bottom like the paper:
 *
 *   x = layernorm0(embed(token))
 *   per layer:  h = layernorm(x);  sx = h_prev - h                    (token shift)
 *               xr,xw,xk,xv,xa,xg = h + sx * mu_{r,w,k,v,a,g}      (the fused lerp tensor)
 *               r = Wr xr;  k = Wk xk;  v = Wv xv
 *               w = exp(-0.606531 * sigmoid(w0 + W2 tanh(W1 xw)))  (decay, in (0.545, 1))
 *               a = sigmoid(a0 + A2 A1 xa)                         (in-context learning rate)
 *               v += (v_first - v) * sigmoid(v0 + V2 V1 xv)        (value residual; layer 0 sets v_first)
 *               g = G2 sigmoid(G1 xg)                              (output gate)
 *               kk = l2norm(k * k_k) per head;  k = k + (a * k * k_a - k * k_a)
 *               per head: S = S diag(w) + v k^T + (S (-kk)) (kk * a)^T;  y = S r   (wkv7)
 *               y = groupnorm(y) * ln_x + b + v * sum(k * r * r_k) per head;  x += Wo (y * g)
 *               h = layernorm(x);  xk = h + (h_prev - h) * mu_k;  x += Wvalue relu(Wkey xk)^2
 *   logits = Whead layernorm(x_last)
 *
 * The state per layer is two token-shift vectors (the last normed inputs of time mix and channel
 * mix) and head_count matrices of head_size^2 floats, in llama.cpp's layout; its size does not
 * depend on the context. Numerics follow llama.cpp's CPU graph: every elementwise op rounds where
 * ggml's does, norms sum in double like ggml_norm/ggml_l2_norm (the variance in ggml's SIMD
 * blocks), the matmuls come from ops.c, and the wkv7 recurrence (kernels/recurrent.h) reproduces
 * ggml's SIMD kernel (FMAs in four vectors of 16 lanes on AVX-512 or 8 on AVX2, its reduction
 * order). The elementwise steps run as token ranges on the thread pool, wkv7 as head ranges. That kernel
 * walks the head in steps of 4 vectors (64 floats on AVX-512, 32 on AVX2): for a head size that
 * is not a multiple of the step ggml reads (and stores) past the head; here the lanes beyond the
 * head are zero, the mathematically right result (llama.cpp's output is wrong there, so parity
 * is claimed for head size 64 only). */
#include "ops.h"

#include "recurrent.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum { N_LERP = 6 };
enum { PART_SHIFT = 0, PART_WKV = 1 };
enum { HEAD_MAX = 256 }; /* head sizes up to this sum through a stack buffer */

typedef struct {
    int64_t n_embd, n_layer, n_vocab, n_ff, head_size, n_head;
    int64_t r_decay, r_iclr, r_vres, r_gate;
    float eps;
} rwkv_hparams;

typedef struct {
    const float *attn_norm, *attn_norm_b, *ffn_norm, *ffn_norm_b, *ln_x, *ln_x_b;
    const float *lerp;            /* [6][n_embd]: r, w, k, v, a, g */
    const float *w0, *a0, *v0, *k_k, *k_a, *r_k, *lerp_ffn;
    sn_matrix w1, w2, a1, a2, v1, v2, g1, g2;
    sn_matrix wr, wk, wv, wo, ffn_key, ffn_value;
} rwkv_layer;

typedef struct {
    rwkv_hparams hp;
    sn_matrix tok_embd;
    const float *ln0, *ln0_b, *out_norm, *out_norm_b;
    sn_matrix output;
    rwkv_layer *layers;
    sn_ops ops;
    /* activations (sn_ops allocates them) */
    float *x, *h, *xx, *r, *w, *k, *v, *vm, *a, *g, *kk, *b, *vfirst, *y, *lo_w, *lo_a, *lo_v, *lo_g, *ff;
} rwkv_state;

#define RHP(m) (&((const rwkv_state *)(m)->impl)->hp)

/* ---- loading ---- */

/* A LayerNorm's NAME.weight and NAME.bias, n each (of layer il, or global with SN_MODEL_GLOBAL). */
static sn_status norm_wb(sn_model *m, int il, const char *name, int64_t n, const float **w, const float **b,
                         sn_err *err) {
    char full[SN_GGUF_MAX_NAME + 40];
    snprintf(full, sizeof full, "%s.weight", name);
    sn_status st = sn_model_vector(m, il, full, SN_NE(n), 1, w, err);
    if (st) return st;
    snprintf(full, sizeof full, "%s.bias", name);
    return sn_model_vector(m, il, full, SN_NE(n), 1, b, err);
}

static sn_status read_hparams(const sn_model *m, rwkv_hparams *hp, sn_err *err) {
    *hp = (rwkv_hparams){.n_embd = m->hp.n_embd, .n_layer = m->hp.n_layer, .n_vocab = m->hp.n_vocab};
    sn_status st;
    const int64_t BIG = (int64_t)1 << 24;
    const sn_key_int keys[] = {{"wkv.head_size", 1, 4096, &hp->head_size}, {"feed_forward_length", 1, BIG, &hp->n_ff},
                               {"attention.decay_lora_rank", 1, BIG, &hp->r_decay},
                               {"attention.iclr_lora_rank", 1, BIG, &hp->r_iclr},
                               {"attention.value_residual_mix_lora_rank", 1, BIG, &hp->r_vres},
                               {"attention.gate_lora_rank", 1, BIG, &hp->r_gate}};
    if ((st = sn_model_keys_int(m, keys, (int)(sizeof(keys) / sizeof(keys[0])), err))) return st;
    int64_t shift = 2;
    if ((st = sn_model_key_int(m, "token_shift_count", 0, 0, 64, &shift, err))) return st;
    if (shift != 2)
        return sn_err_set(err, SN_EFORMAT, "%s: %s.token_shift_count = %lld, rwkv7 needs 2", m->path, m->hp.arch,
                          (long long)shift);
    if ((st = sn_model_key_eps(m, "attention.layer_norm_epsilon", &hp->eps, err))) return st;
    if (hp->n_embd % hp->head_size != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: embedding length %lld is not a multiple of wkv.head_size %lld", m->path,
                          (long long)hp->n_embd, (long long)hp->head_size);
    hp->n_head = hp->n_embd / hp->head_size;
    return SN_OK;
}

static sn_status load_layer(sn_model *m, int il, sn_err *err) {
    rwkv_state *s = m->impl;
    const rwkv_hparams *hp = &s->hp;
    rwkv_layer *L = &s->layers[il];
    const int64_t D = hp->n_embd;
    sn_status st;
#define VEC(name, dst) if ((st = sn_model_vector(m, il, name, SN_NE(D), 1, &(dst), err))) return st
#define MAT(name, nin, nout, dst) if ((st = sn_model_matrix(m, il, name, SN_NE(nin, nout), 1, &(dst), err))) return st
#define NORM(prefix, w, b) if ((st = norm_wb(m, il, prefix, D, &(w), &(b), err))) return st
    NORM("attn_norm", L->attn_norm, L->attn_norm_b);
    NORM("attn_norm_2", L->ffn_norm, L->ffn_norm_b);
    NORM("time_mix_ln", L->ln_x, L->ln_x_b);
    VEC("time_mix_w0.weight", L->w0);
    VEC("time_mix_a0.weight", L->a0);
    VEC("time_mix_v0.weight", L->v0);
    VEC("time_mix_k_k.weight", L->k_k);
    VEC("time_mix_k_a.weight", L->k_a);
    VEC("time_mix_r_k.weight", L->r_k);
    if ((st = sn_model_vector(m, il, "time_mix_lerp_fused.weight", SN_NE(D, 1, 1, N_LERP), 1, &L->lerp, err))) return st;
    if ((st = sn_model_vector(m, il, "channel_mix_lerp_k.weight", SN_NE(D, 1, 1), 1, &L->lerp_ffn, err))) return st;
    /* layer 0's value-residual LoRA is never used; llama.cpp's converter stores copies of the ICLR
     * LoRA there, so it has the ICLR rank */
    const int64_t rv = il == 0 ? hp->r_iclr : hp->r_vres;
    MAT("time_mix_w1.weight", D, hp->r_decay, L->w1);
    MAT("time_mix_w2.weight", hp->r_decay, D, L->w2);
    MAT("time_mix_a1.weight", D, hp->r_iclr, L->a1);
    MAT("time_mix_a2.weight", hp->r_iclr, D, L->a2);
    MAT("time_mix_v1.weight", D, rv, L->v1);
    MAT("time_mix_v2.weight", rv, D, L->v2);
    MAT("time_mix_g1.weight", D, hp->r_gate, L->g1);
    MAT("time_mix_g2.weight", hp->r_gate, D, L->g2);
    MAT("time_mix_receptance.weight", D, D, L->wr);
    MAT("time_mix_key.weight", D, D, L->wk);
    MAT("time_mix_value.weight", D, D, L->wv);
    MAT("time_mix_output.weight", D, D, L->wo);
    MAT("channel_mix_key.weight", D, hp->n_ff, L->ffn_key);
    MAT("channel_mix_value.weight", hp->n_ff, D, L->ffn_value);
#undef MAT
#undef NORM
#undef VEC
    return SN_OK;
}

static void rwkv_free(sn_model *m) {
    rwkv_state *s = m->impl;
    free(s->layers);
    sn_ops_free(&s->ops);
}

static sn_status rwkv_load(sn_model *m, sn_err *err) {
    rwkv_state *s = m->impl;
    rwkv_hparams *hp = &s->hp;
    sn_status st;
    if ((st = read_hparams(m, hp, err))) return st;
    const int64_t D = hp->n_embd;
    const int64_t rv = hp->r_vres > hp->r_iclr ? hp->r_vres : hp->r_iclr; /* layer 0's v1 has the ICLR rank */
    const sn_ops_buf bufs[] = {
        {&s->x, D, 0},  {&s->h, D, 0},  {&s->xx, N_LERP * D, 0}, {&s->r, D, 0},    {&s->w, D, 0},
        {&s->k, D, 0},  {&s->v, D, 0},  {&s->vm, D, 0},          {&s->a, D, 0},    {&s->g, D, 0},
        {&s->kk, D, 0}, {&s->b, D, 0},  {&s->vfirst, D, 0},      {&s->y, D, 0},    {&s->lo_w, hp->r_decay, 0},
        {&s->lo_a, hp->r_iclr, 0}, {&s->lo_v, rv, 0}, {&s->lo_g, hp->r_gate, 0}, {&s->ff, hp->n_ff, 0}};
    const int64_t widest = hp->n_ff > D ? hp->n_ff : D;
    if ((st = sn_ops_init(&s->ops, m, bufs, (int)(sizeof(bufs) / sizeof(bufs[0])), widest, err))) return st;
    if ((st = sn_model_matrix(m, SN_MODEL_GLOBAL, "token_embd.weight", SN_NE(D, hp->n_vocab), 1, &s->tok_embd, err)))
        return st;
    if ((st = norm_wb(m, SN_MODEL_GLOBAL, "token_embd_norm", D, &s->ln0, &s->ln0_b, err))) return st;
    if ((st = norm_wb(m, SN_MODEL_GLOBAL, "output_norm", D, &s->out_norm, &s->out_norm_b, err))) return st;
    if ((st = sn_model_output_head(m, &s->tok_embd, 1, &s->output, err))) return st;
    if (!(s->layers = calloc((size_t)hp->n_layer, sizeof(*s->layers)))) return sn_err_set(err, SN_ENOMEM, "out of memory");
    if ((st = sn_model_each_layer(m, load_layer, err))) return st;
    const sn_state_decl decl = {2, {"token_shift", "wkv"},
                                {(uint64_t)(2 * D), (uint64_t)(hp->n_head * hp->head_size * hp->head_size)}};
    return sn_model_state_declare(m, &decl, err);
}

/* ---- elementwise pieces, as ggml computes them ---- */

static float sigmoidf_(float x) { return 1.0f / (1.0f + expf(-x)); }

/* ---- per-token passes, split over the thread pool by token range ---- */

/* The elementwise work between two matmuls touches each token's rows only (a token shift reads the
 * previous token's h, which an earlier pass wrote), so it runs as token ranges on the pool, as
 * ggml splits its elementwise ops over rows. */
typedef struct {
    rwkv_state *s;
    const rwkv_layer *L;
    const float *saved; /* token shift of token 0 (lerp passes) */
    const float *h;     /* cm_lerp: the normed rows that go on */
    int first;          /* tm_mix: layer 0, whose v becomes v_first */
    int64_t T;
} tok_pass;

/* time mix: xxx_q = (x_prev - h) * mu_q + h for the six lerps */
static void pass_tm_lerp(const void *arg, int64_t t0, int64_t t1) {
    const tok_pass *p = arg;
    const rwkv_state *s = p->s;
    const int64_t D = s->hp.n_embd, TD = p->T * D;
    for (int64_t t = t0; t < t1; t++) {
        const float *h = s->h + t * D, *prev = t ? h - D : p->saved;
        s->ops.rk->rwkv7_lerp(D, N_LERP, h, prev, p->L->lerp, D, s->xx + t * D, TD);
    }
}

/* the LoRA's inner activations: tanh (decay), sigmoid (gate) */
static void pass_lora_act(const void *arg, int64_t t0, int64_t t1) {
    const tok_pass *p = arg;
    const rwkv_state *s = p->s;
    const int64_t rw = p->L->w1.n_out, rg = p->L->g1.n_out;
    for (int64_t i = t0 * rw; i < t1 * rw; i++) s->lo_w[i] = tanhf(s->lo_w[i]);
    for (int64_t i = t0 * rg; i < t1 * rg; i++) s->lo_g[i] = sigmoidf_(s->lo_g[i]);
}

/* decay, value residual, ICLR (per channel: kernels/recurrent.h's rwkv7_mix), kk = l2norm(k * k_k)
 * per head, the k update and wkv7's a and b */
static void pass_tm_mix(const void *arg, int64_t t0, int64_t t1) {
    const tok_pass *p = arg;
    const rwkv_state *s = p->s;
    const rwkv_layer *L = p->L;
    const int64_t D = s->hp.n_embd, N = s->hp.head_size, H = s->hp.n_head;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t o = t * D;
        s->ops.rk->rwkv7_mix(D, s->w + o, L->w0, s->a + o, L->a0, s->v + o, s->vfirst + o, s->vm + o, L->v0, p->first);
        for (int64_t h = 0; h < H; h++) {
            float *kk = s->kk + t * D + h * N;
            const float *k = s->k + t * D + h * N, *kk_w = L->k_k + h * N;
            double ss = 0.0;
            if (N <= HEAD_MAX) { /* the squares, then their double sum (ops.h: the scan's bits, faster) */
                float sq[HEAD_MAX];
                for (int64_t i = 0; i < N; i++) {
                    kk[i] = k[i] * kk_w[i];
                    sq[i] = kk[i] * kk[i];
                }
                ss = sn_ops_sum_f64(sq, N);
            } else
                for (int64_t i = 0; i < N; i++) {
                    kk[i] = k[i] * kk_w[i];
                    ss += (double)(kk[i] * kk[i]);
                }
            const float scale = 1.0f / fmaxf(sqrtf((float)ss), 1e-12f);
            for (int64_t i = 0; i < N; i++) kk[i] = kk[i] * scale;
        }
        for (int64_t i = 0; i < D; i++) {
            const int64_t e = t * D + i;
            const float ka = s->k[e] * L->k_a[i];
            s->k[e] = s->k[e] + (s->a[e] * ka - ka);
            s->b[e] = s->kk[e] * s->a[e]; /* wkv7's b = kk * a; its a = -kk */
            s->kk[e] = -s->kk[e];
        }
    }
}

/* the readout: group norm per head, ln_x, + v * sum(k * r * r_k), * g */
static void pass_tm_out(const void *arg, int64_t t0, int64_t t1) {
    const tok_pass *p = arg;
    const rwkv_state *s = p->s;
    const rwkv_layer *L = p->L;
    const int64_t D = s->hp.n_embd, N = s->hp.head_size, H = s->hp.n_head;
    for (int64_t t = t0; t < t1; t++)
        for (int64_t h = 0; h < H; h++) {
            const int64_t o = t * D + h * N;
            float *y = s->y + o;
            sn_ops_layernorm(y, y, NULL, NULL, N, 64e-5f, s->ops.lanes); /* group norm, one group per head */
            for (int64_t i = 0; i < N; i++) y[i] = y[i] * L->ln_x[h * N + i] + L->ln_x_b[h * N + i];
            double rk = 0.0;
            if (N <= HEAD_MAX) {
                float kr[HEAD_MAX];
                for (int64_t i = 0; i < N; i++) kr[i] = (s->k[o + i] * s->r[o + i]) * L->r_k[h * N + i];
                rk = sn_ops_sum_f64(kr, N);
            } else
                for (int64_t i = 0; i < N; i++) rk += (double)((s->k[o + i] * s->r[o + i]) * L->r_k[h * N + i]);
            const float rkf = (float)rk;
            for (int64_t i = 0; i < N; i++) y[i] = y[i] + s->v[o + i] * rkf;
            for (int64_t i = 0; i < N; i++) y[i] = y[i] * s->g[o + i];
        }
}

/* channel mix: xk = (x_prev - h) * mu_k + h over the rows that go on (p->h, p->saved: their first
 * row's previous one) */
static void pass_cm_lerp(const void *arg, int64_t t0, int64_t t1) {
    const tok_pass *p = arg;
    const rwkv_state *s = p->s;
    const int64_t D = s->hp.n_embd;
    for (int64_t t = t0; t < t1; t++) {
        const float *h = p->h + t * D, *prev = t ? h - D : p->saved;
        s->ops.rk->rwkv7_lerp(D, 1, h, prev, p->L->lerp_ffn, D, s->xx + t * D, D);
    }
}

static void pass_relu_sq(const void *arg, int64_t t0, int64_t t1) {
    const tok_pass *p = arg;
    float *ff = p->s->ff;
    const int64_t F = p->s->hp.n_ff;
    int64_t i = t0 * F;
#if defined(__SSE2__)
    for (; i + 4 <= t1 * F; i += 4) { /* maxps(x, 0) is x > 0 ? x : +0, NaN -> 0, as below */
        const __m128 z = _mm_max_ps(_mm_loadu_ps(ff + i), _mm_setzero_ps());
        _mm_storeu_ps(ff + i, _mm_mul_ps(z, z));
    }
#endif
    for (; i < t1 * F; i++) { /* relu as a mask, not a branch (the signs are random) */
        uint32_t u;
        memcpy(&u, &ff[i], sizeof u);
        u &= 0u - (uint32_t)(ff[i] > 0.0f); /* x > 0 ? x : +0, NaN -> 0, as ggml_vec_relu_f32 */
        float z;
        memcpy(&z, &u, sizeof z);
        ff[i] = z * z;
    }
}

/* ---- the wkv7 recurrence (ggml_rwkv_wkv7, runtime/kernels/recurrent.h), one job per head range ---- */

typedef struct {
    const rwkv_state *s;
    float *S;   /* this layer's state [head][i][j] */
    int64_t T;
} wkv_job;

static void wkv_worker(void *arg, int ith, int nth) {
    const wkv_job *j = arg;
    const rwkv_state *s = j->s;
    const int64_t H = s->hp.n_head, N = s->hp.head_size, D = s->hp.n_embd;
    for (int64_t h = H * ith / nth; h < H * (ith + 1) / nth; h++) {
        const int64_t o = h * N;
        s->ops.rk->wkv7(N, s->ops.lanes, j->T, D, s->r + o, s->w + o, s->k + o, s->v + o, s->kk + o, s->b + o,
                        j->S + h * N * N, s->y + o);
    }
}

/* ---- the forward pass over one micro-batch ---- */

static sn_status time_mix(sn_model *m, rwkv_state *s, int il, int64_t T, sn_err *err) {
    const rwkv_layer *L = &s->layers[il];
    const int64_t D = s->hp.n_embd, TD = T * D;
    sn_status st;
    float *shift = sn_model_state_part(m, il, PART_SHIFT);
    tok_pass p = {.s = s, .L = L, .saved = shift, .T = T};
    sn_ops_rows(m->pool, p.T, pass_tm_lerp, &p);
    const float *xr = s->xx, *xw = s->xx + TD, *xk = s->xx + 2 * TD, *xv = s->xx + 3 * TD, *xa = s->xx + 4 * TD,
                *xg = s->xx + 5 * TD;
    /* the projections of the lerped inputs, then their LoRAs' second halves */
    if ((st = sn_ops_project1(&s->ops, xr, T, &L->wr, s->r, err))) return st;
    if ((st = sn_ops_project1(&s->ops, xw, T, &L->w1, s->lo_w, err))) return st;
    if ((st = sn_ops_project1(&s->ops, xk, T, &L->wk, s->k, err))) return st;
    {
        const sn_matrix *wv[2] = {&L->wv, &L->v1};
        float *yv[2] = {s->v, s->lo_v};
        if ((st = sn_ops_project(&s->ops, xv, T, il == 0 ? 1 : 2, wv, yv, err))) return st;
    }
    if ((st = sn_ops_project1(&s->ops, xg, T, &L->g1, s->lo_g, err))) return st;
    if ((st = sn_ops_project1(&s->ops, xa, T, &L->a1, s->lo_a, err))) return st;
    sn_ops_rows(m->pool, p.T, pass_lora_act, &p);
    if ((st = sn_ops_project1(&s->ops, s->lo_w, T, &L->w2, s->w, err))) return st;
    if (il > 0 && (st = sn_ops_project1(&s->ops, s->lo_v, T, &L->v2, s->vm, err))) return st;
    if ((st = sn_ops_project1(&s->ops, s->lo_g, T, &L->g2, s->g, err))) return st;
    if ((st = sn_ops_project1(&s->ops, s->lo_a, T, &L->a2, s->a, err))) return st;
    p.first = il == 0;
    sn_ops_rows(m->pool, p.T, pass_tm_mix, &p);
    wkv_job wj = {s, sn_model_state_part(m, il, PART_WKV), T};
    sn_pool_run(m->pool, wkv_worker, &wj);
    sn_ops_rows(m->pool, p.T, pass_tm_out, &p);
    memcpy(shift, s->h + (T - 1) * D, (size_t)D * sizeof(float));
    return sn_ops_project1(&s->ops, s->y, T, &L->wo, s->r, err); /* the time-mix output goes to s->r */
}

static sn_status forward(sn_model *m, const int32_t *tokens, int64_t T, float *logits, sn_err *err) {
    rwkv_state *s = m->impl;
    const rwkv_hparams *hp = &s->hp;
    const int64_t D = hp->n_embd;
    sn_status st;
    if ((st = sn_ops_begin(&s->ops, T, &s->tok_embd, tokens, &s->x, err))) return st;
    /* x = layernorm0(embedding), in place; then per block x += the previous block's output and
     * h = layernorm(x) */
    sn_resid_norm rn = {.x = s->x, .h = s->x, .w = s->ln0, .b = s->ln0_b, .n = D, .eps = hp->eps, .lanes = s->ops.lanes};
    sn_ops_rows(m->pool, T, sn_ops_resid_norm, &rn);
    const float *add = NULL; /* the previous layer's channel-mix output, added at the next norm */
    for (int il = 0; il < hp->n_layer; il++) {
        const rwkv_layer *L = &s->layers[il];
        rn.h = s->h;
        rn.add = add;
        rn.w = L->attn_norm;
        rn.b = L->attn_norm_b;
        sn_ops_rows(m->pool, T, sn_ops_resid_norm, &rn);
        if ((st = time_mix(m, s, il, T, err))) return st;
        /* channel mix; its token shift is the second half of the layer's shift state */
        rn.add = s->r;
        rn.w = L->ffn_norm;
        rn.b = L->ffn_norm_b;
        sn_ops_rows(m->pool, T, sn_ops_resid_norm, &rn);
        float *shift = sn_model_state_part(m, il, PART_SHIFT) + D;
        /* In the last layer only the rows whose logits are wanted go on (llama.cpp's inp_out_ids):
         * the last token, or none; this also picks the matmuls' single-row summation order. */
        const int64_t R = il == hp->n_layer - 1 ? (logits ? 1 : 0) : T;
        tok_pass p = {.s = s, .L = L, .h = s->h + (T - R) * D, .saved = R == T ? shift : s->h + (T - R - 1) * D,
                      .T = R};
        if (R) sn_ops_rows(m->pool, p.T, pass_cm_lerp, &p);
        memcpy(shift, s->h + (T - 1) * D, (size_t)D * sizeof(float));
        if (!R) break;
        if ((st = sn_ops_project1(&s->ops, s->xx, R, &L->ffn_key, s->ff, err))) return st;
        sn_ops_rows(m->pool, p.T, pass_relu_sq, &p);
        if ((st = sn_ops_project1(&s->ops, s->ff, R, &L->ffn_value, s->y, err))) return st;
        add = s->y;
    }
    if (!logits) return SN_OK;
    const sn_resid_norm last = {.x = s->x + (T - 1) * D, .h = s->h, .add = add, .w = s->out_norm, .b = s->out_norm_b,
                                .n = D, .eps = hp->eps, .lanes = s->ops.lanes};
    sn_ops_resid_norm(&last, 0, 1);
    return sn_ops_project1(&s->ops, s->h, 1, &s->output, logits, err);
}

const sn_family sn_family_rwkv7 = {.name = "rwkv7", .impl_size = sizeof(rwkv_state), .state_kind = SN_STATE_RECURRENT,
                                   .load = rwkv_load, .forward = forward, .free = rwkv_free};
