/* model_qwen35.c - the forward pass of Qwen3.5 ("qwen35"), its mixture of experts ("qwen35moe",
 * Qwen3.6-35B-A3B) and Qwen3-Next ("qwen3next"): a hybrid of Gated DeltaNet layers (linear attention
 * with a matrix state per value head) and gated full-attention layers.
 *
 *   x = embed(token)
 *   per layer:  h = rmsnorm(x) * attn_norm
 *     linear:   qkv = W_qkv h;  z = W_gate h;  b = W_beta h;  a = W_alpha h
 *               qkv = silu(causal depthwise conv1d(qkv))          (window: d_conv-1 saved rows)
 *               q, k = l2norm per key head;  beta = sigmoid(b);  g = softplus(a + dt_bias) * A
 *               per value head v (key head v % n_k_heads: the converter tiled the value heads;
               qwen3next: v / (n_v_heads / n_k_heads), grouped, with b and a from one ssm_ba
               projection, per key head its value heads' b then their a):
 *                   S *= exp(g);  d = (v - S^T k) * beta;  S += k d^T;  y = S^T q / sqrt(d_state)
 *               y = rmsnorm(y) * ssm_norm * silu(z) per head;  o = W_ssm_out y
 *     full:     q|gate = W_q h (per head);  k, v = W_k h, W_v h;  q, k = rmsnorm per head * q/k_norm
 *               rope (NEOX pairs over the first n_rot dims; multi-axis sections with every text
 *               axis at the token's position);  o = W_o (attention(q, K, V) * sigmoid(gate))
 *               x += o;  h = rmsnorm(x) * post_attention_norm;  x += W_down(silu(W_gate h) * W_up h)
 *     qwen35moe: x += the routed experts of h (softmax gating, top k renormalised) plus the shared
 *               expert scaled by sigmoid(ffn_gate_inp_shexp . h) (moe.c)
 *   logits = W_out rmsnorm(x_last) * output_norm
 *
 * Numerics follow llama.cpp's CPU backend, which runs the delta rule as its fused gated_delta_net op
 * for prompts and single tokens alike (a token-by-token recurrence; the chunked graph is only for
 * backends without the op): the state decay is a multiply, the S^T k and S^T q sums are ggml's f32
 * dots and the outer product its f32 multiply-add (recurrent.h gdn), l2norm is rms_norm(eps / n) scaled
 * by 1/sqrt(n), sigmoid and softplus as ggml's scalar ops. The attention layers are the Llama family's
 * (model_llama_attn.c: ggml's flash-attention kernel over an f16 KV cache); this family keeps that
 * cache, the conv windows and the delta-rule states in its one saved state (save, restore and
 * continue give the same tokens). MTP layers (nextn) are loaded by nobody: llama.cpp's main pass
 * does not run them either. */
#include "model_llama.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int rec, slot;           /* recurrent layer?  its slot among the recurrent layers */
    const float *attn_norm, *post_norm, *conv_w, *dt_b, *A, *ssm_norm;
    float *conv_wt;          /* conv weights transposed, [d_conv][conv_ch] */
    sn_matrix wqkv, wgate, wbeta, walpha, wba, wout; /* wba instead of wbeta, walpha: grouped heads */
    sn_matrix ffn_gate, ffn_up, ffn_down;
} q35_layer;

typedef struct {
    llama_state base; /* first: the attention code reads m->impl as a llama_state */
    int64_t n_layer, n_attn, n_rec, d_conv, S, hk, hv, conv_ch, key_dim, value_dim;
    int grouped;      /* SN_OPT_GDN_GROUPED */
    int sect_e[64];   /* rope pairs whose multi-axis section is the 4th (extra) axis, position 0 */
    q35_layer *ly;
    int64_t *kv_cap; /* cache rows per layer: n_ctx for an attention layer, none for a recurrent one */
    uint64_t *kv_off;
    float *zeros, *ones;
    float *conv_state, *ssm_state; /* inside m->state, after the KV cache */
    /* activations (sn_ops) */
    float *o, *qg, *gate, *mix, *cv, *z, *beta, *alpha, *ba, *core;
} q35_state;

/* ---- loading ---- */

