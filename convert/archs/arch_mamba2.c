/* arch_mamba2.c - Mamba-2: Mamba2ForCausalLM HF folders and mamba_ssm configs -> "mamba2".
 *
 * Mirrors llama.cpp's converter (conversion/mamba.py, Mamba2Model): config.json is read raw (no
 * transformers class defaults), with its key fallbacks and defaults; vocab_size is rounded up to
 * pad_vocab_size_multiple (16) before the tokenizer is written; no generic TextModel keys. Tensors:
 * A = -exp(A_log) and D get a trailing dim (ne {1, n_head}), conv1d [C,1,K] is squeezed to
 * ne {K, C} and kept F32, the gated norm weight is reshaped to (n_group, d_inner/n_group), dt_bias
 * becomes ssm_dt.bias, and Codestral's "model.backbone" prefix is dropped.
 *
 * mamba_ssm configs ({"d_model", "n_layer", "ssm_cfg": {"layer": "Mamba2", ...}}) name the SSM sizes
 * inside ssm_cfg, where llama.cpp's converter does not look (it falls back to its defaults, which
 * equal mamba_ssm's own). We read ssm_cfg's d_state, d_conv, expand, headdim and ngroups after the
 * keys llama.cpp reads, so a config that sets them converts to a loadable file instead of one whose
 * keys disagree with its tensors; for configs that do not set them the output is the reference's.
 * llama.cpp refuses d_inner != expand * d_model; so do we. */
#include "arch.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t d_model, d_inner, expand, n_group, d_conv, d_state, head_dim, n_head;
    double eps;
} mamba2_dims;

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* find_hparam(keys, optional=True) or `def` (Python's `or`: 0 and null also take the default);
 * ssm_cfg_key, if given, is read from ssm_cfg before the default. */
static double hparam(const sn_hf_config *c, const char *const *keys, const char *ssm_cfg_key, double def) {
    for (; *keys; keys++) {
        const cJSON *v = get(c->root, *keys);
        if (v) return cJSON_IsNumber(v) && v->valuedouble != 0 ? v->valuedouble : def;
    }
    const cJSON *v = ssm_cfg_key ? get(get(c->root, "ssm_cfg"), ssm_cfg_key) : NULL;
    return cJSON_IsNumber(v) && v->valuedouble != 0 ? v->valuedouble : def;
}

static mamba2_dims dims_of(const sn_hf_config *c) {
    mamba2_dims d = {0};
    static const char *const k_model[] = {"hidden_size", "d_model", "dim", NULL};
    static const char *const k_expand[] = {"mamba_expand", "expand", NULL};
    static const char *const k_inner[] = {"mamba_d_ssm", "intermediate_size", "d_inner", NULL};
    static const char *const k_group[] = {"n_groups", NULL};
    static const char *const k_conv[] = {"conv_kernel", "d_conv", NULL};
    static const char *const k_state[] = {"state_size", "d_state", NULL};
    static const char *const k_head[] = {"mamba_d_head", "head_dim", NULL};
    static const char *const k_eps[] = {"layer_norm_epsilon", "rms_norm_eps", NULL};
    d.d_model = (int64_t)hparam(c, k_model, NULL, -1);
    d.expand = (int64_t)hparam(c, k_expand, "expand", 2);
    d.d_inner = (int64_t)hparam(c, k_inner, NULL, (double)(d.expand * d.d_model));
    d.n_group = (int64_t)hparam(c, k_group, "ngroups", 1);
    d.d_conv = (int64_t)hparam(c, k_conv, "d_conv", 4);
    d.d_state = (int64_t)hparam(c, k_state, "d_state", 128);
    d.head_dim = (int64_t)hparam(c, k_head, "headdim", 64);
    d.eps = hparam(c, k_eps, NULL, 1e-5);
    d.n_head = d.head_dim > 0 ? d.d_inner / d.head_dim : 0;
    return d;
}

/* The generic parse knows neither d_model nor the vocab padding: complete cfg as the reference's
 * hparams would be after set_vocab (vocab_size rounded up to pad_vocab_size_multiple). */
static sn_status prepare_config(const sn_arch *a, sn_hf_config *c, sn_err *err) {
    (void)a;
    const mamba2_dims d = dims_of(c);
    c->hidden_size = d.d_model;
    if (c->vocab_size <= 0 || c->vocab_size > (int64_t)1 << 31)
        return sn_err_set(err, SN_EFORMAT, "config.json: \"vocab_size\" is missing or not an integer in 1..2^31");
    const cJSON *pm = get(c->root, "pad_vocab_size_multiple");
    int64_t pad = 16;
    if (pm) {
        if (!cJSON_IsNumber(pm) || pm->valuedouble < 1 || pm->valuedouble > 65536 ||
            pm->valuedouble != (double)(int64_t)pm->valuedouble)
            return sn_err_set(err, SN_EFORMAT, "config.json: \"pad_vocab_size_multiple\" must be an integer in 1..65536");
        pad = (int64_t)pm->valuedouble;
    }
    c->vocab_size = (c->vocab_size + pad - 1) / pad * pad;
    return SN_OK;
}

static sn_status check_config(const sn_arch *a, const sn_hf_config *c, sn_err *err) {
    (void)a;
    const char *f = "config.json";
    const mamba2_dims d = dims_of(c);
    const sn_arch_value req[] = {
        {"d_model (hidden_size)", d.d_model}, {"n_layer (num_hidden_layers)", c->n_layers},
        {"d_inner", d.d_inner}, {"n_groups", d.n_group}, {"d_conv (conv_kernel)", d.d_conv},
        {"d_state (state_size)", d.d_state}, {"head_dim", d.head_dim}, {"vocab_size", c->vocab_size},
    };
    sn_status st = sn_arch_check_range(req, sizeof req / sizeof *req, 24, err);
    if (st != SN_OK) return st;
    if (d.d_inner != d.expand * d.d_model)
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: d_inner %lld != expand %lld * d_model %lld: llama.cpp's "
                          "mamba2 loader and converter assume d_inner = expand * d_model, so sunny refuses it too",
                          f, (long long)d.d_inner, (long long)d.expand, (long long)d.d_model);
    if (d.d_inner % d.head_dim != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: d_inner %lld is not a multiple of head_dim %lld", f,
                          (long long)d.d_inner, (long long)d.head_dim);
    if (d.d_inner % d.n_group != 0 || d.n_head % d.n_group != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: n_groups %lld divides neither d_inner %lld nor the %lld heads", f,
                          (long long)d.n_group, (long long)d.d_inner, (long long)d.n_head);
    return SN_OK;
}

