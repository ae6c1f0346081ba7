/* arch_llama.c - the Llama family: LlamaForCausalLM, MistralForCausalLM and MixtralForCausalLM ->
 * "llama", Qwen2ForCausalLM -> "qwen2", Qwen3ForCausalLM -> "qwen3", Qwen3MoeForCausalLM -> "qwen3moe".
 *
 * They share one tensor layout and differ in a few switches, mirroring llama.cpp's converter
 * (conversion/llama.py, qwen.py): llama permutes Q/K rows from HF's rotate-half order to the
 * interleaved order llama.cpp's NORM rope expects and writes vocab_size + rope.dimension_count;
 * qwen2/3 use NEOX rope (no permutation); qwen3 adds per-head q/k norms. Llama-3 "rope_type: llama3"
 * becomes a generated rope_freqs.weight tensor instead of rope scaling keys. The mixture-of-experts
 * members add experts to the same layers (moe.c): Mixtral is a llama with experts (llama.cpp's
 * LlamaModel converts both), Qwen3-MoE a qwen3 whose every layer is sparse. */
#include "arch.h"
#include "moe.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int permute_qk;     /* llama: rope row interleave of q/k weights and biases */
    int qk_norm;        /* qwen3: attn_q_norm / attn_k_norm */
    int llama_kv;       /* llama: {arch}.vocab_size + rope.dimension_count */
    const sn_moe_names *moe; /* how its sparse layers name their experts (NULL: dense only) */
    int all_sparse;     /* qwen3moe: every layer has experts, none a dense FFN */
} family_opts;

static const family_opts *opts_of(const sn_arch *a);

static uint64_t head_dim_of(const sn_hf_config *c) {
    return c->head_dim > 0 ? (uint64_t)c->head_dim : (uint64_t)(c->hidden_size / c->n_heads);
}

/* Qwen3-MoE layers without experts (mlp_only_layers, or decoder_sparse_step > 1 as transformers
 * reads it: layer i is sparse when it is not listed and (i + 1) % step == 0): llama.cpp's qwen3moe
 * has experts in every layer, its converter maps no dense FFN for it and its loader requires
 * ffn_gate_inp in each layer, so such a model has no GGUF llama.cpp reads correctly. */
static sn_status check_all_sparse(const sn_hf_config *c, sn_err *err) {
    double step = 1;
    if (sn_hf_config_get_num(c, "decoder_sparse_step", &step) && (step < 1 || step > 1e9 || step != (int64_t)step))
        return sn_err_set(err, SN_EFORMAT, "config.json: decoder_sparse_step %g is not a positive integer", step);
    const cJSON *only = c->root ? cJSON_GetObjectItemCaseSensitive(c->root, "mlp_only_layers") : NULL;
    for (int64_t i = 0; i < c->n_layers; i++) {
        int dense = (i + 1) % (int64_t)step != 0;
        for (const cJSON *x = cJSON_IsArray(only) ? only->child : NULL; x; x = x->next)
            if (cJSON_IsNumber(x) && x->valuedouble == (double)i) dense = 1;
        if (dense)
            return sn_err_set(err, SN_EUNSUPPORTED, "config.json: layer %lld has a dense MLP instead of experts "
                              "(mlp_only_layers / decoder_sparse_step); llama.cpp's qwen3moe needs experts in every "
                              "layer, so it cannot read this model", (long long)i);
    }
    return SN_OK;
}

