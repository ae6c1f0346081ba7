/* arch_qwen35.c - Qwen3.5 / Qwen3.6: Qwen3_5ForCausalLM and the text model of
 * Qwen3_5ForConditionalGeneration -> "qwen35"; their mixture-of-experts twins Qwen3_5Moe* ->
 * "qwen35moe" (routed experts as Qwen3-MoE's, moe.c, plus a shared expert with a sigmoid gate); and
 * their predecessor Qwen3-Next, Qwen3NextForCausalLM -> "qwen3next" (the MoE layers of qwen35moe).
 *
 * Mirrors llama.cpp's converter (conversion/qwen.py: Qwen3_5TextModel over Qwen3NextModel,
 * _QwenMtpMixin, _LinearAttentionVReorderBase, _Qwen35MRopeMixin). The layers are hybrid: Gated
 * DeltaNet linear attention (linear_attn.*) and gated full attention (self_attn.*, q_proj twice as
 * wide: a query and a gate per head), which is which given by "layer_types" or every
 * full_attention_interval-th layer. Tensors: A_log -> ssm_a = -exp(A_log), dt_bias -> ssm_dt.bias,
 * conv1d [C,1,K] squeezed to ne {K, C} (kept F32), every norm weight + 1 (the model multiplies by
 * 1 + w) except the linear attention's gated norm; with more value than key heads the value heads are
 * reordered from grouped-by-key-head to tiled order in qkv, z, a, b, A_log, dt_bias, conv1d and
 * out_proj. The multi-token-prediction block (mtp.*) is appended as layers num_hidden_layers.. with
 * nextn.* names, as the reference does by default. Vision towers are skipped: their mmproj file is a
 * separate conversion. config.json is read raw (text_config merged over it); when "layer_types" is
 * absent no recurrent_layers key is written and llama.cpp derives the mask from the interval; without
 * mtp_num_hidden_layers the MTP layers are counted from the tensors.
 * Qwen3-Next differs in the linear attention only: its value heads stay grouped by key head (no
 * reordering), q, k, v and z come fused per key head in in_proj_qkvz ([q, k, its value heads' v, their
 * z] per key head) and are written as attn_qkv (all q, all k, all v) and attn_gate (all z), and b and
 * a come fused in in_proj_ba, written as it is (ssm_ba); no default MRoPE sections. */
#include "arch.h"
#include "moe.h"
#include "safetensors.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    int64_t trunk, n_mtp, E, heads, kv, hd, ff, hk, hv, dk, dv, conv, interval, rope_dim;
} q35_dims;

static int64_t num_or(const sn_hf_config *c, const char *key, int64_t def) {
    double v;
    return sn_hf_config_get_num(c, key, &v) ? (int64_t)v : def;
}

/* partial_rotary_factor: rope_parameters' own, else the top-level key the reference mirrors into it */
static double rotary_factor(const sn_hf_config *c) {
    const cJSON *rp = cJSON_GetObjectItemCaseSensitive(c->root, "rope_parameters");
    if (!cJSON_IsObject(rp)) rp = cJSON_GetObjectItemCaseSensitive(c->root, "rope_scaling");
    const cJSON *v = cJSON_IsObject(rp) ? cJSON_GetObjectItemCaseSensitive(rp, "partial_rotary_factor") : NULL;
    if (cJSON_IsNumber(v)) return v->valuedouble;
    static const char *const keys[] = {"partial_rotary_factor", "rope_pct", "rope_percent"};
    double d;
    for (size_t i = 0; i < 3; i++)
        if (sn_hf_config_get_num(c, keys[i], &d)) return d;
    return 0.25;
}

