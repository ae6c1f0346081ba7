/* quant_rules.c - llama-quantize's choice of each tensor's type for a quantized file type.
 *
 * llama-quantize (llama.cpp src/llama-quant.cpp) walks the tensors in its loader's order (layer,
 * then name) and, for each: leaves it as it is if it may not be quantized (fewer than 2 dims, a
 * name not ending in "weight", norms, routers, the small RWKV / Mamba matrices, ...); otherwise
 * starts from the file type's default type, adjusts it by the tensor's role (output and tied
 * token_embd, attn_v / attn_qkv by their running count, ffn_down by layer, attn_output, the
 * 8-expert and 70B cases), and falls back to a type whose block divides the row length. Counters
 * advance in that walk, so the caller must present the tensors in the same order. */
#include "convert_internal.h"

#include "ggml_types.h"

#include <stdio.h>
#include <string.h>

/* Substrings of names llama-quantize never quantizes (tensor_allows_quantization). */
static const char *const k_never[] = {
    "_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel", "per_layer_model_proj",
    "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight", "indexer.q_proj.weight",
    "time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight", "time_mix_w2.weight",
    "time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight", "time_mix_a0.weight", "time_mix_a1.weight",
    "time_mix_a2.weight", "time_mix_g1.weight", "time_mix_g2.weight", "time_mix_decay_w1.weight",
    "time_mix_decay_w2.weight", "time_mix_lerp_fused.weight", "attn_rel_b.weight", ".position_embd",
    "sam.pos_embd", "sam.neck.", "sam.net_", ".rel_pos", ".patch_embd", ".patch_merger", "a.rvq.codebook",
    "mm.a.code_embd", NULL};

int sn_quant_never(const char *name) {
    size_t n = strlen(name);
    if (n < 6 || strcmp(name + n - 6, "weight") != 0) return 1;
    if (!strcmp(name, "position_embd.weight") || !strcmp(name, "token_types.weight")) return 1;
    for (const char *const *s = k_never; *s; s++)
        if (strstr(name, *s)) return 1;
    return 0;
}

enum cat { C_OTHER, C_OUTPUT, C_TOKEN_EMBD, C_QKV, C_KV_B, C_V, C_K, C_Q, C_ATTN_OUT, C_UP, C_GATE, C_DOWN };

static enum cat category(const char *n) {
    if (!strcmp(n, "output.weight")) return C_OUTPUT;
    if (!strcmp(n, "token_embd.weight") || !strcmp(n, "per_layer_token_embd.weight")) return C_TOKEN_EMBD;
    static const struct { const char *s; enum cat c; } k[] = {
        {"attn_qkv.weight", C_QKV}, {"attn_kv_b.weight", C_KV_B}, {"attn_v.weight", C_V}, {"attn_k.weight", C_K},
        {"attn_q.weight", C_Q}, {"attn_output.weight", C_ATTN_OUT}, {"ffn_up", C_UP}, {"ffn_gate", C_GATE},
        {"ffn_down", C_DOWN}};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (strstr(n, k[i].s)) return k[i].c;
    return C_OTHER;
}

static int is_attn_v(enum cat c) { return c == C_V || c == C_QKV || c == C_KV_B; }

void sn_quant_state_init(sn_quant_state *qs, sn_outtype ot, const sn_arch *a, int64_t n_layer, int64_t n_head,
                         int64_t n_head_kv, int64_t n_expert) {
    memset(qs, 0, sizeof *qs);
    const sn_outtype_info *oi = sn_outtype_info_of(ot);
    qs->ftype = (int)oi->ftype;
    qs->default_type = oi->type;
    qs->n_layer = (int)n_layer;
    qs->n_gqa = n_head_kv > 0 ? (int)(n_head / n_head_kv) : 0;
    qs->n_expert = (int)n_expert;
    qs->tied = 1;
    /* llama.cpp's model type 70B, as the family's table row defines it */
    qs->is_70b = a && a->type_70b_layers && n_layer == a->type_70b_layers && (!a->type_70b_needs_gqa || n_head != n_head_kv);
}

void sn_quant_state_count(sn_quant_state *qs, const char *name) {
    enum cat c = category(name);
    if (is_attn_v(c)) qs->n_attn_v++;
    if (c == C_OUTPUT) qs->tied = 0;
}

static int more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

/* The layer index of an ffn tensor: the running count, or with experts the name's blk.N. */
static int layer_of(const sn_quant_state *qs, int counter, const char *name) {
    if (qs->n_expert <= 1) return counter;
    int l = -1;
    if (sscanf(name, "blk.%d.", &l) != 1 || l < 0 || l >= qs->n_layer) return -1;
    return l;
}

enum {
    F_Q2_K = 10, F_Q3_K_S = 11, F_Q3_K_M = 12, F_Q3_K_L = 13, F_Q4_K_S = 14, F_Q4_K_M = 15,
    F_Q5_K_M = 17, F_IQ4_NL = 25, F_IQ4_XS = 30
};

/* llama_tensor_get_type_impl for the file types sunny writes (no IQ1/IQ2/IQ3 mixes, no MXFP4,
 * no imatrix, never Falcon). Returns -1 if an expert tensor's name has no valid layer. */