static sn_status check_config(const sn_arch *a, const sn_hf_config *c, sn_err *err) {
    const char *f = "config.json";
    const sn_arch_value req[] = {
        {"\"hidden_size\"", c->hidden_size}, {"\"num_hidden_layers\"", c->n_layers},
        {"\"num_attention_heads\"", c->n_heads}, {"\"num_key_value_heads\"", c->n_kv_heads},
        {"\"intermediate_size\"", c->intermediate_size}, {"\"vocab_size\"", c->vocab_size},
    };
    sn_status st = sn_arch_check_range(req, sizeof req / sizeof *req, 31, err);
    if (st != SN_OK) return st;
    if (c->head_dim > (int64_t)1 << 31)
        return sn_err_set(err, SN_EFORMAT, "%s: \"head_dim\" %lld is out of range", f, (long long)c->head_dim);
    if (c->n_heads % c->n_kv_heads != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: num_attention_heads %lld is not a multiple of num_key_value_heads %lld",
                          f, (long long)c->n_heads, (long long)c->n_kv_heads);
    if (c->head_dim <= 0 && c->hidden_size % c->n_heads != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: hidden_size %lld is not a multiple of num_attention_heads %lld "
                          "and there is no head_dim", f, (long long)c->hidden_size, (long long)c->n_heads);
    uint64_t hd = head_dim_of(c);
    if (opts_of(a)->permute_qk && hd % 2 != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: head dimension %llu is odd; rope needs an even one", f,
                          (unsigned long long)hd);
    if (c->rope_scaling == SN_ROPE_SCALING_YARN && c->rope_factor > 0 && c->rope_orig_ctx < 0)
        return sn_err_set(err, SN_EFORMAT, "%s: yarn rope scaling without original_max_position_embeddings", f);
    const family_opts *o = opts_of(a);
    if (o->moe && (o->all_sparse || sn_moe_is_sparse(o->moe, c))) {
        sn_moe_dims d;
        SN_ARCH_TRY(sn_moe_dims_of(o->moe, c, &d, err));
    }
    if (o->all_sparse) SN_ARCH_TRY(check_all_sparse(c, err));
    return SN_OK;
}

/* ---- metadata ---- */

#define kv_u32(w, arch, suffix, v, err) sn_arch_kv_u32(w, arch, suffix, (int64_t)(v), err)
#define kv_f32 sn_arch_kv_f32
#define kv_str sn_arch_kv_str
#define TRY SN_ARCH_TRY

/* TextModel.set_gguf_parameters, in order; each key only when the config (with class defaults)
 * has the field. */
sn_status sn_arch_text_model_kv(const char *A, const sn_hf_config *c, uint32_t file_type, sn_gguf_writer *w,
                                sn_err *err) {
    double d;
    TRY(kv_u32(w, A, "block_count", (uint64_t)c->n_layers, err));
    if (c->max_position_embeddings >= 0) TRY(kv_u32(w, A, "context_length", (uint64_t)c->max_position_embeddings, err));
    if (c->hidden_size >= 0) TRY(kv_u32(w, A, "embedding_length", (uint64_t)c->hidden_size, err));
    if (c->intermediate_size >= 0) TRY(kv_u32(w, A, "feed_forward_length", (uint64_t)c->intermediate_size, err));
    if (c->n_heads >= 0) TRY(kv_u32(w, A, "attention.head_count", (uint64_t)c->n_heads, err));
    if (c->n_kv_heads >= 0) TRY(kv_u32(w, A, "attention.head_count_kv", (uint64_t)c->n_kv_heads, err));
    if (c->root && cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(c->root, "is_causal"))) {
        char key[128];
        snprintf(key, sizeof key, "%s.attention.causal", A);
        sn_status st = sn_gguf_writer_set_bool(w, key, 0);
        if (st != SN_OK) return sn_err_set(err, st, "cannot set %s", key);
    }
    switch (c->rope_scaling) {
    case SN_ROPE_SCALING_LINEAR:
        if (c->rope_factor != 0) {
            TRY(kv_str(w, A, "rope.scaling.type", "linear", err));
            TRY(kv_f32(w, A, "rope.scaling.factor", c->rope_factor, err));
        }
        break;
    case SN_ROPE_SCALING_YARN:
        if (c->rope_factor != 0) {
            TRY(kv_str(w, A, "rope.scaling.type", "yarn", err));
            TRY(kv_f32(w, A, "rope.scaling.factor", c->rope_factor, err));
            TRY(kv_u32(w, A, "rope.scaling.original_context_length", (uint64_t)c->rope_orig_ctx, err));
            if (c->has_yarn_ext_factor) TRY(kv_f32(w, A, "rope.scaling.yarn_ext_factor", c->yarn_ext_factor, err));
            if (c->has_yarn_attn_factor) TRY(kv_f32(w, A, "rope.scaling.yarn_attn_factor", c->yarn_attn_factor, err));
            if (c->has_yarn_beta_fast) TRY(kv_f32(w, A, "rope.scaling.yarn_beta_fast", c->yarn_beta_fast, err));
            if (c->has_yarn_beta_slow) TRY(kv_f32(w, A, "rope.scaling.yarn_beta_slow", c->yarn_beta_slow, err));
        }
        break;
    case SN_ROPE_SCALING_LONGROPE:
        TRY(kv_str(w, A, "rope.scaling.type", "longrope", err));
        break;
    default: break; /* llama3: rope_freqs tensor; others: the reference only warns */
    }
    TRY(sn_arch_kv_mrope_sections(w, A, c, err));
    if (c->has_rope_theta) TRY(kv_f32(w, A, "rope.freq_base", c->rope_theta, err));
    if (c->has_rms_norm_eps) TRY(kv_f32(w, A, "attention.layer_norm_rms_epsilon", c->rms_norm_eps, err));
    static const char *const ln_keys[] = {"layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"};
    for (size_t i = 0; i < 3; i++)
        if (sn_hf_config_get_num(c, ln_keys[i], &d)) {
            TRY(kv_f32(w, A, "attention.layer_norm_epsilon", d, err));
            break;
        }
    TRY(sn_moe_write_counts(A, c, w, err));
    if (c->has_head_dim) {
        TRY(kv_u32(w, A, "attention.key_length", (uint64_t)c->head_dim, err));
        TRY(kv_u32(w, A, "attention.value_length", (uint64_t)c->head_dim, err));
    }
    return kv_u32(w, NULL, "general.file_type", file_type, err);
}

