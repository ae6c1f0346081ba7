/* arch_phi3.c - Phi-3 / Phi-3.5 / Phi-4 / Phi-4-mini: Phi3ForCausalLM -> "phi3".
 *
 * Mirrors llama.cpp's converter (conversion/phi.py, Phi3MiniModel): the checkpoint's fused
 * qkv_proj and gate_up_proj stay fused (attn_qkv; ffn_up is 2 * intermediate_size rows, gate
 * first), no Q/K permutation (NEOX rope), the keys of its own set_gguf_parameters (rope dimension
 * int(partial_rotary_factor * hidden) / heads, the original context, sliding_window with 0 for
 * none), and for LongRoPE/su/yarn checkpoints the long and short factors as rope_factors_long /
 * rope_factors_short plus rope.scaling.attn_factor, which the reference writes while it prepares
 * the tensors (so before general.type). The vocabulary is Phi3MiniModel.set_vocab's:
 * the SentencePiece path with its added tokens typed literally, a GPT2Tokenizer (Phi-4) from
 * tokenizer.json. */
#include "arch.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* self.rope_parameters: rope_parameters, else rope_scaling (its "full_attention" sub-dict wins) */
static const cJSON *rope_params(const sn_hf_config *c) {
    const cJSON *r = get(c->root, "rope_parameters");
    if (!cJSON_IsObject(r)) r = get(c->root, "rope_scaling");
    if (!cJSON_IsObject(r)) return NULL;
    const cJSON *fa = get(r, "full_attention");
    return cJSON_IsObject(fa) ? fa : r;
}

/* a rope parameter, falling back to the top-level key as the reference mirrors it */
static int rope_num(const sn_hf_config *c, const char *k, double *out) {
    const cJSON *v = get(rope_params(c), k);
    if (cJSON_IsNumber(v)) {
        *out = v->valuedouble;
        return 1;
    }
    return sn_hf_config_get_num(c, k, out);
}

static int64_t rope_dims_of(const sn_hf_config *c) {
    double pct = 1.0;
    rope_num(c, "partial_rotary_factor", &pct);
    return (int64_t)(pct * (double)c->hidden_size) / c->n_heads;
}

static int64_t orig_ctx_of(const sn_hf_config *c) {
    double v = -1;
    return rope_num(c, "original_max_position_embeddings", &v) ? (int64_t)v : -1;
}

static const cJSON *factors(const sn_hf_config *c, const char *k) {
    const cJSON *f = get(rope_params(c), k);
    return cJSON_IsArray(f) && cJSON_GetArraySize(f) > 0 ? f : NULL;
}

