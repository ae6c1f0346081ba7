/* model_llama.h - the Llama family's runtime state, shared by its two files: model_llama.c (loading
 * and the forward pass) and model_llama_attn.c (attention over the KV cache, as ggml's
 * flash-attention kernel computes it), and model_gemma3.c and model_qwen35.c, whose attention layers
 * attend the same way (gemma3 with a sliding window on its local layers; qwen35 on every 4th layer),
 * model_phi3.c (fused projections, LongRoPE factors), model_smollm3.c (no rope in every fourth
 * layer) and model_granitehybrid.c (attention layers between Mamba-2 ones).
 * Nothing else includes it. */
#ifndef SN_MODEL_LLAMA_H
#define SN_MODEL_LLAMA_H
#include "moe.h"

enum { FA_TILE = 64 };
enum { ROPE_SCALING_NONE = 0, ROPE_SCALING_LINEAR = 1, ROPE_SCALING_YARN = 2 };

/* Hyperparameters as llama.cpp derives them from the GGUF (defaults included). */
typedef struct {
    int64_t n_vocab, n_ctx_train, n_embd, n_layer; /* copied from sn_hparams */
    int64_t n_ff, n_head, n_head_kv;
    int64_t head_dim_k, head_dim_v, n_rot;
    float rms_eps;
    float rope_freq_base, rope_freq_scale; /* freq_scale = 1/factor */
    int rope_scaling;                      /* ROPE_SCALING_* */
    int64_t n_ctx_orig_yarn;
    float yarn_ext_factor, yarn_attn_factor, yarn_beta_fast, yarn_beta_slow; /* resolved */
    float attn_scale;                      /* 0 = 1/sqrt(head_dim) */
    int64_t n_expert, n_expert_used, n_ff_exp; /* mixture of experts (every layer) when n_expert > 0 */
} llama_hparams;

typedef struct {
    const float *attn_norm, *ffn_norm, *q_norm, *k_norm;
    const float *bq, *bk, *bv, *bo;
    sn_matrix wq, wk, wv, wo, w_gate, w_up, w_down;
    sn_moe_layer moe; /* the experts, instead of w_gate / w_up / w_down, when n_expert > 0 */
} layer_weights;

/* How many keys ahead the untiled attention prefetches the cache rows it walks. */
enum { ATT_PF = 32 };

typedef struct { /* per-thread attention scratch; the untiled path's buffers hold up to n_head heads */
    uint16_t *q16;   /* queries converted to f16 (head_dim_k each) */
    uint16_t *vkq16; /* f16 accumulators (head_dim_v each) */
    float *vkq32;    /* f32 accumulators (head_dim_v each) */
    float *vkqf;     /* split decode: the combined accumulators (head_dim_v each) */
    float *ms;       /* running max and sum, and the split decode's combined ones (4 per head) */
    float *kq;       /* tiled path: FA_TILE scores */
    float *kf;       /* tiled path: one K row as f32 */
} attn_scratch;

typedef struct {
    llama_hparams hp;
    /* weights */
    sn_matrix tok_embd;
    const float *output_norm, *rope_freqs; /* rope_freqs: Llama-3's, or the family's rope factors */
    sn_matrix output;
    layer_weights *layers;
    /* derived */
    int neox;
    float corr_dims[2], theta_scale, kq_scale;
    int64_t n_q, n_kv; /* q and k/v widths */
    /* sliding-window attention (Gemma 3): layers with swa[il] set see the n_swa positions up to
     * and including the query's (llama.cpp's LLAMA_SWA_TYPE_STANDARD mask); swa NULL: none */
    const unsigned char *swa;
    int64_t n_swa;
    unsigned char *swa_layers; /* sn_llama_swa_init's: per layer 1 = sliding (all 0 without a window) */
    int64_t *swa_kv_cap;       /* sn_llama_swa_init's (or sn_llama_hybrid_sizes') kv_cap and kv_off */
    uint64_t *swa_kv_off;
    /* attention sinks (gpt-oss): per layer, one extra logit per head that joins each query's
     * softmax as a key without a value (ggml_flash_attn_ext_add_sinks); NULL: none */
    const float *const *sinks;
    /* per-layer cache rows (NULL: n_ctx each): a layer with kv_cap[il] < n_ctx keeps position p in
     * row p % kv_cap[il] (a sliding-window layer needs only its window plus one micro-batch);
     * kv_off[il] is its first row; kv_rows all of them (sn_llama_alloc_cache fills both) */
    const int64_t *kv_cap;
    uint64_t *kv_off, kv_rows;
    /* state: KV cache [layer][pos][n_kv] */
    void *kcache, *vcache;
    void *kv_mem; /* the family's memory for both caches (a family whose saved state holds them), else NULL */
    size_t kv_elt;
    /* activations (sn_ops allocates them) */
    float *x, *xb, *q, *k, *v, *att, *hb, *hb2, *rope;
    sn_ops ops; /* converted-activation scratch of the shared matmuls */
    sn_moe moe; /* the experts' routing and scratch (moe.h) */
    float *moe_out;
    float *logits_tmp;
    attn_scratch *scratch;
    float *kt32, *v32; /* tiled attention: f32 K (transposed) and V of one layer, per kv head */
    uint64_t kv32_cap;
    int64_t kt_ld;
} llama_state;