static sn_status write_kv(const sn_arch *a, const sn_hf_config *c, uint32_t file_type, sn_gguf_writer *w,
                          sn_err *err) {
    const char *A = a->gguf_arch;
    TRY(sn_arch_text_model_kv(A, c, file_type, w, err));
    if (opts_of(a)->llama_kv) {
        TRY(kv_u32(w, A, "vocab_size", (uint64_t)c->vocab_size, err));
        TRY(kv_u32(w, A, "rope.dimension_count", head_dim_of(c), err));
    }
    /* Qwen2MoeModel.set_gguf_parameters, after its parent's keys */
    return opts_of(a)->all_sparse ? sn_moe_write_qwen_ff(A, c, w, err) : SN_OK;
}

/* ---- tensors ---- */

/* HF per-layer suffix -> GGUF suffix and expected shape (in terms of config dims). */
enum dimk { D_EMBD, D_Q, D_KV, D_FF, D_HD, D_VOCAB };
typedef struct {
    const char *hf;       /* after "model.layers.N." */
    const char *gguf;     /* after "blk.N." */
    int n_dims;
    enum dimk ne0, ne1;
    int permute;          /* 1: q (n_head), 2: k (n_kv_head) */
    int qk_norm_only;
    int dense_ffn;        /* a dense MLP matrix: not in an all-sparse family */
} layer_entry;

