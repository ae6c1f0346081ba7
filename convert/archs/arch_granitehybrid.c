/* arch_granitehybrid.c - Granite 4.0-H: GraniteMoeHybridForCausalLM -> "granitehybrid".
 *
 * Mirrors llama.cpp's converter (conversion/granite.py, GraniteHybridModel: Mamba2Model and
 * GraniteMoeModel in one): config.json read raw, the Mamba-2 sizes found under their plain or
 * "mamba_"-prefixed keys, layer_types (or attn_layer_indices, or attn_layer_period/offset) naming
 * the attention layers. Keys, in the reference's order: the Llama ones (TextModel's, vocab_size,
 * rope.dimension_count), Granite's multipliers (attention.scale, embedding_scale, residual_scale,
 * logit_scale), expert_shared_feed_forward_length, the ssm.* sizes, attention.head_count_kv again as
 * a per-layer list (0 for the Mamba layers), rope.scaling.finetuned false (no rope) and
 * context_length again as 2^20. Tensors: Mamba layers as Mamba2Model maps them (A = -exp(A_log),
 * conv1d squeezed, the gated norm as (n_group, d_inner / n_group)), attention layers as LlamaModel
 * (q/k permuted), the experts' fused input_linear [E, 2F, D] split into gate and up stacks, the
 * shared_mlp's into ffn_{gate,up}_shexp (a dense model: ffn_{gate,up,down}). The vocabulary is
 * Mamba2Model.set_vocab's, vocab_size padded to a multiple of 8. */
#include "arch.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t d_model, d_inner, n_group, d_conv, d_state, n_head, d_head, n_kv, shared_ff, n_expert, n_ff;
} gh_dims;

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* GraniteHybridModel.find_hparam: the keys, then each with the "mamba_" prefix; the first present
 * (a number) or -1 */
static int64_t hparam(const sn_hf_config *c, const char *const *keys) {
    char pk[96];
    for (int pass = 0; pass < 2; pass++)
        for (const char *const *k = keys; *k; k++) {
            snprintf(pk, sizeof pk, "%s%s", pass ? "mamba_" : "", *k);
            const cJSON *v = get(c->root, pk);
            if (v) return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : -1;
        }
    return -1;
}

#define KEYS(...) ((const char *const[]){__VA_ARGS__, NULL})

static gh_dims dims_of(const sn_hf_config *c) {
    gh_dims d;
    d.d_model = hparam(c, KEYS("mamba_head_dim", "hidden_size", "d_model"));
    const int64_t expand = hparam(c, KEYS("expand", "num_heads"));
    d.d_inner = expand > 0 && d.d_model > 0 ? expand * d.d_model : -1;
    d.n_group = hparam(c, KEYS("n_groups", "num_groups"));
    d.d_conv = hparam(c, KEYS("conv_kernel", "d_conv"));
    d.d_state = hparam(c, KEYS("state_size", "d_state", "state_dim", "ssm_state_size"));
    d.n_head = hparam(c, KEYS("n_heads", "num_heads"));
    d.d_head = hparam(c, KEYS("d_head"));
    if (d.d_head <= 0) d.d_head = 64;
    d.n_kv = hparam(c, KEYS("num_key_value_heads", "n_head_kv"));
    const cJSON *s = get(c->root, "shared_intermediate_size");
    d.shared_ff = cJSON_IsNumber(s) ? (int64_t)s->valuedouble : 0;
    d.n_expert = sn_arch_expert_count(c);
    d.n_ff = c->intermediate_size;
    return d;
}

/* 1 if layer il is an attention layer (GraniteHybridModel.get_attn_layers) */
static int is_attn(const sn_hf_config *c, int64_t il) {
    const cJSON *lt = get(c->root, "layer_types");
    if (cJSON_IsArray(lt)) {
        const cJSON *x = cJSON_GetArrayItem(lt, (int)il);
        return cJSON_IsString(x) && !strcmp(x->valuestring, "attention");
    }
    const cJSON *idx = get(c->root, "attn_layer_indices");
    if (cJSON_IsArray(idx) && cJSON_GetArraySize(idx) > 0) {
        const cJSON *x;
        cJSON_ArrayForEach(x, idx) if (cJSON_IsNumber(x) && (int64_t)x->valuedouble == il) return 1;
        return 0;
    }
    const cJSON *per = get(c->root, "attn_layer_period"), *off = get(c->root, "attn_layer_offset");
    return cJSON_IsNumber(per) && cJSON_IsNumber(off) && per->valuedouble >= 1 &&
           il % (int64_t)per->valuedouble == (int64_t)off->valuedouble;
}

