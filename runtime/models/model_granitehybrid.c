/* model_granitehybrid.c - Granite 4.0-H ("granitehybrid"): Mamba-2 layers and attention layers without
 * rope, each followed by a feed-forward that is a mixture of experts with a shared expert (or a
 * dense SwiGLU), as llama.cpp's granite-hybrid graph:
 *
 *   x = embed(token) * embedding_scale
 *   per layer:  h = rmsnorm(x) * attn_norm
 *     mamba:    c = the Mamba-2 mixer of h (model_mamba2.h)          (head_count_kv[il] == 0)
 *     attention: c = Wo attention(Wq h, Wk h, Wv h) (+ bo), no rope, scale attention.scale
 *               (default 1/sqrt(head size))
 *               x = c * residual_scale + x;  h = rmsnorm(x) * ffn_norm
 *               c = moe(h) + shared(h)  (or the dense W_down(silu(W_gate h) * W_up h))
 *               x = c * residual_scale + x
 *   logits = Wout (rmsnorm(x_last) * output_norm) * (1 / logit_scale)
 *
 * A multiplier absent or 0 is not applied, as llama.cpp skips it. The attention (an f16 KV cache
 * for the attention layers only, ggml's flash-attention numerics) is the Llama family's
 * (model_llama.h), the mixer Mamba-2's, the experts the shared block of moe.h; the KV cache, the
 * conv windows and the SSM states are one saved state. Files that use rope in their attention
 * layers (rope.scaling.finetuned true or absent: Bamba, non-hybrid Granite) are refused. */
#include "model_llama.h"
#include "model_mamba2.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int rec, slot;               /* a Mamba layer?  its slot among them */
    sn_mamba2_layer mx;
} gh_layer;

typedef struct {
    llama_state base;            /* first: the attention code reads m->impl as a llama_state */
    sn_mamba2 mx;                /* the mixer's sizes and scratch */
    gh_layer *ly;
    int64_t n_rec;
    int64_t *kv_cap;             /* cache rows per layer: n_ctx for an attention layer, 0 for a Mamba one */
    uint64_t *kv_off;
    float *conv_state, *ssm_state; /* inside m->state, after the KV cache */
    float embd_scale, resid_scale, logit_scale;
    int64_t n_ff_shexp;
    float *o;                    /* a layer's block output (sn_ops) */
} gh_state;

static gh_state *GH(sn_model *m) { return m->impl; }

/* ---- loading ---- */

static sn_status load_layer(sn_model *m, int il, sn_err *err) {
    gh_state *g = GH(m);
    llama_state *s = &g->base;
    const llama_hparams *hp = &s->hp;
    layer_weights *L = &s->layers[il];
    const int64_t E = hp->n_embd;
    sn_status st;
#define MAT(name, n_in, n_out, dst) \
    if ((st = sn_model_matrix(m, il, name, SN_NE(n_in, n_out), 1, &L->dst, err))) return st
    if ((st = sn_model_vector(m, il, "attn_norm.weight", SN_NE(E), 1, &L->attn_norm, err))) return st;
    if ((st = sn_model_vector(m, il, "ffn_norm.weight", SN_NE(E), 1, &L->ffn_norm, err))) return st;
    if (g->ly[il].rec) {
        if ((st = sn_mamba2_load_layer(m, il, &g->mx.hp, &g->ly[il].mx, err))) return st;
    } else {
        MAT("attn_q.weight", E, s->n_q, wq);
        MAT("attn_k.weight", E, s->n_kv, wk);
        MAT("attn_v.weight", E, s->n_kv, wv);
        MAT("attn_output.weight", s->n_q, E, wo);
        if ((st = sn_model_vector(m, il, "attn_output.bias", SN_NE(E), 0, &L->bo, err))) return st;
    }
    if (hp->n_expert > 0) return sn_moe_load_layer(m, il, &s->moe.p, &L->moe, err);
    MAT("ffn_gate.weight", E, hp->n_ff, w_gate);
    MAT("ffn_up.weight", E, hp->n_ff, w_up);
    MAT("ffn_down.weight", hp->n_ff, E, w_down);
#undef MAT
    return SN_OK;
}

/* A per-layer integer array key (INT32 or UINT32, n_layer entries) into v. */
static sn_status read_layer_ints(const sn_model *m, const char *suffix, int64_t *v, sn_err *err) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", m->hp.arch, suffix);
    const int64_t i = sn_gguf_find_key(m->g, key);
    if (i < 0 || sn_gguf_kv_type(m->g, i) != SN_GGUF_ARR ||
        (sn_gguf_arr_type(m->g, i) != SN_GGUF_I32 && sn_gguf_arr_type(m->g, i) != SN_GGUF_U32) ||
        sn_gguf_arr_n(m->g, i) != (uint64_t)m->hp.n_layer)
        return sn_err_set(err, SN_EFORMAT, "%s: %s must be an array of %lld 32-bit integers (0 for a Mamba layer)",
                          m->path, key, (long long)m->hp.n_layer);
    const int32_t *d = sn_gguf_arr_data(m->g, i);
    for (int64_t il = 0; il < m->hp.n_layer; il++) v[il] = d[il];
    return SN_OK;
}