static sn_status check_config(const sn_arch *a, const sn_hf_config *c, sn_err *err) {
    (void)a;
    const char *f = "config.json";
    const sn_arch_value req[] = {
        {"\"hidden_size\"", c->hidden_size}, {"\"num_hidden_layers\"", c->n_layers},
        {"\"num_attention_heads\"", c->n_heads}, {"\"num_key_value_heads\"", c->n_kv_heads},
        {"\"intermediate_size\"", c->intermediate_size}, {"\"vocab_size\"", c->vocab_size},
        {"\"max_position_embeddings\"", c->max_position_embeddings},
        {"\"original_max_position_embeddings\"", orig_ctx_of(c)},
    };
    SN_ARCH_TRY(sn_arch_check_range(req, sizeof req / sizeof *req, 31, err));
    if (c->hidden_size % c->n_heads || c->n_heads % c->n_kv_heads)
        return sn_err_set(err, SN_EFORMAT, "%s: hidden_size %lld, num_attention_heads %lld and num_key_value_heads "
                          "%lld do not divide", f, (long long)c->hidden_size, (long long)c->n_heads,
                          (long long)c->n_kv_heads);
    if (c->has_head_dim && c->head_dim != c->hidden_size / c->n_heads)
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: head_dim %lld != hidden_size / num_attention_heads (llama.cpp's "
                          "phi3 assumes it)", f, (long long)c->head_dim);
    if (!c->has_rope_theta) return sn_err_set(err, SN_EFORMAT, "%s: \"rope_theta\" is missing", f);
    if (!c->has_rms_norm_eps) return sn_err_set(err, SN_EFORMAT, "%s: \"rms_norm_eps\" is missing", f);
    const int64_t rd = rope_dims_of(c);
    if (rd <= 0 || rd % 2 || rd > c->hidden_size / c->n_heads)
        return sn_err_set(err, SN_EFORMAT, "%s: partial_rotary_factor gives %lld rotary dimensions per head (need an "
                          "even number in 2..%lld)", f, (long long)rd, (long long)(c->hidden_size / c->n_heads));
    const cJSON *lf = factors(c, "long_factor"), *sf = factors(c, "short_factor");
    if (lf) {
        const cJSON *t = get(rope_params(c), "rope_type");
        if (!cJSON_IsString(t)) t = get(rope_params(c), "type");
        const char *ty = cJSON_IsString(t) ? t->valuestring : "";
        if (strcasecmp(ty, "su") && strcasecmp(ty, "longrope") && strcasecmp(ty, "yarn"))
            return sn_err_set(err, SN_EUNSUPPORTED, "%s: rope scaling type \"%s\" with long_factor (supported: su, "
                              "longrope, yarn)", f, ty);
        if (!sf || cJSON_GetArraySize(lf) != cJSON_GetArraySize(sf) || cJSON_GetArraySize(lf) != rd / 2)
            return sn_err_set(err, SN_EFORMAT, "%s: rope long_factor / short_factor must both have %lld values (have "
                              "%d and %d)", f, (long long)(rd / 2), cJSON_GetArraySize(lf),
                              sf ? cJSON_GetArraySize(sf) : 0);
        for (int k = 0; k < 2; k++) {
            const cJSON *x;
            for (x = (k ? sf : lf)->child; x; x = x->next) if (!cJSON_IsNumber(x))
                return sn_err_set(err, SN_EFORMAT, "%s: rope %s holds a value that is not a number", f,
                                  k ? "short_factor" : "long_factor");
        }
    }
    const cJSON *sw = get(c->root, "sliding_window");
    if (sw && !cJSON_IsNull(sw) && (!cJSON_IsNumber(sw) || sw->valuedouble < 0 || sw->valuedouble > 4294967295.0))
        return sn_err_set(err, SN_EFORMAT, "%s: \"sliding_window\" is not null or an integer in 0..2^32-1", f);
    return SN_OK;
}

/* ---- metadata ---- */

/* rope.scaling.attn_factor, written by generate_extra_tensors (before general.type) */
static sn_status write_early_kv(const sn_arch *a, const sn_hf_config *c, sn_gguf_writer *w, sn_err *err) {
    if (!factors(c, "long_factor")) return SN_OK;
    const double orig = (double)orig_ctx_of(c), scale = (double)c->max_position_embeddings / orig;
    const cJSON *t = get(rope_params(c), "rope_type");
    if (!cJSON_IsString(t)) t = get(rope_params(c), "type");
    double af = 1.0;
    if (scale > 1.0)
        af = strcasecmp(t->valuestring, "yarn") == 0 ? 0.1 * log(scale) + 1.0 : sqrt(1 + log(scale) / log(orig));
    return sn_arch_kv_f32(w, a->gguf_arch, "rope.scaling.attn_factor", af, err);
}