#define LHP(m) (&((const llama_state *)(m)->impl)->hp)

/* One layer's attention over a micro-batch: T tokens from position pos0 (the pool's jobs). */
typedef struct {
    sn_model *m;
    llama_state *s;
    int il;
    int64_t T, pos0;
} attn_job;

/* Row pos of layer il in a [layer][pos][n_kv] cache (a ring of kv_cap[il] rows where the family
 * set kv_cap). */
static inline const void *kv_row(const llama_state *s, const void *cache, int64_t n_ctx, int il, int64_t pos) {
    const uint64_t row = s->kv_cap ? s->kv_off[il] + (uint64_t)(pos % s->kv_cap[il])
                                   : (uint64_t)il * (uint64_t)n_ctx + (uint64_t)pos;
    return (const char *)cache + (row * (uint64_t)s->n_kv) * s->kv_elt;
}

/* Shared with the Gemma 3 family (model_gemma3.c), which runs its own layers over this state and
 * this attention: the KV cache, the attention scratch and the tiled copies for s->hp (n_ctx
 * positions, m->params.kv_type), their release, the size of the cache, the NEOX / normal rotation
 * of one head by a cos/sin cache. */
sn_status sn_llama_alloc_cache(sn_model *m, llama_state *s, sn_err *err);
/* The cache's layout before it is allocated: kv_elt, kv_off, kv_rows, and its size in bytes (K and
 * V; what kv_mem must hold), or an error when it is too large for the machine. */
sn_status sn_llama_kv_layout(const sn_model *m, llama_state *s, uint64_t *bytes, sn_err *err);
/* The llama-family keys (sn_llama_attn_sizes, then rms eps, rope base / scaling / YaRN, attention
 * scale, experts) as llama.cpp's loader reads and checks them, into hp. */
sn_status sn_llama_read_hparams(const sn_model *m, llama_hparams *hp, sn_err *err);
/* sn_llama_read_hparams into s->hp, refusing key / value head sizes that differ (and experts unless
 * experts_ok), then the Q and K/V row widths s->n_q, s->n_kv: the start of a llama-like load. */
sn_status sn_llama_load_hparams(const sn_model *m, llama_state *s, int experts_ok, sn_err *err);
/* The RoPE constants (NEOX per SN_OPT_ROPE_NEOX, theta scale, YaRN dims) and the attention scale
 * from s->hp and m->opts, as ggml_rope_ext and llama.cpp's graph take them. */
void sn_llama_rope_init(const sn_model *m, llama_state *s);
/* The sizes every attention family reads as llama.cpp's loader does: n_vocab, n_embd, n_layer, the
 * context, feed_forward_length, head counts, key/value head sizes (default n_embd / n_head) and
 * rope.dimension_count (default the key head size, even and no larger), into hp. */
sn_status sn_llama_attn_sizes(const sn_model *m, llama_hparams *hp, sn_err *err);
/* A residual add over token rows of n (an sn_rows_fn over a resid_pass): y += bias (when there is
 * one), then x += y. */
typedef struct {
    float *x, *y;
    const float *bias;
    int64_t n;
} resid_pass;
void sn_llama_pass_resid(const void *arg, int64_t t0, int64_t t1);
/* Sliding-window attention in alternate layers (Gemma 3, gpt-oss): layer il slides when pattern is 0
 * or il % pattern < pattern - 1 (llama.cpp's set_swa_pattern), none when n_swa is 0. pattern is the
 * family's default: the key attention.sliding_window_pattern overrides it, or as a per-layer array
 * of flags says which layers slide (llama.cpp's load_swa_pattern). A sliding
 * layer's query sees n_swa positions, and a micro-batch of up to SN_UBATCH tokens is written before
 * its queries attend, so its cache is a ring of n_swa - 1 + SN_UBATCH rows and one spare (a row is
 * overwritten only once no query of the batch sees it); other layers keep n_ctx rows. Sets
 * swa_layers, swa, n_swa, kv_cap and kv_off of s (freed by sn_llama_free). */