static q35_dims dims_of(const sn_hf_config *c) {
    q35_dims d;
    d.n_mtp = num_or(c, "mtp_num_hidden_layers", 0);
    d.trunk = c->n_layers - d.n_mtp; /* prepare_config added the MTP layers */
    d.E = c->hidden_size;
    d.heads = c->n_heads;
    d.kv = c->n_kv_heads;
    d.hd = c->head_dim > 0 ? c->head_dim : c->n_heads > 0 ? c->hidden_size / c->n_heads : 0;
    d.ff = c->intermediate_size;
    d.conv = num_or(c, "linear_conv_kernel_dim", -1);
    d.dk = num_or(c, "linear_key_head_dim", -1);
    d.dv = num_or(c, "linear_value_head_dim", -1);
    d.hk = num_or(c, "linear_num_key_heads", -1);
    d.hv = num_or(c, "linear_num_value_heads", -1);
    d.interval = num_or(c, "full_attention_interval", 4);
    d.rope_dim = (int64_t)((double)d.hd * rotary_factor(c));
    return d;
}

static const cJSON *layer_types(const sn_hf_config *c) {
    const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->root, "layer_types");
    return cJSON_IsNull(lt) ? NULL : lt;
}

/* 1 if trunk layer i is full attention (the MTP layers always are) */
static int is_full(const sn_hf_config *c, const q35_dims *d, int64_t i) {
    if (i >= d->trunk) return 1;
    const cJSON *lt = layer_types(c);
    if (lt) {
        const cJSON *x = cJSON_GetArrayItem(lt, (int)i);
        return cJSON_IsString(x) && strcmp(x->valuestring, "full_attention") == 0;
    }
    return (i + 1) % d->interval == 0;
}

/* _QwenMtpMixin: without mtp_num_hidden_layers (Qwen3-Next's config has none) or with 0, the reference
 * counts the MTP layers from the tensors (mtp.layers.N.*); the count joins the config under that key */
