/* arch_rwkv7.c - RWKV-7: fla-hub folders (RWKV7ForCausalLM) and RWKV's own HF layout
 * (Rwkv7ForCausalLM) -> "rwkv7", as llama.cpp's converter writes it (conversion/rwkv.py).
 *
 * config.json is read raw. Hyperparameters: RWKV's names first (head_size + layer_norm_epsilon,
 * then the four lora_rank_*), fla's on a missing key (head_dim + norm_eps, decay/a/v/gate
 * _low_rank_dim); a null rank is derived as max(1, round(hidden^e * m / 32)) * 32 with (e, m) =
 * (0.5, 1.8) decay and ICLR, (0.5, 1.3) value residual, (0.8, 0.6) gate; a null
 * intermediate_size is 4 * hidden. Tensors: the six token-shift lerps x_r, x_w, x_k, x_v, x_a, x_g
 * are fused (stacked in that order) into time_mix_lerp_fused {D, 1, 1, 6}; fla's LoRA
 * (lora.0 = down, lora.2 = up, lora.2.bias = the offset) and RWKV's BlinkDL-style w1/w2/w0 both
 * become time_mix_{w,a,v,g}{0,1,2} ({D, rank} / {rank, D}: BlinkDL stores them [in, out], so they
 * are transposed); layer 0's value-residual LoRA is dropped and the ICLR LoRA is written a second
 * time in its place (llama.cpp's loader wants the tensors; they are never used); vectors are
 * squeezed and r_k [H, head] flattened. BlinkDL RWKV-LM .pth names (emb, blocks.N.att/ffn, ln0,
 * ln_out, head) map like RWKV's HF layout; without a config.json every hyperparameter is read from a
 * tensor shape (config_from_tensors; --dry-run prints which). w1, w2 and the fused lerp stay F32 in every outtype; for
 * q4_0, llama-quantize leaves every LoRA and lerp tensor as it is. The vocabulary is the RWKV world
 * file (convert/vocab/vocab_rwkv.c). */
#include "arch.h"
#include "num.h"
#include "safetensors.h"

#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t D, L, hs, F, rw, ra, rv, rg, V;
    double eps;
} rwkv7_dims;

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static int64_t lora_rank(int64_t hidden, double e, double m) {
    /* Python's round(): half to even */
    const double r = nearbyint(pow((double)hidden, e) * m / 32.0);
    return (r < 1 ? 1 : (int64_t)r) * 32;
}

/* A rank key: absent -> -2 (a KeyError for the reference), null -> derived, else the integer. */
static int64_t int_of(const cJSON *v) {
    int64_t i;
    return cJSON_IsNumber(v) && sn_f64_to_i64(v->valuedouble, INT64_MIN, INT64_MAX, &i) ? i : -1;
}

static int64_t rank_of(const sn_hf_config *c, const char *key, int64_t hidden, double e, double m) {
    const cJSON *v = get(c->root, key);
    if (!v) return -2;
    if (cJSON_IsNull(v)) return lora_rank(hidden, e, m);
    return int_of(v);
}

static rwkv7_dims dims_of(const sn_hf_config *c) {
    rwkv7_dims d = {0};
    d.D = c->hidden_size;
    d.L = c->n_layers;
    const cJSON *hs = get(c->root, "head_size"), *eps = get(c->root, "layer_norm_epsilon");
    if (!hs || !eps) {
        hs = get(c->root, "head_dim");
        eps = get(c->root, "norm_eps");
    }
    d.hs = int_of(hs);
    d.eps = cJSON_IsNumber(eps) ? eps->valuedouble : -1;
    const cJSON *inter = get(c->root, "intermediate_size");
    d.F = !inter || cJSON_IsNull(inter) ? 4 * d.D : int_of(inter);
    static const char *const blink[] = {"lora_rank_decay", "lora_rank_iclr", "lora_rank_value_residual_mix",
                                        "lora_rank_gate"};
    static const char *const fla[] = {"decay_low_rank_dim", "a_low_rank_dim", "v_low_rank_dim", "gate_low_rank_dim"};
    static const double em[4][2] = {{0.5, 1.8}, {0.5, 1.8}, {0.5, 1.3}, {0.8, 0.6}};
    int64_t r[4];
    int missing = 0;
    for (int i = 0; i < 4; i++) {
        r[i] = rank_of(c, blink[i], d.D, em[i][0], em[i][1]);
        missing |= r[i] == -2;
    }
    if (missing)
        for (int i = 0; i < 4; i++) r[i] = rank_of(c, fla[i], d.D, em[i][0], em[i][1]);
    d.rw = r[0], d.ra = r[1], d.rv = r[2], d.rg = r[3];
    d.V = c->vocab_size > 0 ? c->vocab_size : 65536;
    return d;
}