static int is_recurrent(const sn_model *m, int64_t il, int64_t n_trunk, int64_t interval) {
    char key[96];
    snprintf(key, sizeof key, "%s.attention.recurrent_layers", m->hp.arch);
    const int64_t i = sn_gguf_find_key(m->g, key);
    if (i >= 0 && sn_gguf_kv_type(m->g, i) == SN_GGUF_ARR && sn_gguf_arr_type(m->g, i) == SN_GGUF_BOOL &&
        (uint64_t)il < sn_gguf_arr_n(m->g, i))
        return ((const uint8_t *)sn_gguf_arr_data(m->g, i))[il] != 0;
    return il < n_trunk && (il + 1) % interval != 0;
}

static sn_status load_layer(sn_model *m, int il, sn_err *err) {
    q35_state *s = m->impl;
    const llama_hparams *hp = &s->base.hp;
    q35_layer *L = &s->ly[il];
    layer_weights *A = &s->base.layers[il];
    const int64_t E = hp->n_embd;
    sn_status st;
#define VEC(name, dst, ...) if ((st = sn_model_vector(m, il, name, SN_NE(__VA_ARGS__), 1, &(dst), err))) return st
#define MAT(name, dst, n_in, n_out) if ((st = sn_model_matrix(m, il, name, SN_NE(n_in, n_out), 1, &(dst), err))) return st
    VEC("attn_norm.weight", L->attn_norm, E);
    VEC("post_attention_norm.weight", L->post_norm, E);
    if (hp->n_expert > 0) {
        if ((st = sn_moe_load_layer(m, il, &s->base.moe.p, &A->moe, err))) return st;
    } else {
        MAT("ffn_gate.weight", L->ffn_gate, E, hp->n_ff);
        MAT("ffn_up.weight", L->ffn_up, E, hp->n_ff);
        MAT("ffn_down.weight", L->ffn_down, hp->n_ff, E);
    }
    if (L->rec) {
        MAT("attn_qkv.weight", L->wqkv, E, s->conv_ch);
        MAT("attn_gate.weight", L->wgate, E, s->value_dim);
        if (s->grouped) {
            /* llama.cpp's older qwen3next files fuse q, k, v and z into ssm_in */
            const char *legacy = sn_model_layer_name(m, il, "ssm_in.weight");
            if (sn_model_find_tensor(m, legacy))
                return sn_err_set(err, SN_EUNSUPPORTED, "%s: tensor %s (the fused q/k/v/z of older qwen3next files) is "
                                  "not supported: convert again with a current convert_hf_to_gguf.py", m->path, legacy);
            MAT("ssm_ba.weight", L->wba, E, 2 * s->hv);
        } else {
            MAT("ssm_beta.weight", L->wbeta, E, s->hv);
            MAT("ssm_alpha.weight", L->walpha, E, s->hv);
        }
        MAT("ssm_out.weight", L->wout, s->value_dim, E);
        VEC("ssm_conv1d.weight", L->conv_w, s->d_conv, s->conv_ch);
        VEC("ssm_dt.bias", L->dt_b, s->hv);
        VEC("ssm_a", L->A, s->hv);
        VEC("ssm_norm.weight", L->ssm_norm, s->S);
        if (!(L->conv_wt = malloc((size_t)(s->d_conv * s->conv_ch) * sizeof(float))))
            return sn_err_set(err, SN_ENOMEM, "out of memory");
        for (int64_t c = 0; c < s->conv_ch; c++)
            for (int64_t j = 0; j < s->d_conv; j++) L->conv_wt[j * s->conv_ch + c] = L->conv_w[c * s->d_conv + j];
        return SN_OK;
    }
    const int64_t nq = hp->n_head * hp->head_dim_k, nkv = hp->n_head_kv * hp->head_dim_k;
    MAT("attn_q.weight", A->wq, E, 2 * nq); /* a query and a gate per head */
    MAT("attn_k.weight", A->wk, E, nkv);
    MAT("attn_v.weight", A->wv, E, nkv);
    MAT("attn_output.weight", A->wo, nq, E);
    VEC("attn_q_norm.weight", A->q_norm, hp->head_dim_k);
    VEC("attn_k_norm.weight", A->k_norm, hp->head_dim_k);
#undef VEC
#undef MAT
    return SN_OK;
}

/* Which of the n_rot/2 rope pairs take the 4th ("extra") axis of the multi-axis sections: its
 * position is 0 for text, so those pairs are not rotated (ggml's interleaved MRoPE sector rule). */
