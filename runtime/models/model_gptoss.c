/* model_gptoss.c - the forward pass of gpt-oss ("gpt-oss"), as llama.cpp's graph computes it
 * (src/models/openai-moe.cpp):
 *
 *   x = embed(token)
 *   per layer:  h = rmsnorm(x) * attn_norm;  q,k,v = Wq h + bq, Wk h + bk, Wv h + bv
 *               rope(q, k): NEOX with YaRN;  cache k, v
 *               x += Wo attention(q, K, V, sinks) + bo
 *               h = rmsnorm(x) * post_attention_norm;  x += MoE(h)
 *   logits = Wout (rmsnorm(x_last) * output_norm)
 *
 * Attention scales by 1/sqrt(n_rot) and takes one extra logit per head, the layer's sink, into each
 * query's softmax (a key without a value). Layers alternate sliding-window and full attention:
 * with llama.cpp's pattern 2 (or attention.sliding_window_pattern) the even layers see only the
 * n_swa positions ending at their own, and keep a ring of n_swa + SN_UBATCH cache rows. The
 * attention itself (the KV cache, ggml's flash-attention numerics, sinks) is the Llama family's
 * (model_llama_attn.c). The MoE is the shared block (moe.h): the router's logits plus bias, top-k
 * on the logits and a softmax over the k selected; each expert's gate / up / down with its bias row;
 * ggml's clamped SwiGLU (alpha 1.702, limit 7). Unlike the other families, llama.cpp runs the last
 * layer's feed-forward for every token of the batch (its rows are picked only before the output
 * norm), which decides the matmuls' summation order there, so this pass does too. */
#include "model_llama.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    llama_state ls;      /* weights, cache and attention of the shared layout (model_llama.h) */
    const float **sinks; /* per layer: n_head logits */
} gptoss_state;

static gptoss_state *GO(sn_model *m) { return m->impl; }

/* The tensors llama.cpp requires that sn_moe_load_layer takes as optional. */
static sn_status require(sn_model *m, int il, const void *p, const char *name, sn_err *err) {
    if (p) return SN_OK;
    return sn_err_set(err, SN_EFORMAT, "%s: tensor %s is missing", m->path, sn_model_layer_name(m, il, name));
}

static sn_status load_layer(sn_model *m, int il, sn_err *err) {
    llama_state *s = &GO(m)->ls;
    layer_weights *L = &s->layers[il];
    const int64_t E = s->hp.n_embd, H = s->hp.n_head;
    sn_status st;
    /* q/k/v biases are optional in llama.cpp's loader, the output bias and the sinks are not */
    if ((st = sn_llama_load_attn(m, s, il, 1, err)) ||
        (st = sn_model_vector(m, il, "attn_output.bias", SN_NE(E), 1, &L->bo, err)) ||
        (st = sn_model_vector(m, il, "attn_sinks.weight", SN_NE(H), 1, &GO(m)->sinks[il], err)) ||
        (st = sn_model_vector(m, il, "post_attention_norm.weight", SN_NE(E), 1, &L->ffn_norm, err)))
        return st;
    if ((st = sn_moe_load_layer(m, il, &s->moe.p, &L->moe, err))) return st;
    if ((st = require(m, il, L->moe.gate_inp_b, "ffn_gate_inp.bias", err)) ||
        (st = require(m, il, L->moe.gate_exps_b, "ffn_gate_exps.bias", err)) ||
        (st = require(m, il, L->moe.up_exps_b, "ffn_up_exps.bias", err)) ||
        (st = require(m, il, L->moe.down_exps_b, "ffn_down_exps.bias", err)))
        return st;
    const char *name = sn_model_layer_name(m, il, "attn_qkv.weight"); /* a fused form we do not read */
    if (sn_model_find_tensor(m, name))
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: tensor %s is not supported by sunny-run", m->path, name);
    return SN_OK;
}

static sn_status gptoss_hparams(sn_model *m, gptoss_state *g, sn_err *err) {
    llama_hparams *hp = &g->ls.hp;
    sn_status st;
    if ((st = sn_llama_read_hparams(m, hp, err))) return st;
    if (hp->n_expert < 1)
        return sn_err_set(err, SN_EFORMAT, "%s: %s.expert_count is missing", m->path, m->hp.arch);
    if ((st = sn_model_key_int(m, "expert_feed_forward_length", 1, 1, (int64_t)1 << 24, &hp->n_ff_exp, err))) return st;
    if (hp->head_dim_k != hp->head_dim_v) /* the cache's K and V rows are one width */
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: key head size %lld != value head size %lld", m->path,
                          (long long)hp->head_dim_k, (long long)hp->head_dim_v);
    /* one rope for both kinds of layer: llama.cpp's sliding layers take rope.freq_base_swa, which
     * defaults to rope.freq_base (and which llama.cpp's converter does not write for gpt-oss) */
    float base_swa = hp->rope_freq_base;
    if ((st = sn_model_key_float(m, "rope.freq_base_swa", 0, &base_swa, err))) return st;
    if (base_swa != hp->rope_freq_base)
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: %s.rope.freq_base_swa %g differs from rope.freq_base %g", m->path,
                          m->hp.arch, base_swa, hp->rope_freq_base);
    int64_t n_swa = 0, pattern = 2; /* sliding_window_pattern read by sn_llama_swa_init */
    if ((st = sn_model_key_int(m, "attention.sliding_window", 1, 0, (int64_t)1 << 31, &n_swa, err))) return st;
    return sn_llama_swa_init(m, &g->ls, n_swa, pattern, err);
}