/* GraniteModel pops head_dim before the Llama keys; with Mamba layers the vocabulary is padded to a
 * multiple of 8 (set_vocab) */
static sn_status prepare_config(const sn_arch *a, sn_hf_config *c, sn_err *err) {
    (void)a;
    c->head_dim = -1;
    c->has_head_dim = 0;
    if (c->vocab_size <= 0 || c->vocab_size > (int64_t)1 << 31)
        return sn_err_set(err, SN_EFORMAT, "config.json: \"vocab_size\" is missing or not an integer in 1..2^31");
    c->vocab_size = (c->vocab_size + 7) / 8 * 8;
    return SN_OK;
}

static sn_status check_config(const sn_arch *a, const sn_hf_config *c, sn_err *err) {
    const char *f = "config.json";
    (void)a;
    const gh_dims d = dims_of(c);
    const sn_arch_value req[] = {
        {"\"hidden_size\"", c->hidden_size}, {"\"num_hidden_layers\"", c->n_layers},
        {"\"num_attention_heads\"", c->n_heads}, {"\"intermediate_size\"", c->intermediate_size},
        {"\"vocab_size\"", c->vocab_size},
        {"mamba_expand (expand)", d.d_inner}, {"mamba_n_groups (n_groups)", d.n_group},
        {"mamba_d_conv (conv_kernel)", d.d_conv}, {"mamba_d_state (state_size)", d.d_state},
        {"mamba_n_heads (num_heads)", d.n_head}, {"num_key_value_heads", d.n_kv},
    };
    SN_ARCH_TRY(sn_arch_check_range(req, sizeof req / sizeof *req, 24, err));
    if (c->hidden_size % c->n_heads != 0 || c->n_heads % d.n_kv != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: hidden_size %lld, num_attention_heads %lld and num_key_value_heads "
                          "%lld do not divide", f, (long long)c->hidden_size, (long long)c->n_heads, (long long)d.n_kv);
    if (d.n_expert > 0) {
        const cJSON *k = get(c->root, "num_experts_per_tok");
        if (!cJSON_IsNumber(k) || k->valuedouble < 1 || k->valuedouble > (double)d.n_expert)
            return sn_err_set(err, SN_EFORMAT, "%s: num_experts_per_tok is missing or not in 1..%lld", f,
                              (long long)d.n_expert);
    }
    int64_t n_attn = 0;
    for (int64_t il = 0; il < c->n_layers; il++) n_attn += is_attn(c, il);
    if (n_attn == c->n_layers)
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: every layer is an attention layer: llama.cpp converts such a "
                          "model as granite / granitemoe, which sunny does not convert", f);
    if (d.d_inner != 2 * d.d_model)
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: the Mamba inner size %lld is not 2 x hidden_size %lld, which "
                          "llama.cpp's granitehybrid loader requires", f, (long long)d.d_inner, (long long)d.d_model);
    if (d.d_inner % d.d_head != 0 || d.d_inner % d.n_group != 0 || d.n_head % d.n_group != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: the Mamba inner size %lld does not split into d_head %lld / the %lld "
                          "heads into n_groups %lld", f, (long long)d.d_inner, (long long)d.d_head,
                          (long long)d.n_head, (long long)d.n_group);
    const cJSON *act = get(c->root, "hidden_act");
    if (act && !cJSON_IsNull(act) && !(cJSON_IsString(act) && !strcmp(act->valuestring, "silu")))
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: hidden_act must be silu (as llama.cpp's converter asserts)", f);
    if (d.n_expert > 0 && d.shared_ff <= 0)
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: experts without shared_intermediate_size: llama.cpp's "
                          "converter needs the shared expert's width", f);
    return SN_OK;
}

/* ---- metadata ---- */

static sn_status kv_scale(sn_gguf_writer *w, const char *A, const sn_hf_config *c, const char *key, const char *suffix,
                          sn_err *err) {
    double v;
    return sn_hf_config_get_num(c, key, &v) && v != 0 ? sn_arch_kv_f32(w, A, suffix, v, err) : SN_OK;
}

