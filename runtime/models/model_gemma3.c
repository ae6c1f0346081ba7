/* model_gemma3.c - the forward pass of Gemma 3 ("gemma3"), as llama.cpp's graph computes it
 * (src/models/gemma3.cpp):
 *
 *   x = embed(token) * sqrt(n_embd)
 *   per layer:  h = rmsnorm(x) * attn_norm;  q,k,v = Wq h, Wk h, Wv h
 *               q,k = rmsnorm per head * q_norm/k_norm;  rope(q, k) with the layer's base;
 *               q *= attention scale;  cache k, v
 *               x += rmsnorm(Wo attention(q, K, V)) * attn_post_norm
 *               h = rmsnorm(x) * ffn_norm;  x += rmsnorm(Wdown (gelu(Wgate h) * Wup h)) * ffn_post_norm
 *   logits = Wout (rmsnorm(x_last) * output_norm), soft-capped when final_logit_softcapping is set
 *
 * Layers alternate sliding-window (local) and global attention: with attention.sliding_window
 * set, layer il is local unless il % 6 == 5 (llama.cpp's pattern 6, or sliding_window_pattern),
 * sees the n_swa positions ending at its own, and rotates with rope.freq_base_swa (default 10000,
 * scale 1); global layers use rope.freq_base and the linear scaling factor. The attention scale is
 * 1/sqrt(head_dim), 1/sqrt(n_embd/n_head) for the 62-layer 27B; the attention itself (the KV
 * cache, ggml's flash-attention numerics) is the Llama family's (model_llama_attn.c), with the
 * window applied as llama.cpp masks it. GELU is ggml's: the tanh form looked up through f16
 * (the kernels' geglu). The KV cache holds n_ctx positions for global layers and a ring of
 * n_swa + SN_UBATCH for local ones. */
#include "model_llama.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    llama_state ls;          /* weights, cache and attention of the shared layout (model_llama.h) */
    const float **post_attn, **post_ffw; /* per layer */
    float freq_base[2], freq_scale[2], theta_scale[2]; /* [0] local, [1] global */
    float q_scale, softcap, embd_scale;
    float *rope2;            /* the second rope cache (global layers), T x n_rot */
} gemma3_state;

/* ---- loading ---- */

static gemma3_state *G3(sn_model *m) { return m->impl; }

static sn_status load_layer(sn_model *m, int il, sn_err *err) {
    gemma3_state *g = G3(m);
    llama_state *s = &g->ls;
    const llama_hparams *hp = &s->hp;
    layer_weights *L = &s->layers[il];
    sn_status st;
    const int64_t E = hp->n_embd, HD = hp->head_dim_k;
#define MAT(name, n_in, n_out, dst) \
    if ((st = sn_model_matrix(m, il, name, SN_NE(n_in, n_out), 1, &L->dst, err))) return st
#define VEC(name, n, dst) \
    if ((st = sn_model_vector(m, il, name, SN_NE(n), 1, &dst, err))) return st
    if ((st = sn_llama_load_attn(m, s, il, 0, err))) return st;
    VEC("attn_q_norm.weight", HD, L->q_norm);
    VEC("attn_k_norm.weight", HD, L->k_norm);
    VEC("post_attention_norm.weight", E, g->post_attn[il]);
    VEC("ffn_norm.weight", E, L->ffn_norm);
    MAT("ffn_gate.weight", E, hp->n_ff, w_gate);
    MAT("ffn_up.weight", E, hp->n_ff, w_up);
    MAT("ffn_down.weight", hp->n_ff, E, w_down);
    VEC("post_ffw_norm.weight", E, g->post_ffw[il]);
#undef MAT
#undef VEC
    return SN_OK;
}