static sn_status read_sections(sn_model *m, q35_state *s, sn_err *err) {
    char key[96];
    snprintf(key, sizeof key, "%s.rope.dimension_sections", m->hp.arch);
    const int64_t i = sn_gguf_find_key(m->g, key);
    int32_t sec[4] = {0, 0, 0, 0};
    if (i >= 0) {
        if (sn_gguf_kv_type(m->g, i) != SN_GGUF_ARR || sn_gguf_arr_type(m->g, i) != SN_GGUF_I32 ||
            sn_gguf_arr_n(m->g, i) < 4)
            return sn_err_set(err, SN_EFORMAT, "%s: %s must be an array of 4 int32", m->path, key);
        memcpy(sec, sn_gguf_arr_data(m->g, i), sizeof sec);
    }
    const int64_t pairs = s->base.hp.n_rot / 2;
    if (pairs > 64) return sn_err_set(err, SN_EUNSUPPORTED, "%s: rope.dimension_count above 128", m->path);
    const int64_t sect_dims = (int64_t)sec[0] + sec[1] + sec[2] + sec[3];
    for (int64_t p = 0; p < pairs; p++) {
        const int64_t sector = sect_dims > 0 ? p % sect_dims : 0;
        const int t = sector % 3 == 0 && sector < 3 * (int64_t)sec[0], h = sector % 3 == 1 && sector < 3 * (int64_t)sec[1],
                  w = sector % 3 == 2 && sector < 3 * (int64_t)sec[2];
        s->sect_e[p] = sect_dims > 0 && !t && !h && !w;
    }
    return SN_OK;
}