static sn_status gh_hparams(sn_model *m, gh_state *g, sn_err *err) {
    llama_hparams *hp = &g->base.hp;
    sn_status st;
    const int64_t BIG = (int64_t)1 << 24, nl = m->hp.n_layer;
    hp->n_vocab = m->hp.n_vocab;
    hp->n_ctx_train = m->hp.n_ctx_train;
    hp->n_embd = m->hp.n_embd;
    hp->n_layer = nl;
    if ((st = sn_model_key_int(m, "feed_forward_length", 1, 1, BIG, &hp->n_ff, err))) return st;
    if ((st = sn_model_key_int(m, "attention.head_count", 1, 1, 4096, &hp->n_head, err))) return st;
    hp->head_dim_k = hp->head_dim_v = hp->n_embd / hp->n_head;
    if ((st = sn_model_key_int(m, "attention.key_length", 0, 1, 65536, &hp->head_dim_k, err))) return st;
    if ((st = sn_model_key_int(m, "attention.value_length", 0, 1, 65536, &hp->head_dim_v, err))) return st;
    if (hp->head_dim_k != hp->head_dim_v)
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: key head size %lld != value head size %lld", m->path,
                          (long long)hp->head_dim_k, (long long)hp->head_dim_v);
    int64_t *kv = calloc((size_t)nl, sizeof *kv);
    if (!kv) return sn_err_set(err, SN_ENOMEM, "out of memory");
    st = read_layer_ints(m, "attention.head_count_kv", kv, err);
    hp->n_head_kv = 0;
    for (int64_t il = 0; !st && il < nl; il++) {
        g->ly[il].rec = kv[il] == 0;
        if (g->ly[il].rec) g->ly[il].slot = (int)g->n_rec++;
        else if (kv[il] < 0 || hp->n_head % kv[il] || (hp->n_head_kv && kv[il] != hp->n_head_kv))
            st = sn_err_set(err, SN_EUNSUPPORTED, "%s: layer %lld has %lld kv heads: sunny-run takes one kv head count "
                            "dividing head_count %lld for all attention layers", m->path, (long long)il,
                            (long long)kv[il], (long long)hp->n_head);
        else hp->n_head_kv = kv[il];
    }
    free(kv);
    if (st) return st;
    if (!hp->n_head_kv) hp->n_head_kv = hp->n_head; /* no attention layer */
    char key[128];
    snprintf(key, sizeof key, "%s.rope.scaling.finetuned", m->hp.arch);
    if (sn_gguf_bool_or(m->g, key, 1))
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: %s is not false: attention layers with rope (Bamba, a Granite "
                          "without Mamba layers) are not supported by sunny-run", m->path, key);
    hp->n_rot = 0; /* no rope: the shared per-token pass only stores K and V */
    hp->rms_eps = 1e-5f;
    if ((st = sn_model_key_eps(m, "attention.layer_norm_rms_epsilon", &hp->rms_eps, err))) return st;
    hp->attn_scale = 0.0f;
    g->embd_scale = g->resid_scale = g->logit_scale = 0.0f;
    if ((st = sn_model_key_float(m, "attention.scale", 0, &hp->attn_scale, err)) ||
        (st = sn_model_key_float(m, "embedding_scale", 0, &g->embd_scale, err)) ||
        (st = sn_model_key_float(m, "residual_scale", 0, &g->resid_scale, err)) ||
        (st = sn_model_key_float(m, "logit_scale", 0, &g->logit_scale, err)))
        return st;
    hp->n_expert = hp->n_expert_used = 0;
    g->n_ff_shexp = 0;
    if ((st = sn_model_key_int(m, "expert_count", 0, 0, 1024, &hp->n_expert, err))) return st;
    if (hp->n_expert > 0) {
        if ((st = sn_model_key_int(m, "expert_used_count", 1, 1, hp->n_expert, &hp->n_expert_used, err)) ||
            (st = sn_model_key_int(m, "expert_shared_feed_forward_length", 0, 0, BIG, &g->n_ff_shexp, err)))
            return st;
    }
    hp->n_ff_exp = hp->n_ff;
    return sn_mamba2_read_hparams(m, &g->mx.hp, err);
}

