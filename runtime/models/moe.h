/* moe.h - the mixture-of-experts feed-forward block every MoE family shares, computed as llama.cpp's
 * build_moe_ffn does on its CPU backend:
 *
 *   logits = router x (+ router bias)                     [n_expert] per token, f32
 *   probs  = softmax(logits)  (or the logits themselves for SN_MOE_SOFTMAX_WEIGHT)
 *   sel    = the n_used largest probs, largest first (ggml_argsort_top_k; equal probs: lower index
 *            first, as std::sort's insertion sort leaves them for up to 16 experts)
 *   w      = probs[sel]  (SN_MOE_SOFTMAX_WEIGHT: softmax over those n_used logits)
 *            norm_w: w /= max(sum(w), 2^-14)   w_scale (not 0 or 1): w *= w_scale
 *   out    = sum over slots, in selection order, of w_s * down_e(act(gate_e x, up_e x))
 *            (+ the shared expert, when the layer has one: see sn_moe_layer)
 *   act    = silu(g) * u, or gpt-oss's clamped form (SN_MOE_ACT_SWIGLU_OAI, ggml_swiglu_oai):
 *            x = min(g, 7), y = clamp(u, -7, 7), x / (1 + exp(-1.702 x)) * (y + 1)
 *   each expert matmul's output gets the expert's bias row when the layer has expert biases
 *   (ggml_add_id: up, gate, then down)
 *
 * The expert matmuls run as ggml's mul_mat_id does: every token's row of a selected expert in the
 * single-token order (dot), except IQ4_XS experts with 8+ tokens, which ggml's IQ panel multiplies
 * in the batched order (dot_mm). A batch's tokens are grouped by expert and each expert's rows are
 * read once for all its tokens; decode reads only the selected experts. The tensors are the GGUF's
 * blk.N.ffn_gate_inp / ffn_{gate,up,down}_exps (sn_moe_load_layer declares them). */
#ifndef SN_MOE_H
#define SN_MOE_H
#include "ops.h"

/* How router logits become expert weights (llama.cpp's llama_expert_gating_func_type). */
enum {
    SN_MOE_SOFTMAX = 0,        /* softmax over all experts, then top-k (qwen3moe, Mixtral) */
    SN_MOE_SOFTMAX_WEIGHT = 1  /* top-k on the logits, softmax over the selected (gpt-oss) */
};

/* The experts' activation. */
enum {
    SN_MOE_ACT_SILU = 0,       /* silu(gate) * up */
    SN_MOE_ACT_SWIGLU_OAI = 1  /* gpt-oss: alpha 1.702, limit 7 */
};

typedef struct sn_moe_params {
    int64_t n_embd, n_expert, n_used, n_ff_exp;
    int gating;     /* SN_MOE_* */
    int act;        /* SN_MOE_ACT_* */
    int norm_w;     /* renormalise the selected weights to sum 1 */
    float w_scale;  /* 0 or 1: none */
    int64_t n_ff_shexp; /* the shared expert's width, 0 when the family has none */
} sn_moe_params;

/* One layer's expert tensors. The shared expert (optional: gate_shexp.data == NULL when absent) is
 * a SwiGLU FFN every token runs; with gate_inp_shexp its output is scaled by sigmoid(gate_inp_shexp
 * . x) per token. It is added after the routed experts' sum. */
typedef struct sn_moe_layer {
    sn_matrix gate_inp;                       /* router [n_embd x n_expert] */
    const float *gate_inp_b;                  /* optional router bias [n_expert] */
    sn_matrix gate_exps, up_exps, down_exps;  /* 3-D stacks */
    const float *gate_exps_b, *up_exps_b, *down_exps_b; /* optional expert biases [n_out x n_expert] */
    sn_matrix gate_shexp, up_shexp, down_shexp;
    const float *gate_inp_shexp;              /* optional [n_embd] */
} sn_moe_layer;

typedef struct sn_moe {
    sn_model *m;
    sn_moe_params p;
    int64_t cap_T;      /* tokens the scratch holds */
    float *logits, *probs, *w;    /* [T x n_expert], [T x n_expert], [T x n_used] */
    int32_t *sel;                 /* [T x n_used] */
    int64_t *count, *start;       /* per expert: its (token, slot) pairs and where they start in order */
    int32_t *order;               /* t * n_used + s, grouped by expert */
    int32_t *pos;                 /* [T x n_used]: where pair (t, s) is in order */
    void *xg;                     /* the input rows converted and gathered per pair */
    uint64_t xg_cap;
    float *g, *u;                 /* [pairs x n_ff_exp] gate / up outputs (then g = silu(g) * u) */
    void *hg;                     /* g rows converted for the down projection */
    uint64_t hg_cap;
    float *d;                     /* [pairs x n_embd] down outputs */
    float *sh_g, *sh_u, *sh_d;    /* shared expert scratch [T x n_ff_shexp], [T x n_embd] */
    void *tasks;                  /* the matmul work list of one phase */
    int64_t task_cap;
} sn_moe;

/* Declares layer il's router and expert stacks with the shapes p gives, the optional expert biases
 * ffn_{gate,up,down}_exps.bias (and, with n_ff_shexp > 0, the shared expert ffn_{gate,up,down}_shexp
 * and the optional ffn_gate_inp_shexp). The loader places them like any other matrix. */
sn_status sn_moe_load_layer(sn_model *m, int il, const sn_moe_params *p, sn_moe_layer *L, sn_err *err);
/* Binds mo to m (whose ops the router and shared expert use) and checks p; scratch is allocated on
 * the first forward and grows with the batch. */
sn_status sn_moe_init(sn_moe *mo, sn_model *m, const sn_moe_params *p, sn_err *err);
void sn_moe_free(sn_moe *mo);
/* out[t] = the MoE block of x[t] (x: the normed input, T rows of n_embd; T <= the ops' reserved
 * rows); out may not alias x. Counts each selection in the model's expert histogram. */
sn_status sn_moe_forward(sn_moe *mo, const sn_moe_layer *L, const float *x, int64_t T, float *out, sn_err *err);

/* The gating's softmax as ggml_soft_max computes one row on this CPU (ggml_v_expf over blocks of
 * lanes (sn_ops.lanes) summed in double, expf for the tail): y may be x. Exposed for the tests. */
void sn_moe_softmax(float *y, const float *x, int64_t n, int lanes);
/* The n_used largest of p[0..n) into sel, largest first; ties: lower index first. */
void sn_moe_top_k(const float *p, int64_t n, int64_t n_used, int32_t *sel);

#endif