static sn_status prepare_config(const sn_arch *a, sn_hf_config *c, sn_err *err) {
    (void)a, (void)err;
    if (!get(c->root, "vocab_size")) c->vocab_size = 65536; /* hparams.get("vocab_size", 65536) */
    return SN_OK;
}

static sn_status check_config(const sn_arch *a, const sn_hf_config *c, sn_err *err) {
    (void)a;
    const rwkv7_dims d = dims_of(c);
    const char *f = "config.json";
    const sn_arch_value req[] = {
        {"hidden_size", d.D}, {"num_hidden_layers", d.L}, {"head_size (head_dim)", d.hs},
        {"intermediate_size", d.F}, {"lora_rank_decay (decay_low_rank_dim)", d.rw},
        {"lora_rank_iclr (a_low_rank_dim)", d.ra}, {"lora_rank_value_residual_mix (v_low_rank_dim)", d.rv},
        {"lora_rank_gate (gate_low_rank_dim)", d.rg}, {"vocab_size", d.V}};
    sn_status st = sn_arch_check_range(req, sizeof req / sizeof *req, 24, err);
    if (st != SN_OK) return st;
    if (!(d.eps >= 0))
        return sn_err_set(err, SN_EFORMAT, "%s: layer_norm_epsilon (norm_eps) is missing or negative", f);
    if (d.D % d.hs != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: hidden_size %lld is not a multiple of head size %lld", f,
                          (long long)d.D, (long long)d.hs);
    const cJSON *gate = get(c->root, "wkv_has_gate");
    if (gate && cJSON_IsFalse(gate))
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: wkv_has_gate = false (5 lerps, no gate) is not supported", f);
    return SN_OK;
}

/* ---- metadata: Rwkv7Model.set_gguf_parameters, in order ---- */

static sn_status write_kv(const sn_arch *a, const sn_hf_config *c, uint32_t file_type, sn_gguf_writer *w,
                          sn_err *err) {
    const rwkv7_dims d = dims_of(c);
    const sn_arch_value dims[] = {
        {"context_length", 1048576}, /* "RWKV isn't context limited" */
        {"embedding_length", d.D},
        {"block_count", d.L},
    };
    const sn_arch_value ranks[] = {
        {"wkv.head_size", d.hs},
        {"attention.decay_lora_rank", d.rw},
        {"attention.iclr_lora_rank", d.ra},
        {"attention.value_residual_mix_lora_rank", d.rv},
        {"attention.gate_lora_rank", d.rg},
        {"feed_forward_length", d.F},
    };
    SN_ARCH_TRY(sn_arch_kv_u32s(w, a->gguf_arch, dims, sizeof dims / sizeof *dims, err));
    SN_ARCH_TRY(sn_arch_kv_f32(w, a->gguf_arch, "attention.layer_norm_epsilon", d.eps, err));
    SN_ARCH_TRY(sn_arch_kv_u32s(w, a->gguf_arch, ranks, sizeof ranks / sizeof *ranks, err));
    SN_ARCH_TRY(sn_arch_kv_u32(w, NULL, "general.file_type", file_type, err));
    return sn_arch_kv_u32(w, a->gguf_arch, "attention.head_count", 0, err); /* "required by llama.cpp, unused" */
}

/* ---- tensors ---- */

static void shape(uint32_t *n_dims, uint64_t *ne, uint32_t n, uint64_t ne0, uint64_t ne1, uint64_t ne2, uint64_t ne3) {
    *n_dims = n;
    ne[0] = ne0, ne[1] = ne1, ne[2] = ne2, ne[3] = ne3;
}

static void name(sn_arch_tensor *o, int64_t bid, const char *g) {
    if (bid < 0) snprintf(o->gguf_name, sizeof o->gguf_name, "%s", g);
    else snprintf(o->gguf_name, sizeof o->gguf_name, "blk.%lld.%s", (long long)bid, g);
}