static sn_status prepare_from_tensors(const sn_arch *a, sn_hf_config *c, const sn_st_model *m, sn_err *err) {
    (void)a;
    double v = 0;
    if (sn_hf_config_get_num(c, "mtp_num_hidden_layers", &v) && v != 0) return SN_OK;
    int64_t n = 0;
    for (size_t i = 0; i < sn_st_model_n_tensors(m); i++) {
        const char *p = sn_st_model_tensor(m, i)->name;
        if (!strncmp(p, "model.mtp.", 10)) p += 6;
        if (strncmp(p, "mtp.layers.", 11) != 0 || !isdigit((unsigned char)p[11])) continue;
        int64_t j = 0;
        for (p += 11; isdigit((unsigned char)*p) && j <= 64; p++) j = j * 10 + (*p - '0');
        if (*p != '.') continue;
        if (j >= 64)
            return sn_err_set(err, SN_EFORMAT, "tensor '%s': MTP layer %lld, more than 64",
                              sn_st_model_tensor(m, i)->name, (long long)j);
        if (j + 1 > n) n = j + 1;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(c->root, "mtp_num_hidden_layers");
    if (!cJSON_AddNumberToObject(c->root, "mtp_num_hidden_layers", (double)n))
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    return SN_OK;
}

/* block_count is the trunk plus the MTP layers (_QwenMtpMixin) */
static sn_status prepare_config(const sn_arch *a, sn_hf_config *c, sn_err *err) {
    (void)a;
    double m = 0;
    if (sn_hf_config_get_num(c, "mtp_num_hidden_layers", &m) && (m < 0 || m > 64 || m != (int64_t)m))
        return sn_err_set(err, SN_EFORMAT, "config.json: mtp_num_hidden_layers %g is not an integer in 0..64", m);
    if (c->n_layers > 0) c->n_layers += (int64_t)m;
    return SN_OK;
}

static int is_moe(const sn_arch *a);
static int is_next(const sn_arch *a);
static const sn_moe_names k_moe;

static sn_status check_config(const sn_arch *a, const sn_hf_config *c, sn_err *err) {
    const char *f = "config.json";
    q35_dims d = dims_of(c);
    if (is_moe(a)) {
        sn_moe_dims md;
        SN_ARCH_TRY(sn_moe_dims_of(&k_moe, c, &md, err));
        double fs = 0;
        if (!sn_hf_config_get_num(c, "shared_expert_intermediate_size", &fs) || fs < 1 || fs > (1 << 24))
            return sn_err_set(err, SN_EFORMAT, "%s: shared_expert_intermediate_size is missing or not in 1..2^24", f);
        if (d.ff < 0) d.ff = 1; /* a MoE config need not name the dense width */
    }
    const sn_arch_value req[] = {
        {"\"hidden_size\"", d.E}, {"\"num_hidden_layers\"", d.trunk}, {"\"num_attention_heads\"", d.heads},
        {"\"num_key_value_heads\"", d.kv}, {"\"head_dim\"", d.hd}, {"\"intermediate_size\"", d.ff},
        {"\"vocab_size\"", c->vocab_size}, {"\"linear_conv_kernel_dim\"", d.conv},
        {"\"linear_key_head_dim\"", d.dk}, {"\"linear_value_head_dim\"", d.dv},
        {"\"linear_num_key_heads\"", d.hk}, {"\"linear_num_value_heads\"", d.hv},
        {"\"full_attention_interval\"", d.interval}, {"head_dim x partial_rotary_factor", d.rope_dim},
    };
    SN_ARCH_TRY(sn_arch_check_range(req, sizeof req / sizeof *req, 24, err));
    if (d.heads % d.kv != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: num_attention_heads %lld is not a multiple of num_key_value_heads %lld",
                          f, (long long)d.heads, (long long)d.kv);
    if (d.hv % d.hk != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: linear_num_value_heads %lld is not a multiple of "
                          "linear_num_key_heads %lld", f, (long long)d.hv, (long long)d.hk);
    if (d.dk != d.dv)
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: linear_key_head_dim %lld != linear_value_head_dim %lld: "
                          "llama.cpp's %s keeps one head size (ssm.state_size) for both", f, (long long)d.dk,
                          (long long)d.dv, a->gguf_arch);
    if (d.rope_dim > d.hd || d.rope_dim % 2)
        return sn_err_set(err, SN_EFORMAT, "%s: rope dimension %lld (head_dim x partial_rotary_factor) must be "
                          "even and at most head_dim %lld", f, (long long)d.rope_dim, (long long)d.hd);
    const cJSON *lt = layer_types(c);
    if (lt) {
        if (!cJSON_IsArray(lt) || cJSON_GetArraySize(lt) != d.trunk)
            return sn_err_set(err, SN_EFORMAT, "%s: layer_types has %d entries, expected num_hidden_layers (%lld)", f,
                              cJSON_IsArray(lt) ? cJSON_GetArraySize(lt) : 0, (long long)d.trunk);
        int i = 0;
        for (const cJSON *x = lt->child; x; x = x->next, i++)
            if (!cJSON_IsString(x) ||
                (strcmp(x->valuestring, "linear_attention") != 0 && strcmp(x->valuestring, "full_attention") != 0))
                return sn_err_set(err, SN_EFORMAT, "%s: layer_types[%d] is not \"linear_attention\" or "
                                  "\"full_attention\"", f, i);
    }
    return SN_OK;
}

/* ---- metadata: Qwen3NextModel.set_gguf_parameters with its mixins, in order ---- */

