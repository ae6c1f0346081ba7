/* model_llama.c - the forward pass of the Llama family: llama (incl. Llama-3 rope_freqs and
 * linear/YaRN rope scaling, Mistral), qwen2 (q/k/v biases, NEOX rope) and qwen3 (per-head q/k
 * RMSNorm, explicit head size), and their mixtures of experts: qwen3moe and Mixtral (llama with
 * expert_count > 0), whose feed-forward is the shared MoE block of moe.h. Reads top to bottom like
 * the paper:
 *
 *   x = embed(token)
 *   per layer:  h = sn_ops_rmsnorm(x) * attn_norm;  q,k,v = Wq h, Wk h, Wv h (+ biases)
 *               [qwen3: q,k = rmsnorm per head * q_norm/k_norm];  rope(q, k);  cache k, v
 *               x += Wo attention(q, K, V)
 *               h = sn_ops_rmsnorm(x) * ffn_norm;  x += Wdown (silu(Wgate h) * Wup h)
 *   logits = Wout (sn_ops_rmsnorm(x_last) * output_norm)
 *
 * Numerics follow llama.cpp's CPU graph (see kernels.h for the matmuls): f32 everywhere else,
 * sums of squares in double, RoPE angles built by repeated multiplication, and attention as
 * ggml's flash-attention kernel (llama.cpp enables it on CPU by default): for batches under 64
 * tokens each query is converted to the K cache type, scores are f16 dot products and the
 * weighted V sum is accumulated in f16; batches of 64+ use the tiled f32 path, and a single token
 * over 512+ cache cells is summed in one chunk of keys per thread and the chunks combined in
 * order, as ggml does (the chunks run one after another here: only the rounding is mirrored).
 * The attention itself is model_llama_attn.c; the state both files share, model_llama.h.
 * The loader places the matrices this file declares (weights.c: repacked or copied into huge pages,
 * or read in place from the mapping); f16/bf16 vectors are converted to f32 once. */
#include "model_llama.h"
#include "populate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- loading ---- */

void sn_llama_free(sn_model *m) {
    llama_state *s = m->impl;
    free(s->layers);
    if (!s->kv_mem) { free(s->kcache); free(s->vcache); }
    free(s->logits_tmp); free(s->kt32); free(s->v32);
    free(s->swa_layers); free(s->swa_kv_cap); free(s->swa_kv_off);
    sn_moe_free(&s->moe);
    sn_ops_free(&s->ops);
    if (s->scratch) {
        for (int i = 0; i < sn_pool_size(m->pool); i++) {
            free(s->scratch[i].q16); free(s->scratch[i].vkq16); free(s->scratch[i].vkq32);
            free(s->scratch[i].kq); free(s->scratch[i].kf); free(s->scratch[i].vkqf);
            free(s->scratch[i].ms);
        }
        free(s->scratch);
    }
}

static float yarn_corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base) {
    return n_dims * logf(n_ctx_orig / (n_rot * 2 * (float)M_PI)) / (2 * logf(base));
}

static sn_status load_layer(sn_model *m, int il, sn_err *err) {
    llama_state *s = m->impl;
    const llama_hparams *hp = &s->hp;
    layer_weights *L = &s->layers[il];
    sn_status st;
    const int qwen3 = (m->opts & SN_OPT_QK_NORM) != 0;
#define MAT(name, n_in, n_out, dst) \
    if ((st = sn_model_matrix(m, il, name, SN_NE(n_in, n_out), 1, &L->dst, err))) return st
#define VEC(name, n, required, dst) \
    if ((st = sn_model_vector(m, il, name, SN_NE(n), required, &L->dst, err))) return st
    const int64_t E = hp->n_embd, n_v = hp->n_head_kv * hp->head_dim_v, n_vd = hp->n_head * hp->head_dim_v;
    VEC("attn_norm.weight", E, 1, attn_norm);
    VEC("ffn_norm.weight", E, 1, ffn_norm);
    MAT("attn_q.weight", E, s->n_q, wq);
    MAT("attn_k.weight", E, s->n_kv, wk);
    MAT("attn_v.weight", E, n_v, wv);
    MAT("attn_output.weight", n_vd, E, wo);
    if (hp->n_expert > 0) {
        if ((st = sn_moe_load_layer(m, il, &s->moe.p, &L->moe, err))) return st;
    } else {
        MAT("ffn_gate.weight", E, hp->n_ff, w_gate);
        MAT("ffn_up.weight", E, hp->n_ff, w_up);
        MAT("ffn_down.weight", hp->n_ff, E, w_down);
    }
    /* Optional biases: qwen2 has q/k/v biases; any llama GGUF may carry them. */
    VEC("attn_q.bias", s->n_q, 0, bq);
    VEC("attn_k.bias", s->n_kv, 0, bk);
    VEC("attn_v.bias", n_v, 0, bv);
    VEC("attn_output.bias", E, 0, bo);
    VEC("attn_q_norm.weight", hp->head_dim_k, qwen3, q_norm);
    VEC("attn_k_norm.weight", hp->head_dim_k, qwen3, k_norm);
#undef MAT
#undef VEC
    /* Tensors we would silently ignore must not exist. */
    static const char *const unsupported[] = {"attn_qkv.weight", "ffn_gate.bias", "ffn_up.bias", "ffn_down.bias",
                                 "ffn_gate_inp.weight", "ffn_gate_exps.bias", "ffn_up_exps.bias",
                                 "ffn_down_exps.bias", "ffn_gate_shexp.weight"};
    const size_t n_unsupported = sizeof(unsupported) / sizeof(unsupported[0]);
    for (size_t i = 0; i < n_unsupported; i++) {
        if (hp->n_expert > 0 && !strcmp(unsupported[i], "ffn_gate_inp.weight")) continue;
        const char *name = sn_model_layer_name(m, il, unsupported[i]);
        if (sn_model_find_tensor(m, name))
            return sn_err_set(err, SN_EUNSUPPORTED, "%s: tensor %s is not supported by sunny-run", m->path, name);
    }
    return SN_OK;
}

