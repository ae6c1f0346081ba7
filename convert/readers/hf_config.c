/* hf_config.c - config.json with the defaults transformers' config classes apply.
 *
 * The class defaults come from the architecture table (convert/archs/archs.c, transformers 4.57's values,
 * the version llama.cpp's converter pins). A field the file sets always wins; a field neither sets
 * stays "absent" so the GGUF writer can omit the key exactly as the reference does. */
#include "hf_config.h"
#include "budget.h"
#include "num.h"
#include "mapfile.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* First key of `keys` present with a non-null value. */
static const cJSON *find_first(const cJSON *root, const char *const *keys) {
    for (; *keys; keys++) {
        const cJSON *v = get(root, *keys);
        if (v && !cJSON_IsNull(v)) return v;
    }
    return NULL;
}

/* Integer field: 1 = found (value in *out), 0 = absent, <0 = wrong type (error set). */
static int get_int(const cJSON *root, const char *const *keys, const char *what, int64_t *out,
                   sn_err *err) {
    const cJSON *v = find_first(root, keys);
    if (!v) return 0;
    if (cJSON_IsBool(v)) {
        *out = cJSON_IsTrue(v);
        return 1;
    }
    if (!cJSON_IsNumber(v) || !sn_f64_to_i64(v->valuedouble, -1000000000000000, 1000000000000000, out)) {
        sn_err_set(err, SN_EFORMAT, "%s: field \"%s\" must be an integer", what, v->string);
        return -1;
    }
    return 1;
}

static int get_dbl(const cJSON *root, const char *const *keys, const char *what, double *out, sn_err *err) {
    const cJSON *v = find_first(root, keys);
    if (!v) return 0;
    if (!cJSON_IsNumber(v)) {
        sn_err_set(err, SN_EFORMAT, "%s: field \"%s\" must be a number", what, v->string);
        return -1;
    }
    *out = v->valuedouble;
    return 1;
}

/* Python's json accepts the bare literals NaN, Infinity and -Infinity. They are rewritten in place,
 * outside strings, into numbers of the same length that cJSON parses (so error offsets still point
 * into the original text): Infinity -> 1e999999 (strtod overflows to inf), -Infinity -> -1e999999,
 * NaN -> 0.0, whose position among the document's numbers is recorded and patched to NaN after the
 * parse (cJSON keeps document order). Returns the number of NaN positions stored in nan_at (at most
 * max_nan; more is reported as -1). */
static int rewrite_nonfinite(char *s, size_t n, size_t *nan_at, int max_nan) {
    int in_str = 0, n_nan = 0;
    size_t n_num = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (in_str) {
            if (c == '\\') i++;
            else if (c == '"') in_str = 0;
            continue;
        }
        if (c == '"') { in_str = 1; continue; }
        if (c == '-' && i + 9 <= n && memcmp(s + i, "-Infinity", 9) == 0) {
            memcpy(s + i, "-1e999999", 9);
            i += 8;
            n_num++;
        } else if (c == 'I' && i + 8 <= n && memcmp(s + i, "Infinity", 8) == 0) {
            memcpy(s + i, "1e999999", 8);
            i += 7;
            n_num++;
        } else if (c == 'N' && i + 3 <= n && memcmp(s + i, "NaN", 3) == 0) {
            if (n_nan == max_nan) return -1;
            memcpy(s + i, "0.0", 3);
            nan_at[n_nan++] = n_num++;
            i += 2;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            n_num++;
            while (i + 1 < n && strchr("0123456789+-.eE", s[i + 1]) && s[i + 1]) i++;
        }
    }
    return n_nan;
}

/* Sets the recorded numbers (document order) to NaN. */
static void patch_nan(cJSON *it, const size_t *nan_at, int n_nan, size_t *k, int *next) {
    for (; it && *next < n_nan; it = it->next) {
        if (cJSON_IsNumber(it)) {
            if (*k == nan_at[*next]) {
                it->valuedouble = NAN;
                it->valueint = 0;
                (*next)++;
            }
            (*k)++;
        } else if (cJSON_IsArray(it) || cJSON_IsObject(it)) {
            patch_nan(it->child, nan_at, n_nan, k, next);
        }
    }
}

