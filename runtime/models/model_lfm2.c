/* model_lfm2.c - LFM2 ("lfm2"): short-convolution layers and GQA attention layers, each followed by
 * a SwiGLU feed-forward, as llama.cpp's lfm2 graph:
 *
 *   x = embed(token)
 *   per layer:  h = rmsnorm(x) * attn_norm
 *     conv:      b, c, u = split3(W_in h);  v = b * u  (per token)
 *                y_t = sum_{j<L} window[t+j] * conv[j]  (depthwise; window = the L-1 saved v rows,
 *                then this batch's v);  out = W_out (c * y)        (head_count_kv[il] == 0)
 *     attention: q, k = per-head rmsnorm * q_norm / k_norm, NEOX rope;  out = Wo attention(q, k, v)
 *               x = out + x;  x = W_down(silu(W_gate h') * W_up h') + x,  h' = rmsnorm(x) * ffn_norm
 *   logits = Wout (rmsnorm(x_last) * token_embd_norm)    (Wout tied to the embedding when absent)
 *
 * The attention (an f16 KV cache for the attention layers only, ggml's flash-attention numerics) is
 * the Llama family's (model_llama.h); the conv sums are ggml_ssm_conv's (the recurrent kernels'
 * ssm_conv with a zero bias). The KV cache and the conv windows are one saved state. */
#include "model_llama.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int conv, slot;              /* a short-convolution layer?  its slot among them */
    const float *conv_w;         /* shortconv.conv [E][L] */
    float *conv_wt;              /* transposed, [L][E] (the conv kernel's layout) */
    sn_matrix in, out;
} lfm2_layer;

typedef struct {
    llama_state base;            /* first: the attention code reads m->impl as a llama_state */
    lfm2_layer *ly;
    int64_t n_conv, l_cache;
    int64_t *kv_cap;             /* cache rows per layer: n_ctx for an attention layer, 0 for a conv one */
    uint64_t *kv_off;
    float *conv_state;           /* inside m->state, after the KV cache: per conv layer (L-1) rows of E */
    float *bcx, *win, *cy, *o, *zero; /* in_proj output; the window (L-1 rows, then T); conv out; block out */
} lfm2_state;

static lfm2_state *LS(sn_model *m) { return m->impl; }

/* ---- loading ---- */

static sn_status load_layer(sn_model *m, int il, sn_err *err) {
    lfm2_state *g = LS(m);
    llama_state *s = &g->base;
    const llama_hparams *hp = &s->hp;
    layer_weights *L = &s->layers[il];
    lfm2_layer *C = &g->ly[il];
    const int64_t E = hp->n_embd, K = g->l_cache;
    sn_status st;
#define MAT(name, n_in, n_out, dst) \
    if ((st = sn_model_matrix(m, il, name, SN_NE(n_in, n_out), 1, dst, err))) return st
    if ((st = sn_model_vector(m, il, "ffn_norm.weight", SN_NE(E), 1, &L->ffn_norm, err))) return st;
    if (C->conv) {
        if ((st = sn_model_vector(m, il, "attn_norm.weight", SN_NE(E), 1, &L->attn_norm, err))) return st;
        if ((st = sn_model_vector(m, il, "shortconv.conv.weight", SN_NE(K, E), 1, &C->conv_w, err))) return st;
        MAT("shortconv.in_proj.weight", E, 3 * E, &C->in);
        MAT("shortconv.out_proj.weight", E, E, &C->out);
        if (!(C->conv_wt = malloc((size_t)(K * E) * sizeof(float)))) return sn_err_set(err, SN_ENOMEM, "out of memory");
        for (int64_t c = 0; c < E; c++)
            for (int64_t j = 0; j < K; j++) C->conv_wt[j * E + c] = C->conv_w[c * K + j];
    } else {
        if ((st = sn_llama_load_attn(m, s, il, 0, err))) return st;
        if ((st = sn_model_vector(m, il, "attn_q_norm.weight", SN_NE(hp->head_dim_k), 1, &L->q_norm, err))) return st;
        if ((st = sn_model_vector(m, il, "attn_k_norm.weight", SN_NE(hp->head_dim_k), 1, &L->k_norm, err))) return st;
    }
    MAT("ffn_gate.weight", E, hp->n_ff, &L->w_gate);
    MAT("ffn_up.weight", E, hp->n_ff, &L->w_up);
    MAT("ffn_down.weight", hp->n_ff, E, &L->w_down);
#undef MAT
    return SN_OK;
}