static sn_status gh_load(sn_model *m, sn_err *err) {
    gh_state *g = GH(m);
    llama_state *s = &g->base;
    llama_hparams *hp = &s->hp;
    sn_status st;
    const size_t nl = (size_t)m->hp.n_layer;
    if (!(g->ly = calloc(nl, sizeof *g->ly)) || !(s->layers = calloc(nl, sizeof *s->layers)) ||
        !(g->kv_cap = calloc(nl, sizeof *g->kv_cap)) || !(g->kv_off = calloc(nl, sizeof *g->kv_off)))
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    if ((st = gh_hparams(m, g, err))) return st;
    for (size_t il = 0; il < nl; il++) g->kv_cap[il] = g->ly[il].rec ? 0 : m->n_ctx;
    s->kv_cap = g->kv_cap;
    s->kv_off = g->kv_off;
    s->n_q = hp->n_head * hp->head_dim_k;
    s->n_kv = hp->n_head_kv * hp->head_dim_k;
    const int64_t E = hp->n_embd, F = hp->n_expert > 0 ? 1 : hp->n_ff, DI = g->mx.hp.d_inner;
    sn_ops_buf bufs[11 + SN_MAMBA2_BUFS] = {
        {&s->x, E, 0},   {&s->xb, E, 0},   {&s->q, s->n_q, 0}, {&s->k, s->n_kv, 0}, {&s->v, s->n_kv, 0},
        {&s->att, s->n_q, 0}, {&s->hb, F, 0}, {&s->hb2, F, 0}, {&s->moe_out, E, 0}, {&g->o, E, 0},
        {&s->rope, 1, 0}};
    sn_mamba2_bufs(&g->mx, bufs + 11);
    int64_t wide = E > s->n_q ? E : s->n_q;
    if (F > wide) wide = F;
    if (DI > wide) wide = DI;
    if ((st = sn_ops_init(&s->ops, m, bufs, (int)(sizeof bufs / sizeof *bufs), wide, err))) return st;
    if ((st = sn_mamba2_init(&g->mx, &s->ops, err))) return st;
    if (hp->n_expert > 0) {
        const sn_moe_params mp = {.n_embd = E, .n_expert = hp->n_expert, .n_used = hp->n_expert_used,
                                  .n_ff_exp = hp->n_ff_exp, .gating = SN_MOE_SOFTMAX, .norm_w = 1,
                                  .n_ff_shexp = g->n_ff_shexp};
        if ((st = sn_moe_init(&s->moe, m, &mp, err))) return st;
    }
    if ((st = sn_model_matrix(m, SN_MODEL_GLOBAL, "token_embd.weight", SN_NE(E, hp->n_vocab), 1, &s->tok_embd, err)))
        return st;
    if ((st = sn_model_vector(m, SN_MODEL_GLOBAL, "output_norm.weight", SN_NE(E), 1, &s->output_norm, err))) return st;
    if ((st = sn_model_output_head(m, &s->tok_embd, 0, &s->output, err))) return st;
    if ((st = sn_model_each_layer(m, load_layer, err))) return st;
    /* one saved state: [K cache][V cache] of the attention layers, then the conv windows and the
     * SSM states of the Mamba ones */
    s->kq_scale = hp->attn_scale != 0.0f ? hp->attn_scale : 1.0f / sqrtf((float)hp->head_dim_k);
    uint64_t kv_bytes;
    if ((st = sn_llama_kv_layout(m, s, &kv_bytes, err))) return st;
    const uint64_t kv_floats = (kv_bytes + 3) / 4, conv = sn_mamba2_conv_floats(&g->mx.hp);
    const uint64_t total = kv_floats + (uint64_t)g->n_rec * (conv + sn_mamba2_ssm_floats(&g->mx.hp));
    const sn_state_decl decl = {1, {"kv+conv+ssm"}, {(total + nl - 1) / nl}};
    if ((st = sn_model_state_declare(m, &decl, err))) return st;
    g->conv_state = m->state + kv_floats;
    g->ssm_state = g->conv_state + (uint64_t)g->n_rec * conv;
    s->kv_mem = m->state;
    return sn_llama_alloc_cache(m, s, err);
}

static void gh_free(sn_model *m) {
    gh_state *g = GH(m);
    for (int64_t il = 0; g->ly && il < m->hp.n_layer; il++) sn_mamba2_free_layer(&g->ly[il].mx);
    free(g->ly);
    free(g->kv_cap);
    free(g->kv_off);
    sn_mamba2_free(&g->mx);
    sn_llama_free(m);
}

/* ---- the forward pass over one micro-batch ---- */

typedef struct {
    float *x;
    const float *y, *bias;
    float scale;   /* 0: none */
    int64_t n;
} scale_add;