static int role_type(sn_quant_state *qs, const char *name, uint64_t ne0, enum cat c) {
    const int f = qs->ftype;
    int t = qs->default_type;
    if (c == C_OUTPUT || (qs->tied && c == C_TOKEN_EMBD)) {
        if (ne0 % sn_ggml_blck_size(t)) return SN_GGML_Q8_0;
        return t != SN_GGML_Q8_0 ? SN_GGML_Q6_K : t;
    }
    if (c == C_TOKEN_EMBD) return t;
    if (is_attn_v(c)) {
        if (f == F_Q2_K) t = qs->n_gqa >= 4 ? SN_GGML_Q4_K : SN_GGML_Q3_K;
        else if (f == F_Q3_K_M) t = qs->i_attn_v < 2 ? SN_GGML_Q5_K : SN_GGML_Q4_K;
        else if (f == F_Q3_K_L) t = SN_GGML_Q5_K;
        else if ((f == F_IQ4_NL || f == F_IQ4_XS) && qs->n_gqa >= 4) t = SN_GGML_Q5_K;
        else if ((f == F_Q4_K_M || f == F_Q5_K_M) && more_bits(qs->i_attn_v, qs->n_attn_v)) t = SN_GGML_Q6_K;
        else if (f == F_Q4_K_S && qs->i_attn_v < 4) t = SN_GGML_Q5_K;
        if (qs->is_70b && (t == SN_GGML_Q3_K || t == SN_GGML_Q4_K)) t = SN_GGML_Q5_K;
        if (qs->n_expert == 8) t = SN_GGML_Q8_0;
        qs->i_attn_v++;
    } else if (c == C_K) {
        if (qs->n_expert == 8) t = SN_GGML_Q8_0;
    } else if (c == C_DOWN) {
        int i = layer_of(qs, qs->i_ffn_down, name), n = qs->n_layer;
        if (i < 0) return -1;
        if (f == F_Q2_K) t = SN_GGML_Q3_K;
        else if (f == F_Q3_K_M) t = i < n / 16 ? SN_GGML_Q5_K : SN_GGML_Q4_K;
        else if (f == F_Q3_K_L) t = SN_GGML_Q5_K;
        else if (f == F_Q4_K_M) { if (more_bits(i, n)) t = SN_GGML_Q6_K; }
        else if (i < n / 8 && (f == F_IQ4_NL || f == F_IQ4_XS)) t = SN_GGML_Q5_K;
        else if (f == F_Q5_K_M && more_bits(i, n)) t = SN_GGML_Q6_K;
        else if (f == F_Q4_K_S && i < n / 8) t = SN_GGML_Q5_K;
        qs->i_ffn_down++;
    } else if (c == C_ATTN_OUT) {
        if (qs->n_expert == 8) {
            if (f == F_Q2_K || f == F_Q3_K_S || f == F_Q3_K_M || f == F_IQ4_NL || f == F_Q4_K_S || f == F_Q4_K_M ||
                f == F_IQ4_XS)
                t = SN_GGML_Q5_K;
        } else if (f == F_Q2_K) t = SN_GGML_Q3_K;
        else if (f == F_Q3_K_M) t = SN_GGML_Q4_K;
        else if (f == F_Q3_K_L) t = SN_GGML_Q5_K;
    } else if (c == C_QKV) {
        /* unreachable: attn_qkv is attn_v-like above, as in llama.cpp (its own branch there is dead) */
    } else if (c == C_GATE || c == C_UP) {
        if (layer_of(qs, c == C_GATE ? qs->i_ffn_gate : qs->i_ffn_up, name) < 0) return -1;
        if (c == C_GATE) qs->i_ffn_gate++;
        else qs->i_ffn_up++;
    }
    return t;
}

/* tensor_type_fallback: a type whose block divides the row length. */
static int fallback(int t, uint64_t ne0) {
    if (ne0 % sn_ggml_blck_size(t) == 0) return t;
    int r;
    switch (t) {
    case SN_GGML_IQ4_XS: r = SN_GGML_IQ4_NL; break;
    case SN_GGML_Q2_K: case SN_GGML_Q3_K: r = SN_GGML_Q4_0; break;
    case SN_GGML_Q4_K: r = SN_GGML_Q5_0; break;
    case SN_GGML_Q5_K: r = SN_GGML_Q5_1; break;
    case SN_GGML_Q6_K: r = SN_GGML_Q8_0; break;
    default: r = t; break; /* a 32-block type: nothing smaller, F16 below */
    }
    return ne0 % sn_ggml_blck_size(r) ? SN_GGML_F16 : r;
}

int sn_quant_tensor_type(sn_quant_state *qs, const char *name, uint32_t n_dims, const uint64_t *ne, int cur_type) {
    uint32_t nd = n_dims; /* ggml_n_dims: trailing dimensions of 1 do not count */
    while (nd > 1 && ne[nd - 1] == 1) nd--;
    if (nd < 2 || sn_quant_never(name)) return cur_type;
    if (sn_ggml_blck_size(qs->default_type) == 1) return qs->default_type; /* F32/F16/BF16 files: no rules */
    int t = role_type(qs, name, ne[0], category(name));
    return t < 0 ? -1 : fallback(t, ne[0]);
}
