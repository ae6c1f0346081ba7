/* arch_gptoss.c - OpenAI's gpt-oss: GptOssForCausalLM -> "gpt-oss".
 *
 * Mirrors llama.cpp's converter (conversion/gpt_oss.py, GptOssModel): the generic TextModel keys, then
 * attention.sliding_window and expert_feed_forward_length (= intermediate_size). The released
 * checkpoints hold every expert matrix as MXFP4 (`mlp.experts.{gate_up,down}_proj_blocks` +
 * `_scales`, output features first): those are repacked into GGML's MXFP4 blocks without
 * dequantizing, whatever the outtype, and written before all other tensors (the reference writes them
 * from generate_extra_tensors); with a config whose quantization_config says "mxfp4", an f32 / f16 /
 * bf16 conversion is file type MOSTLY_MXFP4_MOE. Fine-tunes often save the experts dequantized
 * (`mlp.experts.gate_up_proj` [E, D, 2F], `down_proj` [E, F, D], input features first): those are
 * transposed per expert and converted like any weight. gate_up interleaves its rows (gate on the
 * even ones, up on the odd ones), and so does its bias. `self_attn.sinks` (one logit per head)
 * becomes attn_sinks.weight; the router is ffn_gate_inp (weight kept F32, with its bias). The
 * vocabulary is the o200k BPE of tokenizer.json (pre-tokenizer "gpt-4o"). */
#include "arch.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define TRY SN_ARCH_TRY

static const char *const k_count_keys[] = {"num_local_experts", "num_experts", "n_routed_experts"};
static const char *const k_used_keys[] = {"num_experts_per_tok", "num_experts_per_token", "top_k_experts"};

/* The first of n keys the config has as a number (-1 when none). */
static int64_t first_num(const sn_hf_config *c, const char *const *keys, size_t n) {
    double d;
    for (size_t i = 0; i < n; i++)
        if (sn_hf_config_get_num(c, keys[i], &d)) return d >= 0 && d <= 9.2e18 ? (int64_t)d : -1;
    return -1;
}

/* quantization_config.quant_method == "mxfp4": the released checkpoints (and the reference's file type) */
static int is_mxfp4(const sn_hf_config *c) {
    const cJSON *q = c->root ? cJSON_GetObjectItemCaseSensitive(c->root, "quantization_config") : NULL;
    const cJSON *m = cJSON_IsObject(q) ? cJSON_GetObjectItemCaseSensitive(q, "quant_method") : NULL;
    return cJSON_IsString(m) && m->valuestring && strcmp(m->valuestring, "mxfp4") == 0;
}

static sn_status check_config(const sn_arch *a, const sn_hf_config *c, sn_err *err) {
    (void)a;
    double win = -1;
    int has_win = sn_hf_config_get_num(c, "sliding_window", &win);
    const sn_arch_value req[] = {
        {"\"hidden_size\"", c->hidden_size}, {"\"num_hidden_layers\"", c->n_layers},
        {"\"num_attention_heads\"", c->n_heads}, {"\"num_key_value_heads\"", c->n_kv_heads},
        {"\"head_dim\"", c->head_dim}, {"\"intermediate_size\"", c->intermediate_size},
        {"\"vocab_size\"", c->vocab_size}, {"\"num_local_experts\"", first_num(c, k_count_keys, 3)},
        {"\"num_experts_per_tok\"", first_num(c, k_used_keys, 3)},
        {"\"sliding_window\"", has_win && win == (double)(int64_t)win ? (int64_t)win : -1},
    };
    TRY(sn_arch_check_range(req, sizeof req / sizeof *req, 30, err));
    if (c->n_heads % c->n_kv_heads != 0)
        return sn_err_set(err, SN_EFORMAT, "config.json: num_attention_heads %lld is not a multiple of "
                          "num_key_value_heads %lld", (long long)c->n_heads, (long long)c->n_kv_heads);
    if (first_num(c, k_used_keys, 3) > first_num(c, k_count_keys, 3))
        return sn_err_set(err, SN_EFORMAT, "config.json: num_experts_per_tok %lld exceeds num_local_experts %lld",
                          (long long)first_num(c, k_used_keys, 3), (long long)first_num(c, k_count_keys, 3));
    if (c->rope_scaling == SN_ROPE_SCALING_YARN && c->rope_factor != 0 && c->rope_orig_ctx < 0)
        return sn_err_set(err, SN_EFORMAT, "config.json: yarn rope_scaling without original_max_position_embeddings");
    if (is_mxfp4(c) && (c->hidden_size % 32 || c->intermediate_size % 32))
        return sn_err_set(err, SN_EFORMAT, "config.json: MXFP4 experts need hidden_size (%lld) and intermediate_size "
                          "(%lld) to be multiples of 32", (long long)c->hidden_size, (long long)c->intermediate_size);
    return SN_OK;
}