static sn_status write_kv(const sn_arch *a, const sn_hf_config *c, uint32_t file_type, sn_gguf_writer *w,
                          sn_err *err) {
    const char *A = a->gguf_arch;
    const q35_dims d = dims_of(c);
    SN_ARCH_TRY(sn_arch_text_model_kv(A, c, file_type, w, err));
    SN_ARCH_TRY(sn_moe_write_qwen_ff(A, c, w, err));
    if (d.n_mtp > 0) SN_ARCH_TRY(sn_arch_kv_u32(w, A, "nextn_predict_layers", d.n_mtp, err));
    const sn_arch_value kv[] = {
        {"ssm.conv_kernel", d.conv}, {"ssm.state_size", d.dk}, {"ssm.group_count", d.hk},
        {"ssm.time_step_rank", d.hv}, {"ssm.inner_size", d.dv * d.hv},
    };
    SN_ARCH_TRY(sn_arch_kv_u32s(w, A, kv, sizeof kv / sizeof *kv, err));
    char key[128];
    sn_status st;
    if (layer_types(c)) {
        uint8_t rec[1024];
        if (c->n_layers > (int64_t)sizeof rec)
            return sn_err_set(err, SN_EFORMAT, "config.json: %lld layers is more than sunny supports",
                              (long long)c->n_layers);
        for (int64_t i = 0; i < c->n_layers; i++) rec[i] = (uint8_t)!is_full(c, &d, i);
        snprintf(key, sizeof key, "%s.attention.recurrent_layers", A);
        if ((st = sn_gguf_writer_set_arr(w, key, SN_GGUF_BOOL, rec, (uint64_t)c->n_layers)) != SN_OK)
            return sn_err_set(err, st, "cannot set %s", key);
    }
    SN_ARCH_TRY(sn_arch_kv_u32(w, A, "full_attention_interval", d.interval, err));
    SN_ARCH_TRY(sn_arch_kv_u32(w, A, "rope.dimension_count", d.rope_dim, err));
    const cJSON *rp = cJSON_GetObjectItemCaseSensitive(c->root, "rope_parameters");
    if (!cJSON_IsObject(rp)) rp = cJSON_GetObjectItemCaseSensitive(c->root, "rope_scaling");
    if (!is_next(a) && (!cJSON_IsObject(rp) || !cJSON_GetObjectItemCaseSensitive(rp, "mrope_section"))) {
        static const int32_t k_default_sections[4] = {11, 11, 10, 0}; /* transformers' default */
        snprintf(key, sizeof key, "%s.rope.dimension_sections", A);
        if ((st = sn_gguf_writer_set_arr(w, key, SN_GGUF_I32, k_default_sections, 4)) != SN_OK)
            return sn_err_set(err, st, "cannot set %s", key);
    }
    return SN_OK;
}

/* ---- tensors ---- */

static void set_shape(sn_arch_tensor *t, int n_dims, int64_t ne0, int64_t ne1) {
    t->n_dims = (uint32_t)n_dims;
    for (int i = 0; i < SN_GGUF_MAX_DIMS; i++) t->ne[i] = 1;
    t->ne[0] = (uint64_t)ne0;
    if (n_dims > 1) t->ne[1] = (uint64_t)ne1;
}