static sn_status lfm2_hparams(sn_model *m, lfm2_state *g, sn_err *err) {
    llama_hparams *hp = &g->base.hp;
    sn_status st;
    const int64_t BIG = (int64_t)1 << 24, nl = m->hp.n_layer;
    hp->n_vocab = m->hp.n_vocab;
    hp->n_ctx_train = m->hp.n_ctx_train;
    hp->n_embd = m->hp.n_embd;
    hp->n_layer = nl;
    if ((st = sn_model_key_int(m, "feed_forward_length", 1, 1, BIG, &hp->n_ff, err))) return st;
    if ((st = sn_model_key_int(m, "attention.head_count", 1, 1, 4096, &hp->n_head, err))) return st;
    if ((st = sn_model_key_int(m, "shortconv.l_cache", 1, 2, 64, &g->l_cache, err))) return st;
    if (hp->n_embd % hp->n_head)
        return sn_err_set(err, SN_EFORMAT, "%s: embedding_length %lld is not a multiple of head_count %lld", m->path,
                          (long long)hp->n_embd, (long long)hp->n_head);
    hp->head_dim_k = hp->head_dim_v = hp->n_embd / hp->n_head;
    if ((st = sn_model_key_int(m, "attention.key_length", 0, 1, 65536, &hp->head_dim_k, err))) return st;
    if ((st = sn_model_key_int(m, "attention.value_length", 0, 1, 65536, &hp->head_dim_v, err))) return st;
    if (hp->head_dim_k != hp->head_dim_v || hp->head_dim_k % 2)
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: key head size %lld, value head size %lld: sunny-run takes equal, "
                          "even ones", m->path, (long long)hp->head_dim_k, (long long)hp->head_dim_v);
    /* head_count_kv: one value per layer, 0 for a conv layer */
    char key[128];
    snprintf(key, sizeof key, "%s.attention.head_count_kv", m->hp.arch);
    const int64_t i = sn_gguf_find_key(m->g, key);
    if (i < 0 || sn_gguf_kv_type(m->g, i) != SN_GGUF_ARR ||
        (sn_gguf_arr_type(m->g, i) != SN_GGUF_I32 && sn_gguf_arr_type(m->g, i) != SN_GGUF_U32) ||
        sn_gguf_arr_n(m->g, i) != (uint64_t)nl)
        return sn_err_set(err, SN_EFORMAT, "%s: %s must be an array of %lld 32-bit integers (0 for a conv layer)",
                          m->path, key, (long long)nl);
    const int32_t *kv = sn_gguf_arr_data(m->g, i);
    hp->n_head_kv = 0;
    for (int64_t il = 0; il < nl; il++) {
        g->ly[il].conv = kv[il] == 0;
        if (g->ly[il].conv) g->ly[il].slot = (int)g->n_conv++;
        else if (kv[il] < 0 || hp->n_head % kv[il] || (hp->n_head_kv && kv[il] != hp->n_head_kv))
            return sn_err_set(err, SN_EUNSUPPORTED, "%s: layer %lld has %d kv heads: sunny-run takes one kv head count "
                              "dividing head_count %lld for all attention layers", m->path, (long long)il, kv[il],
                              (long long)hp->n_head);
        else hp->n_head_kv = kv[il];
    }
    if (!hp->n_head_kv) hp->n_head_kv = hp->n_head; /* no attention layer */
    snprintf(key, sizeof key, "%s.rope.scaling.type", m->hp.arch);
    if (sn_gguf_find_key(m->g, key) >= 0 || (snprintf(key, sizeof key, "%s.attention.sliding_window", m->hp.arch),
                                             sn_gguf_find_key(m->g, key) >= 0))
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: %s is set: sunny-run runs LFM2 with plain rope and full "
                          "attention only", m->path, key);
    hp->n_rot = hp->head_dim_k;
    if ((st = sn_model_key_int(m, "rope.dimension_count", 0, 2, hp->head_dim_k, &hp->n_rot, err))) return st;
    if (hp->n_rot % 2) return sn_err_set(err, SN_EFORMAT, "%s: rope.dimension_count %lld is odd", m->path, (long long)hp->n_rot);
    hp->rms_eps = 1e-5f;
    if ((st = sn_model_key_eps(m, "attention.layer_norm_rms_epsilon", &hp->rms_eps, err))) return st;
    hp->rope_freq_base = 10000.0f;
    if ((st = sn_model_key_float(m, "rope.freq_base", 0, &hp->rope_freq_base, err))) return st;
    if (!(hp->rope_freq_base > 0.0f))
        return sn_err_set(err, SN_EFORMAT, "%s: %s.rope.freq_base must be > 0", m->path, m->hp.arch);
    hp->rope_freq_scale = 1.0f;
    hp->rope_scaling = ROPE_SCALING_NONE;
    hp->n_ctx_orig_yarn = hp->n_ctx_train;
    hp->yarn_ext_factor = 0.0f;
    hp->yarn_attn_factor = 1.0f;
    hp->yarn_beta_fast = 32.0f;
    hp->yarn_beta_slow = 1.0f;
    hp->attn_scale = 0.0f;
    hp->n_expert = hp->n_expert_used = 0;
    return SN_OK;
}