static sn_status q35_load(sn_model *m, sn_err *err) {
    q35_state *s = m->impl;
    llama_hparams *hp = &s->base.hp;
    sn_status st;
    if ((st = sn_llama_read_hparams(m, hp, err))) return st;
    /* the experts (qwen35moe): the shared expert's width defaults to feed_forward_length */
    int64_t n_ff_shexp = hp->n_ff;
    if (!(m->opts & SN_OPT_MOE)) hp->n_expert = 0;
    else if ((st = sn_model_key_int(m, "expert_shared_feed_forward_length", 0, 1, (int64_t)1 << 24, &n_ff_shexp, err)))
        return st;
    if (hp->n_expert > 0 && n_ff_shexp < 1)
        return sn_err_set(err, SN_EFORMAT, "%s: %s.expert_shared_feed_forward_length is missing", m->path, m->hp.arch);
    int64_t nextn = 0, interval = 4, d_inner = 0;
    if ((st = sn_model_key_int(m, "nextn_predict_layers", 0, 0, m->hp.n_layer - 1, &nextn, err))) return st;
    if ((st = sn_model_key_int(m, "full_attention_interval", 0, 1, 1 << 20, &interval, err))) return st;
    const int64_t BIG = (int64_t)1 << 20;
    const sn_key_int keys[] = {{"ssm.conv_kernel", 1, 64, &s->d_conv}, {"ssm.inner_size", 1, BIG, &d_inner},
                               {"ssm.state_size", 1, 1024, &s->S}, {"ssm.time_step_rank", 1, 4096, &s->hv},
                               {"ssm.group_count", 1, 4096, &s->hk}};
    if ((st = sn_model_keys_int(m, keys, (int)(sizeof keys / sizeof *keys), err))) return st;
    if (s->hv % s->hk || d_inner != s->hv * s->S)
        return sn_err_set(err, SN_EFORMAT, "%s: %s.ssm.inner_size %lld must be time_step_rank %lld x state_size %lld, "
                          "and time_step_rank a multiple of group_count %lld", m->path, m->hp.arch, (long long)d_inner,
                          (long long)s->hv, (long long)s->S, (long long)s->hk);
    if (hp->head_dim_k != hp->head_dim_v)
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: key head size %lld != value head size %lld", m->path,
                          (long long)hp->head_dim_k, (long long)hp->head_dim_v);
    s->n_layer = hp->n_layer = m->hp.n_layer - nextn;
    s->key_dim = s->hk * s->S;
    s->value_dim = d_inner;
    s->conv_ch = 2 * s->key_dim + s->value_dim;
    s->grouped = (m->opts & SN_OPT_GDN_GROUPED) != 0;
    if ((st = read_sections(m, s, err))) return st;
    const size_t nl = (size_t)m->hp.n_layer;
    if (!(s->ly = calloc(nl, sizeof *s->ly)) || !(s->base.layers = calloc(nl, sizeof *s->base.layers)) ||
        !(s->kv_cap = calloc(nl, sizeof *s->kv_cap)) || !(s->kv_off = calloc(nl, sizeof *s->kv_off)))
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    for (int64_t il = 0; il < s->n_layer; il++) {
        s->ly[il].rec = is_recurrent(m, il, s->n_layer, interval);
        if (s->ly[il].rec) s->ly[il].slot = (int)s->n_rec++;
        else s->n_attn++;
        s->kv_cap[il] = s->ly[il].rec ? 0 : m->n_ctx;
    }
    s->base.kv_cap = s->kv_cap;
    s->base.kv_off = s->kv_off;
    const int64_t E = hp->n_embd, nq = hp->n_head * hp->head_dim_k, nkv = hp->n_head_kv * hp->head_dim_k;
    const int64_t F = hp->n_expert > 0 ? 1 : hp->n_ff; /* the dense FFN's rows */
    s->base.n_q = nq;
    s->base.n_kv = nkv;
    const sn_ops_buf bufs[] = {
        {&s->base.x, E, 0},   {&s->base.xb, E, 0},      {&s->base.q, nq, 0},    {&s->base.k, nkv, 0},
        {&s->base.v, nkv, 0}, {&s->base.att, nq, 0},    {&s->base.hb, F, 0},    {&s->base.hb2, F, 0},
        {&s->base.rope, hp->n_rot > 0 ? hp->n_rot : 1, 0}, {&s->o, E, 0}, {&s->qg, 2 * nq, 0}, {&s->gate, nq, 0},
        {&s->mix, s->conv_ch, s->d_conv - 1}, {&s->cv, s->conv_ch, 0}, {&s->z, s->value_dim, 0},
        {&s->beta, s->hv, 0}, {&s->alpha, s->hv, 0}, {&s->ba, 2 * s->hv, 0}, {&s->core, s->value_dim, 0}};
    int64_t widest = E > F ? E : F;
    if (s->value_dim > widest) widest = s->value_dim;
    if (nq > widest) widest = nq;
    if (hp->n_expert > 0 && n_ff_shexp > widest) widest = n_ff_shexp;
    if ((st = sn_ops_init(&s->base.ops, m, bufs, (int)(sizeof bufs / sizeof *bufs), widest, err))) return st;
    if (hp->n_expert > 0) {
        const sn_moe_params mp = {.n_embd = E, .n_expert = hp->n_expert, .n_used = hp->n_expert_used,
                                  .n_ff_exp = hp->n_ff_exp, .gating = SN_MOE_SOFTMAX, .norm_w = 1,
                                  .n_ff_shexp = n_ff_shexp};
        if ((st = sn_moe_init(&s->base.moe, m, &mp, err))) return st;
    }
    if (!(s->zeros = calloc((size_t)s->conv_ch, sizeof(float))) || !(s->ones = malloc((size_t)s->conv_ch * sizeof(float))))
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    for (int64_t i = 0; i < s->conv_ch; i++) s->ones[i] = 1.0f;
    if ((st = sn_model_matrix(m, SN_MODEL_GLOBAL, "token_embd.weight", SN_NE(E, hp->n_vocab), 1, &s->base.tok_embd, err)))
        return st;
    if ((st = sn_model_vector(m, SN_MODEL_GLOBAL, "output_norm.weight", SN_NE(E), 1, &s->base.output_norm, err)))
        return st;
    if ((st = sn_model_output_head(m, &s->base.tok_embd, 0, &s->base.output, err))) return st;
    for (int il = 0; il < s->n_layer; il++)
        if ((st = load_layer(m, il, err))) return st;
    /* one saved state: [K cache][V cache] of the attention layers, then the conv windows and the
     * delta-rule states of the recurrent ones */
    sn_llama_rope_init(m, &s->base);
    uint64_t kv_bytes;
    if ((st = sn_llama_kv_layout(m, &s->base, &kv_bytes, err))) return st;
    const uint64_t kv_floats = (kv_bytes + 3) / 4;
    const uint64_t conv_floats = (uint64_t)(s->n_rec * (s->d_conv - 1) * s->conv_ch);
    const uint64_t ssm_floats = (uint64_t)(s->n_rec * s->hv * s->S * s->S);
    const uint64_t total = kv_floats + conv_floats + ssm_floats;
    const sn_state_decl decl = {1, {"kv+conv+ssm"}, {(total + nl - 1) / nl}};
    if ((st = sn_model_state_declare(m, &decl, err))) return st;
    s->conv_state = m->state + kv_floats;
    s->ssm_state = s->conv_state + conv_floats;
    s->base.kv_mem = m->state;
    return sn_llama_alloc_cache(m, &s->base, err);
}