static int ends_with(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

/* one layer tensor: HF suffix, GGUF suffix, layer kind, and which rows have it (0 all, R_35 the
 * Qwen3.5 rows, R_NEXT Qwen3-Next) */
enum kind { K_ANY, K_FULL, K_LINEAR, K_MTP };
enum { R_ALL, R_35, R_NEXT };
typedef struct {
    const char *hf, *gguf;
    enum kind kind;
    int rows;
} layer_entry;

static const layer_entry k_layer[] = {
    {"input_layernorm.weight", "attn_norm.weight", K_ANY, R_ALL},
    {"post_attention_layernorm.weight", "post_attention_norm.weight", K_ANY, R_ALL},
    {"mlp.gate_proj.weight", "ffn_gate.weight", K_ANY, R_ALL},
    {"mlp.up_proj.weight", "ffn_up.weight", K_ANY, R_ALL},
    {"mlp.down_proj.weight", "ffn_down.weight", K_ANY, R_ALL},
    {"self_attn.q_proj.weight", "attn_q.weight", K_FULL, R_ALL},
    {"self_attn.k_proj.weight", "attn_k.weight", K_FULL, R_ALL},
    {"self_attn.v_proj.weight", "attn_v.weight", K_FULL, R_ALL},
    {"self_attn.o_proj.weight", "attn_output.weight", K_FULL, R_ALL},
    {"self_attn.q_norm.weight", "attn_q_norm.weight", K_FULL, R_ALL},
    {"self_attn.k_norm.weight", "attn_k_norm.weight", K_FULL, R_ALL},
    {"linear_attn.in_proj_qkv.weight", "attn_qkv.weight", K_LINEAR, R_35},
    {"linear_attn.in_proj_z.weight", "attn_gate.weight", K_LINEAR, R_35},
    {"linear_attn.in_proj_b.weight", "ssm_beta.weight", K_LINEAR, R_35},
    {"linear_attn.in_proj_a.weight", "ssm_alpha.weight", K_LINEAR, R_35},
    {"linear_attn.in_proj_qkvz.weight", "attn_qkv.weight", K_LINEAR, R_NEXT}, /* + attn_gate */
    {"linear_attn.in_proj_ba.weight", "ssm_ba.weight", K_LINEAR, R_NEXT},
    {"linear_attn.conv1d.weight", "ssm_conv1d.weight", K_LINEAR, R_ALL},
    {"linear_attn.dt_bias", "ssm_dt.bias", K_LINEAR, R_ALL},
    {"linear_attn.A_log", "ssm_a", K_LINEAR, R_ALL},
    {"linear_attn.norm.weight", "ssm_norm.weight", K_LINEAR, R_ALL},
    {"linear_attn.out_proj.weight", "ssm_out.weight", K_LINEAR, R_ALL},
    /* the MTP block's own tensors, as _QwenMtpMixin renames them */
    {"fc.weight", "nextn.eh_proj.weight", K_MTP, R_ALL},
    {"pre_fc_norm_embedding.weight", "nextn.enorm.weight", K_MTP, R_ALL},
    {"pre_fc_norm_hidden.weight", "nextn.hnorm.weight", K_MTP, R_ALL},
    {"norm.weight", "nextn.shared_head_norm.weight", K_MTP, R_ALL},
};

/* shape and transforms of a layer tensor e (bid's kind already checked); grouped: Qwen3-Next's value
 * heads, left grouped by key head */
static void layer_shape(const layer_entry *e, const q35_dims *d, int grouped, sn_arch_tensor *o) {
    const int64_t E = d->E, qk = d->hk * d->dk, vd = d->hv * d->dv, r = d->hv / d->hk;
    sn_arch_vreorder vr = {0, 0, 0, 0, 0};
    if (d->hv != d->hk && !grouped) vr = (sn_arch_vreorder){(uint64_t)d->hk, (uint64_t)r, (uint64_t)d->dv, 0, 0};
    const char *g = e->gguf;
    if (e->rows == R_NEXT && !strcmp(g, "attn_qkv.weight")) {
        /* per key head [q, k, v, z]: attn_qkv gathers q, then k, then v of every key head; attn_gate z */
        set_shape(o, 2, E, 2 * qk + vd);
        o->src_n_dims = 2;
        o->src_ne[0] = (uint64_t)E, o->src_ne[1] = (uint64_t)(2 * qk + 2 * vd);
        o->slice_group = (uint64_t)(2 * d->dk + 2 * r * d->dv);
        o->slice_piece[0] = o->slice_piece[1] = (uint64_t)d->dk;
        o->slice_piece[2] = (uint64_t)(r * d->dv);
        snprintf(o->also_name, sizeof o->also_name, "%.*sattn_gate.weight", (int)(strlen(o->gguf_name) - 15),
                 o->gguf_name);
        o->also_slice_off = (uint64_t)(2 * d->dk + r * d->dv);
        o->also_rows = (uint64_t)vd;
        return;
    }
    if (!strcmp(g, "ssm_ba.weight")) {
        set_shape(o, 2, E, 2 * d->hv);
        return;
    }
    if (!strcmp(g, "attn_norm.weight") || !strcmp(g, "post_attention_norm.weight") || e->kind == K_MTP) {
        set_shape(o, 1, E, 1);
        if (!strcmp(g, "nextn.eh_proj.weight")) set_shape(o, 2, 2 * E, E);
    } else if (!strcmp(g, "ffn_gate.weight") || !strcmp(g, "ffn_up.weight")) set_shape(o, 2, E, d->ff);
    else if (!strcmp(g, "ffn_down.weight")) set_shape(o, 2, d->ff, E);
    else if (!strcmp(g, "attn_q.weight")) set_shape(o, 2, E, 2 * d->heads * d->hd);
    else if (!strcmp(g, "attn_k.weight") || !strcmp(g, "attn_v.weight")) set_shape(o, 2, E, d->kv * d->hd);
    else if (!strcmp(g, "attn_output.weight")) set_shape(o, 2, d->heads * d->hd, E);
    else if (!strcmp(g, "attn_q_norm.weight") || !strcmp(g, "attn_k_norm.weight")) set_shape(o, 1, d->hd, 1);
    else if (!strcmp(g, "attn_qkv.weight")) {
        set_shape(o, 2, E, 2 * qk + vd);
        vr.start = (uint64_t)(2 * qk);
    } else if (!strcmp(g, "attn_gate.weight")) set_shape(o, 2, E, vd);
    else if (!strcmp(g, "ssm_beta.weight") || !strcmp(g, "ssm_alpha.weight")) {
        set_shape(o, 2, E, d->hv);
        vr.hd = 1;
    } else if (!strcmp(g, "ssm_conv1d.weight")) { /* [C, 1, K] squeezed */
        set_shape(o, 2, d->conv, 2 * qk + vd);
        o->src_n_dims = 3;
        o->src_ne[0] = (uint64_t)d->conv, o->src_ne[1] = 1, o->src_ne[2] = (uint64_t)(2 * qk + vd);
        o->src_ne[3] = 1;
        vr.start = (uint64_t)(2 * qk);
    } else if (!strcmp(g, "ssm_dt.bias") || !strcmp(g, "ssm_a")) {
        set_shape(o, 1, d->hv, 1);
        vr.hd = 1;
        vr.cols = 1;
        if (!strcmp(g, "ssm_a")) o->ew = SN_ARCH_EW_NEG_EXP;
    } else if (!strcmp(g, "ssm_norm.weight")) set_shape(o, 1, d->dv, 1);
    else if (!strcmp(g, "ssm_out.weight")) {
        set_shape(o, 2, vd, E);
        vr.cols = 1;
    }
    if (e->kind == K_LINEAR && strcmp(g, "ssm_norm.weight") != 0) o->vr = vr;
    if (ends_with(g, "norm.weight") && strcmp(g, "ssm_norm.weight") != 0) o->ew = SN_ARCH_EW_ADD_ONE;
}

extern const sn_arch sn_arch_qwen35moe, sn_arch_qwen3next; /* defined below */
static int is_next(const sn_arch *a) { return a == &sn_arch_qwen3next; }
static int is_moe(const sn_arch *a) { return a == &sn_arch_qwen35moe || is_next(a); }

/* the shared expert of a qwen35moe layer: 1 = out filled, 0 = not one */
static int map_shared(const sn_hf_config *c, const q35_dims *d, int64_t bid, const char *p, sn_arch_tensor *o) {
    double fs = 0;
    sn_hf_config_get_num(c, "shared_expert_intermediate_size", &fs);
    static const struct { const char *hf, *gguf; int down; } k[] = {
        {"mlp.shared_expert.gate_proj.weight", "ffn_gate_shexp.weight", 0},
        {"mlp.shared_expert.up_proj.weight", "ffn_up_shexp.weight", 0},
        {"mlp.shared_expert.down_proj.weight", "ffn_down_shexp.weight", 1},
        {"mlp.shared_expert_gate.weight", "ffn_gate_inp_shexp.weight", 2}};
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        if (strcmp(p, k[i].hf) != 0) continue;
        snprintf(o->gguf_name, sizeof o->gguf_name, "blk.%lld.%s", (long long)bid, k[i].gguf);
        if (k[i].down == 2) set_shape(o, 2, d->E, 1);
        else if (k[i].down) set_shape(o, 2, (int64_t)fs, d->E);
        else set_shape(o, 2, d->E, (int64_t)fs);
        return 1;
    }
    return 0;
}