/* config.json as Python's json.load reads it (see hf_config.h). */
static cJSON *parse_config_json(const char *json, const char **end) {
    size_t n = strlen(json);
    char *s = malloc(n + 1);
    if (!s) return NULL;
    memcpy(s, json, n + 1);
    size_t nan_at[64];
    int n_nan = rewrite_nonfinite(s, n, nan_at, 64);
    const char *e = NULL;
    cJSON *root = n_nan < 0 ? NULL : cJSON_ParseWithOpts(s, &e, 1);
    if (end) *end = e ? json + (e - s) : json;
    if (root && n_nan > 0) {
        size_t k = 0;
        int next = 0;
        patch_nan(root, nan_at, n_nan, &k, &next);
    }
    free(s);
    return root;
}

/* Token id: an int; lists and null are ignored (-1). */
static int64_t token_id(const cJSON *root, const char *key) {
    const cJSON *v = get(root, key);
    if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 2147483648.0 &&
        v->valuedouble == (double)(int64_t)v->valuedouble)
        return (int64_t)v->valuedouble;
    return -2; /* not an int: caller decides between absent and default */
}

/* Python's {**root, **root["text_config"]}: text_config keys override, new ones are appended. */
static sn_status merge_text_config(cJSON *root, sn_err *err, const char *what) {
    cJSON *tc = cJSON_GetObjectItemCaseSensitive(root, "text_config");
    if (!tc || !cJSON_IsObject(tc)) return SN_OK;
    cJSON *copy = cJSON_Duplicate(tc, 1);
    if (!copy) return sn_err_set(err, SN_ENOMEM, "%s: out of memory", what);
    for (cJSON *it = copy->child; it;) {
        cJSON *next = it->next;
        cJSON *item = cJSON_DetachItemViaPointer(copy, it);
        /* cJSON frees item->string while renaming: hand it a copy of the key */
        char *k = strdup(item->string ? item->string : "");
        if (!k) {
            cJSON_Delete(item);
            cJSON_Delete(copy);
            return sn_err_set(err, SN_ENOMEM, "%s: out of memory", what);
        }
        if (cJSON_GetObjectItemCaseSensitive(root, k)) cJSON_ReplaceItemInObjectCaseSensitive(root, k, item);
        else cJSON_AddItemToObject(root, k, item);
        free(k);
        it = next;
    }
    cJSON_Delete(copy);
    return SN_OK;
}

static void parse_rope(const cJSON *root, sn_hf_config *cfg) {
    const cJSON *rp = get(root, "rope_parameters");
    if (!cJSON_IsObject(rp)) rp = get(root, "rope_scaling");
    if (!cJSON_IsObject(rp)) return;
    const cJSON *fa = get(rp, "full_attention");
    if (cJSON_IsObject(fa)) rp = fa;
    const cJSON *t = get(rp, "rope_type");
    if (!cJSON_IsString(t)) t = get(rp, "type");
    const cJSON *v;
    if ((v = get(rp, "rope_theta")) && cJSON_IsNumber(v)) {
        cfg->rope_theta = v->valuedouble;
        cfg->has_rope_theta = 1;
    }
    if ((v = get(rp, "factor")) && cJSON_IsNumber(v)) cfg->rope_factor = v->valuedouble;
    v = get(rp, "original_max_position_embeddings");
    if (!v) v = get(root, "original_max_position_embeddings");
    if (cJSON_IsNumber(v) && !sn_f64_to_i64(v->valuedouble, 0, INT32_MAX, &cfg->rope_orig_ctx)) cfg->rope_orig_ctx = -1;
    if ((v = get(rp, "low_freq_factor")) && cJSON_IsNumber(v)) cfg->rope_low_freq_factor = v->valuedouble;
    if ((v = get(rp, "high_freq_factor")) && cJSON_IsNumber(v)) cfg->rope_high_freq_factor = v->valuedouble;
    if ((v = get(rp, "extrapolation_factor")) && cJSON_IsNumber(v)) {
        cfg->yarn_ext_factor = v->valuedouble;
        cfg->has_yarn_ext_factor = 1;
    }
    v = get(rp, "attention_factor");
    if (!v || cJSON_IsNull(v)) v = get(rp, "attn_factor");
    if (cJSON_IsNumber(v)) {
        cfg->yarn_attn_factor = v->valuedouble;
        cfg->has_yarn_attn_factor = 1;
    }
    if ((v = get(rp, "beta_fast")) && cJSON_IsNumber(v)) {
        cfg->yarn_beta_fast = v->valuedouble;
        cfg->has_yarn_beta_fast = 1;
    }
    if ((v = get(rp, "beta_slow")) && cJSON_IsNumber(v)) {
        cfg->yarn_beta_slow = v->valuedouble;
        cfg->has_yarn_beta_slow = 1;
    }
    if (!cJSON_IsString(t) || !t->valuestring) return;
    snprintf(cfg->rope_scaling_type, sizeof(cfg->rope_scaling_type), "%s", t->valuestring);
    const char *s = t->valuestring;
    if (strcmp(s, "linear") == 0) cfg->rope_scaling = SN_ROPE_SCALING_LINEAR;
    else if (strcmp(s, "yarn") == 0) cfg->rope_scaling = SN_ROPE_SCALING_YARN;
    else if (strcasecmp(s, "llama3") == 0) cfg->rope_scaling = SN_ROPE_SCALING_LLAMA3;
    else if (strcmp(s, "su") == 0 || strcmp(s, "longrope") == 0) cfg->rope_scaling = SN_ROPE_SCALING_LONGROPE;
    else cfg->rope_scaling = SN_ROPE_SCALING_OTHER;
}