static void q35_free(sn_model *m) {
    q35_state *s = m->impl;
    for (int64_t il = 0; s->ly && il < s->n_layer; il++) free(s->ly[il].conv_wt);
    free(s->ly);
    free(s->zeros);
    free(s->ones);
    free(s->kv_cap);
    free(s->kv_off);
    sn_llama_free(m);
}

/* ---- the Gated DeltaNet layer ---- */

typedef struct {
    sn_model *m;
    q35_state *s;
    const q35_layer *L;
    int64_t T;
} q35_pass;

static float sigmoidf_(float x) { return 1.0f / (1.0f + expf(-x)); }
static float softplusf_(float x) { return x > 20.0f ? x : logf(1.0f + expf(x)); }

/* ggml_rms_norm(x, eps / n) then ggml_scale by 1/sqrt(n): llama.cpp's l2 norm of q and k */
static void l2norm(float *x, int64_t n, float eps) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += (double)(x[i] * x[i]);
    const float fn = (float)n, mean = (float)(sum / (double)n), scale = 1.0f / sqrtf(mean + eps / fn);
    const float s2 = 1.0f / sqrtf(fn);
    for (int64_t i = 0; i < n; i++) x[i] = x[i] * scale;
    for (int64_t i = 0; i < n; i++) x[i] = x[i] * s2;
}

/* conv + silu, l2 norms of q and k, beta and g per head */
static void pass_conv(const void *arg, int64_t t0, int64_t t1) {
    const q35_pass *p = arg;
    const q35_state *s = p->s;
    const q35_layer *L = p->L;
    const int64_t CH = s->conv_ch, H = s->hv, r = s->hv / s->hk;
    s->base.ops.rk->ssm_conv(CH, s->d_conv, t1 - t0, s->mix + t0 * CH, CH, L->conv_wt, CH, s->zeros, s->cv + t0 * CH, CH);
    for (int64_t t = t0; t < t1; t++) {
        if (s->grouped) /* ssm_ba: per key head g, b of its value heads g*r.. then their a */
            for (int64_t h = 0; h < H; h++) {
                s->beta[t * H + h] = s->ba[t * 2 * H + (h / r) * 2 * r + h % r];
                s->alpha[t * H + h] = s->ba[t * 2 * H + (h / r) * 2 * r + r + h % r];
            }
        float *c = s->cv + t * CH;
        s->base.ops.k->swiglu(CH, c, c, s->ones); /* silu (times an exact 1) */
        for (int64_t h = 0; h < 2 * s->hk; h++) l2norm(c + h * s->S, s->S, s->base.hp.rms_eps);
        for (int64_t h = 0; h < H; h++) {
            s->beta[t * H + h] = sigmoidf_(s->beta[t * H + h]);
            s->alpha[t * H + h] = softplusf_(s->alpha[t * H + h] + L->dt_b[h]) * L->A[h];
        }
    }
}

/* ggml_gated_delta_net over the batch's tokens, one job per range of value heads (recurrent.h
 * gdn: ggml's operations on each element in ggml's order, the same bits, with the state's rows
 * held in registers across a run of tokens). */
static void delta_worker(void *arg, int ith, int nth) {
    const q35_pass *p = arg;
    const q35_state *s = p->s;
    const int64_t S = s->S, H = s->hv, CH = s->conv_ch;
    for (int64_t h = H * ith / nth; h < H * (ith + 1) / nth; h++) {
        const int64_t kh = s->grouped ? h / (H / s->hk) : h % s->hk;
        float *M = s->ssm_state + ((int64_t)p->L->slot * H + h) * S * S; /* M[j][i] = S[i][j] */
        s->base.ops.rk->gdn(S, s->base.ops.lanes, p->T, s->cv + kh * S, s->cv + s->key_dim + kh * S,
                            s->cv + 2 * s->key_dim + h * S, CH, s->beta + h, s->alpha + h, H, M, s->core + h * S,
                            s->value_dim);
    }
}