/* A vector of D: squeezed from src dims (fla [D] or BlinkDL [1,1,D]). */
static void vec_d(sn_arch_tensor *o, uint64_t D, int blink) {
    shape(&o->n_dims, o->ne, 1, D, 1, 1, 1);
    if (blink) shape(&o->src_n_dims, o->src_ne, 3, D, 1, 1, 1);
}

/* LoRA matrix "X1" {D, rank} or "X2" {rank, D}; BlinkDL stores the transpose. */
static void lora(sn_arch_tensor *o, int64_t bid, char x, int which, uint64_t D, uint64_t r, int blink) {
    char g[32];
    snprintf(g, sizeof g, "time_mix_%c%d.weight", x, which);
    name(o, bid, g);
    if (which == 1) shape(&o->n_dims, o->ne, 2, D, r, 1, 1);
    else shape(&o->n_dims, o->ne, 2, r, D, 1, 1);
    if (blink) {
        shape(&o->src_n_dims, o->src_ne, 2, o->ne[1], o->ne[0], 1, 1);
        o->transpose = 1;
    }
}

static const char k_lerps[] = "rwkvag"; /* the fused order */

/* Layer-relative name p of layer bid; blink: RWKV's HF names (attention., feed_forward., w1/w2/w0). */
static int map_layer(const rwkv7_dims *d, int64_t bid, const char *p, int blink, sn_arch_tensor *o) {
    const uint64_t D = (uint64_t)d->D, F = (uint64_t)d->F, H = (uint64_t)(d->D / d->hs), hs = (uint64_t)d->hs;
    const uint64_t rank[128] = {['w'] = (uint64_t)d->rw, ['a'] = (uint64_t)d->ra, ['v'] = (uint64_t)d->rv,
                                ['g'] = (uint64_t)d->rg};
    const char *att = blink ? "attention." : "attn.", *ffn = blink ? "feed_forward." : "ffn.";
    const size_t la = strlen(att), lf = strlen(ffn);
    static const struct { const char *fla, *blink, *gguf; } norms[] = {
        {"attn_norm.weight", "ln1.weight", "attn_norm.weight"}, {"attn_norm.bias", "ln1.bias", "attn_norm.bias"},
        {"ffn_norm.weight", "ln2.weight", "attn_norm_2.weight"}, {"ffn_norm.bias", "ln2.bias", "attn_norm_2.bias"},
        {"pre_norm.weight", "pre_norm.weight", "token_embd_norm.weight"},
        {"pre_norm.bias", "pre_norm.bias", "token_embd_norm.bias"}};
    for (size_t i = 0; i < sizeof norms / sizeof norms[0]; i++)
        if (!strcmp(p, blink ? norms[i].blink : norms[i].fla)) {
            const int pre = i >= 4;
            if (pre && bid != 0) return -1;
            name(o, pre ? -1 : bid, norms[i].gguf);
            vec_d(o, D, 0);
            return 1;
        }
    if (!strncmp(p, ffn, lf)) {
        const char *q = p + lf;
        if (!strcmp(q, "x_k")) { name(o, bid, "channel_mix_lerp_k.weight"); vec_d(o, D, blink); return 1; }
        if (!strcmp(q, "key.weight")) {
            name(o, bid, "channel_mix_key.weight");
            shape(&o->n_dims, o->ne, 2, D, F, 1, 1);
            return 1;
        }
        if (!strcmp(q, "value.weight")) {
            name(o, bid, "channel_mix_value.weight");
            shape(&o->n_dims, o->ne, 2, F, D, 1, 1);
            return 1;
        }
        return -1;
    }
    if (strncmp(p, att, la) != 0) return -1;
    const char *q = p + la;
    if (q[0] == 'x' && q[1] == '_' && q[2] && !q[3] && strchr(k_lerps, q[2])) {
        name(o, bid, "time_mix_lerp_fused.weight");
        shape(&o->n_dims, o->ne, 4, D, 1, 1, 6);
        shape(&o->src_n_dims, o->src_ne, 3, D, 1, 1, 1);
        o->n_parts = 6;
        o->part = (uint32_t)(strchr(k_lerps, q[2]) - k_lerps);
        return 1;
    }
    static const struct { const char *fla, *blink, *gguf; int kind; } proj[] = {
        {"r_proj.weight", "receptance.weight", "time_mix_receptance.weight", 0},
        {"k_proj.weight", "key.weight", "time_mix_key.weight", 0},
        {"v_proj.weight", "value.weight", "time_mix_value.weight", 0},
        {"o_proj.weight", "output.weight", "time_mix_output.weight", 0},
        {"g_norm.weight", "ln_x.weight", "time_mix_ln.weight", 1},
        {"g_norm.bias", "ln_x.bias", "time_mix_ln.bias", 1},
        {"k_k", "k_k", "time_mix_k_k.weight", 2},
        {"k_a", "k_a", "time_mix_k_a.weight", 2},
        {"r_k", "r_k", "time_mix_r_k.weight", 3}};
    for (size_t i = 0; i < sizeof proj / sizeof proj[0]; i++)
        if (!strcmp(q, blink ? proj[i].blink : proj[i].fla)) {
            name(o, bid, proj[i].gguf);
            if (proj[i].kind == 0) shape(&o->n_dims, o->ne, 2, D, D, 1, 1);
            else if (proj[i].kind == 1) vec_d(o, D, 0);
            else if (proj[i].kind == 2) vec_d(o, D, blink);
            else {
                shape(&o->n_dims, o->ne, 1, D, 1, 1, 1);
                shape(&o->src_n_dims, o->src_ne, 2, hs, H, 1, 1);
            }
            return 1;
        }
    /* LoRA: fla "<x>_lora.lora.{0.weight,2.weight,2.bias}", BlinkDL "<x>{1,2,0}" */
    char x = 0;
    int which = -1;
    if (!blink && q[0] && !strncmp(q + 1, "_lora.lora.", 11)) {
        x = q[0];
        if (!strcmp(q + 12, "0.weight")) which = 1;
        else if (!strcmp(q + 12, "2.weight")) which = 2;
        else if (!strcmp(q + 12, "2.bias") && x != 'g') which = 0;
    } else if (blink && q[0] && q[1] >= '0' && q[1] <= '2' && !q[2]) {
        x = q[0];
        which = q[1] - '0';
        if (x == 'g' && which == 0) which = -1;
    }
    if (which < 0 || !strchr("wavg", x)) return -1;
    if (x == 'v' && bid == 0) return 0; /* unused; replaced by copies of the ICLR LoRA */
    if (which == 0) {
        char g[32];
        snprintf(g, sizeof g, "time_mix_%c0.weight", x);
        name(o, bid, g);
        vec_d(o, D, blink);
    } else {
        lora(o, bid, x, which, D, rank[(unsigned char)x], blink);
    }
    if (x == 'a' && bid == 0) {
        snprintf(o->also_name, sizeof o->also_name, "blk.0.time_mix_v%d.weight", which);
    }
    return 1;
}