/* The values a GGUF carries on must be ones sunny-run (and llama.cpp) can use: finite and in range
 * here, so nothing is written from a config that could only produce a model the runtime refuses.
 * A token id key that is a number must be a valid id (lists and null stay "none", as before). */
static sn_status check_ranges(const cJSON *root, const sn_hf_config *cfg, const char *what, sn_err *err) {
    if (cfg->has_rms_norm_eps && !(isfinite(cfg->rms_norm_eps) && cfg->rms_norm_eps >= 0))
        return sn_err_set(err, SN_EFORMAT, "%s: rms_norm_eps = %g; must be finite and >= 0", what, cfg->rms_norm_eps);
    if (cfg->has_rope_theta && !(isfinite(cfg->rope_theta) && cfg->rope_theta > 0))
        return sn_err_set(err, SN_EFORMAT, "%s: rope_theta = %g; must be finite and > 0", what, cfg->rope_theta);
    if (cfg->has_head_dim && cfg->head_dim == 0)
        return sn_err_set(err, SN_EFORMAT, "%s: head_dim = 0; must be > 0", what);
    static const char *const ids[] = {"bos_token_id", "eos_token_id", "pad_token_id"};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
        const cJSON *v = get(root, ids[i]);
        if (cJSON_IsNumber(v) && token_id(root, ids[i]) < 0 && !(i == 2 && v->valuedouble == -1))
            return sn_err_set(err, SN_EFORMAT, "%s: %s = %.17g is not a token id (an integer in [0, 2^31))", what,
                              ids[i], v->valuedouble);
    }
    const cJSON *rp = get(root, "rope_parameters");
    if (!cJSON_IsObject(rp)) rp = get(root, "rope_scaling");
    if (!cJSON_IsObject(rp)) return SN_OK;
    if (cJSON_IsObject(get(rp, "full_attention"))) rp = get(rp, "full_attention");
    const cJSON *t = get(rp, "rope_type");
    if (!cJSON_IsString(t)) t = get(rp, "type");
    static const char *const known[] = {"default", "linear", "dynamic", "yarn", "llama3", "su", "longrope"};
    int ok = !cJSON_IsString(t);
    for (size_t i = 0; !ok && i < sizeof known / sizeof *known; i++) ok = strcasecmp(t->valuestring, known[i]) == 0;
    if (!ok)
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: rope_scaling.rope_type '%s' is not known (%s)", what, t->valuestring,
                          "default, linear, dynamic, yarn, llama3, longrope");
    const cJSON *f = get(rp, "factor");
    if (f && !cJSON_IsNull(f) && !(cJSON_IsNumber(f) && isfinite(f->valuedouble) && f->valuedouble > 0))
        return sn_err_set(err, SN_EFORMAT, "%s: rope_scaling.factor must be a finite number > 0", what);
    return SN_OK;
}