/* Expert counts as llama.cpp reads them: expert_count (0 or absent: a dense model; required by
 * SN_OPT_MOE rows), expert_used_count in 1..expert_count; the experts' width is feed_forward_length
 * (llama) or expert_feed_forward_length, else feed_forward_length / expert_used_count (qwen3moe). */
static sn_status read_experts(const sn_model *m, llama_hparams *hp, sn_err *err) {
    sn_status st;
    hp->n_expert = hp->n_expert_used = 0;
    hp->n_ff_exp = hp->n_ff;
    const int moe = (m->opts & SN_OPT_MOE) != 0;
    if ((st = sn_model_key_int(m, "expert_count", moe, moe ? 1 : 0, 1024, &hp->n_expert, err))) return st;
    if (hp->n_expert == 0) return SN_OK;
    if ((st = sn_model_key_int(m, "expert_used_count", 1, 1, hp->n_expert, &hp->n_expert_used, err))) return st;
    if (moe) {
        hp->n_ff_exp = hp->n_ff / hp->n_expert_used;
        if ((st = sn_model_key_int(m, "expert_feed_forward_length", 0, 1, (int64_t)1 << 24, &hp->n_ff_exp, err)))
            return st;
        if (hp->n_ff_exp < 1)
            return sn_err_set(err, SN_EFORMAT, "%s: %s.expert_feed_forward_length is missing", m->path, m->hp.arch);
    }
    return SN_OK;
}

sn_status sn_llama_attn_sizes(const sn_model *m, llama_hparams *hp, sn_err *err) {
    sn_status st;
    const int64_t BIG = (int64_t)1 << 24;
    hp->n_vocab = m->hp.n_vocab;
    hp->n_ctx_train = m->hp.n_ctx_train;
    hp->n_embd = m->hp.n_embd;
    hp->n_layer = m->hp.n_layer;
    /* optional for the experts' rows (qwen35moe writes none), as llama.cpp's loader reads it */
    hp->n_ff = 0;
    const int ff_req = !(m->opts & SN_OPT_MOE);
    if ((st = sn_model_key_int(m, "feed_forward_length", ff_req, ff_req, BIG, &hp->n_ff, err))) return st;
    if ((st = sn_model_key_int(m, "attention.head_count", 1, 1, 4096, &hp->n_head, err))) return st;
    hp->n_head_kv = hp->n_head;
    if ((st = sn_model_key_int(m, "attention.head_count_kv", 0, 1, 4096, &hp->n_head_kv, err))) return st;
    hp->head_dim_k = hp->n_embd / hp->n_head;
    hp->head_dim_v = hp->n_embd / hp->n_head;
    if ((st = sn_model_key_int(m, "attention.key_length", 0, 1, 65536, &hp->head_dim_k, err))) return st;
    if ((st = sn_model_key_int(m, "attention.value_length", 0, 1, 65536, &hp->head_dim_v, err))) return st;
    hp->n_rot = hp->head_dim_k;
    if ((st = sn_model_key_int(m, "rope.dimension_count", 0, 0, 65536, &hp->n_rot, err))) return st;
    if (hp->n_head % hp->n_head_kv != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: attention.head_count %lld is not a multiple of head_count_kv %lld",
                          m->path, (long long)hp->n_head, (long long)hp->n_head_kv);
    if (hp->n_rot > hp->head_dim_k || hp->n_rot % 2 != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: rope.dimension_count %lld must be even and <= head size %lld",
                          m->path, (long long)hp->n_rot, (long long)hp->head_dim_k);
    return SN_OK;
}