static sn_status lfm2_load(sn_model *m, sn_err *err) {
    lfm2_state *g = LS(m);
    llama_state *s = &g->base;
    llama_hparams *hp = &s->hp;
    sn_status st;
    const size_t nl = (size_t)m->hp.n_layer;
    if (!(g->ly = calloc(nl, sizeof *g->ly)) || !(s->layers = calloc(nl, sizeof *s->layers)) ||
        !(g->kv_cap = calloc(nl, sizeof *g->kv_cap)) || !(g->kv_off = calloc(nl, sizeof *g->kv_off)))
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    if ((st = lfm2_hparams(m, g, err))) return st;
    for (size_t il = 0; il < nl; il++) g->kv_cap[il] = g->ly[il].conv ? 0 : m->n_ctx;
    s->kv_cap = g->kv_cap;
    s->kv_off = g->kv_off;
    s->n_q = hp->n_head * hp->head_dim_k;
    s->n_kv = hp->n_head_kv * hp->head_dim_k;
    const int64_t E = hp->n_embd, F = hp->n_ff;
    const sn_ops_buf bufs[] = {
        {&s->x, E, 0},   {&s->xb, E, 0},  {&s->q, s->n_q, 0},   {&s->k, s->n_kv, 0}, {&s->v, s->n_kv, 0},
        {&s->att, s->n_q, 0}, {&s->hb, F, 0}, {&s->hb2, F, 0}, {&s->rope, hp->n_rot, 0},
        {&g->bcx, 3 * E, 0}, {&g->win, E, g->l_cache - 1}, {&g->cy, E, 0}, {&g->o, E, 0}};
    int64_t wide = E > s->n_q ? E : s->n_q;
    if (F > wide) wide = F;
    if ((st = sn_ops_init(&s->ops, m, bufs, (int)(sizeof bufs / sizeof *bufs), wide, err))) return st;
    if (!(g->zero = calloc((size_t)E, sizeof(float)))) return sn_err_set(err, SN_ENOMEM, "out of memory");
    if ((st = sn_model_matrix(m, SN_MODEL_GLOBAL, "token_embd.weight", SN_NE(E, hp->n_vocab), 1, &s->tok_embd, err)))
        return st;
    if ((st = sn_model_vector(m, SN_MODEL_GLOBAL, "token_embd_norm.weight", SN_NE(E), 1, &s->output_norm, err)))
        return st;
    if ((st = sn_model_output_head(m, &s->tok_embd, 0, &s->output, err))) return st;
    if ((st = sn_model_each_layer(m, load_layer, err))) return st;
    sn_llama_rope_init(m, s);
    /* one saved state: [K cache][V cache] of the attention layers, then the conv windows */
    uint64_t kv_bytes;
    if ((st = sn_llama_kv_layout(m, s, &kv_bytes, err))) return st;
    const uint64_t kv_floats = (kv_bytes + 3) / 4, conv = (uint64_t)((g->l_cache - 1) * E);
    const uint64_t total = kv_floats + (uint64_t)g->n_conv * conv;
    const sn_state_decl decl = {1, {"kv+conv"}, {(total + nl - 1) / nl}};
    if ((st = sn_model_state_declare(m, &decl, err))) return st;
    g->conv_state = m->state + kv_floats;
    s->kv_mem = m->state;
    return sn_llama_alloc_cache(m, s, err);
}

static void lfm2_free(sn_model *m) {
    lfm2_state *g = LS(m);
    for (int64_t il = 0; g->ly && il < m->hp.n_layer; il++) free(g->ly[il].conv_wt);
    free(g->ly);
    free(g->kv_cap);
    free(g->kv_off);
    free(g->zero);
    sn_llama_free(m);
}

/* ---- the forward pass over one micro-batch ---- */

typedef struct {
    const lfm2_state *g;
    const lfm2_layer *C;
} conv_pass;

/* v = b * u into the window rows after the saved ones */
static void pass_bx(const void *arg, int64_t t0, int64_t t1) {
    const conv_pass *p = arg;
    const int64_t E = p->g->base.hp.n_embd, K = p->g->l_cache;
    for (int64_t t = t0; t < t1; t++) {
        const float *b = p->g->bcx + t * 3 * E, *u = b + 2 * E;
        float *v = p->g->win + (K - 1 + t) * E;
        for (int64_t i = 0; i < E; i++) v[i] = b[i] * u[i];
    }
}

