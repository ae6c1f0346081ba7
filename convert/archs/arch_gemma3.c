/* arch_gemma3.c - Gemma 3 text models: Gemma3ForCausalLM and the language model of
 * Gemma3ForConditionalGeneration -> "gemma3".
 *
 * Mirrors llama.cpp's converter (conversion/gemma.py, Gemma3Model): the generic TextModel keys,
 * then Gemma 3's own (context length, head counts, key/value length, the global rope base with
 * their defaults; final_logit_softcapping only when set; sliding_window unless the pattern is 1);
 * a key the generic pass already wrote keeps its place. Every "*norm.weight" is stored + 1 (Gemma's
 * RMSNorm scales by 1 + w), the embedding keeps its first vocab_size rows (the reference trims rows
 * past the vocabulary), the head is tied (an lm_head, if any, is still converted). NEOX rope: no
 * q/k permutation. Of a Gemma3ForConditionalGeneration the "language_model." prefix is dropped and
 * the vision tower and projector are skipped, as the text conversion of the reference does (its
 * mmproj file is a separate conversion sunny does not do). The vocabulary is tokenizer.model's
 * SentencePiece pieces with add_space_prefix = false (vocab.c); with only a tokenizer.json the
 * reference takes its GPT-2 BPE path, which has no Gemma 3 pre-tokenizer, so sunny refuses it too. */
#include "arch.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* hparams.get(key, def) on the merged config (a present null stays null: returns 0 then). */
static int num_or(const sn_hf_config *c, const char *key, double def, double *out) {
    const cJSON *v = get(c->root, key);
    if (!v) {
        *out = def;
        return 1;
    }
    if (!cJSON_IsNumber(v)) return 0;
    *out = v->valuedouble;
    return 1;
}

typedef struct {
    int64_t n_head, n_head_kv, head_dim, ctx, window;
    double eps, softcap;
    int write_window;
} gemma3_dims;

static sn_status dims_of(const sn_hf_config *c, gemma3_dims *d, sn_err *err) {
    double v;
    memset(d, 0, sizeof *d);
    static const struct { const char *key; double def; } k_int[] = {
        {"num_attention_heads", 8}, {"num_key_value_heads", 4}, {"head_dim", 256}, {"max_position_embeddings", 131072}};
    int64_t *dst[] = {&d->n_head, &d->n_head_kv, &d->head_dim, &d->ctx};
    for (size_t i = 0; i < 4; i++) {
        if (!num_or(c, k_int[i].key, k_int[i].def, &v) || v != (double)(int64_t)v || v < 1 || v > 1 << 30)
            return sn_err_set(err, SN_EFORMAT, "config.json: \"%s\" is not an integer in 1..2^30", k_int[i].key);
        *dst[i] = (int64_t)v;
    }
    if (!num_or(c, "rms_norm_eps", 1e-6, &d->eps))
        return sn_err_set(err, SN_EFORMAT, "config.json: \"rms_norm_eps\" is not a number");
    const cJSON *sc = get(c->root, "final_logit_softcapping");
    if (sc && !cJSON_IsNull(sc) && !cJSON_IsNumber(sc))
        return sn_err_set(err, SN_EFORMAT, "config.json: \"final_logit_softcapping\" is not a number");
    d->softcap = cJSON_IsNumber(sc) ? sc->valuedouble : 0;
    const cJSON *alc = get(c->root, "attn_logit_softcapping");
    if (alc && !cJSON_IsNull(alc))
        return sn_err_set(err, SN_EUNSUPPORTED, "config.json: \"attn_logit_softcapping\" is set; Gemma 3 has none "
                          "(llama.cpp's converter refuses it, so does sunny)");
    const cJSON *pat = get(c->root, "sliding_window_pattern");
    d->write_window = !(cJSON_IsNumber(pat) && pat->valuedouble == 1);
    if (d->write_window) {
        const cJSON *w = get(c->root, "sliding_window");
        if (!cJSON_IsNumber(w) || w->valuedouble < 1 || w->valuedouble > 1 << 30 ||
            w->valuedouble != (double)(int64_t)w->valuedouble)
            return sn_err_set(err, SN_EFORMAT, "config.json: \"sliding_window\" is missing or not an integer in 1..2^30");
        d->window = (int64_t)w->valuedouble;
    }
    return SN_OK;
}

