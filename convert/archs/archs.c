/* archs.c - THE architecture table of the converter: every family sunny converts, once.
 *
 * Everything else that needs the list derives it from here: the architectures[0] lookup and the
 * "supported:" message (convert.c, sunny-convert --help), the transformers class defaults applied to
 * config.json (hf_config.c), which tokenizer path the family follows (vocab.c), the per-tensor type
 * rules (convert.c choose_type) and the blob writer's "keep f32" rule (blob_convert.c). The runtime has
 * its own table of the families it can run (runtime/models/model.c). Adding a family: write
 * convert/arch_<family>.c and add its sn_arch to k_archs. */
#include "arch.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "path.h"

#include <stdlib.h>

extern const sn_arch sn_arch_qwen2, sn_arch_qwen3, sn_arch_qwen3moe, sn_arch_mamba2, sn_arch_rwkv7, sn_arch_gemma3,
    sn_arch_qwen35, sn_arch_qwen35moe, sn_arch_qwen3next, sn_arch_phi3, sn_arch_smollm3, sn_arch_granitehybrid,
    sn_arch_gptoss, sn_arch_lfm2;
static const sn_arch *const k_archs[] = {&sn_arch_llama, &sn_arch_qwen2, &sn_arch_qwen3, &sn_arch_qwen3moe,
                                          &sn_arch_mamba2, &sn_arch_rwkv7, &sn_arch_gemma3, &sn_arch_qwen35,
                                          &sn_arch_qwen35moe, &sn_arch_qwen3next, &sn_arch_phi3, &sn_arch_smollm3,
                                          &sn_arch_granitehybrid, &sn_arch_gptoss, &sn_arch_lfm2};
#define N_ARCHS (sizeof(k_archs) / sizeof(k_archs[0]))

static const sn_arch_class *find_class(const char *hf_arch, const sn_arch **owner) {
    if (!hf_arch) return NULL;
    for (size_t i = 0; i < N_ARCHS; i++)
        for (const sn_arch_class *c = k_archs[i]->classes; c->name; c++)
            if (strcmp(c->name, hf_arch) == 0) {
                if (owner) *owner = k_archs[i];
                return c;
            }
    return NULL;
}

const sn_arch *sn_arch_find(const char *hf_arch) {
    const sn_arch *a = NULL;
    return find_class(hf_arch, &a) ? a : NULL;
}

const sn_arch *sn_arch_find_gguf(const char *gguf_arch) {
    for (size_t i = 0; gguf_arch && i < N_ARCHS; i++)
        if (strcmp(k_archs[i]->gguf_arch, gguf_arch) == 0) return k_archs[i];
    return NULL;
}

const sn_hf_defaults *sn_hf_defaults_for(const char *hf_arch) {
    const sn_arch_class *c = find_class(hf_arch, NULL);
    return c ? c->defaults : NULL;
}

const char *sn_arch_supported_list(void) {
    static char buf[512];
    if (!buf[0]) {
        size_t k = 0;
        for (size_t i = 0; i < N_ARCHS; i++)
            for (const sn_arch_class *c = k_archs[i]->classes; c->name && k < sizeof buf; c++)
                k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%s", k ? ", " : "", c->name);
    }
    return buf;
}

int sn_arch_name_in(const char *gguf_name, const char *const *substrings) {
    for (; substrings && *substrings; substrings++)
        if (strstr(gguf_name, *substrings)) return 1;
    return 0;
}

/* TextModel.filter_tensors: multimodal towers and projectors are dropped, not errors. */
int sn_arch_is_multimodal(const char *n) {
    static const char *const prefixes[] = {"mlp", "vit.", "vpm.", "siglip2.", "conformer.", "merger.", "resampler.",
                                           "sound_encoder.", "sound_projection.", "speech_embeddings."};
    static const char *const parts[] = {"visual.", "vision.", "audio.", "talker.", "vision_", "audio_", "token2wav.",
                                        "code2wav.", "projector.", "pre_mm_projector_norm", "image_newline",
                                        "view_seperator", "patch_embed", "patch_embedding", "patch_merger.",
                                        "patch_merge_mlp.", "model.connector."};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
        if (strncmp(n, prefixes[i], strlen(prefixes[i])) == 0) return 1;
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        if (strstr(n, parts[i])) return 1;
    return 0;
}

static int is_file(const char *dir, const char *name) {
    char *p = sn_path_join(dir, name);
    struct stat sb;
    int ok = p && stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
    free(p);
    return ok;
}

sn_status sn_arch_check_vocab_files(const sn_arch *a, const char *dir, sn_err *err) {
    const char *const *f = a->vocab_files;
    if (!f || !f[0]) return SN_OK;
    for (const char *const *q = f; *q; q++)
        if (is_file(dir, *q)) return SN_OK;
    char need[256];
    size_t k = 0;
    for (const char *const *q = f; *q && k < sizeof need; q++)
        k += (size_t)snprintf(need + k, sizeof need - k, "%s%s", q == f ? "" : q[1] ? ", " : " or ", *q);
    return sn_err_set(err, SN_EIO, "%s/%s: missing (need %s)", dir, f[0], need);
}

