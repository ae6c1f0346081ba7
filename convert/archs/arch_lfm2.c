/* arch_lfm2.c - LFM2: Lfm2ForCausalLM -> "lfm2".
 *
 * Mirrors llama.cpp's converter (conversion/lfm2.py, LFM2Model, a TextModel): config.json read raw,
 * layer_types naming each layer "conv" (a short convolution: conv.in_proj -> B, C, x; conv.conv
 * depthwise over conv_L_cache taps; conv.out_proj) or an attention kind (q/k/v_proj, out_proj and
 * q/k layernorms over the head dimension; q and k are not permuted: llama.cpp ropes them NEOX).
 * Keys: TextModel's, with attention.head_count_kv as a per-layer list (0 for conv layers), then
 * vocab_size and shortconv.l_cache; the rms epsilon is norm_eps and the feed-forward length is
 * block_ff_dim adjusted (2/3, block_ffn_dim_multiplier, rounded up to block_multiple_of), both
 * replacing TextModel's values in place as the reference's writer does. conv.conv [E, 1, L] is
 * squeezed to [E, L] and kept F32; model.embedding_norm, the final norm, is token_embd_norm. */
#include "arch.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* 1 if layer il is a short-convolution layer (layer_types[il] == "conv"), 0 attention, -1 unknown */
static int is_conv(const sn_hf_config *c, int64_t il) {
    const cJSON *x = cJSON_GetArrayItem(get(c->root, "layer_types"), (int)il);
    return cJSON_IsString(x) ? !strcmp(x->valuestring, "conv") : -1;
}

/* LFM2Model._add_feed_forward_length; -1 when a key it reads is missing or malformed */
static int64_t ff_dim(const sn_hf_config *c) {
    const cJSON *ff = get(c->root, "block_ff_dim");
    if (!ff) ff = get(c->root, "intermediate_size");
    const cJSON *adj = get(c->root, "block_auto_adjust_ff_dim"), *mul = get(c->root, "block_ffn_dim_multiplier");
    const cJSON *of = get(c->root, "block_multiple_of");
    if (!cJSON_IsNumber(ff) || !cJSON_IsBool(adj) || !mul || !cJSON_IsNumber(of)) return -1;
    double f = ff->valuedouble;
    if (cJSON_IsTrue(adj)) {
        if (of->valuedouble < 1 || of->valuedouble > 1e9 || f < 0 || f > 1e12) return -1;
        f = trunc(2 * f / 3);
        if (!cJSON_IsNull(mul)) {
            if (!cJSON_IsNumber(mul) || !(mul->valuedouble > 0 && mul->valuedouble < 1e3)) return -1;
            f = trunc(mul->valuedouble * f);
        }
        const double m = trunc(of->valuedouble);
        f = m * floor((f + m - 1) / m);
    }
    return f >= 1 && f <= 1e12 ? (int64_t)f : -1;
}

static int64_t l_cache(const sn_hf_config *c) {
    const cJSON *l = get(c->root, "conv_L_cache");
    return cJSON_IsNumber(l) && l->valuedouble == trunc(l->valuedouble) ? (int64_t)l->valuedouble : -1;
}

static sn_status check_config(const sn_arch *a, const sn_hf_config *c, sn_err *err) {
    const char *f = "config.json";
    (void)a;
    const sn_arch_value req[] = {
        {"\"hidden_size\"", c->hidden_size}, {"\"num_hidden_layers\"", c->n_layers},
        {"\"num_attention_heads\"", c->n_heads}, {"\"num_key_value_heads\"", c->n_kv_heads},
        {"\"vocab_size\"", c->vocab_size}, {"\"conv_L_cache\"", l_cache(c)},
        {"the feed-forward width (block_ff_dim, block_auto_adjust_ff_dim, block_ffn_dim_multiplier, "
         "block_multiple_of)", ff_dim(c)},
    };
    SN_ARCH_TRY(sn_arch_check_range(req, sizeof req / sizeof *req, 24, err));
    if (c->hidden_size % c->n_heads != 0 || c->n_heads % c->n_kv_heads != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: hidden_size %lld, num_attention_heads %lld and num_key_value_heads "
                          "%lld do not divide", f, (long long)c->hidden_size, (long long)c->n_heads,
                          (long long)c->n_kv_heads);
    if ((c->hidden_size / c->n_heads) % 2 != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: head dimension %lld is odd; rope needs an even one", f,
                          (long long)(c->hidden_size / c->n_heads));
    if (l_cache(c) < 2)
        return sn_err_set(err, SN_EFORMAT, "%s: conv_L_cache %lld must be at least 2 (llama.cpp keeps L_cache - 1 "
                          "inputs of state)", f, (long long)l_cache(c));
    const cJSON *lt = get(c->root, "layer_types");
    if (!cJSON_IsArray(lt) || cJSON_GetArraySize(lt) != c->n_layers)
        return sn_err_set(err, SN_EFORMAT, "%s: \"layer_types\" must be a list of num_hidden_layers (%lld) strings",
                          f, (long long)c->n_layers);
    for (int64_t il = 0; il < c->n_layers; il++)
        if (is_conv(c, il) < 0)
            return sn_err_set(err, SN_EFORMAT, "%s: layer_types[%lld] is not a string", f, (long long)il);
    if (!sn_hf_config_get_num(c, "norm_eps", &(double){0}))
        return sn_err_set(err, SN_EFORMAT, "%s: \"norm_eps\" is missing or not a number", f);
    if (cJSON_IsTrue(get(c->root, "conv_bias")))
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: conv_bias is true: llama.cpp's lfm2 has no short-convolution "
                          "biases", f);
    return SN_OK;
}