static int map_tensor(const sn_arch *a, const sn_hf_config *c, const char *hf_in, sn_arch_tensor *out,
                      sn_err *err) {
    memset(out, 0, sizeof(*out));
    if (sn_arch_is_multimodal(hf_in)) return SN_ARCH_MAP_SKIP;
    const q35_dims d = dims_of(c);
    char hf[512];
    snprintf(hf, sizeof hf, "%s", hf_in);
    for (char *p; (p = strstr(hf, "language_model.")) != NULL;) memmove(p, p + 15, strlen(p + 15) + 1);
    if (ends_with(hf, ".rotary_emb.inv_freq")) return SN_ARCH_MAP_SKIP;
    if (!strcmp(hf, "model.embed_tokens.weight") || !strcmp(hf, "lm_head.weight")) {
        snprintf(out->gguf_name, sizeof out->gguf_name, hf[0] == 'm' ? "token_embd.weight" : "output.weight");
        set_shape(out, 2, d.E, c->vocab_size);
        return SN_ARCH_MAP_OK;
    }
    if (!strcmp(hf, "model.norm.weight")) {
        snprintf(out->gguf_name, sizeof out->gguf_name, "output_norm.weight");
        set_shape(out, 1, d.E, 1);
        out->ew = SN_ARCH_EW_ADD_ONE;
        return SN_ARCH_MAP_OK;
    }
    const char *p = hf;
    int mtp = 0;
    if (!strncmp(p, "model.mtp.", 10)) p += 6;
    if (!strncmp(p, "mtp.", 4)) {
        mtp = 1;
        p += 4;
    } else if (!strncmp(p, "model.", 6)) p += 6;
    else goto unmapped;
    int64_t bid = mtp ? d.trunk : -1;
    if (!strncmp(p, "layers.", 7) && isdigit((unsigned char)p[7])) {
        p += 7;
        int64_t j = 0;
        while (isdigit((unsigned char)*p) && j < 1000000) j = j * 10 + (*p++ - '0');
        if (*p++ != '.') goto unmapped;
        bid = mtp ? d.trunk + j : j;
        mtp = 0; /* a full layer of the MTP block: the trunk's names */
    } else if (!mtp) goto unmapped;
    if (is_moe(a) && !mtp && bid >= 0 && bid < c->n_layers) {
        int r = sn_moe_map(&k_moe, c, (uint64_t)bid, p, hf_in, (uint64_t)d.E, out, err);
        if (r != 0) return r;
        if (map_shared(c, &d, bid, p, out)) return SN_ARCH_MAP_OK;
    }
    for (size_t i = 0; i < sizeof k_layer / sizeof *k_layer; i++) {
        const layer_entry *e = &k_layer[i];
        if (strcmp(p, e->hf) != 0 || (e->kind == K_MTP) != mtp || (is_moe(a) && !strncmp(e->gguf, "ffn_", 4)) ||
            (e->rows != R_ALL && (e->rows == R_NEXT) != is_next(a)))
            continue;
        if (bid < 0 || bid >= c->n_layers)
            return sn_err_set(err, SN_EFORMAT, "tensor '%s' is in layer %lld but config.json has %lld layers "
                              "(num_hidden_layers %lld + mtp_num_hidden_layers %lld)", hf_in, (long long)bid,
                              (long long)c->n_layers, (long long)d.trunk, (long long)d.n_mtp);
        int full = is_full(c, &d, bid);
        if ((e->kind == K_FULL && !full) || (e->kind == K_LINEAR && full))
            return sn_err_set(err, SN_EFORMAT, "tensor '%s': config.json makes layer %lld a %s layer (%s), but this "
                              "is a %s tensor", hf_in, (long long)bid, full ? "full-attention" : "linear-attention",
                              layer_types(c) ? "layer_types" : "full_attention_interval",
                              e->kind == K_FULL ? "full-attention" : "linear-attention");
        snprintf(out->gguf_name, sizeof out->gguf_name, "blk.%lld.%s", (long long)bid, e->gguf);
        layer_shape(e, &d, is_next(a), out);
        return SN_ARCH_MAP_OK;
    }
unmapped:
    return sn_err_set(err, SN_EUNSUPPORTED, "cannot map tensor '%s' (architecture %s)", hf_in, a->gguf_arch);
}