static sn_status gemma3_hparams(sn_model *m, gemma3_state *g, sn_err *err) {
    llama_hparams *hp = &g->ls.hp;
    sn_status st;
    if ((st = sn_llama_attn_sizes(m, hp, err))) return st;
    if (hp->head_dim_k != hp->head_dim_v)
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: key head size %lld != value head size %lld", m->path,
                          (long long)hp->head_dim_k, (long long)hp->head_dim_v);
    if ((st = sn_model_key_eps(m, "attention.layer_norm_rms_epsilon", &hp->rms_eps, err))) return st;
    /* rope: global base and linear scaling; the local base (scale 1) */
    g->freq_base[1] = 10000.0f;
    if ((st = sn_model_key_float(m, "rope.freq_base", 0, &g->freq_base[1], err))) return st;
    g->freq_base[0] = 10000.0f;
    if ((st = sn_model_key_float(m, "rope.freq_base_swa", 0, &g->freq_base[0], err))) return st;
    float factor = 0.0f;
    if ((st = sn_model_key_float(m, "rope.scaling.factor", 0, &factor, err))) return st;
    char key[128];
    snprintf(key, sizeof key, "%s.rope.scaling.type", m->hp.arch);
    char *stype = sn_gguf_str_dup(m->g, key);
    const int none = stype && !strcmp(stype, "none"), other = stype && !none && strcmp(stype, "linear");
    if (other) {
        st = sn_err_set(err, SN_EUNSUPPORTED, "%s: rope scaling type '%s' is not supported for gemma3 (none, "
                        "linear)", m->path, stype);
        free(stype);
        return st;
    }
    free(stype);
    if (factor < 0.0f || !(g->freq_base[0] > 0.0f) || !(g->freq_base[1] > 0.0f))
        return sn_err_set(err, SN_EFORMAT, "%s: rope bases must be > 0 and the scaling factor >= 0", m->path);
    g->freq_scale[0] = 1.0f;
    g->freq_scale[1] = none || factor == 0.0f ? 1.0f : 1.0f / factor;
    for (int i = 0; i < 2; i++) g->theta_scale[i] = powf(g->freq_base[i], -2.0f / (float)hp->n_rot);
    /* sliding window: pattern 6 (5 local : 1 global) unless the file says otherwise */
    int64_t n_swa = 0, pattern = 6;
    if ((st = sn_model_key_int(m, "attention.sliding_window", 0, 0, (int64_t)1 << 31, &n_swa, err))) return st;
    if ((st = sn_llama_swa_init(m, &g->ls, n_swa, pattern, err))) return st;
    g->softcap = 0.0f;
    if ((st = sn_model_key_float(m, "final_logit_softcapping", 0, &g->softcap, err))) return st;
    /* llama.cpp's f_attention_scale (its 27B type is the 62-layer model) */
    g->q_scale = hp->n_layer == 62 ? 1.0f / sqrtf((float)(hp->n_embd / hp->n_head)) : 1.0f / sqrtf((float)hp->head_dim_k);
    g->embd_scale = sqrtf((float)hp->n_embd);
    return SN_OK;
}

static void gemma3_free(sn_model *m) {
    gemma3_state *g = G3(m);
    free(g->post_attn);
    free(g->post_ffw);
    sn_llama_free(m); /* the shared part first in the record: m->impl is also a llama_state */
}