sn_status sn_llama_read_hparams(const sn_model *m, llama_hparams *hp, sn_err *err) {
    sn_status st;
    if ((st = sn_llama_attn_sizes(m, hp, err))) return st;
    if ((m->opts & SN_OPT_FULL_ROT) && hp->n_rot != hp->head_dim_k)
        return sn_err_set(err, SN_EFORMAT, "%s: invalid n_rot %lld, expected %lld", m->path,
                          (long long)hp->n_rot, (long long)hp->head_dim_k);

    hp->rms_eps = 1e-5f;
    if ((st = sn_model_key_eps(m, "attention.layer_norm_rms_epsilon", &hp->rms_eps, err))) return st;

    hp->rope_freq_base = 10000.0f;
    if ((st = sn_model_key_float(m, "rope.freq_base", 0, &hp->rope_freq_base, err))) return st;
    if (!(hp->rope_freq_base > 0.0f))
        return sn_err_set(err, SN_EFORMAT, "%s: %s.rope.freq_base must be > 0", m->path, m->hp.arch);

    /* Scaling type: absent means "linear" (with factor 1 unless given), as llama.cpp reads it. */
    hp->rope_scaling = ROPE_SCALING_LINEAR;
    char key[128];
    snprintf(key, sizeof(key), "%s.rope.scaling.type", m->hp.arch);
    char *stype = sn_gguf_str_dup(m->g, key);
    if (stype) {
        if (strcmp(stype, "none") == 0) hp->rope_scaling = ROPE_SCALING_NONE;
        else if (strcmp(stype, "linear") == 0) hp->rope_scaling = ROPE_SCALING_LINEAR;
        else if (strcmp(stype, "yarn") == 0) hp->rope_scaling = ROPE_SCALING_YARN;
        else {
            st = sn_err_set(err, SN_EUNSUPPORTED, "%s: rope scaling type '%s' is not supported (none, linear, yarn)",
                            m->path, stype);
            free(stype);
            return st;
        }
        free(stype);
    }
    float factor = 0.0f;
    snprintf(key, sizeof(key), "%s.rope.scaling.factor", m->hp.arch);
    if (sn_gguf_find_key(m->g, key) >= 0) {
        if ((st = sn_model_key_float(m, "rope.scaling.factor", 0, &factor, err))) return st;
    } else if ((st = sn_model_key_float(m, "rope.scale_linear", 0, &factor, err))) {
        return st;
    }
    if (factor < 0.0f) return sn_err_set(err, SN_EFORMAT, "%s: rope scaling factor %g < 0", m->path, factor);
    hp->rope_freq_scale = factor == 0.0f ? 1.0f : 1.0f / factor;
    if (hp->rope_scaling == ROPE_SCALING_NONE) hp->rope_freq_scale = 1.0f;

    hp->n_ctx_orig_yarn = hp->n_ctx_train;
    if ((st = sn_model_key_int(m, "rope.scaling.original_context_length", 0, 1, (int64_t)1 << 31, &hp->n_ctx_orig_yarn, err)))
        return st;
    float rope_attn_factor = 1.0f, ext = -1.0f, yattn = 1.0f, log_mul = 0.0f;
    hp->yarn_beta_fast = 32.0f;
    hp->yarn_beta_slow = 1.0f;
    if ((st = sn_model_key_float(m, "rope.scaling.attn_factor", 0, &rope_attn_factor, err))) return st;
    if ((st = sn_model_key_float(m, "rope.scaling.yarn_ext_factor", 0, &ext, err))) return st;
    if ((st = sn_model_key_float(m, "rope.scaling.yarn_attn_factor", 0, &yattn, err))) return st;
    if ((st = sn_model_key_float(m, "rope.scaling.yarn_beta_fast", 0, &hp->yarn_beta_fast, err))) return st;
    if ((st = sn_model_key_float(m, "rope.scaling.yarn_beta_slow", 0, &hp->yarn_beta_slow, err))) return st;
    if ((st = sn_model_key_float(m, "rope.scaling.yarn_log_multiplier", 0, &log_mul, err))) return st;
    /* Resolve the YaRN factors the way llama_context does. */
    if (ext < 0.0f) ext = hp->rope_scaling == ROPE_SCALING_YARN ? 1.0f : 0.0f;
    if (ext != 0.0f) {
        const float f = 1.0f / hp->rope_freq_scale;
        float ms = f <= 1.0f ? 1.0f : 0.1f * logf(f) + 1.0f;
        if (log_mul != 0.0f) {
            const float ms_all = f <= 1.0f ? 1.0f : 0.1f * log_mul * logf(f) + 1.0f;
            ms = ms / ms_all;
        }
        yattn = ms;
        yattn *= 1.0f / (1.0f + 0.1f * logf(f));
    }
    yattn *= rope_attn_factor;
    hp->yarn_ext_factor = ext;
    hp->yarn_attn_factor = yattn;
    hp->attn_scale = 0.0f;
    if ((st = sn_model_key_float(m, "attention.scale", 0, &hp->attn_scale, err))) return st;
    return read_experts(m, hp, err);
}

sn_status sn_llama_swa_init(const sn_model *m, llama_state *s, int64_t n_swa, int64_t pattern, sn_err *err) {
    const int64_t L = s->hp.n_layer;
    s->swa_layers = calloc((size_t)L, 1);
    s->swa_kv_cap = malloc((size_t)L * sizeof *s->swa_kv_cap);
    s->swa_kv_off = malloc((size_t)L * sizeof *s->swa_kv_off);
    if (!s->swa_layers || !s->swa_kv_cap || !s->swa_kv_off) return sn_err_set(err, SN_ENOMEM, "out of memory");
    /* the pattern key is an integer, or per layer a flag (bool / 32-bit integer, nonzero = sliding) */
    char key[128];
    snprintf(key, sizeof key, "%s.attention.sliding_window_pattern", m->hp.arch);
    const int64_t ki = sn_gguf_find_key(m->g, key);
    const unsigned char *flags = NULL;
    size_t esz = 0;
    if (ki >= 0 && sn_gguf_kv_type(m->g, ki) == SN_GGUF_ARR) {
        const sn_gguf_type t = sn_gguf_arr_type(m->g, ki);
        esz = t == SN_GGUF_BOOL ? 1 : t == SN_GGUF_I32 || t == SN_GGUF_U32 ? 4 : 0;
        if (!esz || sn_gguf_arr_n(m->g, ki) != (uint64_t)L)
            return sn_err_set(err, SN_EFORMAT, "%s: %s must be an integer or an array of %lld per-layer flags "
                              "(bool or 32-bit integers)", m->path, key, (long long)L);
        flags = sn_gguf_arr_data(m->g, ki);
    } else {
        sn_status st = sn_model_key_int(m, "attention.sliding_window_pattern", 0, 0, 4096, &pattern, err);
        if (st) return st;
    }
    const int64_t ring = n_swa + SN_UBATCH < m->n_ctx ? n_swa + SN_UBATCH : m->n_ctx;
    for (int64_t il = 0; il < L; il++) {
        int flag = 0; /* a flag's bytes, whatever their order */
        for (size_t b = 0; flags && b < esz; b++) flag |= flags[(size_t)il * esz + b] != 0;
        s->swa_layers[il] = n_swa > 0 && (flags ? flag : pattern == 0 || il % pattern < pattern - 1);
        s->swa_kv_cap[il] = s->swa_layers[il] ? ring : m->n_ctx;
    }
    s->swa = n_swa > 0 ? s->swa_layers : NULL;
    s->n_swa = n_swa;
    s->kv_cap = s->swa_kv_cap;
    s->kv_off = s->swa_kv_off;
    return SN_OK;
}