static sn_status write_kv(const sn_arch *a, const sn_hf_config *c, uint32_t file_type, sn_gguf_writer *w,
                          sn_err *err) {
    const char *A = a->gguf_arch;
    const sn_arch_value kv[] = {
        {"context_length", c->max_position_embeddings}, {"rope.scaling.original_context_length", orig_ctx_of(c)},
        {"embedding_length", c->hidden_size}, {"feed_forward_length", c->intermediate_size},
        {"block_count", c->n_layers}, {"attention.head_count", c->n_heads},
        {"attention.head_count_kv", c->n_kv_heads},
    };
    SN_ARCH_TRY(sn_arch_kv_u32s(w, A, kv, sizeof kv / sizeof *kv, err));
    SN_ARCH_TRY(sn_arch_kv_f32(w, A, "attention.layer_norm_rms_epsilon", c->rms_norm_eps, err));
    SN_ARCH_TRY(sn_arch_kv_u32(w, A, "rope.dimension_count", rope_dims_of(c), err));
    double theta = c->rope_theta;
    rope_num(c, "rope_theta", &theta);
    SN_ARCH_TRY(sn_arch_kv_f32(w, A, "rope.freq_base", theta, err));
    SN_ARCH_TRY(sn_arch_kv_u32(w, NULL, "general.file_type", file_type, err));
    const cJSON *sw = get(c->root, "sliding_window"); /* 0 tells Phi-4 (none) from the others */
    return sn_arch_kv_u32(w, A, "attention.sliding_window", cJSON_IsNumber(sw) ? (int64_t)sw->valuedouble : 0, err);
}

/* ---- tensors ---- */

static void shape(sn_arch_tensor *t, uint32_t n, uint64_t ne0, uint64_t ne1) {
    t->n_dims = n;
    for (int i = 0; i < SN_GGUF_MAX_DIMS; i++) t->ne[i] = 1;
    t->ne[0] = ne0;
    t->ne[1] = ne1;
}