static sn_status check_config(const sn_arch *a, const sn_hf_config *c, sn_err *err) {
    (void)a;
    gemma3_dims d;
    SN_ARCH_TRY(dims_of(c, &d, err));
    const sn_arch_value req[] = {
        {"\"hidden_size\"", c->hidden_size}, {"\"num_hidden_layers\"", c->n_layers},
        {"\"intermediate_size\"", c->intermediate_size}, {"\"vocab_size\"", c->vocab_size},
    };
    SN_ARCH_TRY(sn_arch_check_range(req, sizeof req / sizeof *req, 30, err));
    if (d.n_head % d.n_head_kv != 0)
        return sn_err_set(err, SN_EFORMAT, "config.json: num_attention_heads %lld is not a multiple of "
                          "num_key_value_heads %lld", (long long)d.n_head, (long long)d.n_head_kv);
    if (d.head_dim % 2 != 0)
        return sn_err_set(err, SN_EFORMAT, "config.json: head_dim %lld is odd; rope needs an even one",
                          (long long)d.head_dim);
    return SN_OK;
}

/* The local (sliding-window) rope base as the reference finds it: rope_parameters
 * ["sliding_attention"]["rope_theta"], else (no per-layer-type dicts) the first local-theta key. */
static int local_theta(const sn_hf_config *c, double *out) {
    const cJSON *rp = get(c->root, "rope_parameters");
    if (!cJSON_IsObject(rp)) rp = get(c->root, "rope_scaling");
    const cJSON *sa = cJSON_IsObject(rp) ? get(rp, "sliding_attention") : NULL;
    const cJSON *v = NULL;
    if (cJSON_IsObject(rp) && (get(rp, "full_attention") || sa)) v = sa ? get(sa, "rope_theta") : NULL;
    else {
        static const char *const k_local[] = {"local_rope_theta", "rope_local_theta", "rope_theta_local",
                                              "swa_rope_theta", "rope_local_base_freq", NULL};
        for (const char *const *k = k_local; *k && !v; k++) v = get(c->root, *k);
    }
    if (!cJSON_IsNumber(v)) return 0;
    *out = v->valuedouble;
    return 1;
}

#define TRY SN_ARCH_TRY

static sn_status write_kv(const sn_arch *a, const sn_hf_config *c, uint32_t file_type, sn_gguf_writer *w,
                          sn_err *err) {
    const char *A = a->gguf_arch;
    gemma3_dims d;
    double swa_theta;
    TRY(dims_of(c, &d, err));
    /* TextModel.set_gguf_parameters: each key only when the config has it */
    int has_ctx = c->max_position_embeddings >= 0, has_heads = c->n_heads >= 0, has_kv = c->n_kv_heads >= 0;
    int has_hd = c->has_head_dim;
    TRY(sn_arch_kv_u32(w, A, "block_count", c->n_layers, err));
    if (has_ctx) TRY(sn_arch_kv_u32(w, A, "context_length", d.ctx, err));
    TRY(sn_arch_kv_u32(w, A, "embedding_length", c->hidden_size, err));
    TRY(sn_arch_kv_u32(w, A, "feed_forward_length", c->intermediate_size, err));
    if (has_heads) TRY(sn_arch_kv_u32(w, A, "attention.head_count", d.n_head, err));
    if (has_kv) TRY(sn_arch_kv_u32(w, A, "attention.head_count_kv", d.n_head_kv, err));
    if (c->rope_scaling == SN_ROPE_SCALING_LINEAR && c->rope_factor != 0) {
        TRY(sn_arch_kv_str(w, A, "rope.scaling.type", "linear", err));
        TRY(sn_arch_kv_f32(w, A, "rope.scaling.factor", c->rope_factor, err));
    }
    if (c->has_rope_theta) TRY(sn_arch_kv_f32(w, A, "rope.freq_base", c->rope_theta, err));
    if (local_theta(c, &swa_theta)) TRY(sn_arch_kv_f32(w, A, "rope.freq_base_swa", swa_theta, err));
    int has_eps = c->has_rms_norm_eps;
    if (has_eps) TRY(sn_arch_kv_f32(w, A, "attention.layer_norm_rms_epsilon", d.eps, err));
    if (has_hd) {
        TRY(sn_arch_kv_u32(w, A, "attention.key_length", d.head_dim, err));
        TRY(sn_arch_kv_u32(w, A, "attention.value_length", d.head_dim, err));
    }
    TRY(sn_arch_kv_u32(w, NULL, "general.file_type", file_type, err));
    /* Gemma3Model.set_gguf_parameters: the keys not written above, with its defaults */
    if (!has_ctx) TRY(sn_arch_kv_u32(w, A, "context_length", d.ctx, err));
    if (!has_heads) TRY(sn_arch_kv_u32(w, A, "attention.head_count", d.n_head, err));
    if (!has_eps) TRY(sn_arch_kv_f32(w, A, "attention.layer_norm_rms_epsilon", d.eps, err));
    if (!has_hd) {
        TRY(sn_arch_kv_u32(w, A, "attention.key_length", d.head_dim, err));
        TRY(sn_arch_kv_u32(w, A, "attention.value_length", d.head_dim, err));
    }
    if (!c->has_rope_theta) TRY(sn_arch_kv_f32(w, A, "rope.freq_base", 1e6, err));
    if (d.softcap != 0) TRY(sn_arch_kv_f32(w, A, "final_logit_softcapping", d.softcap, err));
    if (d.write_window) TRY(sn_arch_kv_u32(w, A, "attention.sliding_window", d.window, err));
    if (!has_kv) TRY(sn_arch_kv_u32(w, A, "attention.head_count_kv", d.n_head_kv, err));
    return SN_OK;
}