sn_status sn_llama_hybrid_sizes(const sn_model *m, llama_state *s, sn_err *err) {
    llama_hparams *hp = &s->hp;
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
    char key[128];
    snprintf(key, sizeof key, "%s.attention.head_count_kv", m->hp.arch);
    const int64_t i = sn_gguf_find_key(m->g, key);
    if (i < 0 || sn_gguf_kv_type(m->g, i) != SN_GGUF_ARR ||
        (sn_gguf_arr_type(m->g, i) != SN_GGUF_I32 && sn_gguf_arr_type(m->g, i) != SN_GGUF_U32) ||
        sn_gguf_arr_n(m->g, i) != (uint64_t)nl)
        return sn_err_set(err, SN_EFORMAT, "%s: %s must be an array of %lld 32-bit integers (0 for a recurrent layer)",
                          m->path, key, (long long)nl);
    const int32_t *kv = sn_gguf_arr_data(m->g, i);
    if (!(s->swa_kv_cap = calloc((size_t)nl, sizeof *s->swa_kv_cap)) ||
        !(s->swa_kv_off = calloc((size_t)nl, sizeof *s->swa_kv_off)))
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    hp->n_head_kv = 0;
    for (int64_t il = 0; il < nl; il++) {
        if (kv[il] != 0 && (kv[il] < 0 || hp->n_head % kv[il] || (hp->n_head_kv && kv[il] != hp->n_head_kv)))
            return sn_err_set(err, SN_EUNSUPPORTED, "%s: layer %lld has %d kv heads: sunny-run takes one kv head count "
                              "dividing head_count %lld for all attention layers", m->path, (long long)il, kv[il],
                              (long long)hp->n_head);
        if (kv[il]) hp->n_head_kv = kv[il];
        s->swa_kv_cap[il] = kv[il] ? m->n_ctx : 0;
    }
    if (!hp->n_head_kv) hp->n_head_kv = hp->n_head; /* no attention layer */
    s->kv_cap = s->swa_kv_cap;
    s->kv_off = s->swa_kv_off;
    s->n_q = hp->n_head * hp->head_dim_k;
    s->n_kv = hp->n_head_kv * hp->head_dim_k;
    return SN_OK;
}

sn_status sn_llama_hybrid_state(sn_model *m, llama_state *s, const char *name, uint64_t extra, float **extra_out,
                                sn_err *err) {
    uint64_t kv_bytes;
    sn_status st = sn_llama_kv_layout(m, s, &kv_bytes, err);
    if (st) return st;
    const uint64_t nl = (uint64_t)m->hp.n_layer, kv_floats = (kv_bytes + 3) / 4;
    const sn_state_decl decl = {1, {name}, {(kv_floats + extra + nl - 1) / nl}};
    if ((st = sn_model_state_declare(m, &decl, err))) return st;
    *extra_out = m->state + kv_floats;
    s->kv_mem = m->state;
    return sn_llama_alloc_cache(m, s, err);
}

sn_status sn_llama_load_attn(sn_model *m, llama_state *s, int il, int biases, sn_err *err) {
    layer_weights *L = &s->layers[il];
    const int64_t E = s->hp.n_embd;
    sn_status st = sn_model_vector(m, il, "attn_norm.weight", SN_NE(E), 1, &L->attn_norm, err);
    if (!st) st = sn_model_matrix(m, il, "attn_q.weight", SN_NE(E, s->n_q), 1, &L->wq, err);
    if (!st) st = sn_model_matrix(m, il, "attn_k.weight", SN_NE(E, s->n_kv), 1, &L->wk, err);
    if (!st) st = sn_model_matrix(m, il, "attn_v.weight", SN_NE(E, s->n_kv), 1, &L->wv, err);
    if (!st) st = sn_model_matrix(m, il, "attn_output.weight", SN_NE(s->n_q, E), 1, &L->wo, err);
    if (!st && biases) st = sn_model_vector(m, il, "attn_q.bias", SN_NE(s->n_q), 0, &L->bq, err);
    if (!st && biases) st = sn_model_vector(m, il, "attn_k.bias", SN_NE(s->n_kv), 0, &L->bk, err);
    if (!st && biases) st = sn_model_vector(m, il, "attn_v.bias", SN_NE(s->n_kv), 0, &L->bv, err);
    return st;
}

sn_status sn_llama_load_io(sn_model *m, llama_state *s, int head_required, sn_err *err) {
    const int64_t E = s->hp.n_embd;
    sn_status st = sn_model_matrix(m, SN_MODEL_GLOBAL, "token_embd.weight", SN_NE(E, s->hp.n_vocab), 1, &s->tok_embd, err);
    if (!st) st = sn_model_vector(m, SN_MODEL_GLOBAL, "output_norm.weight", SN_NE(E), 1, &s->output_norm, err);
    if (!st) st = sn_model_output_head(m, &s->tok_embd, head_required, &s->output, err);
    return st;
}

/* Makes the tiled attention's f32 K / V copies hold ld positions (at least twice what they held,
 * up to the context), faulted in here rather than by the pool's first pass over them. */
sn_status sn_llama_reserve_kv32(const sn_model *m, llama_state *s, int64_t ld, sn_err *err) {
    const llama_hparams *hp = &s->hp;
    const uint64_t per = (uint64_t)(hp->n_head_kv * hp->head_dim_k);
    if (per * (uint64_t)ld <= s->kv32_cap) return SN_OK;
    const int64_t most = (m->n_ctx + FA_TILE - 1) / FA_TILE * FA_TILE;
    const int64_t grown = (int64_t)(s->kv32_cap / per) * 2;
    if (grown > ld) ld = grown < most ? grown : most > ld ? most : ld;
    const uint64_t need = per * (uint64_t)ld;
    free(s->kt32);
    free(s->v32);
    s->kv32_cap = 0;
    s->kt32 = malloc(need * sizeof(float));
    s->v32 = malloc(need * sizeof(float));
    if (!s->kt32 || !s->v32) return sn_err_set(err, SN_ENOMEM, "out of memory (attention)");
    sn_populate(s->kt32, need * sizeof(float));
    sn_populate(s->v32, need * sizeof(float));
    s->kv32_cap = need;
    return SN_OK;
}