/* ---- metadata ---- */

static sn_status write_kv(const sn_arch *a, const sn_hf_config *c, uint32_t file_type, sn_gguf_writer *w,
                          sn_err *err) {
    const char *A = a->gguf_arch;
    SN_ARCH_TRY(sn_arch_text_model_kv(A, c, file_type, w, err));
    /* the per-layer list replaces TextModel's single value where it stands */
    int32_t *kv = malloc((size_t)c->n_layers * sizeof *kv);
    if (!kv) return sn_err_set(err, SN_ENOMEM, "out of memory");
    for (int64_t il = 0; il < c->n_layers; il++) kv[il] = is_conv(c, il) ? 0 : (int32_t)c->n_kv_heads;
    char key[128];
    snprintf(key, sizeof key, "%s.attention.head_count_kv", A);
    sn_status st = sn_gguf_writer_set_arr(w, key, SN_GGUF_I32, kv, (uint64_t)c->n_layers);
    free(kv);
    if (st != SN_OK) return sn_err_set(err, st, "cannot set %s", key);
    double eps = 0;
    sn_hf_config_get_num(c, "norm_eps", &eps);
    const sn_arch_value tail[] = {{"vocab_size", c->vocab_size}, {"shortconv.l_cache", l_cache(c)}};
    SN_ARCH_TRY(sn_arch_kv_u32s(w, A, tail, sizeof tail / sizeof *tail, err));
    SN_ARCH_TRY(sn_arch_kv_f32(w, A, "attention.layer_norm_rms_epsilon", eps, err));
    return sn_arch_kv_u32(w, A, "feed_forward_length", ff_dim(c), err);
}

/* ---- tensors ---- */

static void shape(sn_arch_tensor *t, uint32_t n, uint64_t ne0, uint64_t ne1) {
    t->n_dims = n;
    for (int i = 0; i < SN_GGUF_MAX_DIMS; i++) t->ne[i] = 1;
    t->ne[0] = ne0;
    t->ne[1] = n > 1 ? ne1 : 1;
}

typedef struct {
    const char *hf, *gguf;
    int kind;                        /* 0 any layer, 1 conv, 2 attention */
    char ne0, ne1;                   /* E embd, Q heads*hd, K kv*hd, H hd, F ff, T 3E, L L_cache, 0 (1-D) */
} lfm2_entry;

static const lfm2_entry k_layer[] = {
    {"operator_norm.weight", "attn_norm.weight", 0, 'E', 0},
    {"ffn_norm.weight", "ffn_norm.weight", 0, 'E', 0},
    {"feed_forward.w1.weight", "ffn_gate.weight", 0, 'E', 'F'},
    {"feed_forward.w3.weight", "ffn_up.weight", 0, 'E', 'F'},
    {"feed_forward.w2.weight", "ffn_down.weight", 0, 'F', 'E'},
    {"conv.conv.weight", "shortconv.conv.weight", 1, 'L', 'E'},
    {"conv.in_proj.weight", "shortconv.in_proj.weight", 1, 'E', 'T'},
    {"conv.out_proj.weight", "shortconv.out_proj.weight", 1, 'E', 'E'},
    {"self_attn.q_proj.weight", "attn_q.weight", 2, 'E', 'Q'},
    {"self_attn.k_proj.weight", "attn_k.weight", 2, 'E', 'K'},
    {"self_attn.v_proj.weight", "attn_v.weight", 2, 'E', 'K'},
    {"self_attn.out_proj.weight", "attn_output.weight", 2, 'Q', 'E'},
    {"self_attn.q_layernorm.weight", "attn_q_norm.weight", 2, 'H', 0},
    {"self_attn.k_layernorm.weight", "attn_k_norm.weight", 2, 'H', 0},
};

static uint64_t dim(const sn_hf_config *c, char k) {
    const uint64_t E = (uint64_t)c->hidden_size, hd = E / (uint64_t)c->n_heads;
    switch (k) {
    case 'E': return E;
    case 'Q': return (uint64_t)c->n_heads * hd;
    case 'K': return (uint64_t)c->n_kv_heads * hd;
    case 'H': return hd;
    case 'F': return (uint64_t)ff_dim(c);
    case 'T': return 3 * E;
    case 'L': return (uint64_t)l_cache(c);
    default: return 1;
    }
}