/* x = (y + bias) * scale + x (ggml: the bias inside the block, then ggml_scale, then ggml_add) */
static void pass_scale_add(const void *arg, int64_t t0, int64_t t1) {
    const scale_add *p = arg;
    for (int64_t t = t0; t < t1; t++) {
        float *x = p->x + t * p->n;
        const float *y = p->y + t * p->n;
        for (int64_t i = 0; i < p->n; i++) {
            float v = p->bias ? y[i] + p->bias[i] : y[i];
            if (p->scale != 0.0f) v = v * p->scale;
            x[i] = v + x[i];
        }
    }
}

typedef struct {
    const llama_state *s;
    float f;
} scale_pass;

static void pass_embd_scale(const void *arg, int64_t t0, int64_t t1) {
    const scale_pass *p = arg;
    const int64_t E = p->s->hp.n_embd;
    for (int64_t i = t0 * E; i < t1 * E; i++) p->s->x[i] *= p->f;
}

static void pass_swiglu(const void *arg, int64_t t0, int64_t t1) {
    const scale_pass *p = arg;
    const int64_t F = p->s->hp.n_ff;
    for (int64_t t = t0; t < t1; t++) p->s->ops.k->swiglu(F, p->s->hb + t * F, p->s->hb + t * F, p->s->hb2 + t * F);
}

static sn_status forward(sn_model *m, const int32_t *tokens, int64_t T, float *logits, sn_err *err) {
    gh_state *g = GH(m);
    llama_state *s = &g->base;
    const llama_hparams *hp = &s->hp;
    const int64_t E = hp->n_embd;
    const uint64_t conv = sn_mamba2_conv_floats(&g->mx.hp), ssm = sn_mamba2_ssm_floats(&g->mx.hp);
    sn_status st;
    if ((st = sn_ops_begin(&s->ops, T, &s->tok_embd, tokens, &s->x, err))) return st;
    scale_pass sp = {s, g->embd_scale};
    if (g->embd_scale != 0.0f) sn_ops_rows(m->pool, T, pass_embd_scale, &sp);
    for (int il = 0; il < hp->n_layer; il++) {
        const layer_weights *L = &s->layers[il];
        const gh_layer *GL = &g->ly[il];
        float *c = s->xb;
        if (GL->rec) {
            sn_resid_norm an = {.x = s->x, .h = s->xb, .w = L->attn_norm, .n = E, .eps = hp->rms_eps};
            sn_ops_rows(m->pool, T, sn_ops_resid_norm, &an);
            if ((st = sn_mamba2_mixer(m, &g->mx, &GL->mx, s->xb, T, g->conv_state + (uint64_t)GL->slot * conv,
                                      g->ssm_state + (uint64_t)GL->slot * ssm, g->o, err)))
                return st;
            c = g->o;
        } else {
            sn_llama_tok tp = {m, s, L, il, m->n_past};
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
        scale_add ra = {x, c, GL->rec ? NULL : L->bo, g->resid_scale, E};
        sn_ops_rows(m->pool, R, pass_scale_add, &ra);
        const float *y;
        if (hp->n_expert > 0) {
            sn_resid_norm fn = {.x = x, .h = s->xb, .w = L->ffn_norm, .n = E, .eps = hp->rms_eps};
            sn_ops_rows(m->pool, R, sn_ops_resid_norm, &fn);
            if ((st = sn_moe_forward(&s->moe, &L->moe, s->xb, R, s->moe_out, err))) return st;
            y = s->moe_out;
        } else {
            if ((st = sn_llama_ffn_block(m, s, L, x, R, pass_swiglu, &sp, err))) return st;
            y = s->xb;
        }
        scale_add fa = {x, y, NULL, g->resid_scale, E};
        sn_ops_rows(m->pool, R, pass_scale_add, &fa);
    }
    if (!logits) return SN_OK;
    sn_ops_rmsnorm(s->xb, s->x + (T - 1) * E, s->output_norm, E, hp->rms_eps);
    if ((st = sn_ops_project1(&s->ops, s->xb, 1, &s->output, logits, err))) return st;
    if (g->logit_scale != 0.0f) {
        const float inv = 1.0f / g->logit_scale;
        for (int64_t i = 0; i < hp->n_vocab; i++) logits[i] *= inv;
    }
    return SN_OK;
}

const sn_family sn_family_granitehybrid = {
    .name = "granitehybrid",
    .impl_size = sizeof(gh_state),
    .state_kind = SN_STATE_KV,
    .load = gh_load,
    .forward = forward,
    .reset = NULL, /* the state (cache, windows, SSM states) is zeroed by model.c */
    .free = gh_free,
    .state_bytes = NULL,
};