/* y = rmsnorm(y) * ssm_norm * silu(z) per head */
static void pass_gated_norm(const void *arg, int64_t t0, int64_t t1) {
    const q35_pass *p = arg;
    const q35_state *s = p->s;
    const int64_t S = s->S;
    for (int64_t t = t0; t < t1; t++)
        for (int64_t h = 0; h < s->hv; h++) {
            float *y = s->core + t * s->value_dim + h * S;
            sn_ops_rmsnorm(y, y, p->L->ssm_norm, S, s->base.hp.rms_eps);
            s->base.ops.k->swiglu(S, y, s->z + t * s->value_dim + h * S, y);
        }
}

static sn_status linear_attn(sn_model *m, q35_state *s, const q35_layer *L, int64_t T, sn_err *err) {
    const int64_t CH = s->conv_ch, K1 = s->d_conv - 1;
    float *qkv = s->mix + K1 * CH; /* after the conv window's rows */
    const sn_matrix *w[3] = {&L->wqkv, &L->wgate, s->grouped ? &L->wba : &L->wbeta};
    float *y[3] = {qkv, s->z, s->grouped ? s->ba : s->beta};
    sn_status st;
    if ((st = sn_ops_project(&s->base.ops, s->base.xb, T, 3, w, y, err))) return st;
    if (!s->grouped && (st = sn_ops_project1(&s->base.ops, s->base.xb, T, &L->walpha, s->alpha, err))) return st;
    float *win = s->conv_state + (int64_t)L->slot * K1 * CH;
    memcpy(s->mix, win, (size_t)(K1 * CH) * sizeof(float));
    memcpy(win, s->mix + T * CH, (size_t)(K1 * CH) * sizeof(float));
    q35_pass p = {m, s, L, T};
    sn_ops_rows(m->pool, T, pass_conv, &p);
    sn_pool_run(m->pool, delta_worker, &p);
    sn_ops_rows(m->pool, T, pass_gated_norm, &p);
    return sn_ops_project1(&s->base.ops, s->core, T, &L->wout, s->o, err);
}

/* ---- the gated attention layer ---- */

/* q and gate apart (per head: hd query values, then hd gate values) */
static void pass_split_q(const void *arg, int64_t t0, int64_t t1) {
    const q35_pass *p = arg;
    const q35_state *s = p->s;
    const int64_t hd = s->base.hp.head_dim_k, nq = s->base.n_q;
    for (int64_t t = t0; t < t1; t++)
        for (int64_t h = 0; h < s->base.hp.n_head; h++) {
            memcpy(s->base.q + t * nq + h * hd, s->qg + t * 2 * nq + h * 2 * hd, (size_t)hd * sizeof(float));
            memcpy(s->gate + t * nq + h * hd, s->qg + t * 2 * nq + h * 2 * hd + hd, (size_t)hd * sizeof(float));
        }
}

static void pass_gate(const void *arg, int64_t t0, int64_t t1) {
    const q35_pass *p = arg;
    const q35_state *s = p->s;
    for (int64_t i = t0 * s->base.n_q; i < t1 * s->base.n_q; i++) s->base.att[i] = s->base.att[i] * sigmoidf_(s->gate[i]);
}

static sn_status full_attn(sn_model *m, q35_state *s, int il, int64_t T, int64_t pos0, sn_err *err) {
    const layer_weights *A = &s->base.layers[il];
    const sn_matrix *w[3] = {&A->wq, &A->wk, &A->wv};
    float *y[3] = {s->qg, s->base.k, s->base.v};
    sn_status st;
    if ((st = sn_ops_project(&s->base.ops, s->base.xb, T, 3, w, y, err))) return st;
    q35_pass p = {m, s, &s->ly[il], T};
    sn_ops_rows(m->pool, T, pass_split_q, &p);
    sn_llama_tok tp = {m, &s->base, A, il, pos0};
    sn_ops_rows(m->pool, T, sn_llama_pass_qkv, &tp);
    if ((st = sn_llama_attention(m, &s->base, il, T, err))) return st;
    sn_ops_rows(m->pool, T, pass_gate, &p);
    return sn_ops_project1(&s->base.ops, s->base.att, T, &A->wo, s->o, err);
}