/* the depthwise conv over the window, then y = c * conv */
static void pass_conv(const void *arg, int64_t t0, int64_t t1) {
    const conv_pass *p = arg;
    const lfm2_state *g = p->g;
    const int64_t E = g->base.hp.n_embd, K = g->l_cache;
    g->base.ops.rk->ssm_conv(E, K, t1 - t0, g->win + t0 * E, E, p->C->conv_wt, E, g->zero, g->cy + t0 * E, E);
    for (int64_t t = t0; t < t1; t++) {
        const float *c = g->bcx + t * 3 * E + E;
        float *y = g->cy + t * E;
        for (int64_t i = 0; i < E; i++) y[i] = c[i] * y[i];
    }
}

static sn_status shortconv(sn_model *m, lfm2_state *g, const lfm2_layer *C, int64_t T, sn_err *err) {
    const int64_t E = g->base.hp.n_embd, K = g->l_cache;
    sn_status st;
    if ((st = sn_ops_project1(&g->base.ops, g->base.xb, T, &C->in, g->bcx, err))) return st;
    float *cs = g->conv_state + (uint64_t)C->slot * (uint64_t)((K - 1) * E);
    memcpy(g->win, cs, (size_t)((K - 1) * E) * sizeof(float));
    conv_pass p = {g, C};
    sn_ops_rows(m->pool, T, pass_bx, &p);
    memcpy(cs, g->win + T * E, (size_t)((K - 1) * E) * sizeof(float)); /* the last L-1 rows */
    sn_ops_rows(m->pool, T, pass_conv, &p);
    return sn_ops_project1(&g->base.ops, g->cy, T, &C->out, g->o, err);
}

static void pass_swiglu(const void *arg, int64_t t0, int64_t t1) {
    const llama_state *s = arg;
    const int64_t F = s->hp.n_ff;
    for (int64_t t = t0; t < t1; t++) s->ops.k->swiglu(F, s->hb + t * F, s->hb + t * F, s->hb2 + t * F);
}

static sn_status forward(sn_model *m, const int32_t *tokens, int64_t T, float *logits, sn_err *err) {
    lfm2_state *g = LS(m);
    llama_state *s = &g->base;
    const llama_hparams *hp = &s->hp;
    const int64_t E = hp->n_embd;
    sn_status st;
    if ((st = sn_ops_begin(&s->ops, T, &s->tok_embd, tokens, &s->x, err))) return st;
    sn_llama_tok tp = {m, s, NULL, 0, m->n_past};
    if (hp->n_rot > 0) sn_ops_rows(m->pool, T, sn_llama_pass_rope_cache, &tp);
    for (int il = 0; il < hp->n_layer; il++) {
        const layer_weights *L = &s->layers[il];
        const lfm2_layer *C = &g->ly[il];
        float *c = s->xb;
        if (C->conv) {
            sn_resid_norm an = {.x = s->x, .h = s->xb, .w = L->attn_norm, .n = E, .eps = hp->rms_eps};
            sn_ops_rows(m->pool, T, sn_ops_resid_norm, &an);
            if ((st = shortconv(m, g, C, T, err))) return st;
            c = g->o;
        } else {
            tp.L = L;
            tp.il = il;
            if ((st = sn_llama_attn_block(m, s, L, il, T, sn_llama_pass_qkv, &tp, err))) return st;
        }
        /* after the last layer's mixer only the row whose logits are wanted goes on */
        float *x = s->x;
        int64_t R = T;
        if (il == hp->n_layer - 1) {
            if (!logits) break;
            x += (T - 1) * E;
            c += (T - 1) * E;
            R = 1;
        }
        resid_pass ra = {x, c, NULL, E};
        sn_ops_rows(m->pool, R, sn_llama_pass_resid, &ra);
        if ((st = sn_llama_ffn_block(m, s, L, x, R, pass_swiglu, s, err))) return st;
        resid_pass fa = {x, s->xb, NULL, E};
        sn_ops_rows(m->pool, R, sn_llama_pass_resid, &fa);
    }
    if (!logits) return SN_OK;
    sn_ops_rmsnorm(s->xb, s->x + (T - 1) * E, s->output_norm, E, hp->rms_eps);
    return sn_ops_project1(&s->ops, s->xb, 1, &s->output, logits, err);
}

const sn_family sn_family_lfm2 = {
    .name = "lfm2",
    .impl_size = sizeof(lfm2_state),
    .state_kind = SN_STATE_KV,
    .load = lfm2_load,
    .forward = forward,
    .reset = NULL, /* the state (cache and conv windows) is zeroed by model.c */
    .free = lfm2_free,
    .state_bytes = NULL,
};