static void gptoss_free(sn_model *m) {
    free(GO(m)->sinks);
    sn_llama_free(m); /* the shared part first in the record: m->impl is also a llama_state */
}

static sn_status gptoss_load(sn_model *m, sn_err *err) {
    gptoss_state *g = GO(m);
    sn_status st = gptoss_hparams(m, g, err);
    if (st) return st;
    llama_state *s = &g->ls;
    const llama_hparams *hp = &s->hp;
    s->n_q = hp->n_head * hp->head_dim_k;
    s->n_kv = hp->n_head_kv * hp->head_dim_k;
    const int64_t E = hp->n_embd, wide = s->n_q > E ? s->n_q : E;
    const sn_ops_buf bufs[] = {{&s->x, E, 0},         {&s->xb, E, 0},       {&s->q, s->n_q, 0},
                               {&s->k, s->n_kv, 0},   {&s->v, s->n_kv, 0},  {&s->att, s->n_q, 0},
                               {&s->rope, hp->n_rot > 0 ? hp->n_rot : 1, 0}, {&s->moe_out, E, 0}};
    if ((st = sn_ops_init(&s->ops, m, bufs, (int)(sizeof bufs / sizeof *bufs), wide, err))) return st;
    float w_scale = 0.0f;
    if ((st = sn_model_key_float(m, "expert_weights_scale", 0, &w_scale, err))) return st;
    const sn_moe_params mp = {.n_embd = E, .n_expert = hp->n_expert, .n_used = hp->n_expert_used,
                              .n_ff_exp = hp->n_ff_exp, .gating = SN_MOE_SOFTMAX_WEIGHT,
                              .act = SN_MOE_ACT_SWIGLU_OAI, .w_scale = w_scale};
    if ((st = sn_moe_init(&s->moe, m, &mp, err))) return st;
    if ((st = sn_llama_load_io(m, s, 1, err))) return st;
    s->layers = calloc((size_t)hp->n_layer, sizeof *s->layers);
    if (!s->layers || !(g->sinks = calloc((size_t)hp->n_layer, sizeof *g->sinks)))
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    if ((st = sn_model_each_layer(m, load_layer, err))) return st;
    s->sinks = g->sinks;
    sn_llama_rope_init(m, s); /* NEOX (the table row's option), YaRN */
    s->kq_scale = 1.0f / sqrtf((float)hp->n_rot);
    return sn_llama_alloc_cache(m, s, err);
}

/* ---- the forward pass over one micro-batch ---- */

static sn_status forward(sn_model *m, const int32_t *tokens, int64_t T, float *logits, sn_err *err) {
    llama_state *s = &GO(m)->ls;
    const llama_hparams *hp = &s->hp;
    const int64_t E = hp->n_embd;
    sn_status st;
    if ((st = sn_ops_begin(&s->ops, T, &s->tok_embd, tokens, &s->x, err))) return st;
    sn_llama_tok tp = {m, s, NULL, 0, m->n_past};
    sn_ops_rows(m->pool, T, sn_llama_pass_rope_cache, &tp);
    for (int il = 0; il < hp->n_layer; il++) {
        const layer_weights *L = &s->layers[il];
        /* x += Wo attention + bo: attn_norm, q/k/v with biases, rope, the cache, sinks */
        if ((st = sn_llama_attn_layer(m, s, &tp, il, T, err))) return st;
        if (il == hp->n_layer - 1 && !logits) break; /* the cache is written: nothing left to keep */
        sn_resid_norm fn = {.x = s->x, .h = s->xb, .w = L->ffn_norm, .n = E, .eps = hp->rms_eps};
        sn_ops_rows(m->pool, T, sn_ops_resid_norm, &fn);
        if ((st = sn_moe_forward(&s->moe, &L->moe, s->xb, T, s->moe_out, err))) return st;
        resid_pass mr = {s->x, s->moe_out, NULL, E};
        sn_ops_rows(m->pool, T, sn_llama_pass_resid, &mr);
    }
    if (!logits) return SN_OK;
    sn_ops_rmsnorm(s->xb, s->x + (T - 1) * E, s->output_norm, E, hp->rms_eps);
    return sn_ops_project1(&s->ops, s->xb, 1, &s->output, logits, err);
}

/* no reset: positions >= n_past are never read */
const sn_family sn_family_gptoss = {.name = "gpt-oss", .impl_size = sizeof(gptoss_state), .state_kind = SN_STATE_KV,
                                    .load = gptoss_load, .forward = forward, .free = gptoss_free,
                                    .state_bytes = sn_llama_state_bytes};