/* ---- one micro-batch ---- */

static void pass_swiglu(const void *arg, int64_t t0, int64_t t1) {
    const q35_pass *p = arg;
    const int64_t F = p->s->base.hp.n_ff;
    for (int64_t t = t0; t < t1; t++)
        p->s->base.ops.k->swiglu(F, p->s->base.hb + t * F, p->s->base.hb + t * F, p->s->base.hb2 + t * F);
}

static sn_status forward(sn_model *m, const int32_t *tokens, int64_t T, float *logits, sn_err *err) {
    q35_state *s = m->impl;
    const llama_hparams *hp = &s->base.hp;
    const int64_t E = hp->n_embd, pos0 = m->n_past;
    sn_status st;
    if ((st = sn_ops_begin(&s->base.ops, T, &s->base.tok_embd, tokens, &s->base.x, err))) return st;
    if (s->n_attn > 0 && hp->n_rot > 0) {
        sn_llama_tok tp = {m, &s->base, NULL, 0, pos0};
        sn_ops_rows(m->pool, T, sn_llama_pass_rope_cache, &tp);
        for (int64_t t = 0; t < T; t++)
            for (int64_t i = 0; i < hp->n_rot / 2; i++)
                if (s->sect_e[i]) { /* the extra axis: position 0, no rotation */
                    s->base.rope[t * hp->n_rot + 2 * i] = hp->yarn_attn_factor;
                    s->base.rope[t * hp->n_rot + 2 * i + 1] = 0.0f;
                }
    }
    for (int il = 0; il < s->n_layer; il++) {
        const q35_layer *L = &s->ly[il];
        sn_resid_norm an = {.x = s->base.x, .h = s->base.xb, .w = L->attn_norm, .n = E, .eps = hp->rms_eps};
        sn_ops_rows(m->pool, T, sn_ops_resid_norm, &an);
        if ((st = L->rec ? linear_attn(m, s, L, T, err) : full_attn(m, s, il, T, pos0, err))) return st;
        /* after the last layer's token mixing only the row whose logits are wanted goes on (the
         * states are updated; llama.cpp's graph selects that row there too) */
        float *x = s->base.x, *xb = s->base.xb, *o = s->o;
        int64_t R = T;
        if (il == s->n_layer - 1) {
            if (!logits) break;
            x += (T - 1) * E;
            xb += (T - 1) * E;
            o += (T - 1) * E;
            R = 1;
        }
        sn_resid_norm fn = {.x = x, .h = xb, .add = o, .w = L->post_norm, .n = E, .eps = hp->rms_eps};
        sn_ops_rows(m->pool, R, sn_ops_resid_norm, &fn);
        if (hp->n_expert > 0) {
            if ((st = sn_moe_forward(&s->base.moe, &s->base.layers[il].moe, xb, R, s->o, err))) return st;
        } else {
            const sn_matrix *wgu[2] = {&L->ffn_gate, &L->ffn_up};
            float *ygu[2] = {s->base.hb, s->base.hb2};
            if ((st = sn_ops_project(&s->base.ops, xb, R, 2, wgu, ygu, err))) return st;
            q35_pass p = {m, s, L, R};
            sn_ops_rows(m->pool, R, pass_swiglu, &p);
            if ((st = sn_ops_project1(&s->base.ops, s->base.hb, R, &L->ffn_down, s->o, err))) return st;
        }
        for (int64_t i = 0; i < R * E; i++) x[i] = s->o[i] + x[i];
    }
    if (!logits) return SN_OK;
    sn_ops_rmsnorm(s->base.xb, s->base.x + (T - 1) * E, s->base.output_norm, E, hp->rms_eps);
    return sn_ops_project1(&s->base.ops, s->base.xb, 1, &s->base.output, logits, err);
}

const sn_family sn_family_qwen35 = {.name = "qwen35", .impl_size = sizeof(q35_state), .state_kind = SN_STATE_KV,
                                    .load = q35_load, .forward = forward, .free = q35_free};