static int map_tensor(const sn_arch *a, const sn_hf_config *c, const char *hf_in, sn_arch_tensor *out, sn_err *err) {
    memset(out, 0, sizeof(*out));
    if (sn_arch_is_multimodal(hf_in)) return SN_ARCH_MAP_SKIP;
    char hf[512];
    const char *lfm = strncmp(hf_in, "lfm.", 4) ? NULL : hf_in + 4; /* LFM2-Audio's text model */
    snprintf(hf, sizeof hf, "%s%s", lfm ? "model." : "", lfm ? lfm : hf_in);
    const uint64_t E = (uint64_t)c->hidden_size, V = (uint64_t)c->vocab_size;
    static const struct { const char *hf, *gguf; int n; } k_global[] = {
        {"model.embed_tokens.weight", "token_embd.weight", 2}, {"lm_head.weight", "output.weight", 2},
        {"model.embedding_norm.weight", "token_embd_norm.weight", 1}};
    for (size_t i = 0; i < sizeof k_global / sizeof *k_global; i++)
        if (!strcmp(hf, k_global[i].hf)) {
            snprintf(out->gguf_name, sizeof out->gguf_name, "%s", k_global[i].gguf);
            shape(out, (uint32_t)k_global[i].n, E, V);
            return SN_ARCH_MAP_OK;
        }
    static const char pfx[] = "model.layers.";
    if (strncmp(hf, pfx, sizeof pfx - 1) != 0 || !isdigit((unsigned char)hf[sizeof pfx - 1])) goto unmapped;
    const char *p = hf + sizeof pfx - 1;
    uint64_t bid = 0;
    while (isdigit((unsigned char)*p) && bid < 1000000) bid = bid * 10 + (uint64_t)(*p++ - '0');
    if (*p++ != '.') goto unmapped;
    for (size_t i = 0; i < sizeof k_layer / sizeof *k_layer; i++) {
        const lfm2_entry *e = &k_layer[i];
        if (strcmp(p, e->hf) != 0) continue;
        if (bid >= (uint64_t)c->n_layers)
            return sn_err_set(err, SN_EFORMAT, "tensor '%s' is in layer %llu but config.json has %lld layers", hf_in,
                              (unsigned long long)bid, (long long)c->n_layers);
        const int conv = is_conv(c, (int64_t)bid);
        if (e->kind && e->kind != (conv ? 1 : 2))
            return sn_err_set(err, SN_EFORMAT, "tensor '%s' is %s tensor but config.json layer_types[%llu] is %s",
                              hf_in, e->kind == 1 ? "a short-convolution" : "an attention", (unsigned long long)bid,
                              conv ? "\"conv\"" : "an attention layer");
        snprintf(out->gguf_name, sizeof out->gguf_name, "blk.%llu.%s", (unsigned long long)bid, e->gguf);
        shape(out, e->ne1 ? 2 : 1, dim(c, e->ne0), dim(c, e->ne1));
        if (e->kind == 1 && e->ne0 == 'L') { /* [E, 1, L] squeezed */
            out->src_n_dims = 3;
            for (int k = 0; k < SN_GGUF_MAX_DIMS; k++) out->src_ne[k] = 1;
            out->src_ne[0] = out->ne[0];
            out->src_ne[2] = out->ne[1];
        }
        return SN_ARCH_MAP_OK;
    }
unmapped:
    return sn_err_set(err, SN_EUNSUPPORTED, "cannot map tensor '%s' (architecture %s)", hf_in, a->gguf_arch);
}

static const sn_arch_class k_classes[] = {{"Lfm2ForCausalLM", NULL}, {"LFM2ForCausalLM", NULL}, {NULL, NULL}};
static const char *const k_vocab_files[] = {"tokenizer.json", "tokenizer.model", NULL};
static const char *const k_keep_f32[] = {"shortconv.conv.weight", NULL};
static const char *const k_required[] = {"token_embd.weight", "token_embd_norm.weight", NULL};
static const char *const k_layer_required[] = {"attn_norm.weight", "ffn_norm.weight", "ffn_gate.weight",
                                               "ffn_up.weight", "ffn_down.weight",
                                               "shortconv.in_proj.weight|attn_q.weight", NULL};

const sn_arch sn_arch_lfm2 = {
    .gguf_arch = "lfm2", .classes = k_classes, .vocab = SN_ARCH_VOCAB_TEXT, .vocab_files = k_vocab_files,
    .keep_f32 = k_keep_f32, .check_config = check_config, .write_kv = write_kv, .map_tensor = map_tensor,
    .required = k_required, .required_per_layer = k_layer_required};