/* ---- tensors ---- */

static void shape(sn_arch_tensor *o, uint32_t n, uint64_t ne0, uint64_t ne1) {
    o->n_dims = n;
    for (int i = 0; i < SN_GGUF_MAX_DIMS; i++) o->ne[i] = 1;
    o->ne[0] = ne0;
    o->ne[1] = ne1;
}

static int map_tensor(const sn_arch *a, const sn_hf_config *c, const char *hf_in, sn_arch_tensor *out,
                      sn_err *err) {
    memset(out, 0, sizeof(*out));
    if (sn_arch_is_multimodal(hf_in)) return SN_ARCH_MAP_SKIP;
    char hf[512];
    const char *lm = strstr(hf_in, "language_model.");
    if (lm) snprintf(hf, sizeof hf, "%.*s%s", (int)(lm - hf_in), hf_in, lm + 15);
    else snprintf(hf, sizeof hf, "%s", hf_in);
    gemma3_dims d;
    if (dims_of(c, &d, err) != SN_OK) return -1;
    uint64_t E = (uint64_t)c->hidden_size, V = (uint64_t)c->vocab_size, FF = (uint64_t)c->intermediate_size;
    uint64_t HD = (uint64_t)d.head_dim, NQ = (uint64_t)d.n_head * HD, NKV = (uint64_t)d.n_head_kv * HD;
    const char *g = NULL;
    if (!strcmp(hf, "model.embed_tokens.weight")) {
        g = "token_embd.weight";
        shape(out, 2, E, V);
        out->trim_rows = 1;
    } else if (!strcmp(hf, "lm_head.weight")) {
        g = "output.weight";
        shape(out, 2, E, V);
    } else if (!strcmp(hf, "model.norm.weight")) {
        g = "output_norm.weight";
        shape(out, 1, E, 1);
    }
    if (g) {
        snprintf(out->gguf_name, sizeof out->gguf_name, "%s", g);
        if (strstr(hf, "norm.weight")) out->ew = SN_ARCH_EW_ADD_ONE;
        return SN_ARCH_MAP_OK;
    }
    static const char pfx[] = "model.layers.";
    if (strncmp(hf, pfx, sizeof pfx - 1) == 0 && isdigit((unsigned char)hf[sizeof pfx - 1])) {
        const char *p = hf + sizeof pfx - 1;
        uint64_t bid = 0;
        while (isdigit((unsigned char)*p) && bid < 1000000) bid = bid * 10 + (uint64_t)(*p++ - '0');
        if (*p++ != '.') goto unmapped;
        static const struct { const char *hf, *gguf; int kind; } k_layer[] = {
            /* kind: 0 = [E] norm, 1 = [HD] norm, 2 = q, 3 = k/v, 4 = o, 5 = gate/up, 6 = down */
            {"input_layernorm.weight", "attn_norm.weight", 0},
            {"post_attention_layernorm.weight", "post_attention_norm.weight", 0},
            {"pre_feedforward_layernorm.weight", "ffn_norm.weight", 0},
            {"post_feedforward_layernorm.weight", "post_ffw_norm.weight", 0},
            {"self_attn.q_norm.weight", "attn_q_norm.weight", 1},
            {"self_attn.k_norm.weight", "attn_k_norm.weight", 1},
            {"self_attn.q_proj.weight", "attn_q.weight", 2},
            {"self_attn.k_proj.weight", "attn_k.weight", 3},
            {"self_attn.v_proj.weight", "attn_v.weight", 3},
            {"self_attn.o_proj.weight", "attn_output.weight", 4},
            {"mlp.gate_proj.weight", "ffn_gate.weight", 5},
            {"mlp.up_proj.weight", "ffn_up.weight", 5},
            {"mlp.down_proj.weight", "ffn_down.weight", 6},
        };
        for (size_t i = 0; i < sizeof k_layer / sizeof *k_layer; i++) {
            if (strcmp(p, k_layer[i].hf)) continue;
            switch (k_layer[i].kind) {
            case 0: shape(out, 1, E, 1); out->ew = SN_ARCH_EW_ADD_ONE; break;
            case 1: shape(out, 1, HD, 1); out->ew = SN_ARCH_EW_ADD_ONE; break;
            case 2: shape(out, 2, E, NQ); break;
            case 3: shape(out, 2, E, NKV); break;
            case 4: shape(out, 2, NQ, E); break;
            case 5: shape(out, 2, E, FF); break;
            default: shape(out, 2, FF, E); break;
            }
            if (bid >= (uint64_t)c->n_layers)
                return sn_err_set(err, SN_EFORMAT, "tensor '%s' is in layer %llu but config.json has %lld layers",
                                  hf_in, (unsigned long long)bid, (long long)c->n_layers);
            snprintf(out->gguf_name, sizeof out->gguf_name, "blk.%llu.%s", (unsigned long long)bid, k_layer[i].gguf);
            return SN_ARCH_MAP_OK;
        }
    }
unmapped:
    return sn_err_set(err, SN_EUNSUPPORTED, "cannot map tensor '%s' (architecture %s)", hf_in, a->gguf_arch);
}

