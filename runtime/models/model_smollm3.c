/* model_smollm3.c - SmolLM3 ("smollm3"), as llama.cpp's smollm3 graph: Llama without rope in every
 * fourth layer (its no_rope_layers: layers 3, 7, 11, ...):
 *
 *   x = embed(token)
 *   per layer:  h = rmsnorm(x) * attn_norm;  q,k,v = Wq h, Wk h, Wv h (+ biases)
 *               rope(q, k) over the whole head, except where (layer + 1) % 4 == 0;  cache k, v
 *               x += Wo attention(q, K, V)
 *               h = rmsnorm(x) * ffn_norm;  x += Wdown (silu(Wgate h) * Wup h)
 *   logits = Wout (rmsnorm(x_last) * output_norm)
 *
 * The graph passes no rope factors, so none are read. The state, the KV cache, the rope cache, the
 * attention and the forward pass are the Llama family's (model_llama.h), with the Q/K/V pass of the
 * rope-less layers swapped in. */
#include "model_llama.h"

#include <stdlib.h>

enum { NOPE_STEP = 4 }; /* llama.cpp's n_no_rope_layer_step for smollm3 */

/* attn_norm, q / k / v / output (optional q / k / v biases, as llama.cpp's loader takes them),
 * ffn_norm and the SwiGLU feed-forward; a fused attn_qkv is refused */
static sn_status load_layer(sn_model *m, int il, sn_err *err) {
    llama_state *s = m->impl;
    const llama_hparams *hp = &s->hp;
    layer_weights *L = &s->layers[il];
    const int64_t E = hp->n_embd;
    sn_status st = sn_llama_load_attn(m, s, il, 1, err);
    if (!st) st = sn_model_vector(m, il, "ffn_norm.weight", SN_NE(E), 1, &L->ffn_norm, err);
    if (!st) st = sn_model_matrix(m, il, "ffn_gate.weight", SN_NE(E, hp->n_ff), 1, &L->w_gate, err);
    if (!st) st = sn_model_matrix(m, il, "ffn_up.weight", SN_NE(E, hp->n_ff), 1, &L->w_up, err);
    if (!st) st = sn_model_matrix(m, il, "ffn_down.weight", SN_NE(hp->n_ff, E), 1, &L->w_down, err);
    if (st) return st;
    const char *fused = sn_model_layer_name(m, il, "attn_qkv.weight");
    if (sn_model_find_tensor(m, fused))
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: tensor %s is not supported by sunny-run", m->path, fused);
    return SN_OK;
}

static sn_status smollm3_load(sn_model *m, sn_err *err) {
    llama_state *s = m->impl;
    llama_hparams *hp = &s->hp;
    sn_status st;
    if ((st = sn_llama_load_hparams(m, s, 0, err))) return st;
    const int64_t E = hp->n_embd, F = hp->n_ff;
    const int64_t wide = F > s->n_q ? (F > E ? F : E) : (s->n_q > E ? s->n_q : E);
    const sn_ops_buf bufs[] = {{&s->x, E, 0},       {&s->xb, E, 0},      {&s->q, s->n_q, 0},
                               {&s->k, s->n_kv, 0},  {&s->v, s->n_kv, 0}, {&s->att, s->n_q, 0},
                               {&s->hb, F, 0},       {&s->hb2, F, 0},     {&s->rope, hp->n_rot > 0 ? hp->n_rot : 1, 0}};
    if ((st = sn_ops_init(&s->ops, m, bufs, (int)(sizeof bufs / sizeof *bufs), wide, err))) return st;
    if ((st = sn_llama_load_io(m, s, 0, err))) return st;
    if (!(s->layers = calloc((size_t)hp->n_layer, sizeof *s->layers)))
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    if ((st = sn_model_each_layer(m, load_layer, err))) return st;
    sn_llama_rope_init(m, s);
    return sn_llama_alloc_cache(m, s, err);
}

/* ---- the forward pass: the Llama family's, without the rope in every fourth layer ---- */

static sn_rows_fn qkv_of(int il) { return (il + 1) % NOPE_STEP == 0 ? sn_llama_pass_qkv_norope : sn_llama_pass_qkv; }

static sn_status forward(sn_model *m, const int32_t *tokens, int64_t T, float *logits, sn_err *err) {
    return sn_llama_forward(m, tokens, T, logits, qkv_of, err);
}

const sn_family sn_family_smollm3 = {
    .name = "smollm3",
    .impl_size = sizeof(llama_state),
    .state_kind = SN_STATE_KV,
    .load = smollm3_load,
    .forward = forward,
    .reset = NULL, /* positions >= n_past are never read */
    .free = sn_llama_free,
    .state_bytes = sn_llama_state_bytes,
};