static const layer_entry k_layer[] = {
    {"input_layernorm.weight", "attn_norm.weight", 1, D_EMBD, D_EMBD, 0, 0, 0},
    {"post_attention_layernorm.weight", "ffn_norm.weight", 1, D_EMBD, D_EMBD, 0, 0, 0},
    {"self_attn.q_proj.weight", "attn_q.weight", 2, D_EMBD, D_Q, 1, 0, 0},
    {"self_attn.k_proj.weight", "attn_k.weight", 2, D_EMBD, D_KV, 2, 0, 0},
    {"self_attn.v_proj.weight", "attn_v.weight", 2, D_EMBD, D_KV, 0, 0, 0},
    {"self_attn.o_proj.weight", "attn_output.weight", 2, D_Q, D_EMBD, 0, 0, 0},
    {"self_attn.q_proj.bias", "attn_q.bias", 1, D_Q, D_Q, 1, 0, 0},
    {"self_attn.k_proj.bias", "attn_k.bias", 1, D_KV, D_KV, 2, 0, 0},
    {"self_attn.v_proj.bias", "attn_v.bias", 1, D_KV, D_KV, 0, 0, 0},
    {"self_attn.o_proj.bias", "attn_output.bias", 1, D_EMBD, D_EMBD, 0, 0, 0},
    {"self_attn.q_norm.weight", "attn_q_norm.weight", 1, D_HD, D_HD, 0, 1, 0},
    {"self_attn.k_norm.weight", "attn_k_norm.weight", 1, D_HD, D_HD, 0, 1, 0},
    {"mlp.gate_proj.weight", "ffn_gate.weight", 2, D_EMBD, D_FF, 0, 0, 1},
    {"mlp.up_proj.weight", "ffn_up.weight", 2, D_EMBD, D_FF, 0, 0, 1},
    {"mlp.down_proj.weight", "ffn_down.weight", 2, D_FF, D_EMBD, 0, 0, 1},
    {"mlp.gate_proj.bias", "ffn_gate.bias", 1, D_FF, D_FF, 0, 0, 1},
    {"mlp.up_proj.bias", "ffn_up.bias", 1, D_FF, D_FF, 0, 0, 1},
    {"mlp.down_proj.bias", "ffn_down.bias", 1, D_EMBD, D_EMBD, 0, 0, 1},
};

static uint64_t dim_of(const sn_hf_config *c, enum dimk k) {
    uint64_t hd = head_dim_of(c);
    switch (k) {
    case D_EMBD: return (uint64_t)c->hidden_size;
    case D_Q: return (uint64_t)c->n_heads * hd;
    case D_KV: return (uint64_t)c->n_kv_heads * hd;
    case D_FF: return (uint64_t)c->intermediate_size;
    case D_HD: return hd;
    case D_VOCAB: return (uint64_t)c->vocab_size;
    }
    return 0;
}