/* Gemma3TextConfig's defaults (Gemma3ForConditionalGeneration's text_config is one). */
static const sn_hf_defaults k_gemma3_text = {
    .vocab = 262208, .hidden = 2304, .inter = 9216, .layers = 26, .heads = 8, .kv_heads = 4,
    .max_pos = 131072, .rope_theta = 1e6, .rms_eps = 1e-6, .head_dim = 256, .bos = 2, .eos = 1};
static const sn_arch_class k_classes[] = {
    {"Gemma3ForCausalLM", &k_gemma3_text}, {"Gemma3ForConditionalGeneration", &k_gemma3_text}, {NULL, NULL}};
static const char *const k_vocab_files[] = {"tokenizer.model", NULL};
static const char *const k_required[] = {"token_embd.weight", "output_norm.weight", NULL};
static const char *const k_layer_required[] = {
    "attn_norm.weight", "attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight",
    "attn_q_norm.weight", "attn_k_norm.weight", "post_attention_norm.weight", "ffn_norm.weight",
    "ffn_gate.weight", "ffn_up.weight", "ffn_down.weight", "post_ffw_norm.weight", NULL};

const sn_arch sn_arch_gemma3 = {
    .gguf_arch = "gemma3", .classes = k_classes, .vocab = SN_ARCH_VOCAB_SPM_NO_PREFIX,
    .vocab_files = k_vocab_files, .check_config = check_config, .write_kv = write_kv,
    .map_tensor = map_tensor, .required = k_required,
    .required_per_layer = k_layer_required};