static sn_status write_kv(const sn_arch *a, const sn_hf_config *c, uint32_t file_type, sn_gguf_writer *w,
                          sn_err *err) {
    const char *A = a->gguf_arch;
    const gh_dims d = dims_of(c);
    SN_ARCH_TRY(sn_arch_llama.write_kv(a, c, file_type, w, err));
    SN_ARCH_TRY(kv_scale(w, A, c, "attention_multiplier", "attention.scale", err));
    SN_ARCH_TRY(kv_scale(w, A, c, "embedding_multiplier", "embedding_scale", err));
    SN_ARCH_TRY(kv_scale(w, A, c, "residual_multiplier", "residual_scale", err));
    SN_ARCH_TRY(kv_scale(w, A, c, "logits_scaling", "logit_scale", err));
    if (d.shared_ff > 0) SN_ARCH_TRY(sn_arch_kv_u32(w, A, "expert_shared_feed_forward_length", d.shared_ff, err));
    const sn_arch_value ssm[] = {{"ssm.conv_kernel", d.d_conv}, {"ssm.state_size", d.d_state},
                                 {"ssm.group_count", d.n_group}, {"ssm.inner_size", d.d_inner},
                                 {"ssm.time_step_rank", d.n_head}};
    SN_ARCH_TRY(sn_arch_kv_u32s(w, A, ssm, sizeof ssm / sizeof *ssm, err));
    int32_t *kv = malloc((size_t)c->n_layers * sizeof *kv);
    if (!kv) return sn_err_set(err, SN_ENOMEM, "out of memory");
    for (int64_t il = 0; il < c->n_layers; il++) kv[il] = is_attn(c, il) ? (int32_t)d.n_kv : 0;
    char key[128];
    snprintf(key, sizeof key, "%s.attention.head_count_kv", A);
    sn_status st = sn_gguf_writer_set_arr(w, key, SN_GGUF_I32, kv, (uint64_t)c->n_layers);
    free(kv);
    if (st != SN_OK) return sn_err_set(err, st, "cannot set %s", key);
    const cJSON *rd = get(c->root, "attn_rotary_emb");
    if (cJSON_IsNumber(rd) && rd->valuedouble != 0)
        SN_ARCH_TRY(sn_arch_kv_u32(w, A, "rope.dimension_count", (int64_t)rd->valuedouble, err));
    snprintf(key, sizeof key, "%s.rope.scaling.finetuned", A);
    if ((st = sn_gguf_writer_set_bool(w, key, 0)) != SN_OK) return sn_err_set(err, st, "cannot set %s", key);
    return sn_arch_kv_u32(w, A, "context_length", 1 << 20, err);
}

/* ---- tensors ---- */

static void shape(uint32_t *n_dims, uint64_t *ne, uint32_t n, uint64_t ne0, uint64_t ne1, uint64_t ne2) {
    *n_dims = n;
    for (int i = 0; i < SN_GGUF_MAX_DIMS; i++) ne[i] = 1;
    ne[0] = ne0;
    ne[1] = ne1;
    ne[2] = ne2;
}

/* a fused [.., 2F, D] input_linear: gate rows first, then up (GraniteMoeModel.modify_tensors) */
static void split_gate_up(sn_arch_tensor *out, uint64_t bid, const char *gate, const char *up, uint64_t E,
                          uint64_t F, uint64_t n, uint32_t n_dims) {
    snprintf(out->gguf_name, sizeof out->gguf_name, "blk.%llu.%s.weight", (unsigned long long)bid, gate);
    snprintf(out->also_name, sizeof out->also_name, "blk.%llu.%s.weight", (unsigned long long)bid, up);
    shape(&out->n_dims, out->ne, n_dims, E, F, n);
    shape(&out->src_n_dims, out->src_ne, n_dims, E, 2 * F, n);
    out->slice_group = 2 * F;
    out->slice_off = 0;
    out->also_slice_off = F;
}