static int ends_with(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static int map_tensor(const sn_arch *a, const sn_hf_config *c, const char *hf, sn_arch_tensor *out, sn_err *err) {
    memset(out, 0, sizeof(*out));
    const uint64_t E = (uint64_t)c->hidden_size, V = (uint64_t)c->vocab_size, F = (uint64_t)c->intermediate_size;
    const uint64_t hd = E / (uint64_t)c->n_heads, Q = (uint64_t)c->n_heads * hd, KV = (uint64_t)c->n_kv_heads * hd;
    if (ends_with(hf, ".rotary_emb.inv_freq")) return SN_ARCH_MAP_SKIP;
    static const struct { const char *hf, *gguf; } k_global[] = {
        {"model.embed_tokens.weight", "token_embd.weight"}, {"lm_head.weight", "output.weight"},
        {"model.norm.weight", "output_norm.weight"}};
    for (size_t i = 0; i < 3; i++)
        if (!strcmp(hf, k_global[i].hf)) {
            snprintf(out->gguf_name, sizeof out->gguf_name, "%s", k_global[i].gguf);
            if (i == 2) shape(out, 1, E, 1);
            else shape(out, 2, E, V);
            return SN_ARCH_MAP_OK;
        }
    static const char pfx[] = "model.layers.";
    if (!strncmp(hf, pfx, sizeof pfx - 1) && isdigit((unsigned char)hf[sizeof pfx - 1])) {
        const char *p = hf + sizeof pfx - 1;
        uint64_t bid = 0;
        while (isdigit((unsigned char)*p) && bid < 1000000) bid = bid * 10 + (uint64_t)(*p++ - '0');
        if (*p++ != '.') goto unmapped;
        static const struct { const char *hf, *gguf; int n_dims, ne0, ne1; } k_layer[] = {
            /* ne codes: 0 E, 1 Q+2KV, 2 2F, 3 F, 4 Q */
            {"input_layernorm.weight", "attn_norm.weight", 1, 0, 0},
            {"self_attn.qkv_proj.weight", "attn_qkv.weight", 2, 0, 1},
            {"self_attn.o_proj.weight", "attn_output.weight", 2, 4, 0},
            {"post_attention_layernorm.weight", "ffn_norm.weight", 1, 0, 0},
            {"mlp.gate_up_proj.weight", "ffn_up.weight", 2, 0, 2},
            {"mlp.down_proj.weight", "ffn_down.weight", 2, 3, 0},
        };
        const uint64_t dim[] = {E, Q + 2 * KV, 2 * F, F, Q};
        for (size_t i = 0; i < sizeof k_layer / sizeof *k_layer; i++) {
            if (strcmp(p, k_layer[i].hf)) continue;
            if (bid >= (uint64_t)c->n_layers)
                return sn_err_set(err, SN_EFORMAT, "tensor '%s' is in layer %llu but config.json has "
                                  "num_hidden_layers = %lld", hf, (unsigned long long)bid, (long long)c->n_layers);
            snprintf(out->gguf_name, sizeof out->gguf_name, "blk.%llu.%s", (unsigned long long)bid, k_layer[i].gguf);
            shape(out, (uint32_t)k_layer[i].n_dims, dim[k_layer[i].ne0], dim[k_layer[i].ne1]);
            return SN_ARCH_MAP_OK;
        }
    }
unmapped:
    return sn_err_set(err, SN_EUNSUPPORTED, "cannot map tensor '%s' (architecture %s)", hf, a->gguf_arch);
}

/* rope_factors_long, rope_factors_short: the config's lists as float32 */
static sn_status extra_tensors(const sn_arch *a, const sn_hf_config *c, sn_arch_extra *out, size_t n_max,
                               size_t *n_out, sn_err *err) {
    (void)a;
    *n_out = 0;
    static const char *const k_keys[2] = {"long_factor", "short_factor"};
    if (!factors(c, "long_factor") || n_max < 2) return SN_OK;
    for (size_t k = 0; k < 2; k++) {
        const cJSON *f = factors(c, k_keys[k]);
        uint64_t n = (uint64_t)cJSON_GetArraySize(f), i = 0;
        float *v = malloc(n * sizeof(float));
        if (!v) {
            if (k) free(out[0].data);
            return sn_err_set(err, SN_ENOMEM, "out of memory");
        }
        const cJSON *x;
        cJSON_ArrayForEach(x, f) v[i++] = (float)x->valuedouble;
        snprintf(out[k].gguf_name, sizeof out[k].gguf_name, "rope_factors_%s.weight", k ? "short" : "long");
        out[k].n = n;
        out[k].data = v;
    }
    *n_out = 2;
    return SN_OK;
}

/* transformers' Phi3Config defaults: vocab hidden inter layers heads kv_heads max_pos rope_theta
 * rms_eps head_dim bos eos */
static const sn_hf_defaults k_phi3_def = {32064, 3072, 8192, 32, 32, -1, 4096, 10000.0, 1e-5, -1, 1, 32000};
static const sn_arch_class k_classes[] = {{"Phi3ForCausalLM", &k_phi3_def}, {NULL, NULL}};
/* tokenizer.model (SentencePiece), or tokenizer.json when tokenizer_config names GPT2Tokenizer (Phi-4) */
static const char *const k_vocab_files[] = {"tokenizer.model", "tokenizer.json", NULL};
static const char *const k_required[] = {"token_embd.weight", "output_norm.weight", NULL};
static const char *const k_layer_required[] = {"attn_norm.weight", "attn_qkv.weight", "attn_output.weight",
                                               "ffn_norm.weight", "ffn_up.weight", "ffn_down.weight", NULL};

const sn_arch sn_arch_phi3 = {
    .gguf_arch = "phi3", .classes = k_classes, .vocab = SN_ARCH_VOCAB_TEXT, .vocab_files = k_vocab_files,
    .vocab_added_literal = 1, .vocab_json_class = "GPT2Tokenizer",
    .check_config = check_config, .write_early_kv = write_early_kv, .write_kv = write_kv,
    .map_tensor = map_tensor, .extra_tensors = extra_tensors, .required = k_required,
    .required_per_layer = k_layer_required};