/* ---- metadata: Mamba2Model.set_gguf_parameters, in order ---- */

static sn_status write_kv(const sn_arch *a, const sn_hf_config *c, uint32_t file_type, sn_gguf_writer *w,
                          sn_err *err) {
    const mamba2_dims d = dims_of(c);
    const sn_arch_value kv[] = {
        {"context_length", 1 << 20}, /* the reference's arbitrary 2**20 */
        {"embedding_length", d.d_model},
        {"feed_forward_length", 0}, {"attention.head_count", 0}, /* 0: unused, but the reference writes them */
        {"block_count", c->n_layers},
        {"ssm.conv_kernel", d.d_conv}, {"ssm.inner_size", d.d_inner}, {"ssm.state_size", d.d_state},
        {"ssm.time_step_rank", d.n_head}, {"ssm.group_count", d.n_group},
    };
    SN_ARCH_TRY(sn_arch_kv_u32s(w, a->gguf_arch, kv, sizeof kv / sizeof *kv, err));
    SN_ARCH_TRY(sn_arch_kv_f32(w, a->gguf_arch, "attention.layer_norm_rms_epsilon", d.eps, err));
    return sn_arch_kv_u32(w, NULL, "general.file_type", file_type, err);
}

/* ---- tensors ---- */

static void shape(uint32_t *n_dims, uint64_t *ne, uint32_t n, uint64_t ne0, uint64_t ne1, uint64_t ne2) {
    *n_dims = n;
    for (int i = 0; i < SN_GGUF_MAX_DIMS; i++) ne[i] = 1;
    ne[0] = ne0;
    ne[1] = ne1;
    ne[2] = ne2;
}

const char *sn_arch_mamba2_mixer(const char *p, uint64_t E, uint64_t DI, uint64_t H, uint64_t G, uint64_t N,
                                 uint64_t K, sn_arch_tensor *out) {
    const uint64_t conv_ch = DI + 2 * G * N, in_proj = 2 * DI + 2 * G * N + H;
    if (!strcmp(p, "in_proj.weight")) {
        shape(&out->n_dims, out->ne, 2, E, in_proj, 1);
        return "ssm_in.weight";
    }
    if (!strcmp(p, "conv1d.weight")) { /* [C, 1, K] squeezed */
        shape(&out->n_dims, out->ne, 2, K, conv_ch, 1);
        shape(&out->src_n_dims, out->src_ne, 3, K, 1, conv_ch);
        return "ssm_conv1d.weight";
    }
    if (!strcmp(p, "conv1d.bias")) {
        shape(&out->n_dims, out->ne, 1, conv_ch, 1, 1);
        return "ssm_conv1d.bias";
    }
    if (!strcmp(p, "dt_bias")) {
        shape(&out->n_dims, out->ne, 1, H, 1, 1);
        return "ssm_dt.bias";
    }
    if (!strcmp(p, "A_log") || !strcmp(p, "D")) { /* a trailing dim; A = -exp(A_log) */
        shape(&out->n_dims, out->ne, 2, 1, H, 1);
        shape(&out->src_n_dims, out->src_ne, 1, H, 1, 1);
        if (p[0] == 'A') out->ew = SN_ARCH_EW_NEG_EXP;
        return p[0] == 'A' ? "ssm_a" : "ssm_d";
    }
    if (!strcmp(p, "norm.weight")) {
        shape(&out->n_dims, out->ne, 2, DI / G, G, 1);
        shape(&out->src_n_dims, out->src_ne, 1, DI, 1, 1);
        return "ssm_norm.weight";
    }
    if (!strcmp(p, "out_proj.weight")) {
        shape(&out->n_dims, out->ne, 2, DI, E, 1);
        return "ssm_out.weight";
    }
    return NULL;
}