static sn_status write_kv(const sn_arch *a, const sn_hf_config *c, uint32_t file_type, sn_gguf_writer *w,
                          sn_err *err) {
    const char *A = a->gguf_arch;
    double win = 0;
    /* ModelBase.prepare_metadata: an mxfp4 checkpoint converted to f32/f16/bf16 is MOSTLY_MXFP4_MOE */
    if (is_mxfp4(c) && (file_type == 0 || file_type == 1 || file_type == 32)) file_type = 38;
    TRY(sn_arch_text_model_kv(A, c, file_type, w, err));
    sn_hf_config_get_num(c, "sliding_window", &win);
    TRY(sn_arch_kv_u32(w, A, "attention.sliding_window", (int64_t)win, err));
    return sn_arch_kv_u32(w, A, "expert_feed_forward_length", c->intermediate_size, err);
}

/* ---- tensors ---- */

static void shape(sn_arch_tensor *o, uint32_t n, uint64_t ne0, uint64_t ne1, uint64_t ne2) {
    o->n_dims = n;
    for (int i = 0; i < SN_GGUF_MAX_DIMS; i++) o->ne[i] = 1;
    o->ne[0] = ne0;
    o->ne[1] = ne1;
    o->ne[2] = ne2;
}

static void src_shape(sn_arch_tensor *o, uint32_t n, uint64_t ne0, uint64_t ne1, uint64_t ne2, uint64_t ne3) {
    o->src_n_dims = n;
    const uint64_t v[4] = {ne0, ne1, ne2, ne3};
    for (int i = 0; i < SN_GGUF_MAX_DIMS; i++) o->src_ne[i] = i < 4 ? v[i] : 1;
}

/* gate on the even source rows (elements), up on the odd ones */
static void split_gate_up(sn_arch_tensor *o, uint64_t bid, const char *suffix) {
    snprintf(o->gguf_name, sizeof o->gguf_name, "blk.%llu.ffn_gate_exps.%s", (unsigned long long)bid, suffix);
    snprintf(o->also_name, sizeof o->also_name, "blk.%llu.ffn_up_exps.%s", (unsigned long long)bid, suffix);
    o->slice_group = 2;
    o->slice_off = 0;
    o->also_slice_off = 1;
}