static const char *const k_moe_count[] = {"num_local_experts", "num_experts", NULL};
static const sn_moe_names k_moe = {
    "mlp.", {"down_proj", "gate_proj", "up_proj"}, {"ffn_down_exps", "ffn_gate_exps", "ffn_up_exps"}, {1, 0, 0},
    k_moe_count, "moe_intermediate_size", 1};

static const sn_arch_class k_classes[] = {
    {"Qwen3_5ForCausalLM", NULL}, {"Qwen3_5ForConditionalGeneration", NULL}, {NULL, NULL}};
static const char *const k_vocab_files[] = {"tokenizer.json", NULL};
static const char *const k_keep_f32[] = {"ssm_conv1d.weight", NULL}; /* MODEL_TENSOR.SSM_CONV1D */
static const char *const k_required[] = {"token_embd.weight", "output_norm.weight", NULL};
/* a layer is complete with its mixer's output projection (map_tensor keeps the kinds apart) */
static const char *const k_layer_required[] = {
    "attn_norm.weight", "post_attention_norm.weight", "attn_output.weight|ssm_out.weight",
    "attn_q.weight|attn_qkv.weight", "ffn_gate.weight", "ffn_up.weight", "ffn_down.weight", NULL};

static const sn_arch_class k_moe_classes[] = {
    {"Qwen3_5MoeForCausalLM", NULL}, {"Qwen3_5MoeForConditionalGeneration", NULL}, {NULL, NULL}};