/* The widest input row of a matmul (sn_ops_init). */
static int64_t widest_input(const llama_hparams *hp) {
    const int64_t n_vd = hp->n_head * hp->head_dim_v;
    return hp->n_ff > n_vd ? (hp->n_ff > hp->n_embd ? hp->n_ff : hp->n_embd) : (n_vd > hp->n_embd ? n_vd : hp->n_embd);
}

sn_status sn_llama_load_hparams(const sn_model *m, llama_state *s, int experts_ok, sn_err *err) {
    llama_hparams *hp = &s->hp;
    sn_status st = sn_llama_read_hparams(m, hp, err);
    if (st) return st;
    if (hp->head_dim_k != hp->head_dim_v)
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: key head size %lld != value head size %lld", m->path,
                          (long long)hp->head_dim_k, (long long)hp->head_dim_v);
    if (hp->n_expert > 0 && !experts_ok)
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: %s with experts is not supported by sunny-run", m->path,
                          m->hp.arch);
    s->n_q = hp->n_head * hp->head_dim_k;
    s->n_kv = hp->n_head_kv * hp->head_dim_k;
    return SN_OK;
}

static sn_status llama_load(sn_model *m, sn_err *err) {
    llama_state *s = m->impl;
    llama_hparams *hp = &s->hp;
    sn_status st;
    if ((st = sn_llama_load_hparams(m, s, 1, err))) return st;
    const int64_t E = hp->n_embd, F = hp->n_expert > 0 ? 1 : hp->n_ff, n_vd = hp->n_head * hp->head_dim_v;
    const sn_ops_buf bufs[] = {{&s->x, E, 0},   {&s->xb, E, 0},  {&s->q, s->n_q, 0},
                               {&s->k, s->n_kv, 0}, {&s->v, hp->n_head_kv * hp->head_dim_v, 0},
                               {&s->att, n_vd, 0},  {&s->hb, F, 0}, {&s->hb2, F, 0},
                               {&s->rope, hp->n_rot > 0 ? hp->n_rot : 1, 0}, {&s->moe_out, E, 0}};
    if ((st = sn_ops_init(&s->ops, m, bufs, (int)(sizeof(bufs) / sizeof(bufs[0])), widest_input(hp), err))) return st;
    if (hp->n_expert > 0) {
        const sn_moe_params mp = {.n_embd = E, .n_expert = hp->n_expert, .n_used = hp->n_expert_used,
                                  .n_ff_exp = hp->n_ff_exp, .gating = SN_MOE_SOFTMAX, .norm_w = 1};
        if ((st = sn_moe_init(&s->moe, m, &mp, err))) return st;
    }

    if ((st = sn_llama_load_io(m, s, 0, err))) return st;
    if ((st = sn_model_vector(m, SN_MODEL_GLOBAL, "rope_freqs.weight", SN_NE(hp->n_rot / 2), 0, &s->rope_freqs, err)))
        return st;
    if (!(s->layers = calloc((size_t)hp->n_layer, sizeof(*s->layers)))) return sn_err_set(err, SN_ENOMEM, "out of memory");
    if ((st = sn_model_each_layer(m, load_layer, err))) return st;
    sn_llama_rope_init(m, s);
    return sn_llama_alloc_cache(m, s, err);
}

void sn_llama_rope_init(const sn_model *m, llama_state *s) {
    const llama_hparams *hp = &s->hp;
    /* RoPE constants as ggml_rope_ext computes them. */
    s->neox = (m->opts & SN_OPT_ROPE_NEOX) != 0; /* qwen2/qwen3: NEOX; llama: normal */
    const int n_dims = (int)hp->n_rot;
    s->theta_scale = powf(hp->rope_freq_base, -2.0f / n_dims);
    if (n_dims > 0) {
        const float start = floorf(yarn_corr_dim(n_dims, (int)hp->n_ctx_orig_yarn, hp->yarn_beta_fast, hp->rope_freq_base));
        const float end = ceilf(yarn_corr_dim(n_dims, (int)hp->n_ctx_orig_yarn, hp->yarn_beta_slow, hp->rope_freq_base));
        s->corr_dims[0] = fmaxf(0.0f, start);
        s->corr_dims[1] = fminf((float)(n_dims - 1), end);
    }
    s->kq_scale = hp->attn_scale != 0.0f ? hp->attn_scale : 1.0f / sqrtf((float)hp->head_dim_k);
}

sn_status sn_llama_kv_layout(const sn_model *m, llama_state *s, uint64_t *bytes, sn_err *err) {
    const llama_hparams *hp = &s->hp;
    s->kv_elt = m->params.kv_type == SN_KV_F32 ? 4 : 2;
    /* rows: n_ctx per layer, or the family's per-layer ring sizes (kv_cap) */
    uint64_t rows = 0;
    for (int64_t il = 0; il < hp->n_layer; il++) {
        if (s->kv_cap) s->kv_off[il] = rows;
        rows += s->kv_cap ? (uint64_t)s->kv_cap[il] : (uint64_t)m->n_ctx;
    }
    s->kv_rows = rows;
    const uint64_t kv_elems = rows * (uint64_t)s->n_kv;
    if ((rows && kv_elems / rows != (uint64_t)s->n_kv) || kv_elems > ((uint64_t)1 << 40))
        return sn_err_set(err, SN_ENOMEM, "KV cache too large");
    /* Linux overcommits: a cache larger than RAM would "allocate" and fail later, so refuse it now */
    const long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    const uint64_t kv_bytes = 2 * kv_elems * s->kv_elt;
    if (pages > 0 && psize > 0 && kv_bytes > (uint64_t)pages * (uint64_t)psize)
        return sn_err_set(err, SN_ENOMEM, "a context of %lld tokens needs a %llu MB KV cache, more than this "
                          "machine's %llu MB of RAM; use a smaller -c", (long long)m->n_ctx,
                          (unsigned long long)(kv_bytes >> 20),
                          (unsigned long long)((uint64_t)pages * (uint64_t)psize >> 20));
    *bytes = kv_bytes;
    return SN_OK;
}