/* BlinkDL RWKV-LM checkpoint names (a .pth read through the PyTorch reader) in RWKV-HF form:
 * emb -> model.embeddings, head -> lm_head, ln_out -> model.ln_out, blocks.N.att/ffn/ln0 ->
 * model.blocks.N.attention/feed_forward/pre_norm. 0 if hf is not such a name. */
static int blinkdl_name(const char *hf, char *buf, size_t cap) {
    if (!strcmp(hf, "emb.weight")) return snprintf(buf, cap, "model.embeddings.weight") > 0;
    if (!strcmp(hf, "head.weight")) return snprintf(buf, cap, "lm_head.weight") > 0;
    if (!strncmp(hf, "ln_out.", 7)) return snprintf(buf, cap, "model.%s", hf) > 0;
    if (strncmp(hf, "blocks.", 7) != 0) return 0;
    const char *p = hf + 7, *dot = strchr(p, '.');
    if (!dot) return 0;
    const char *rest = dot + 1, *sub = rest;
    const char *pfx = "";
    if (!strncmp(rest, "att.", 4)) pfx = "attention.", sub = rest + 4;
    else if (!strncmp(rest, "ffn.", 4)) pfx = "feed_forward.", sub = rest + 4;
    else if (!strncmp(rest, "ln0.", 4)) pfx = "pre_norm.", sub = rest + 4;
    return snprintf(buf, cap, "model.blocks.%.*s.%s%s", (int)(dot - p), p, pfx, sub) > 0;
}

