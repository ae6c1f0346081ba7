/* model_phi3.c - Phi-3 / Phi-3.5 / Phi-4 / Phi-4-mini ("phi3"), as llama.cpp's phi3 graph:
 *
 *   x = embed(token)
 *   per layer:  h = rmsnorm(x) * attn_norm;  q,k,v = the rows of Wqkv h (or Wq h, Wk h, Wv h)
 *               rope(q, k) NEOX over n_rot dims with the LongRoPE factors;  q *= 1/sqrt(head size)
 *               x += Wo attention(q, K, V) at scale 1
 *               h = rmsnorm(x) * ffn_norm;  g,u = the two halves of Wup h;  x += Wdown (silu(g) * u)
 *   logits = Wout (rmsnorm(x_last) * output_norm)
 *
 * The factors are rope_factors_long when the context is longer than the original one
 * (rope.scaling.original_context_length), else rope_factors_short (llama.cpp's get_rope_factors);
 * llama.cpp runs Phi's sliding window as full attention, and so does this file. The state, the
 * KV cache, the rope cache and the attention are the Llama family's (model_llama.h). */
#include "model_llama.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    llama_state ls;     /* the shared layout first: m->impl is also a llama_state */
    sn_matrix *wqkv;    /* per layer: the fused q/k/v rows (fused) */
    int fused;          /* attn_qkv (layer 0 decides) rather than attn_q / attn_k / attn_v */
    float *qkv;         /* fused projection rows, T x (n_q + 2 n_kv) */
    float *up;          /* fused gate/up rows, T x 2 n_ff */
    const float *rope_long, *rope_short;
} phi3_state;

static phi3_state *P3(sn_model *m) { return m->impl; }

static sn_status load_layer(sn_model *m, int il, sn_err *err) {
    phi3_state *p = P3(m);
    llama_state *s = &p->ls;
    const llama_hparams *hp = &s->hp;
    layer_weights *L = &s->layers[il];
    const int64_t E = hp->n_embd;
    sn_status st;
#define MAT(name, n_in, n_out, dst) \
    if ((st = sn_model_matrix(m, il, name, SN_NE(n_in, n_out), 1, dst, err))) return st
    if ((st = sn_model_vector(m, il, "attn_norm.weight", SN_NE(E), 1, &L->attn_norm, err))) return st;
    if ((st = sn_model_vector(m, il, "ffn_norm.weight", SN_NE(E), 1, &L->ffn_norm, err))) return st;
    if (p->fused) {
        MAT("attn_qkv.weight", E, s->n_q + 2 * s->n_kv, &p->wqkv[il]);
    } else {
        MAT("attn_q.weight", E, s->n_q, &L->wq);
        MAT("attn_k.weight", E, s->n_kv, &L->wk);
        MAT("attn_v.weight", E, s->n_kv, &L->wv);
    }
    MAT("attn_output.weight", s->n_q, E, &L->wo);
    MAT("ffn_up.weight", E, 2 * hp->n_ff, &L->w_up);
    MAT("ffn_down.weight", hp->n_ff, E, &L->w_down);
#undef MAT
    return SN_OK;
}

static void phi3_free(sn_model *m) {
    free(P3(m)->wqkv);
    sn_llama_free(m);
}

static sn_status phi3_load(sn_model *m, sn_err *err) {
    phi3_state *p = P3(m);
    llama_state *s = &p->ls;
    llama_hparams *hp = &s->hp;
    sn_status st;
    if ((st = sn_llama_load_hparams(m, s, 0, err))) return st;
    p->fused = sn_model_find_tensor(m, "blk.0.attn_qkv.weight") != NULL;
    const int64_t E = hp->n_embd, F = hp->n_ff, n_qkv = s->n_q + 2 * s->n_kv;
    const int64_t wide = F > s->n_q ? (F > E ? F : E) : (s->n_q > E ? s->n_q : E);
    const sn_ops_buf bufs[] = {{&s->x, E, 0},      {&s->xb, E, 0},        {&s->q, s->n_q, 0},
                               {&s->k, s->n_kv, 0},  {&s->v, s->n_kv, 0},   {&s->att, s->n_q, 0},
                               {&s->hb, F, 0},       {&p->up, 2 * F, 0},    {&s->rope, hp->n_rot > 0 ? hp->n_rot : 1, 0},
                               {&p->qkv, p->fused ? n_qkv : 1, 0}};
    if ((st = sn_ops_init(&s->ops, m, bufs, (int)(sizeof bufs / sizeof *bufs), wide, err))) return st;
    if ((st = sn_model_matrix(m, SN_MODEL_GLOBAL, "token_embd.weight", SN_NE(E, hp->n_vocab), 1, &s->tok_embd, err)))
        return st;
    if ((st = sn_model_vector(m, SN_MODEL_GLOBAL, "output_norm.weight", SN_NE(E), 1, &s->output_norm, err))) return st;
    if ((st = sn_model_output_head(m, &s->tok_embd, 0, &s->output, err))) return st;
    if ((st = sn_model_vector(m, SN_MODEL_GLOBAL, "rope_factors_long.weight", SN_NE(hp->n_rot / 2), 0, &p->rope_long,
                              err)) ||
        (st = sn_model_vector(m, SN_MODEL_GLOBAL, "rope_factors_short.weight", SN_NE(hp->n_rot / 2), 0,
                              &p->rope_short, err)))
        return st;
    s->rope_freqs = m->n_ctx > hp->n_ctx_orig_yarn ? p->rope_long : p->rope_short;
    s->layers = calloc((size_t)hp->n_layer, sizeof *s->layers);
    p->wqkv = calloc((size_t)hp->n_layer, sizeof *p->wqkv);
    if (!s->layers || !p->wqkv) return sn_err_set(err, SN_ENOMEM, "out of memory");
    if ((st = sn_model_each_layer(m, load_layer, err))) return st;
    sn_llama_rope_init(m, s);
    s->kq_scale = 1.0f; /* q is scaled after the rope */
    return sn_llama_alloc_cache(m, s, err);
}