sn_status sn_hf_config_parse(const char *json, const char *what, sn_hf_config *cfg, sn_err *err) {
    memset(cfg, 0, sizeof(*cfg));
    cfg->vocab_size = cfg->hidden_size = cfg->n_layers = cfg->n_heads = cfg->n_kv_heads = -1;
    cfg->head_dim = cfg->intermediate_size = cfg->max_position_embeddings = -1;
    cfg->rope_orig_ctx = -1;
    cfg->bos_token_id = cfg->eos_token_id = cfg->pad_token_id = -1;
    const char *end = NULL;
    cJSON *root = parse_config_json(json, &end);
    if (!root) {
        long at = end ? (long)(end - json) : 0;
        return sn_err_set(err, SN_EFORMAT, "%s: not valid JSON (near byte offset %ld)", what, at);
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return sn_err_set(err, SN_EFORMAT, "%s: not a JSON object", what);
    }
    cfg->root = root;
    sn_status st = merge_text_config(root, err, what);
    if (st != SN_OK) goto fail;

    const cJSON *archs = get(root, "architectures");
    if (cJSON_IsArray(archs) && cJSON_GetArraySize(archs) > 0) {
        const cJSON *a0 = cJSON_GetArrayItem(archs, 0);
        if (!cJSON_IsString(a0)) {
            st = sn_err_set(err, SN_EFORMAT, "%s: \"architectures\"[0] is not a string", what);
            goto fail;
        }
        snprintf(cfg->architecture, sizeof(cfg->architecture), "%s", a0->valuestring);
    } else if (cJSON_IsObject(get(root, "ssm_cfg"))) { /* mamba_ssm (non-HF) Mamba and Mamba2 configs */
        const cJSON *layer = get(get(root, "ssm_cfg"), "layer");
        snprintf(cfg->architecture, sizeof(cfg->architecture), "%sForCausalLM",
                 cJSON_IsString(layer) ? layer->valuestring : "Mamba");
    }
    const cJSON *mt = get(root, "model_type");
    if (cJSON_IsString(mt)) snprintf(cfg->model_type, sizeof(cfg->model_type), "%s", mt->valuestring);
    const cJSON *np = get(root, "_name_or_path");
    if (cJSON_IsString(np)) cfg->name_or_path = np->valuestring;

    static const char *const k_vocab[] = {"vocab_size", NULL};
    static const char *const k_hidden[] = {"hidden_size", "n_embd", "dim", NULL};
    static const char *const k_layers[] = {"n_layers", "num_hidden_layers", "n_layer", "num_layers", NULL};
    static const char *const k_heads[] = {"num_attention_heads", "n_head", "n_heads", NULL};
    static const char *const k_kv[] = {"num_key_value_heads", "n_kv_heads", NULL};
    static const char *const k_hd[] = {"head_dim", NULL};
    static const char *const k_ff[] = {"prefix_dense_intermediate_size", "dense_intermediate_size",
                                       "intermediate_size", "n_inner", "hidden_dim", NULL};
    static const char *const k_ctx[] = {"max_position_embeddings", "n_ctx", "n_positions", "max_length",
                                        "max_sequence_length", "model_max_length", NULL};
    static const char *const k_theta[] = {"global_rope_theta", "rope_global_theta", "rope_theta_global",
                                          "rope_theta", "rotary_emb_base", NULL};
    static const char *const k_eps[] = {"rms_norm_eps", "norm_eps", NULL};
    static const char *const k_tie[] = {"tie_word_embeddings", NULL};
    struct { const char *const *keys; int64_t *dst; } ints[] = {
        {k_vocab, &cfg->vocab_size}, {k_hidden, &cfg->hidden_size}, {k_layers, &cfg->n_layers},
        {k_heads, &cfg->n_heads}, {k_kv, &cfg->n_kv_heads}, {k_hd, &cfg->head_dim},
        {k_ff, &cfg->intermediate_size}, {k_ctx, &cfg->max_position_embeddings},
    };
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        int r = get_int(root, ints[i].keys, what, ints[i].dst, err);
        if (r < 0) { st = err ? err->code : SN_EFORMAT; goto fail; }
    }
    cfg->has_head_dim = cfg->head_dim >= 0;
    int r = get_dbl(root, k_theta, what, &cfg->rope_theta, err);
    if (r < 0) { st = SN_EFORMAT; goto fail; }
    cfg->has_rope_theta = r;
    r = get_dbl(root, k_eps, what, &cfg->rms_norm_eps, err);
    if (r < 0) { st = SN_EFORMAT; goto fail; }
    cfg->has_rms_norm_eps = r;
    int64_t tie = -1;
    if (get_int(root, k_tie, what, &tie, err) < 0) { st = SN_EFORMAT; goto fail; }

    /* class defaults (what AutoConfig(...).to_dict() would contain) */
    const sn_hf_defaults *d = sn_hf_defaults_for(cfg->architecture);
    if (d) {
        if (cfg->vocab_size < 0) cfg->vocab_size = d->vocab;
        if (cfg->hidden_size < 0) cfg->hidden_size = d->hidden;
        if (cfg->intermediate_size < 0) cfg->intermediate_size = d->inter;
        if (cfg->n_layers < 0) cfg->n_layers = d->layers;
        if (cfg->n_heads < 0) cfg->n_heads = d->heads;
        if (cfg->n_kv_heads < 0) cfg->n_kv_heads = d->kv_heads >= 0 ? d->kv_heads : cfg->n_heads;
        if (cfg->max_position_embeddings < 0) cfg->max_position_embeddings = d->max_pos;
        if (!cfg->has_rope_theta) { cfg->rope_theta = d->rope_theta; cfg->has_rope_theta = 1; }
        if (!cfg->has_rms_norm_eps) { cfg->rms_norm_eps = d->rms_eps; cfg->has_rms_norm_eps = 1; }
        if (!cfg->has_head_dim && d->head_dim >= 0) {
            if (d->head_dim > 0) cfg->head_dim = d->head_dim;
            else if (cfg->n_heads > 0) cfg->head_dim = cfg->hidden_size / cfg->n_heads;
            cfg->has_head_dim = cfg->head_dim > 0;
        }
        if (tie < 0) tie = 0;
    }
    cfg->tie_word_embeddings = tie > 0;
    if (!cfg->has_head_dim && cfg->n_heads > 0 && cfg->hidden_size > 0)
        cfg->head_dim = cfg->hidden_size / cfg->n_heads; /* derived, but not a config key */

    int64_t b = token_id(root, "bos_token_id"), e = token_id(root, "eos_token_id"), p = token_id(root, "pad_token_id");
    /* A key present with a non-int value (null or a list) is not a default: it stays -1. */
    cfg->bos_token_id = b >= 0 ? b : (get(root, "bos_token_id") ? -1 : (d ? d->bos : -1));
    cfg->eos_token_id = e >= 0 ? e : (get(root, "eos_token_id") ? -1 : (d ? d->eos : -1));
    cfg->pad_token_id = p >= 0 ? p : -1;

    parse_rope(root, cfg);
    if ((st = check_ranges(root, cfg, what, err)) != SN_OK) goto fail;
    return SN_OK;
fail:
    cJSON_Delete(root);
    cfg->root = NULL;
    return st;
}

sn_status sn_hf_config_load(const char *path, sn_hf_config *cfg, sn_err *err) {
    memset(cfg, 0, sizeof(*cfg));
    char *buf;
    sn_status st = SN_READ_FILE(path, SN_BUDGET_TEXT_FILE, &buf, NULL, err);
    if (st != SN_OK) return st;
    st = sn_hf_config_parse(buf, path, cfg, err);
    free(buf);
    return st;
}

void sn_hf_config_free(sn_hf_config *cfg) {
    if (!cfg) return;
    cJSON_Delete(cfg->root);
    cfg->root = NULL;
    cfg->name_or_path = NULL;
}

int sn_hf_config_get_num(const sn_hf_config *cfg, const char *key, double *out) {
    const cJSON *v = cfg && cfg->root ? get(cfg->root, key) : NULL;
    if (!cJSON_IsNumber(v)) return 0;
    *out = v->valuedouble;
    return 1;
}

const char *sn_hf_config_get_str(const sn_hf_config *cfg, const char *key) {
    const cJSON *v = cfg && cfg->root ? get(cfg->root, key) : NULL;
    return cJSON_IsString(v) ? v->valuestring : NULL;
}