sn_status sn_llama_alloc_cache(sn_model *m, llama_state *s, sn_err *err) {
    const llama_hparams *hp = &s->hp;
    uint64_t kv_bytes;
    sn_status st = sn_llama_kv_layout(m, s, &kv_bytes, err);
    if (st) return st;
    if (s->kv_mem) { /* the family's memory: [K rows][V rows] */
        s->kcache = s->kv_mem;
        s->vcache = (char *)s->kv_mem + kv_bytes / 2;
    } else {
        s->kcache = malloc(kv_bytes / 2);
        s->vcache = malloc(kv_bytes / 2);
        if (!s->kcache || !s->vcache)
            return sn_err_set(err, SN_ENOMEM, "out of memory allocating the KV cache (%llu MB); try a smaller -c",
                              (unsigned long long)(kv_bytes >> 20));
        /* faulted in now, as llama.cpp clears its cache buffer when the context is made: the evals
         * then pay no page faults for positions they reach (a fault costs microseconds under a
         * hypervisor) */
        sn_populate(s->kcache, kv_bytes / 2);
        sn_populate(s->vcache, kv_bytes / 2);
    }

    const int nth = sn_pool_size(m->pool);
    s->scratch = calloc((size_t)nth, sizeof(*s->scratch));
    if (!s->scratch) return sn_err_set(err, SN_ENOMEM, "out of memory");
    for (int i = 0; i < nth; i++) {
        attn_scratch *a = &s->scratch[i];
        a->q16 = malloc((size_t)(hp->n_head * hp->head_dim_k) * 2);
        a->vkq16 = malloc((size_t)(hp->n_head * hp->head_dim_v) * 2);
        a->vkq32 = malloc((size_t)((hp->n_head > 4 ? hp->n_head : 4) * hp->head_dim_v) * 4); /* and 4 tiled rows */
        a->ms = malloc((size_t)hp->n_head * 4 * sizeof(float));
        a->kq = malloc(4 * FA_TILE * 4); /* scores of two key tiles (kq_tile128), or of 4 rows */
        a->kf = malloc((size_t)hp->head_dim_k * 4);
        a->vkqf = malloc((size_t)(hp->n_head * hp->head_dim_v) * 4);
        if (!a->q16 || !a->vkq16 || !a->vkq32 || !a->kq || !a->kf || !a->vkqf || !a->ms)
            return sn_err_set(err, SN_ENOMEM, "out of memory");
    }
    s->logits_tmp = NULL;
    /* the tiled attention's copies for a whole micro-batch at the start of the context */
    const int64_t ub = m->n_ctx < SN_UBATCH ? m->n_ctx : SN_UBATCH;
    return ub >= FA_TILE ? sn_llama_reserve_kv32(m, s, (ub + FA_TILE - 1) / FA_TILE * FA_TILE, err) : SN_OK;
}

/* ---- elementwise pieces, as ggml computes them ---- */

static void rope_yarn(float theta_extrap, float freq_scale, const float corr_dims[2], int64_t i0, float ext_factor,
                      float mscale, float *cos_theta, float *sin_theta) {
    const float theta_interp = freq_scale * theta_extrap;
    float theta = theta_interp;
    if (ext_factor != 0.0f) {
        const float y = (i0 / 2 - corr_dims[0]) / fmaxf(0.001f, corr_dims[1] - corr_dims[0]);
        const float ramp = 1 - fminf(1, fmaxf(0, y));
        const float ramp_mix = ramp * ext_factor;
        /* both contracted into FMAs in ggml's x86 build, as in rope_pair */
        theta = fmaf(theta_interp, 1 - ramp_mix, theta_extrap * ramp_mix);
        mscale *= fmaf(logf(1.0f / freq_scale), 0.1f, 1.0f);
    }
    *cos_theta = cosf(theta) * mscale;
    *sin_theta = sinf(theta) * mscale;
}

/* cos/sin pairs for position p: cache[2i] = cos, cache[2i+1] = sin of pair i. */
static void rope_cache(const sn_model *m, const llama_state *s, int64_t p, float *cache) {
    const llama_hparams *hp = &((const llama_state *)m->impl)->hp;
    float theta = (float)p;
    for (int64_t i0 = 0; i0 < hp->n_rot; i0 += 2) {
        const float ff = s->rope_freqs ? s->rope_freqs[i0 / 2] : 1.0f;
        rope_yarn(theta / ff, hp->rope_freq_scale, s->corr_dims, i0, hp->yarn_ext_factor, hp->yarn_attn_factor,
                  &cache[i0], &cache[i0 + 1]);
        theta *= s->theta_scale;
    }
}

/* Rotates the pairs as ggml's rotate_pairs compiles on x86 (GCC contracts it into FMAs; checked
 * against the zen4 build for head sizes 32/64/128, normal and NEOX):
 *   x0' = fma(x0, cos, -(x1 * sin)),  x1' = fma(x0, sin, x1 * cos). */
static void rope_pair(float *a, float *b, float c, float sn) {
    const float x0 = *a, x1 = *b;
    *a = fmaf(x0, c, -(x1 * sn));
    *b = fmaf(x0, sn, x1 * c);
}