static int map_tensor(const sn_arch *a, const sn_hf_config *c, const char *hf_in, sn_arch_tensor *out, sn_err *err) {
    memset(out, 0, sizeof(*out));
    char bd[SN_GGUF_MAX_NAME + 64];
    const char *hf = blinkdl_name(hf_in, bd, sizeof bd) ? bd : hf_in;
    for (int i = 0; i < SN_GGUF_MAX_DIMS; i++) out->ne[i] = out->src_ne[i] = 1;
    const rwkv7_dims d = dims_of(c);
    const uint64_t D = (uint64_t)d.D, V = (uint64_t)d.V;
    if (!strcmp(hf, "model.embeddings.weight")) {
        name(out, -1, "token_embd.weight");
        shape(&out->n_dims, out->ne, 2, D, V, 1, 1);
        return SN_ARCH_MAP_OK;
    }
    if (!strcmp(hf, "lm_head.weight")) {
        name(out, -1, "output.weight");
        shape(&out->n_dims, out->ne, 2, D, V, 1, 1);
        return SN_ARCH_MAP_OK;
    }
    static const struct { const char *hf, *gguf; } tops[] = {
        {"model.norm.weight", "output_norm.weight"}, {"model.norm.bias", "output_norm.bias"},
        {"model.ln_out.weight", "output_norm.weight"}, {"model.ln_out.bias", "output_norm.bias"},
        {"model.pre_ln.weight", "token_embd_norm.weight"}, {"model.pre_ln.bias", "token_embd_norm.bias"}};
    for (size_t i = 0; i < sizeof tops / sizeof tops[0]; i++)
        if (!strcmp(hf, tops[i].hf)) {
            name(out, -1, tops[i].gguf);
            vec_d(out, D, 0);
            return SN_ARCH_MAP_OK;
        }
    int blink = 0;
    const char *p = NULL;
    if (!strncmp(hf, "model.layers.", 13)) p = hf + 13;
    else if (!strncmp(hf, "model.blocks.", 13)) p = hf + 13, blink = 1;
    if (p && isdigit((unsigned char)*p)) {
        int64_t bid = 0;
        while (isdigit((unsigned char)*p) && bid < 1000000) bid = bid * 10 + (*p++ - '0');
        if (*p == '.' && bid < d.L) {
            const int r = map_layer(&d, bid, p + 1, blink, out);
            if (r >= 0) return r ? SN_ARCH_MAP_OK : SN_ARCH_MAP_SKIP;
        } else if (*p == '.') {
            return sn_err_set(err, SN_EFORMAT, "tensor '%s' is in layer %lld but config.json has %lld layers", hf_in,
                              (long long)bid, (long long)d.L);
        }
    }
    return sn_err_set(err, SN_EUNSUPPORTED, "cannot map tensor '%s' (architecture %s)", hf_in, a->gguf_arch);
}

static sn_status extra_tensors(const sn_arch *a, const sn_hf_config *c, sn_arch_extra *out, size_t n_max,
                               size_t *n_out, sn_err *err) {
    (void)a, (void)c, (void)out, (void)n_max, (void)err;
    *n_out = 0;
    return SN_OK;
}

/* ---- BlinkDL .pth without a config: every hyperparameter from a tensor shape ---- */

static const sn_st_tensor *tensor(const sn_st_model *m, const char *name) {
    const int64_t i = sn_st_model_find(m, name);
    return i < 0 ? NULL : sn_st_model_tensor(m, (size_t)i);
}