sn_status sn_arch_config_from_tensors(const struct sn_st_model *m, char **json, const sn_arch **out, sn_err *err) {
    *json = NULL;
    *out = NULL;
    for (size_t i = 0; i < N_ARCHS; i++) {
        if (!k_archs[i]->config_from_tensors) continue;
        sn_status st = k_archs[i]->config_from_tensors(k_archs[i], m, json, err);
        if (st == SN_OK) {
            *out = k_archs[i];
            return SN_OK;
        }
        if (st != SN_EUNSUPPORTED) return st;
    }
    return sn_err_set(err, SN_EINVAL, "no config.json, and no family recognises the checkpoint's tensors "
                      "(give --config config.json)");
}

/* ---- metadata writers shared by the families' write_kv ---- */

static void kv_key(char *key, size_t n, const char *arch, const char *suffix) {
    if (arch) snprintf(key, n, "%s.%s", arch, suffix);
    else snprintf(key, n, "%s", suffix);
}

sn_status sn_arch_kv_u32(sn_gguf_writer *w, const char *arch, const char *suffix, int64_t v, sn_err *err) {
    char key[128];
    kv_key(key, sizeof key, arch, suffix);
    if (v < 0 || v > UINT32_MAX)
        return sn_err_set(err, SN_EFORMAT, "config.json: value %lld for %s does not fit u32", (long long)v, key);
    sn_status st = sn_gguf_writer_set_u32(w, key, (uint32_t)v);
    return st == SN_OK ? SN_OK : sn_err_set(err, st, "cannot set %s", key);
}

sn_status sn_arch_kv_u32s(sn_gguf_writer *w, const char *arch, const sn_arch_value *kv, size_t n, sn_err *err) {
    for (size_t i = 0; i < n; i++) {
        sn_status st = sn_arch_kv_u32(w, arch, kv[i].name, kv[i].v, err);
        if (st != SN_OK) return st;
    }
    return SN_OK;
}

sn_status sn_arch_check_range(const sn_arch_value *v, size_t n, int log2_max, sn_err *err) {
    for (size_t i = 0; i < n; i++)
        if (v[i].v <= 0 || v[i].v > (int64_t)1 << log2_max)
            return sn_err_set(err, SN_EFORMAT, "config.json: %s is missing or not an integer in 1..2^%d", v[i].name,
                              log2_max);
    return SN_OK;
}

sn_status sn_arch_kv_f32(sn_gguf_writer *w, const char *arch, const char *suffix, double v, sn_err *err) {
    char key[128];
    kv_key(key, sizeof key, arch, suffix);
    sn_status st = sn_gguf_writer_set_f32(w, key, (float)v);
    return st == SN_OK ? SN_OK : sn_err_set(err, st, "cannot set %s", key);
}

sn_status sn_arch_kv_str(sn_gguf_writer *w, const char *arch, const char *suffix, const char *v, sn_err *err) {
    char key[128];
    kv_key(key, sizeof key, arch, suffix);
    sn_status st = sn_gguf_writer_set_str(w, key, v);
    return st == SN_OK ? SN_OK : sn_err_set(err, st, "cannot set %s", key);
}

sn_status sn_arch_kv_mrope_sections(sn_gguf_writer *w, const char *arch, const sn_hf_config *c, sn_err *err) {
    const cJSON *rp = c->root ? cJSON_GetObjectItemCaseSensitive(c->root, "rope_parameters") : NULL;
    if (!cJSON_IsObject(rp) && c->root) rp = cJSON_GetObjectItemCaseSensitive(c->root, "rope_scaling");
    const cJSON *ms = cJSON_IsObject(rp) ? cJSON_GetObjectItemCaseSensitive(rp, "mrope_section") : NULL;
    if (!ms) return SN_OK;
    int32_t v[4] = {0, 0, 0, 0};
    int n = 0;
    for (const cJSON *x = cJSON_IsArray(ms) ? ms->child : NULL; x; x = x->next, n++)
        if (n >= 4 || !cJSON_IsNumber(x) || x->valuedouble < 0 || x->valuedouble > 65536 ||
            x->valuedouble != (double)(int32_t)x->valuedouble)
            break;
        else v[n] = (int32_t)x->valuedouble;
    if (!cJSON_IsArray(ms) || n != cJSON_GetArraySize(ms))
        return sn_err_set(err, SN_EFORMAT, "config.json: rope_parameters.mrope_section must be a list of at most 4 "
                          "integers in 0..65536");
    char key[128];
    snprintf(key, sizeof key, "%s.rope.dimension_sections", arch);
    sn_status st = sn_gguf_writer_set_arr(w, key, SN_GGUF_I32, v, 4);
    return st == SN_OK ? SN_OK : sn_err_set(err, st, "cannot set %s", key);
}