void sn_llama_rope_apply(const llama_state *s, float *x, int64_t n_rot, const float *cache) {
    const int64_t half = n_rot / 2;
    for (int64_t i0 = 0; i0 < n_rot; i0 += 2) {
        if (s->neox) rope_pair(&x[i0 / 2], &x[i0 / 2 + half], cache[i0], cache[i0 + 1]);
        else rope_pair(&x[i0], &x[i0 + 1], cache[i0], cache[i0 + 1]);
    }
}

/* ---- the forward pass over one micro-batch ---- */

/* The per-token steps between the matmuls, each an sn_rows_fn over tokens [t0, t1) so a prompt's
 * tokens split across the pool (sn_ops_rows; one token runs inline). Every token's arithmetic is
 * the same as one at a time: only which thread does it changes. */

/* biases, q/k norms, rope (unless !rope), and the K / V rows into the cache */
static void qkv_rows(const sn_llama_tok *p, int64_t t0, int64_t t1, int rope) {
    sn_model *m = p->m;
    const llama_state *s = p->s;
    const llama_hparams *hp = &s->hp;
    const layer_weights *L = p->L;
    const int64_t nv = hp->n_head_kv * hp->head_dim_v;
    for (int64_t t = t0; t < t1; t++) {
        float *q = s->q + t * s->n_q, *k = s->k + t * s->n_kv, *v = s->v + t * nv;
        if (L->bq) for (int64_t i = 0; i < s->n_q; i++) q[i] += L->bq[i];
        if (L->bk) for (int64_t i = 0; i < s->n_kv; i++) k[i] += L->bk[i];
        if (L->bv) for (int64_t i = 0; i < nv; i++) v[i] += L->bv[i];
        if (L->q_norm) {
            for (int64_t h = 0; h < hp->n_head; h++)
                sn_ops_rmsnorm(q + h * hp->head_dim_k, q + h * hp->head_dim_k, L->q_norm, hp->head_dim_k, hp->rms_eps);
            for (int64_t h = 0; h < hp->n_head_kv; h++)
                sn_ops_rmsnorm(k + h * hp->head_dim_k, k + h * hp->head_dim_k, L->k_norm, hp->head_dim_k, hp->rms_eps);
        }
        const float *rc = s->rope + t * hp->n_rot;
        for (int64_t h = 0; rope && h < hp->n_head; h++) sn_llama_rope_apply(s, q + h * hp->head_dim_k, hp->n_rot, rc);
        for (int64_t h = 0; rope && h < hp->n_head_kv; h++) sn_llama_rope_apply(s, k + h * hp->head_dim_k, hp->n_rot, rc);
        /* store into the cache (f16 rounding as ggml_cpy does) */
        void *kd = (void *)kv_row(s, s->kcache, m->n_ctx, p->il, p->pos0 + t);
        void *vd = (void *)kv_row(s, s->vcache, m->n_ctx, p->il, p->pos0 + t);
        if (s->kv_elt == 2) {
            m->k->quant[SN_GGML_F16](k, kd, s->n_kv);
            m->k->quant[SN_GGML_F16](v, vd, nv);
        } else {
            memcpy(kd, k, (size_t)s->n_kv * 4);
            memcpy(vd, v, (size_t)nv * 4);
        }
    }
}

void sn_llama_pass_qkv(const void *arg, int64_t t0, int64_t t1) { qkv_rows(arg, t0, t1, 1); }

void sn_llama_pass_qkv_norope(const void *arg, int64_t t0, int64_t t1) { qkv_rows(arg, t0, t1, 0); }

void sn_llama_pass_rope_cache(const void *arg, int64_t t0, int64_t t1) {
    const sn_llama_tok *p = arg;
    for (int64_t t = t0; t < t1; t++) rope_cache(p->m, p->s, p->pos0 + t, p->s->rope + t * p->s->hp.n_rot);
}

static void pass_swiglu(const void *arg, int64_t t0, int64_t t1) {
    const sn_llama_tok *p = arg;
    const int64_t F = p->s->hp.n_ff;
    for (int64_t t = t0; t < t1; t++) p->s->ops.k->swiglu(F, p->s->hb + t * F, p->s->hb + t * F, p->s->hb2 + t * F);
}

void sn_llama_pass_resid(const void *arg, int64_t t0, int64_t t1) {
    const resid_pass *p = arg;
    for (int64_t t = t0; t < t1; t++) {
        float *x = p->x + t * p->n, *y = p->y + t * p->n;
        if (p->bias) for (int64_t i = 0; i < p->n; i++) y[i] += p->bias[i];
        for (int64_t i = 0; i < p->n; i++) x[i] = y[i] + x[i];
    }
}

sn_status sn_llama_attn_block(sn_model *m, llama_state *s, const layer_weights *L, int il, int64_t T,
                              sn_rows_fn pass_qkv, const void *arg, sn_err *err) {
    const llama_hparams *hp = &s->hp;
    sn_status st;
    sn_resid_norm an = {.x = s->x, .h = s->xb, .w = L->attn_norm, .n = hp->n_embd, .eps = hp->rms_eps};
    sn_ops_rows(m->pool, T, sn_ops_resid_norm, &an);
    const sn_matrix *wqkv[3] = {&L->wq, &L->wk, &L->wv};
    float *yqkv[3] = {s->q, s->k, s->v};
    if ((st = sn_ops_project(&s->ops, s->xb, T, 3, wqkv, yqkv, err))) return st;
    sn_ops_rows(m->pool, T, pass_qkv, arg);
    if ((st = sn_llama_attention(m, s, il, T, err))) return st;
    const sn_matrix *wo[1] = {&L->wo};
    float *yo[1] = {s->xb};
    return sn_ops_project(&s->ops, s->att, T, 1, wo, yo, err);
}