/* ---- the forward pass over one micro-batch ---- */

typedef struct {
    sn_llama_tok lt; /* what the shared per-token passes read */
    phi3_state *p;
} tok_pass;

/* the fused rows split into q, k, v (llama.cpp's build_qkv views), then the shared pass (rope,
 * the K / V rows into the cache), then ggml_scale of q */
static void pass_qkv(const void *arg, int64_t t0, int64_t t1) {
    const tok_pass *tp = arg;
    const llama_state *s = &tp->p->ls;
    const int64_t n_qkv = s->n_q + 2 * s->n_kv;
    for (int64_t t = t0; tp->p->fused && t < t1; t++) {
        const float *f = tp->p->qkv + t * n_qkv;
        memcpy(s->q + t * s->n_q, f, (size_t)s->n_q * sizeof(float));
        memcpy(s->k + t * s->n_kv, f + s->n_q, (size_t)s->n_kv * sizeof(float));
        memcpy(s->v + t * s->n_kv, f + s->n_q + s->n_kv, (size_t)s->n_kv * sizeof(float));
    }
    sn_llama_pass_qkv(&tp->lt, t0, t1);
    const float q_scale = 1.0f / sqrtf((float)s->hp.head_dim_k);
    for (int64_t i = t0 * s->n_q; i < t1 * s->n_q; i++) s->q[i] *= q_scale;
}

/* ggml_swiglu of the fused rows: silu(first half) * second half */
static void pass_swiglu(const void *arg, int64_t t0, int64_t t1) {
    const tok_pass *tp = arg;
    const llama_state *s = &tp->p->ls;
    const int64_t F = s->hp.n_ff;
    for (int64_t t = t0; t < t1; t++) s->ops.k->swiglu(F, s->hb + t * F, tp->p->up + t * 2 * F, tp->p->up + t * 2 * F + F);
}

static sn_status forward(sn_model *m, const int32_t *tokens, int64_t T, float *logits, sn_err *err) {
    phi3_state *p = P3(m);
    llama_state *s = &p->ls;
    const llama_hparams *hp = &s->hp;
    const int64_t E = hp->n_embd;
    sn_status st;
    if ((st = sn_ops_begin(&s->ops, T, &s->tok_embd, tokens, &s->x, err))) return st;
    tok_pass tp = {{m, s, NULL, 0, m->n_past}, p};
    if (hp->n_rot > 0) sn_ops_rows(m->pool, T, sn_llama_pass_rope_cache, &tp.lt);
    for (int il = 0; il < hp->n_layer; il++) {
        const layer_weights *L = &s->layers[il];
        tp.lt.L = L;
        tp.lt.il = il;
        /* attention */
        sn_resid_norm an = {.x = s->x, .h = s->xb, .w = L->attn_norm, .n = E, .eps = hp->rms_eps};
        sn_ops_rows(m->pool, T, sn_ops_resid_norm, &an);
        const sn_matrix *wqkv[3] = {&L->wq, &L->wk, &L->wv};
        float *yqkv[3] = {s->q, s->k, s->v};
        if (p->fused) st = sn_ops_project1(&s->ops, s->xb, T, &p->wqkv[il], p->qkv, err);
        else st = sn_ops_project(&s->ops, s->xb, T, 3, wqkv, yqkv, err);
        if (st) return st;
        sn_ops_rows(m->pool, T, pass_qkv, &tp);
        if ((st = sn_llama_attention(m, s, il, T, err))) return st;
        if ((st = sn_ops_project1(&s->ops, s->att, T, &L->wo, s->xb, err))) return st;
        resid_pass ar = {s->x, s->xb, NULL, E};
        sn_ops_rows(m->pool, T, sn_llama_pass_resid, &ar);
        /* after the last layer's attention only the row whose logits are wanted goes on */
        float *x = s->x;
        int64_t R = T;
        if (il == hp->n_layer - 1) {
            if (!logits) break;
            x += (T - 1) * E;
            R = 1;
        }
        /* feed-forward */
        sn_resid_norm fn = {.x = x, .h = s->xb, .w = L->ffn_norm, .n = E, .eps = hp->rms_eps};
        sn_ops_rows(m->pool, R, sn_ops_resid_norm, &fn);
        if ((st = sn_ops_project1(&s->ops, s->xb, R, &L->w_up, p->up, err))) return st;
        sn_ops_rows(m->pool, R, pass_swiglu, &tp);
        if ((st = sn_ops_project1(&s->ops, s->hb, R, &L->w_down, s->xb, err))) return st;
        resid_pass fr = {x, s->xb, NULL, E};
        sn_ops_rows(m->pool, R, sn_llama_pass_resid, &fr);
    }
    if (!logits) return SN_OK;
    sn_ops_rmsnorm(s->xb, s->x + (T - 1) * E, s->output_norm, E, hp->rms_eps);
    return sn_ops_project1(&s->ops, s->xb, 1, &s->output, logits, err);
}

const sn_family sn_family_phi3 = {
    .name = "phi3",
    .impl_size = sizeof(phi3_state),
    .state_kind = SN_STATE_KV,
    .load = phi3_load,
    .forward = forward,
    .reset = NULL, /* positions >= n_past are never read */
    .free = phi3_free,
    .state_bytes = sn_llama_state_bytes,
};