static sn_status gemma3_load(sn_model *m, sn_err *err) {
    gemma3_state *g = G3(m);
    llama_state *s = &g->ls;
    llama_hparams *hp = &s->hp;
    sn_status st;
    if ((st = gemma3_hparams(m, g, err))) return st;
    s->n_q = hp->n_head * hp->head_dim_k;
    s->n_kv = hp->n_head_kv * hp->head_dim_k;
    s->neox = 1;
    s->kq_scale = 1.0f; /* q is scaled before the attention */
    const int64_t E = hp->n_embd, F = hp->n_ff, wide = F > s->n_q ? (F > E ? F : E) : (s->n_q > E ? s->n_q : E);
    const sn_ops_buf bufs[] = {{&s->x, E, 0},     {&s->xb, E, 0},   {&s->q, s->n_q, 0},  {&s->k, s->n_kv, 0},
                               {&s->v, s->n_kv, 0}, {&s->att, s->n_q, 0}, {&s->hb, F, 0}, {&s->hb2, F, 0},
                               {&s->rope, hp->n_rot, 0}, {&g->rope2, hp->n_rot, 0}};
    if ((st = sn_ops_init(&s->ops, m, bufs, (int)(sizeof bufs / sizeof *bufs), wide, err))) return st;
    if ((st = sn_llama_load_io(m, s, 0, err))) return st;
    s->layers = calloc((size_t)hp->n_layer, sizeof *s->layers);
    g->post_attn = calloc((size_t)hp->n_layer, sizeof *g->post_attn);
    g->post_ffw = calloc((size_t)hp->n_layer, sizeof *g->post_ffw);
    if (!s->layers || !g->post_attn || !g->post_ffw) return sn_err_set(err, SN_ENOMEM, "out of memory");
    if ((st = sn_model_each_layer(m, load_layer, err))) return st;
    return sn_llama_alloc_cache(m, s, err);
}

/* ---- the forward pass over one micro-batch ---- */

typedef struct {
    sn_model *m;
    gemma3_state *g;
    const layer_weights *L;
    int il;
    int64_t pos0, E;
    const float *post; /* the post norm of the pass */
} tok_pass;

/* cos/sin of each token's position for both bases (ggml_rope_cache_init without YaRN: the angle
 * theta * freq_scale, theta multiplied by theta_scale pair by pair) */
static void pass_rope_cache(const void *arg, int64_t t0, int64_t t1) {
    const tok_pass *p = arg;
    const gemma3_state *g = p->g;
    const int64_t n_rot = g->ls.hp.n_rot;
    for (int64_t t = t0; t < t1; t++)
        for (int b = 0; b < 2; b++) {
            float *c = (b ? g->rope2 : g->ls.rope) + t * n_rot, theta = (float)(p->pos0 + t);
            for (int64_t i0 = 0; i0 < n_rot; i0 += 2) {
                const float th = g->freq_scale[b] * theta;
                c[i0] = cosf(th) * 1.0f;
                c[i0 + 1] = sinf(th) * 1.0f;
                theta *= g->theta_scale[b];
            }
        }
}

/* q/k norms, rope, the q scale, and the K / V rows into the cache */
static void pass_qkv(const void *arg, int64_t t0, int64_t t1) {
    const tok_pass *p = arg;
    sn_model *m = p->m;
    const gemma3_state *g = p->g;
    const llama_state *s = &g->ls;
    const llama_hparams *hp = &s->hp;
    const int64_t HD = hp->head_dim_k;
    for (int64_t t = t0; t < t1; t++) {
        float *q = s->q + t * s->n_q, *k = s->k + t * s->n_kv, *v = s->v + t * s->n_kv;
        for (int64_t h = 0; h < hp->n_head; h++) sn_ops_rmsnorm(q + h * HD, q + h * HD, p->L->q_norm, HD, hp->rms_eps);
        for (int64_t h = 0; h < hp->n_head_kv; h++) sn_ops_rmsnorm(k + h * HD, k + h * HD, p->L->k_norm, HD, hp->rms_eps);
        const float *rc = (s->swa_layers[p->il] ? s->rope : g->rope2) + t * hp->n_rot;
        for (int64_t h = 0; h < hp->n_head; h++) sn_llama_rope_apply(s, q + h * HD, hp->n_rot, rc);
        for (int64_t h = 0; h < hp->n_head_kv; h++) sn_llama_rope_apply(s, k + h * HD, hp->n_rot, rc);
        for (int64_t i = 0; i < s->n_q; i++) q[i] *= g->q_scale;
        void *kd = (void *)kv_row(s, s->kcache, m->n_ctx, p->il, p->pos0 + t);
        void *vd = (void *)kv_row(s, s->vcache, m->n_ctx, p->il, p->pos0 + t);
        if (s->kv_elt == 2) {
            m->k->quant[SN_GGML_F16](k, kd, s->n_kv);
            m->k->quant[SN_GGML_F16](v, vd, s->n_kv);
        } else {
            memcpy(kd, k, (size_t)s->n_kv * 4);
            memcpy(vd, v, (size_t)s->n_kv * 4);
        }
    }
}