static int map_layer(const sn_hf_config *c, const gh_dims *d, uint64_t bid, const char *p, sn_arch_tensor *out) {
    const uint64_t E = (uint64_t)d->d_model, DI = (uint64_t)d->d_inner, H = (uint64_t)d->n_head;
    const uint64_t G = (uint64_t)d->n_group, N = (uint64_t)d->d_state, K = (uint64_t)d->d_conv;
    const uint64_t NE = (uint64_t)d->n_expert, F = (uint64_t)d->n_ff;
    const uint64_t FS = (uint64_t)d->shared_ff;
    const char *g = NULL;
    if (!strcmp(p, "shared_mlp.input_linear.weight")) {
        if (NE > 0) split_gate_up(out, bid, "ffn_gate_shexp", "ffn_up_shexp", E, FS, 1, 2);
        else split_gate_up(out, bid, "ffn_gate", "ffn_up", E, FS, 1, 2);
        return 1;
    }
    if (!strcmp(p, "shared_mlp.output_linear.weight")) {
        g = NE > 0 ? "ffn_down_shexp.weight" : "ffn_down.weight";
        shape(&out->n_dims, out->ne, 2, FS, E, 1);
    } else if (NE > 0 && !strcmp(p, "block_sparse_moe.input_linear.weight")) {
        split_gate_up(out, bid, "ffn_gate_exps", "ffn_up_exps", E, F, NE, 3);
        return 1;
    } else if (NE > 0 && !strcmp(p, "block_sparse_moe.output_linear.weight")) {
        g = "ffn_down_exps.weight";
        shape(&out->n_dims, out->ne, 3, F, E, NE);
    } else if (NE > 0 && !strcmp(p, "block_sparse_moe.router.layer.weight")) {
        g = "ffn_gate_inp.weight";
        shape(&out->n_dims, out->ne, 2, E, NE, 1);
    } else if (is_attn(c, (int64_t)bid)) {
        return 0; /* the Llama names */
    } else if (!strcmp(p, "input_layernorm.weight")) {
        g = "attn_norm.weight";
        shape(&out->n_dims, out->ne, 1, E, 1, 1);
    } else if (!strcmp(p, "post_attention_layernorm.weight")) {
        g = "ffn_norm.weight";
        shape(&out->n_dims, out->ne, 1, E, 1, 1);
    } else if (!strncmp(p, "mamba.", 6)) {
        g = sn_arch_mamba2_mixer(p + 6, E, DI, H, G, N, K, out);
    }
    if (!g) return -1;
    snprintf(out->gguf_name, sizeof out->gguf_name, "blk.%llu.%s", (unsigned long long)bid, g);
    return 1;
}

static int map_tensor(const sn_arch *a, const sn_hf_config *c, const char *hf, sn_arch_tensor *out, sn_err *err) {
    memset(out, 0, sizeof(*out));
    static const char pfx[] = "model.layers.";
    if (!strncmp(hf, pfx, sizeof pfx - 1) && isdigit((unsigned char)hf[sizeof pfx - 1])) {
        const char *p = hf + sizeof pfx - 1;
        uint64_t bid = 0;
        while (isdigit((unsigned char)*p) && bid < 1000000) bid = bid * 10 + (uint64_t)(*p++ - '0');
        if (*p++ != '.') goto unmapped;
        if (bid >= (uint64_t)c->n_layers)
            return sn_err_set(err, SN_EFORMAT, "tensor '%s' is in layer %llu but config.json has %lld layers", hf,
                              (unsigned long long)bid, (long long)c->n_layers);
        const gh_dims d = dims_of(c);
        const int r = map_layer(c, &d, bid, p, out);
        if (r > 0) return SN_ARCH_MAP_OK;
        if (r < 0) goto unmapped;
    }
    return sn_arch_llama.map_tensor(a, c, hf, out, err); /* embedding, output norm, attention layers */
unmapped:
    return sn_err_set(err, SN_EUNSUPPORTED, "cannot map tensor '%s' (architecture %s)", hf, a->gguf_arch);
}

static sn_status extra_tensors(const sn_arch *a, const sn_hf_config *c, sn_arch_extra *out, size_t n_max,
                               size_t *n_out, sn_err *err) {
    (void)a, (void)c, (void)out, (void)n_max, (void)err;
    *n_out = 0;
    return SN_OK;
}

static const sn_arch_class k_classes[] = {{"GraniteMoeHybridForCausalLM", NULL}, {NULL, NULL}};
/* tokenizer.model -> SPM, tokenizer.json -> BPE (Mamba2Model.set_vocab) */
static const char *const k_vocab_files[] = {"tokenizer.json", "tokenizer.model", NULL};
static const char *const k_keep_f32[] = {"ssm_conv1d.weight", "ffn_gate_inp.weight", NULL};
static const char *const k_required[] = {"token_embd.weight", "output_norm.weight", NULL};
static const char *const k_layer_required[] = {"attn_norm.weight", "ffn_norm.weight", "ssm_in.weight|attn_q.weight",
                                               NULL};

const sn_arch sn_arch_granitehybrid = {
    .gguf_arch = "granitehybrid", .classes = k_classes, .vocab = SN_ARCH_VOCAB_TEXT, .vocab_files = k_vocab_files,
    .keep_f32 = k_keep_f32, .prepare_config = prepare_config, .check_config = check_config, .write_kv = write_kv,
    .map_tensor = map_tensor, .extra_tensors = extra_tensors, .required = k_required,
    .required_per_layer = k_layer_required};