static sn_status attn_layer(sn_model *m, llama_state *s, sn_llama_tok *tp, int il, int64_t T, sn_rows_fn pass_qkv,
                            sn_err *err) {
    const layer_weights *L = &s->layers[il];
    tp->L = L;
    tp->il = il;
    sn_status st = sn_llama_attn_block(m, s, L, il, T, pass_qkv, tp, err);
    if (st) return st;
    resid_pass ar = {s->x, s->xb, L->bo, s->hp.n_embd};
    sn_ops_rows(m->pool, T, sn_llama_pass_resid, &ar);
    return SN_OK;
}

sn_status sn_llama_attn_layer(sn_model *m, llama_state *s, sn_llama_tok *tp, int il, int64_t T, sn_err *err) {
    return attn_layer(m, s, tp, il, T, sn_llama_pass_qkv, err);
}

sn_status sn_llama_attention(sn_model *m, llama_state *s, int il, int64_t T, sn_err *err) {
    const int64_t pos0 = m->n_past;
    attn_job aj = {m, s, il, T, pos0};
    if (T >= FA_TILE) {
        const int64_t ld = (pos0 + T + FA_TILE - 1) / FA_TILE * FA_TILE;
        sn_status st = sn_llama_reserve_kv32(m, s, ld, err);
        if (st) return st;
        s->kt_ld = ld;
        sn_pool_run(m->pool, sn_llama_prep_worker, &aj);
    }
    sn_pool_run(m->pool, sn_llama_attn_worker, &aj);
    return SN_OK;
}

sn_status sn_llama_ffn_block(sn_model *m, llama_state *s, const layer_weights *L, float *x, int64_t R,
                             sn_rows_fn pass_act, const void *arg, sn_err *err) {
    const llama_hparams *hp = &s->hp;
    sn_status st;
    sn_resid_norm fn = {.x = x, .h = s->xb, .w = L->ffn_norm, .n = hp->n_embd, .eps = hp->rms_eps};
    sn_ops_rows(m->pool, R, sn_ops_resid_norm, &fn);
    const sn_matrix *wgu[2] = {&L->w_gate, &L->w_up};
    float *ygu[2] = {s->hb, s->hb2};
    if ((st = sn_ops_project(&s->ops, s->xb, R, 2, wgu, ygu, err))) return st;
    sn_ops_rows(m->pool, R, pass_act, arg);
    const sn_matrix *wd[1] = {&L->w_down};
    float *yd[1] = {s->xb};
    return sn_ops_project(&s->ops, s->hb, R, 1, wd, yd, err);
}

sn_status sn_llama_forward(sn_model *m, const int32_t *tokens, int64_t T, float *logits,
                           sn_rows_fn (*qkv_of)(int il), sn_err *err) {
    llama_state *s = m->impl;
    const llama_hparams *hp = &((const llama_state *)m->impl)->hp;
    const int64_t E = hp->n_embd, pos0 = m->n_past;
    sn_status st;
    if ((st = sn_ops_begin(&s->ops, T, &s->tok_embd, tokens, &s->x, err))) return st;
    sn_llama_tok tp = {m, s, NULL, 0, pos0};
    if (hp->n_rot > 0) sn_ops_rows(m->pool, T, sn_llama_pass_rope_cache, &tp);

    for (int il = 0; il < hp->n_layer; il++) {
        const layer_weights *L = &s->layers[il];
        if ((st = attn_layer(m, s, &tp, il, T, qkv_of ? qkv_of(il) : sn_llama_pass_qkv, err))) return st;
        /* After the last layer's attention only the rows whose logits are wanted go on (llama.cpp's
         * inp_out_ids): the last token, or none. This also decides which summation order the
         * FFN matmuls use there (single-row vs batched), so it matters for exactness. */
        float *x = s->x;
        int64_t R = T;
        if (il == hp->n_layer - 1) {
            if (!logits) break;
            x = s->x + (T - 1) * E;
            R = 1;
        }
        /* feed-forward */
        if (hp->n_expert > 0) {
            sn_resid_norm fn = {.x = x, .h = s->xb, .w = L->ffn_norm, .n = E, .eps = hp->rms_eps};
            sn_ops_rows(m->pool, R, sn_ops_resid_norm, &fn);
            if ((st = sn_moe_forward(&s->moe, &L->moe, s->xb, R, s->moe_out, err))) return st;
            resid_pass mr = {x, s->moe_out, NULL, E};
            sn_ops_rows(m->pool, R, sn_llama_pass_resid, &mr);
            continue;
        }
        if ((st = sn_llama_ffn_block(m, s, L, x, R, pass_swiglu, &tp, err))) return st;
        resid_pass fr = {x, s->xb, NULL, E};
        sn_ops_rows(m->pool, R, sn_llama_pass_resid, &fr);
    }
    if (!logits) return SN_OK;
    /* only the last token's logits */
    sn_ops_rmsnorm(s->xb, s->x + (T - 1) * E, s->output_norm, E, hp->rms_eps);
    return sn_ops_project1(&s->ops, s->xb, 1, &s->output, logits, err);
}

static sn_status forward(sn_model *m, const int32_t *tokens, int64_t T, float *logits, sn_err *err) {
    return sn_llama_forward(m, tokens, T, logits, NULL, err);
}

static void llama_reset(sn_model *m) { (void)m; /* positions >= n_past are never read */ }

uint64_t sn_llama_state_bytes(const sn_model *m) {
    const llama_state *s = m->impl;
    return 2ull * s->kv_rows * (uint64_t)s->n_kv * s->kv_elt;
}

const sn_family sn_family_llama = {
    .name = "llama",
    .impl_size = sizeof(llama_state),
    .state_kind = SN_STATE_KV,
    .load = llama_load,
    .forward = forward,
    .reset = llama_reset,
    .free = sn_llama_free,
    .state_bytes = sn_llama_state_bytes,
};