static sn_status config_from_tensors(const sn_arch *a, const sn_st_model *m, char **json, sn_err *err) {
    (void)a;
    const sn_st_tensor *emb = tensor(m, "emb.weight"), *rk = tensor(m, "blocks.0.att.r_k"),
                       *w1 = tensor(m, "blocks.0.att.w1"), *a1 = tensor(m, "blocks.0.att.a1"),
                       *v1 = tensor(m, "blocks.1.att.v1"), *g1 = tensor(m, "blocks.0.att.g1"),
                       *fk = tensor(m, "blocks.0.ffn.key.weight");
    if (!emb || !rk || !w1 || !a1 || !g1 || !fk) return SN_EUNSUPPORTED;
    if (emb->n_dims != 2 || rk->n_dims != 2 || w1->n_dims != 2 || a1->n_dims != 2 || g1->n_dims != 2 || fk->n_dims != 2)
        return sn_err_set(err, SN_EFORMAT, "BlinkDL checkpoint: emb/r_k/w1/a1/g1/ffn.key are not 2-D");
    int64_t L = 0;
    char name[64];
    for (;;) {
        snprintf(name, sizeof name, "blocks.%lld.ln1.weight", (long long)L);
        if (!tensor(m, name)) break;
        L++;
    }
    const int64_t D = (int64_t)emb->shape[1];
    const int64_t rv = v1 ? (int64_t)v1->shape[1] : (int64_t)a1->shape[1]; /* a one-layer model has no v1 */
    char buf[1024];
    const int n = snprintf(buf, sizeof buf,
        "{\"architectures\": [\"Rwkv7ForCausalLM\"], \"model_type\": \"rwkv7\", "
        "\"hidden_size\": %lld, \"num_hidden_layers\": %lld, \"head_size\": %llu, "
        "\"layer_norm_epsilon\": 1e-05, \"intermediate_size\": %llu, \"vocab_size\": %llu, "
        "\"lora_rank_decay\": %llu, \"lora_rank_iclr\": %llu, \"lora_rank_value_residual_mix\": %lld, "
        "\"lora_rank_gate\": %llu, \"_derived_from\": \"hidden_size = emb.weight[1], layers = count of "
        "blocks.N.ln1, head_size = blocks.0.att.r_k[1], intermediate_size = ffn.key.weight[0], vocab_size = "
        "emb.weight[0], ranks = w1/a1/v1/g1 [1]; layer_norm_epsilon is not stored in a .pth: 1e-5 as "
        "RWKV-LM uses\"}",
        (long long)D, (long long)L, (unsigned long long)rk->shape[1], (unsigned long long)fk->shape[0],
        (unsigned long long)emb->shape[0], (unsigned long long)w1->shape[1], (unsigned long long)a1->shape[1],
        (long long)rv, (unsigned long long)g1->shape[1]);
    if (n < 0 || (size_t)n >= sizeof buf) return sn_err_set(err, SN_EINVAL, "BlinkDL checkpoint: config too long");
    *json = strdup(buf);
    return *json ? SN_OK : sn_err_set(err, SN_ENOMEM, "out of memory");
}

static const sn_arch_class k_classes[] = {{"RWKV7ForCausalLM", NULL}, {"Rwkv7ForCausalLM", NULL}, {NULL, NULL}};
static const char *const k_vocab_files[] = {"rwkv_vocab_v20230424.txt", NULL};
/* MODEL_TENSOR.TIME_MIX_W1 / W2 / LERP_FUSED are forced F32 by the converter */
static const char *const k_keep_f32[] = {"time_mix_w1.", "time_mix_w2.", "time_mix_lerp_fused.", NULL};
static const char *const k_required[] = {"token_embd.weight", "token_embd_norm.weight", "token_embd_norm.bias",
                                         "output_norm.weight", "output_norm.bias", "output.weight", NULL};
static const char *const k_layer_required[] = {
    "attn_norm.weight", "attn_norm.bias", "attn_norm_2.weight", "attn_norm_2.bias", "time_mix_lerp_fused.weight",
    "time_mix_w0.weight", "time_mix_w1.weight", "time_mix_w2.weight", "time_mix_a0.weight", "time_mix_a1.weight",
    "time_mix_a2.weight", "time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight", "time_mix_g1.weight",
    "time_mix_g2.weight", "time_mix_k_k.weight", "time_mix_k_a.weight", "time_mix_r_k.weight",
    "time_mix_receptance.weight", "time_mix_key.weight", "time_mix_value.weight", "time_mix_output.weight",
    "time_mix_ln.weight", "time_mix_ln.bias", "channel_mix_lerp_k.weight", "channel_mix_key.weight",
    "channel_mix_value.weight", NULL};

const sn_arch sn_arch_rwkv7 = {
    .gguf_arch = "rwkv7", .classes = k_classes, .vocab = SN_ARCH_VOCAB_RWKV, .vocab_files = k_vocab_files,
    .keep_f32 = k_keep_f32, .prepare_config = prepare_config,
    .check_config = check_config, .write_kv = write_kv, .map_tensor = map_tensor,
    .extra_tensors = extra_tensors, .config_from_tensors = config_from_tensors, .required = k_required,
    .required_per_layer = k_layer_required};