/* x[t] += rmsnorm(y[t]) * post over R rows: a block's output through its post norm into the
 * residual (ggml: the norm, then the add) */
static void post_add(sn_model *m, float *x, float *y, const float *post, int64_t R) {
    const llama_hparams *hp = &G3(m)->ls.hp;
    sn_resid_norm pn = {.x = y, .h = y, .w = post, .n = hp->n_embd, .eps = hp->rms_eps};
    sn_ops_rows(m->pool, R, sn_ops_resid_norm, &pn);
    resid_pass ra = {x, y, NULL, hp->n_embd};
    sn_ops_rows(m->pool, R, sn_llama_pass_resid, &ra);
}

static void pass_geglu(const void *arg, int64_t t0, int64_t t1) {
    const tok_pass *p = arg;
    const llama_state *s = &p->g->ls;
    const int64_t F = s->hp.n_ff;
    for (int64_t t = t0; t < t1; t++) s->ops.k->geglu(F, s->hb + t * F, s->hb + t * F, s->hb2 + t * F);
}

static void pass_embd_scale(const void *arg, int64_t t0, int64_t t1) {
    const tok_pass *p = arg;
    float *x = p->g->ls.x;
    for (int64_t i = t0 * p->E; i < t1 * p->E; i++) x[i] *= p->g->embd_scale;
}

static sn_status forward(sn_model *m, const int32_t *tokens, int64_t T, float *logits, sn_err *err) {
    gemma3_state *g = G3(m);
    llama_state *s = &g->ls;
    const llama_hparams *hp = &s->hp;
    const int64_t E = hp->n_embd, pos0 = m->n_past;
    sn_status st;
    if ((st = sn_ops_begin(&s->ops, T, &s->tok_embd, tokens, &s->x, err))) return st;
    tok_pass tp = {m, g, NULL, 0, pos0, E, NULL};
    sn_ops_rows(m->pool, T, pass_embd_scale, &tp);
    sn_ops_rows(m->pool, T, pass_rope_cache, &tp);
    for (int il = 0; il < hp->n_layer; il++) {
        const layer_weights *L = &s->layers[il];
        tp.L = L;
        tp.il = il;
        if ((st = sn_llama_attn_block(m, s, L, il, T, pass_qkv, &tp, err))) return st;
        /* after the last layer's attention only the row whose logits are wanted goes on */
        float *x = s->x, *xb = s->xb;
        int64_t R = T;
        if (il == hp->n_layer - 1) {
            if (!logits) break;
            x += (T - 1) * E;
            xb += (T - 1) * E;
            R = 1;
        }
        post_add(m, x, xb, g->post_attn[il], R);
        if ((st = sn_llama_ffn_block(m, s, L, x, R, pass_geglu, &tp, err))) return st;
        post_add(m, x, s->xb, g->post_ffw[il], R);
    }
    if (!logits) return SN_OK;
    sn_ops_rmsnorm(s->xb, s->x + (T - 1) * E, s->output_norm, E, hp->rms_eps);
    if ((st = sn_ops_project1(&s->ops, s->xb, 1, &s->output, logits, err))) return st;
    if (g->softcap != 0.0f) {
        const float inv = 1.0f / g->softcap;
        for (int64_t i = 0; i < hp->n_vocab; i++) logits[i] = tanhf(logits[i] * inv) * g->softcap;
    }
    return SN_OK;
}

const sn_family sn_family_gemma3 = {
    .name = "gemma3",
    .impl_size = sizeof(gemma3_state),
    .state_kind = SN_STATE_KV,
    .load = gemma3_load,
    .forward = forward,
    .reset = NULL, /* positions >= n_past are never read */
    .free = gemma3_free,
    .state_bytes = sn_llama_state_bytes,
};