static int ends_with(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static void set_shape(sn_arch_tensor *t, int n_dims, uint64_t ne0, uint64_t ne1) {
    t->n_dims = (uint32_t)n_dims;
    for (int i = 0; i < SN_GGUF_MAX_DIMS; i++) t->ne[i] = 1;
    t->ne[0] = ne0;
    if (n_dims > 1) t->ne[1] = ne1;
}

/* Removes every occurrence of `pat` from s (Python str.replace(pat, "")). */
static void remove_all(char *s, const char *pat) {
    size_t L = strlen(pat);
    char *p;
    while ((p = strstr(s, pat)) != NULL) memmove(p, p + L, strlen(p + L) + 1);
}

static int map_tensor(const sn_arch *a, const sn_hf_config *c, const char *hf_in, sn_arch_tensor *out,
                      sn_err *err) {
    const family_opts *o = opts_of(a);
    memset(out, 0, sizeof(*out));
    if (sn_arch_is_multimodal(hf_in)) return SN_ARCH_MAP_SKIP;
    char hf[512];
    snprintf(hf, sizeof hf, "%s", hf_in);
    if (o->llama_kv) remove_all(hf, "text_model."); /* LlamaModel.filter_tensors (SmolVLM) */
    remove_all(hf, "language_model.");
    /* the reference converter drops these buffers */
    if (ends_with(hf, ".attention.masked_bias") || ends_with(hf, ".attention.bias") ||
        ends_with(hf, ".rotary_emb.inv_freq"))
        return SN_ARCH_MAP_SKIP;
    if (strcmp(hf, "model.embed_tokens.weight") == 0) {
        snprintf(out->gguf_name, sizeof out->gguf_name, "token_embd.weight");
        set_shape(out, 2, dim_of(c, D_EMBD), dim_of(c, D_VOCAB));
        return SN_ARCH_MAP_OK;
    }
    if (strcmp(hf, "lm_head.weight") == 0) {
        snprintf(out->gguf_name, sizeof out->gguf_name, "output.weight");
        set_shape(out, 2, dim_of(c, D_EMBD), dim_of(c, D_VOCAB));
        return SN_ARCH_MAP_OK;
    }
    if (strcmp(hf, "model.norm.weight") == 0) {
        snprintf(out->gguf_name, sizeof out->gguf_name, "output_norm.weight");
        set_shape(out, 1, dim_of(c, D_EMBD), 1);
        return SN_ARCH_MAP_OK;
    }
    static const char pfx[] = "model.layers.";
    if (strncmp(hf, pfx, sizeof pfx - 1) == 0) {
        const char *p = hf + sizeof pfx - 1;
        if (isdigit((unsigned char)*p)) {
            uint64_t bid = 0;
            while (isdigit((unsigned char)*p) && bid < 1000000) bid = bid * 10 + (uint64_t)(*p++ - '0');
            if (*p == '.') {
                p++;
                int r = 0;
                if (o->moe && bid < (uint64_t)c->n_layers &&
                    (r = sn_moe_map(o->moe, c, bid, p, hf_in, dim_of(c, D_EMBD), out, err)) != 0)
                    return r;
                for (size_t i = 0; i < sizeof(k_layer) / sizeof(k_layer[0]); i++) {
                    const layer_entry *e = &k_layer[i];
                    if (strcmp(p, e->hf) != 0 || (e->qk_norm_only && !o->qk_norm) || (e->dense_ffn && o->all_sparse))
                        continue;
                    if (bid >= (uint64_t)c->n_layers)
                        return sn_err_set(err, SN_EFORMAT, "tensor '%s' is in layer %llu but config.json has "
                                          "num_hidden_layers = %lld", hf_in, (unsigned long long)bid,
                                          (long long)c->n_layers);
                    snprintf(out->gguf_name, sizeof out->gguf_name, "blk.%llu.%s", (unsigned long long)bid, e->gguf);
                    set_shape(out, e->n_dims, dim_of(c, e->ne0), dim_of(c, e->ne1));
                    if (o->permute_qk && e->permute)
                        out->permute_heads = e->permute == 1 ? (uint64_t)c->n_heads : (uint64_t)c->n_kv_heads;
                    return SN_ARCH_MAP_OK;
                }
            }
        }
    }
    return sn_err_set(err, SN_EUNSUPPORTED, "cannot map tensor '%s' (architecture %s)", hf_in, a->gguf_arch);
}

/* ---- generated tensors ---- */

sn_status sn_arch_llama3_rope_freqs(const sn_hf_config *c, float **out, uint64_t *n, sn_err *err) {
    /* LlamaModel.generate_extra_tensors, in float32 as torch computes it */
    uint64_t dim = head_dim_of(c);
    uint64_t half = (dim + 1) / 2;
    float *v = malloc((half ? half : 1) * sizeof(float));
    if (!v) return sn_err_set(err, SN_ENOMEM, "out of memory");
    float base = (float)(c->has_rope_theta ? c->rope_theta : 10000.0);
    double factor = c->rope_factor != 0 ? c->rope_factor : 8.0;
    double lo = c->rope_low_freq_factor != 0 ? c->rope_low_freq_factor : 1.0;
    double hi = c->rope_high_freq_factor != 0 ? c->rope_high_freq_factor : 4.0;
    double old_ctx = c->rope_orig_ctx > 0 ? (double)c->rope_orig_ctx : 8192.0;
    float lo_wl = (float)(old_ctx / lo), hi_wl = (float)(old_ctx / hi);
    float two_pi = (float)(2.0 * M_PI);
    for (uint64_t k = 0; k < half; k++) {
        float e = (float)(2 * k) / (float)dim;
        float freq = 1.0f / powf(base, e);
        float wl = two_pi / freq;
        if (wl < hi_wl) v[k] = 1.0f;
        else if (wl > lo_wl) v[k] = (float)factor;
        else {
            float smooth = ((float)old_ctx / wl - (float)lo) / (float)(hi - lo);
            v[k] = 1.0f / ((1.0f - smooth) / (float)factor + smooth);
        }
    }
    *out = v;
    *n = half;
    return SN_OK;
}

static sn_status extra_tensors(const sn_arch *a, const sn_hf_config *c, sn_arch_extra *out, size_t n_max,
                               size_t *n_out, sn_err *err) {
    *n_out = 0;
    /* only LlamaModel generates rope_freqs; the Qwen classes do not */
    if (!opts_of(a)->llama_kv || c->rope_scaling != SN_ROPE_SCALING_LLAMA3 || n_max < 1) return SN_OK;
    sn_status st = sn_arch_llama3_rope_freqs(c, &out[0].data, &out[0].n, err);
    if (st != SN_OK) return st;
    snprintf(out[0].gguf_name, sizeof out[0].gguf_name, "rope_freqs.weight");
    *n_out = 1;
    return SN_OK;
}

/* ---- the three table rows ---- */

/* transformers 4.57 class defaults: vocab hidden inter layers heads kv_heads max_pos rope_theta
 * rms_eps head_dim bos eos */
static const sn_hf_defaults k_llama_def = {32000, 4096, 11008, 32, 32, -1, 2048, 10000.0, 1e-6, 0, 1, 2};
static const sn_hf_defaults k_mistral_def = {32000, 4096, 14336, 32, 32, 8, 131072, 10000.0, 1e-6, 0, 1, 2};
static const sn_hf_defaults k_qwen2_def = {151936, 4096, 22016, 32, 32, 32, 32768, 10000.0, 1e-6, -1, -1, -1};
static const sn_hf_defaults k_qwen3_def = {151936, 4096, 22016, 32, 32, 32, 32768, 10000.0, 1e-6, 128, -1, -1};
static const sn_hf_defaults k_mixtral_def = {32000, 4096, 14336, 32, 32, 8, 131072, 1000000.0, 1e-5, 0, 1, 2};
static const sn_hf_defaults k_qwen3moe_def = {151936, 2048, 6144, 24, 32, 4, 32768, 10000.0, 1e-6, 0, -1, -1};

static const sn_arch_class k_llama_hf[] = {{"LlamaForCausalLM", &k_llama_def},
                                           {"MistralForCausalLM", &k_mistral_def},
                                           {"MixtralForCausalLM", &k_mixtral_def}, {NULL, NULL}};
static const sn_arch_class k_qwen2_hf[] = {{"Qwen2ForCausalLM", &k_qwen2_def}, {NULL, NULL}};
static const sn_arch_class k_qwen3_hf[] = {{"Qwen3ForCausalLM", &k_qwen3_def}, {NULL, NULL}};
static const sn_arch_class k_qwen3moe_hf[] = {{"Qwen3MoeForCausalLM", &k_qwen3moe_def}, {NULL, NULL}};
static const char *const k_vocab_files[] = {"tokenizer.json", "tokenizer.model", NULL};

/* LlamaModel.modify_tensors stacks w1, w2, w3 (gate, down, up); Qwen2MoeModel down, gate, up and
 * reads the count from num_local_experts or num_experts */
static const char *const k_mixtral_count[] = {"num_local_experts", NULL};
static const char *const k_qwen_count[] = {"num_local_experts", "num_experts", NULL};
static const sn_moe_names k_mixtral_moe = {
    "block_sparse_moe.", {"w1", "w2", "w3"}, {"ffn_gate_exps", "ffn_down_exps", "ffn_up_exps"}, {0, 1, 0},
    k_mixtral_count, "intermediate_size", 0};
static const sn_moe_names k_qwen3moe_moe = {
    "mlp.", {"down_proj", "gate_proj", "up_proj"}, {"ffn_down_exps", "ffn_gate_exps", "ffn_up_exps"}, {1, 0, 0},
    k_qwen_count, "moe_intermediate_size", 1};

static const family_opts k_llama_opts = {.permute_qk = 1, .qk_norm = 0, .llama_kv = 1, .moe = &k_mixtral_moe};
static const family_opts k_qwen2_opts = {.permute_qk = 0, .qk_norm = 0, .llama_kv = 0};
static const family_opts k_qwen3_opts = {.permute_qk = 0, .qk_norm = 1, .llama_kv = 0};
static const family_opts k_qwen3moe_opts = {.permute_qk = 0, .qk_norm = 1, .llama_kv = 0, .moe = &k_qwen3moe_moe,
                                            .all_sparse = 1};

static const char *const k_required[] = {"token_embd.weight", "output_norm.weight", NULL};
static const char *const k_layer_required[] = {
    "attn_norm.weight", "attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight",
    "ffn_norm.weight", "ffn_gate.weight|ffn_gate_exps.weight", "ffn_up.weight|ffn_up_exps.weight",
    "ffn_down.weight|ffn_down_exps.weight", NULL};
static const char *const k_qwen2_layer_required[] = {
    "attn_norm.weight", "attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight",
    "attn_q.bias", "attn_k.bias", "attn_v.bias",
    "ffn_norm.weight", "ffn_gate.weight", "ffn_up.weight", "ffn_down.weight", NULL};
static const char *const k_qwen3_layer_required[] = {
    "attn_norm.weight", "attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight",
    "attn_q_norm.weight", "attn_k_norm.weight",
    "ffn_norm.weight", "ffn_gate.weight", "ffn_up.weight", "ffn_down.weight", NULL};
static const char *const k_qwen3moe_layer_required[] = {
    "attn_norm.weight", "attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight",
    "attn_q_norm.weight", "attn_k_norm.weight", "ffn_norm.weight", "ffn_gate_inp.weight",
    "ffn_gate_exps.weight", "ffn_up_exps.weight", "ffn_down_exps.weight", NULL};
/* the router: F32 in the converter (FFN_GATE_INP); llama-quantize never quantizes it (sn_quant_never) */
static const char *const k_router[] = {"ffn_gate_inp.weight", NULL};

#define LLAMA_ROW(name, hf, vocab_path, layer_required, ...)                                     \
    {.gguf_arch = name, .classes = hf, .vocab = vocab_path, .vocab_files = k_vocab_files,         \
     .keep_f32 = k_router,                                                                            \
     .check_config = check_config, .write_kv = write_kv, .map_tensor = map_tensor,                     \
     .extra_tensors = extra_tensors, .required = k_required, .required_per_layer = layer_required,    \
     __VA_ARGS__}

/* LlamaModel.set_vocab for llama/mistral; Qwen2Model.set_vocab (the plain TextModel path) for qwen */
/* llama.cpp's 70B: llama with 80 layers and GQA (src/models/llama.cpp), qwen2 with 80 (qwen2.cpp) */
const sn_arch sn_arch_llama = LLAMA_ROW("llama", k_llama_hf, SN_ARCH_VOCAB_LLAMA, k_layer_required,
                                        .type_70b_layers = 80, .type_70b_needs_gqa = 1);
const sn_arch sn_arch_qwen2 = LLAMA_ROW("qwen2", k_qwen2_hf, SN_ARCH_VOCAB_TEXT, k_qwen2_layer_required,
                                        .type_70b_layers = 80);
const sn_arch sn_arch_qwen3 = LLAMA_ROW("qwen3", k_qwen3_hf, SN_ARCH_VOCAB_TEXT, k_qwen3_layer_required);
const sn_arch sn_arch_qwen3moe = LLAMA_ROW("qwen3moe", k_qwen3moe_hf, SN_ARCH_VOCAB_TEXT, k_qwen3moe_layer_required);

static const family_opts *opts_of(const sn_arch *a) {
    if (a == &sn_arch_qwen2) return &k_qwen2_opts;
    if (a == &sn_arch_qwen3) return &k_qwen3_opts;
    if (a == &sn_arch_qwen3moe) return &k_qwen3moe_opts;
    return &k_llama_opts;
}