static int map_tensor(const sn_arch *a, const sn_hf_config *c, const char *hf_in, sn_arch_tensor *out,
                      sn_err *err) {
    memset(out, 0, sizeof(*out));
    const mamba2_dims d = dims_of(c);
    const char *hf = hf_in;
    if (!strncmp(hf, "model.backbone", 14) || !strncmp(hf, "model.lm_head", 13)) hf += 6; /* Codestral */
    uint64_t E = (uint64_t)d.d_model, V = (uint64_t)c->vocab_size, DI = (uint64_t)d.d_inner;
    uint64_t H = (uint64_t)d.n_head, G = (uint64_t)d.n_group, N = (uint64_t)d.d_state, K = (uint64_t)d.d_conv;
    if (!strcmp(hf, "backbone.embeddings.weight") || !strcmp(hf, "backbone.embedding.weight")) {
        snprintf(out->gguf_name, sizeof out->gguf_name, "token_embd.weight");
        shape(&out->n_dims, out->ne, 2, E, V, 1);
        return SN_ARCH_MAP_OK;
    }
    if (!strcmp(hf, "lm_head.weight")) {
        snprintf(out->gguf_name, sizeof out->gguf_name, "output.weight");
        shape(&out->n_dims, out->ne, 2, E, V, 1);
        return SN_ARCH_MAP_OK;
    }
    if (!strcmp(hf, "backbone.norm_f.weight")) {
        snprintf(out->gguf_name, sizeof out->gguf_name, "output_norm.weight");
        shape(&out->n_dims, out->ne, 1, E, 1, 1);
        return SN_ARCH_MAP_OK;
    }
    static const char pfx[] = "backbone.layers.";
    if (strncmp(hf, pfx, sizeof pfx - 1) == 0 && isdigit((unsigned char)hf[sizeof pfx - 1])) {
        const char *p = hf + sizeof pfx - 1;
        uint64_t bid = 0;
        while (isdigit((unsigned char)*p) && bid < 1000000) bid = bid * 10 + (uint64_t)(*p++ - '0');
        if (*p++ != '.') goto unmapped;
        const char *g = NULL;
        if (!strcmp(p, "norm.weight")) {
            g = "attn_norm.weight";
            shape(&out->n_dims, out->ne, 1, E, 1, 1);
        } else if (!strncmp(p, "mixer.", 6)) {
            g = sn_arch_mamba2_mixer(p + 6, E, DI, H, G, N, K, out);
        }
        if (!g) goto unmapped;
        if (bid >= (uint64_t)c->n_layers)
            return sn_err_set(err, SN_EFORMAT, "tensor '%s' is in layer %llu but config.json has %lld layers",
                              hf_in, (unsigned long long)bid, (long long)c->n_layers);
        snprintf(out->gguf_name, sizeof out->gguf_name, "blk.%llu.%s", (unsigned long long)bid, g);
        return SN_ARCH_MAP_OK;
    }
unmapped:
    return sn_err_set(err, SN_EUNSUPPORTED, "cannot map tensor '%s' (architecture %s)", hf_in, a->gguf_arch);
}

static sn_status extra_tensors(const sn_arch *a, const sn_hf_config *c, sn_arch_extra *out, size_t n_max,
                               size_t *n_out, sn_err *err) {
    (void)a, (void)c, (void)out, (void)n_max, (void)err;
    *n_out = 0;
    return SN_OK;
}

static const sn_arch_class k_classes[] = {{"Mamba2ForCausalLM", NULL}, {NULL, NULL}};
/* tokenizer.model -> SPM, tokenizer.json -> BPE. The reference's last resort, its bundled GPT-NeoX
 * vocabulary file, is not something sunny ships: a folder with neither is refused. */
static const char *const k_vocab_files[] = {"tokenizer.json", "tokenizer.model", NULL};
static const char *const k_keep_f32[] = {"ssm_conv1d.weight", NULL};  /* MODEL_TENSOR.SSM_CONV1D */
static const char *const k_required[] = {"token_embd.weight", "output_norm.weight", NULL};
static const char *const k_layer_required[] = {
    "attn_norm.weight", "ssm_in.weight", "ssm_conv1d.weight", "ssm_conv1d.bias", "ssm_dt.bias", "ssm_a",
    "ssm_d", "ssm_norm.weight", "ssm_out.weight", NULL};

const sn_arch sn_arch_mamba2 = {
    .gguf_arch = "mamba2", .classes = k_classes, .vocab = SN_ARCH_VOCAB_TEXT, .vocab_files = k_vocab_files,
    .keep_f32 = k_keep_f32, .prepare_config = prepare_config,
    .check_config = check_config, .write_kv = write_kv, .map_tensor = map_tensor,
    .extra_tensors = extra_tensors, .required = k_required, .required_per_layer = k_layer_required};