/* The expert tensors of layer bid (p: the name after "mlp.experts."); -1 when p is none of them. */
static int map_experts(const sn_hf_config *c, uint64_t bid, const char *p, sn_arch_tensor *o) {
    uint64_t D = (uint64_t)c->hidden_size, F = (uint64_t)c->intermediate_size;
    uint64_t E = (uint64_t)first_num(c, k_count_keys, 3);
    if (!strcmp(p, "gate_up_proj_scales") || !strcmp(p, "down_proj_scales")) return SN_ARCH_MAP_SKIP; /* with blocks */
    if (!strcmp(p, "gate_up_proj_blocks")) { /* [E, 2F, D/32, 16] */
        split_gate_up(o, bid, "weight");
        shape(o, 3, D, F, E);
        src_shape(o, 4, 16, D / 32, 2 * F, E);
        o->mxfp4 = o->early = 1;
    } else if (!strcmp(p, "down_proj_blocks")) { /* [E, D, F/32, 16] */
        snprintf(o->gguf_name, sizeof o->gguf_name, "blk.%llu.ffn_down_exps.weight", (unsigned long long)bid);
        shape(o, 3, F, D, E);
        src_shape(o, 4, 16, F / 32, D, E);
        o->mxfp4 = o->early = 1;
    } else if (!strcmp(p, "gate_up_proj")) { /* [E, D, 2F], transposed per expert */
        split_gate_up(o, bid, "weight");
        shape(o, 3, D, F, E);
        src_shape(o, 3, 2 * F, D, E, 1);
        o->transpose = 1;
    } else if (!strcmp(p, "down_proj")) { /* [E, F, D], transposed per expert */
        snprintf(o->gguf_name, sizeof o->gguf_name, "blk.%llu.ffn_down_exps.weight", (unsigned long long)bid);
        shape(o, 3, F, D, E);
        src_shape(o, 3, D, F, E, 1);
        o->transpose = 1;
    } else if (!strcmp(p, "gate_up_proj_bias")) { /* [E, 2F] */
        split_gate_up(o, bid, "bias");
        shape(o, 2, F, E, 1);
        src_shape(o, 2, 2 * F, E, 1, 1);
        o->elem_rows = 1;
    } else if (!strcmp(p, "down_proj_bias")) {
        snprintf(o->gguf_name, sizeof o->gguf_name, "blk.%llu.ffn_down_exps.bias", (unsigned long long)bid);
        shape(o, 2, D, E, 1);
    } else return -1;
    return SN_ARCH_MAP_OK;
}