sn_status sn_llama_swa_init(const sn_model *m, llama_state *s, int64_t n_swa, int64_t pattern, sn_err *err);
/* Hybrid families (attention layers among recurrent ones: model_granitehybrid.c, model_lfm2.c): the
 * sizes as llama.cpp's loader reads them (n_vocab, context, n_embd, n_layer, feed_forward_length,
 * head_count, equal key / value head sizes) with attention.head_count_kv a per-layer array, 0 for a
 * recurrent layer (one count dividing head_count for every attention layer), into s->hp, n_q and
 * n_kv; cache rows per layer in kv_cap / kv_off: n_ctx for an attention layer, 0 for a recurrent
 * one (freed by sn_llama_free). */
sn_status sn_llama_hybrid_sizes(const sn_model *m, llama_state *s, sn_err *err);
/* The hybrid's one saved state, named `name`: the attention layers' K and V cache, then `extra`
 * floats (the recurrent layers' state) at *extra_out; the cache is allocated in it. */
sn_status sn_llama_hybrid_state(sn_model *m, llama_state *s, const char *name, uint64_t extra, float **extra_out,
                                sn_err *err);
/* Layer il's attention tensors in the separate-projection layout: attn_norm and the attn_q / attn_k /
 * attn_v / attn_output weights, and with `biases` the optional attn_q / attn_k / attn_v biases. */
sn_status sn_llama_load_attn(sn_model *m, llama_state *s, int il, int biases, sn_err *err);
/* token_embd, output_norm and the output head (required, or else tied to the embedding when absent). */
sn_status sn_llama_load_io(sn_model *m, llama_state *s, int head_required, sn_err *err);
sn_status sn_llama_reserve_kv32(const sn_model *m, llama_state *s, int64_t ld, sn_err *err);
void sn_llama_free(sn_model *m);
uint64_t sn_llama_state_bytes(const sn_model *m);
void sn_llama_rope_apply(const llama_state *s, float *x, int64_t n_rot, const float *cache);
/* The per-token passes of a llama layer (sn_rows_fn over tokens [t0, t1) of a sn_llama_tok):
 * the rope cos/sin of each token's position into s->rope; biases, q/k norms, rope, and the K / V
 * rows of layer il into the cache. */
typedef struct {
    sn_model *m;
    llama_state *s;
    const layer_weights *L;
    int il;
    int64_t pos0;
} sn_llama_tok;
void sn_llama_pass_rope_cache(const void *arg, int64_t t0, int64_t t1);
void sn_llama_pass_qkv(const void *arg, int64_t t0, int64_t t1);
/* The same without the rope (a NoPE layer: smollm3's every fourth). */
void sn_llama_pass_qkv_norope(const void *arg, int64_t t0, int64_t t1);
/* The Llama family's forward pass over T tokens at m->n_past (logits NULL: none), each layer's
 * per-token Q/K/V pass given by qkv_of(il) (NULL: sn_llama_pass_qkv everywhere). */
sn_status sn_llama_forward(sn_model *m, const int32_t *tokens, int64_t T, float *logits,
                           sn_rows_fn (*qkv_of)(int il), sn_err *err);
/* A layer's attention and its residual over T tokens (the Llama family's layout): tp's layer set to
 * il, sn_llama_attn_block with sn_llama_pass_qkv, then x += its output + attn_output.bias. */
sn_status sn_llama_attn_layer(sn_model *m, llama_state *s, sn_llama_tok *tp, int il, int64_t T, sn_err *err);
/* The attention of T queries in s->q at m->n_past over layer il's cache into s->att. */
sn_status sn_llama_attention(sn_model *m, llama_state *s, int il, int64_t T, sn_err *err);
/* A layer's attention over T tokens at m->n_past: norm of s->x into s->xb, Q/K/V, pass_qkv(arg)
 * over the tokens (norms, rope, the rows into the cache), the attention, and Wo: the output in s->xb. */
sn_status sn_llama_attn_block(sn_model *m, llama_state *s, const layer_weights *L, int il, int64_t T,
                              sn_rows_fn pass_qkv, const void *arg, sn_err *err);
/* A layer's FFN over R rows at x: ffn_norm into s->xb, gate and up into s->hb / s->hb2,
 * pass_act(arg) over the rows (hb = act(hb) * hb2), down: the output in s->xb. */
sn_status sn_llama_ffn_block(sn_model *m, llama_state *s, const layer_weights *L, float *x, int64_t R,
                             sn_rows_fn pass_act, const void *arg, sn_err *err);

/* f32 copies of a layer's visible keys (transposed) and values per kv head, for the tiled path. */
void sn_llama_prep_worker(void *arg, int ith, int nth);
/* The attention of the job's tokens into s->att: untiled under FA_TILE tokens, tiled from it. */
void sn_llama_attn_worker(void *arg, int ith, int nth);

#endif