/* the routers: F32 in the converter (FFN_GATE_INP, FFN_GATE_INP_SHEXP) */
static const char *const k_moe_keep_f32[] = {"ssm_conv1d.weight", "ffn_gate_inp.weight", "ffn_gate_inp_shexp.weight",
                                             NULL};
static const char *const k_moe_layer_required[] = {
    "attn_norm.weight", "post_attention_norm.weight", "attn_output.weight|ssm_out.weight",
    "attn_q.weight|attn_qkv.weight", "ffn_gate_inp.weight", "ffn_gate_exps.weight", "ffn_up_exps.weight",
    "ffn_down_exps.weight", NULL};

const sn_arch sn_arch_qwen35moe = {
    .gguf_arch = "qwen35moe", .classes = k_moe_classes, .vocab = SN_ARCH_VOCAB_TEXT, .vocab_files = k_vocab_files,
    .keep_f32 = k_moe_keep_f32, .prepare_from_tensors = prepare_from_tensors, .prepare_config = prepare_config,
    .check_config = check_config, .write_kv = write_kv, .map_tensor = map_tensor, .required = k_required,
    .required_per_layer = k_moe_layer_required};

const sn_arch sn_arch_qwen35 = {
    .gguf_arch = "qwen35", .classes = k_classes, .vocab = SN_ARCH_VOCAB_TEXT, .vocab_files = k_vocab_files,
    .keep_f32 = k_keep_f32, .prepare_from_tensors = prepare_from_tensors, .prepare_config = prepare_config,
    .check_config = check_config, .write_kv = write_kv, .map_tensor = map_tensor, .required = k_required,
    .required_per_layer = k_layer_required};

static const sn_arch_class k_next_classes[] = {{"Qwen3NextForCausalLM", NULL}, {NULL, NULL}};
const sn_arch sn_arch_qwen3next = {
    .gguf_arch = "qwen3next", .classes = k_next_classes, .vocab = SN_ARCH_VOCAB_TEXT, .vocab_files = k_vocab_files,
    .keep_f32 = k_moe_keep_f32, .prepare_from_tensors = prepare_from_tensors, .prepare_config = prepare_config,
    .check_config = check_config, .write_kv = write_kv, .map_tensor = map_tensor, .required = k_required,
    .required_per_layer = k_moe_layer_required};