static int map_tensor(const sn_arch *a, const sn_hf_config *c, const char *hf, sn_arch_tensor *out, sn_err *err) {
    memset(out, 0, sizeof(*out));
    uint64_t D = (uint64_t)c->hidden_size, V = (uint64_t)c->vocab_size, HD = (uint64_t)c->head_dim;
    uint64_t NQ = (uint64_t)c->n_heads * HD, NKV = (uint64_t)c->n_kv_heads * HD;
    uint64_t E = (uint64_t)first_num(c, k_count_keys, 3);
    static const struct { const char *hf, *gguf; uint32_t n; } k_global[] = {
        {"model.embed_tokens.weight", "token_embd.weight", 2}, {"lm_head.weight", "output.weight", 2},
        {"model.norm.weight", "output_norm.weight", 1}};
    for (size_t i = 0; i < sizeof k_global / sizeof *k_global; i++)
        if (!strcmp(hf, k_global[i].hf)) {
            snprintf(out->gguf_name, sizeof out->gguf_name, "%s", k_global[i].gguf);
            shape(out, k_global[i].n, D, k_global[i].n == 2 ? V : 1, 1);
            return SN_ARCH_MAP_OK;
        }
    static const char pfx[] = "model.layers.";
    if (strncmp(hf, pfx, sizeof pfx - 1) != 0 || !isdigit((unsigned char)hf[sizeof pfx - 1])) goto unmapped;
    const char *p = hf + sizeof pfx - 1;
    uint64_t bid = 0;
    while (isdigit((unsigned char)*p) && bid < 1000000) bid = bid * 10 + (uint64_t)(*p++ - '0');
    if (*p++ != '.') goto unmapped;
    if (bid >= (uint64_t)c->n_layers)
        return sn_err_set(err, SN_EFORMAT, "tensor '%s' is in layer %llu but config.json has num_hidden_layers = %lld",
                          hf, (unsigned long long)bid, (long long)c->n_layers);
    if (!strncmp(p, "mlp.experts.", 12)) {
        int r = map_experts(c, bid, p + 12, out);
        if (r >= 0) return r;
        goto unmapped;
    }
    /* kind: the output shape, below */
    static const struct { const char *hf, *gguf; int kind; } k_layer[] = {
        {"input_layernorm.weight", "attn_norm.weight", 0}, {"post_attention_layernorm.weight", "post_attention_norm.weight", 0},
        {"self_attn.q_proj.weight", "attn_q.weight", 1}, {"self_attn.q_proj.bias", "attn_q.bias", 2},
        {"self_attn.k_proj.weight", "attn_k.weight", 3}, {"self_attn.k_proj.bias", "attn_k.bias", 4},
        {"self_attn.v_proj.weight", "attn_v.weight", 3}, {"self_attn.v_proj.bias", "attn_v.bias", 4},
        {"self_attn.o_proj.weight", "attn_output.weight", 5}, {"self_attn.o_proj.bias", "attn_output.bias", 0},
        {"self_attn.sinks", "attn_sinks.weight", 6}, {"mlp.router.weight", "ffn_gate_inp.weight", 7},
        {"mlp.router.bias", "ffn_gate_inp.bias", 8},
    };
    for (size_t i = 0; i < sizeof k_layer / sizeof *k_layer; i++) {
        if (strcmp(p, k_layer[i].hf)) continue;
        /* the odd kinds are matrices */
        const uint64_t ne[9][2] = {{D, 1}, {D, NQ}, {NQ, 1}, {D, NKV}, {NKV, 1}, {NQ, D},
                                   {(uint64_t)c->n_heads, 1}, {D, E}, {E, 1}};
        int k = k_layer[i].kind;
        shape(out, k % 2 ? 2 : 1, ne[k][0], ne[k][1], 1);
        snprintf(out->gguf_name, sizeof out->gguf_name, "blk.%llu.%s", (unsigned long long)bid, k_layer[i].gguf);
        return SN_ARCH_MAP_OK;
    }
unmapped:
    return sn_err_set(err, SN_EUNSUPPORTED, "cannot map tensor '%s' (architecture %s)", hf, a->gguf_arch);
}

/* transformers' GptOssConfig defaults: vocab hidden inter layers heads kv_heads max_pos rope_theta
 * rms_eps head_dim bos eos */
static const sn_hf_defaults k_gptoss_def = {201088, 2880, 2880, 36, 64, 8, 131072, 150000.0, 1e-5, 64, -1, -1};
static const sn_arch_class k_classes[] = {{"GptOssForCausalLM", &k_gptoss_def}, {NULL, NULL}};
static const char *const k_vocab_files[] = {"tokenizer.json", NULL};
static const char *const k_router[] = {"ffn_gate_inp.weight", NULL};
static const char *const k_required[] = {"token_embd.weight", "output_norm.weight", "output.weight", NULL};
static const char *const k_layer_required[] = {
    "attn_norm.weight", "attn_q.weight", "attn_q.bias", "attn_k.weight", "attn_k.bias", "attn_v.weight",
    "attn_v.bias", "attn_output.weight", "attn_output.bias", "attn_sinks.weight", "post_attention_norm.weight",
    "ffn_gate_inp.weight", "ffn_gate_inp.bias", "ffn_gate_exps.weight", "ffn_up_exps.weight",
    "ffn_down_exps.weight", "ffn_gate_exps.bias", "ffn_up_exps.bias", "ffn_down_exps.bias", NULL};

const sn_arch sn_arch_gptoss = {
    .gguf_arch = "gpt-oss", .classes = k_classes, .vocab = SN_ARCH_VOCAB_TEXT, .vocab_files = k_vocab_files,
    .keep_f32 = k_router, .check_config = check_config, .write_kv = write_kv, .map_tensor = map_tensor,
    .required = k_required, .required_per_layer = k_layer_required};
