/* model.c - family-independent model loading: mmap the GGUF (or the runtime blob), read
 * hyperparameters, choose the family, validate tensors, own the thread pool and kernel table
 * (see model.h). */
#include "family.h"
#include "ops.h"
#include "blob.h"
#include "kernels/int4.h"
#include "populate.h"
#include "tokenizer.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern const sn_family sn_family_llama;
extern const sn_family sn_family_rwkv7;
extern const sn_family sn_family_mamba2;
extern const sn_family sn_family_qwen35;
extern const sn_family sn_family_gemma3;
extern const sn_family sn_family_phi3;
extern const sn_family sn_family_smollm3;
extern const sn_family sn_family_granitehybrid;
extern const sn_family sn_family_gptoss;
extern const sn_family sn_family_lfm2;

/* One row per general.architecture value we run: the family that runs it and that family's
 * options for this variant (SN_OPT_*). The only place outside a family file that names an arch. */
static const struct { const char *arch; const sn_family *fam; unsigned opts; } FAMILIES[] = {
    {"llama", &sn_family_llama, SN_OPT_FULL_ROT},
    {"qwen2", &sn_family_llama, SN_OPT_ROPE_NEOX},
    {"qwen3", &sn_family_llama, SN_OPT_ROPE_NEOX | SN_OPT_QK_NORM},
    {"qwen3moe", &sn_family_llama, SN_OPT_ROPE_NEOX | SN_OPT_QK_NORM | SN_OPT_FULL_ROT | SN_OPT_MOE},
    {"rwkv7", &sn_family_rwkv7, 0},
    {"mamba2", &sn_family_mamba2, 0},
    {"qwen35", &sn_family_qwen35, SN_OPT_ROPE_NEOX | SN_OPT_QK_NORM},
    {"qwen35moe", &sn_family_qwen35, SN_OPT_ROPE_NEOX | SN_OPT_QK_NORM | SN_OPT_MOE},
    {"qwen3next", &sn_family_qwen35, SN_OPT_ROPE_NEOX | SN_OPT_QK_NORM | SN_OPT_MOE | SN_OPT_GDN_GROUPED},
    {"phi3", &sn_family_phi3, SN_OPT_ROPE_NEOX},
    {"smollm3", &sn_family_smollm3, SN_OPT_FULL_ROT},
    {"gemma3", &sn_family_gemma3, 0},
    {"granitehybrid", &sn_family_granitehybrid, 0},
    {"gpt-oss", &sn_family_gptoss, SN_OPT_ROPE_NEOX},
    {"lfm2", &sn_family_lfm2, SN_OPT_ROPE_NEOX},
};
enum { N_FAMILIES = sizeof(FAMILIES) / sizeof(FAMILIES[0]) };

void sn_model_params_default(sn_model_params *p) {
    memset(p, 0, sizeof(*p));
    p->n_threads = 1;
    p->kv_type = SN_KV_F16;
    sn_tuning_default(&p->tuning);
}

static int family_row(const char *arch) {
    for (int i = 0; i < N_FAMILIES; i++)
        if (strcmp(FAMILIES[i].arch, arch) == 0) return i;
    return -1;
}

int sn_model_arch_supported(const char *arch) { return family_row(arch) >= 0; }

static char g_archs[256];
static pthread_once_t g_archs_once = PTHREAD_ONCE_INIT;

static void build_archs(void) {
    size_t n = 0;
    for (int i = 0; i < N_FAMILIES; i++)
        n += (size_t)snprintf(g_archs + n, sizeof(g_archs) - n, "%s%s", i ? ", " : "", FAMILIES[i].arch);
}

/* The weight types sn_model_matrix accepts (those with a dot kernel in every table). */
static const char k_supported_types[] =
    "F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, MXFP4";
const char *sn_model_supported_types(void) { return k_supported_types; }

const char *sn_model_supported_archs(void) {
    pthread_once(&g_archs_once, build_archs);
    return g_archs;
}

/* ---- typed metadata access ---- */

/* Reads an integer key of any integer type. 0 = found, 1 = absent, <0 = wrong type/range. */
static int get_int(const sn_gguf *g, const char *key, int64_t *out) {
    const int64_t i = sn_gguf_find_key(g, key);
    if (i < 0) return 1;
    switch (sn_gguf_kv_type(g, i)) {
    case SN_GGUF_U8: *out = sn_gguf_get_u8(g, i); return 0;
    case SN_GGUF_I8: *out = sn_gguf_get_i8(g, i); return 0;
    case SN_GGUF_U16: *out = sn_gguf_get_u16(g, i); return 0;
    case SN_GGUF_I16: *out = sn_gguf_get_i16(g, i); return 0;
    case SN_GGUF_U32: *out = sn_gguf_get_u32(g, i); return 0;
    case SN_GGUF_I32: *out = sn_gguf_get_i32(g, i); return 0;
    case SN_GGUF_I64: *out = sn_gguf_get_i64(g, i); return 0;
    case SN_GGUF_U64: {
        const uint64_t v = sn_gguf_get_u64(g, i);
        if (v > (uint64_t)INT64_MAX) return -1;
        *out = (int64_t)v;
        return 0;
    }
    case SN_GGUF_ARR: { /* per-layer arrays (e.g. head_count_kv): accept when uniform */
        const uint64_t n = sn_gguf_arr_n(g, i);
        const sn_gguf_type t = sn_gguf_arr_type(g, i);
        if (n == 0 || (t != SN_GGUF_U32 && t != SN_GGUF_I32)) return -1;
        const uint8_t *p = sn_gguf_arr_data(g, i);
        uint32_t first, v;
        memcpy(&first, p, 4);
        for (uint64_t j = 1; j < n; j++) {
            memcpy(&v, p + 4 * j, 4);
            if (v != first) return -2;
        }
        *out = t == SN_GGUF_I32 ? (int64_t)(int32_t)first : (int64_t)first;
        return 0;
    }
    default: return -1;
    }
}

static int get_float(const sn_gguf *g, const char *key, float *out) {
    const int64_t i = sn_gguf_find_key(g, key);
    if (i < 0) return 1;
    switch (sn_gguf_kv_type(g, i)) {
    case SN_GGUF_F32: *out = sn_gguf_get_f32(g, i); return 0;
    case SN_GGUF_F64: *out = (float)sn_gguf_get_f64(g, i); return 0;
    default: return -1;
    }
}

/* What get_int / get_float's result R (not 0) means for KEY: absent (an error only if REQUIRED),
 * per-layer (-2), or not of the KIND asked for. */
static sn_status key_problem(const sn_model *m, const char *key, int r, int required, const char *kind, sn_err *err) {
    if (r == 1) return required ? sn_err_set(err, SN_EFORMAT, "%s: missing metadata key %s", m->path, key) : SN_OK;
    if (r == -2)
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: %s varies per layer, which is not supported",
                          m->path, key);
    return sn_err_set(err, SN_EFORMAT, "%s: metadata key %s is not %s", m->path, key, kind);
}

sn_status sn_model_key_int(const sn_model *m, const char *suffix, int required, int64_t lo, int64_t hi,
                           int64_t *out, sn_err *err) {
    char key[128];
    snprintf(key, sizeof(key), "%s.%s", m->hp.arch, suffix);
    int64_t v = 0;
    const int r = get_int(m->g, key, &v);
    if (r) return key_problem(m, key, r, required, "an integer", err);
    if (v < lo || v > hi)
        return sn_err_set(err, SN_EFORMAT, "%s: %s = %lld is out of range [%lld, %lld]", m->path, key,
                          (long long)v, (long long)lo, (long long)hi);
    *out = v;
    return SN_OK;
}

sn_status sn_model_key_float(const sn_model *m, const char *suffix, int required, float *out, sn_err *err) {
    char key[128];
    snprintf(key, sizeof(key), "%s.%s", m->hp.arch, suffix);
    float v = 0.0f;
    const int r = get_float(m->g, key, &v);
    if (r) return key_problem(m, key, r, required, "a float", err);
    if (!isfinite(v)) return sn_err_set(err, SN_EFORMAT, "%s: metadata key %s is not finite", m->path, key);
    *out = v;
    return SN_OK;
}

sn_status sn_model_key_eps(const sn_model *m, const char *suffix, float *out, sn_err *err) {
    sn_status st = sn_model_key_float(m, suffix, 1, out, err);
    if (st) return st;
    if (!(*out >= 0.0f)) return sn_err_set(err, SN_EFORMAT, "%s: %s.%s must be >= 0", m->path, m->hp.arch, suffix);
    return SN_OK;
}

const char *sn_model_layer_name(sn_model *m, int il, const char *suffix) {
    snprintf(m->layer_name, sizeof(m->layer_name), "blk.%d.%s", il, suffix);
    return m->layer_name;
}

sn_status sn_model_each_layer(sn_model *m, sn_status (*load)(sn_model *m, int il, sn_err *err), sn_err *err) {
    for (int il = 0; il < m->hp.n_layer; il++) {
        sn_status st = load(m, il, err);
        if (st) return st;
    }
    return SN_OK;
}

sn_status sn_model_keys_int(const sn_model *m, const sn_key_int *keys, int n, sn_err *err) {
    for (int i = 0; i < n; i++) {
        sn_status st = sn_model_key_int(m, keys[i].suffix, 1, keys[i].lo, keys[i].hi, keys[i].out, err);
        if (st) return st;
    }
    return SN_OK;
}

/* What every family has (llama.cpp reads these generically as well): context length, embedding
 * length, block count, and the vocabulary size from token_embd's rows. */
static sn_status read_common(sn_model *m, sn_err *err) {
    sn_hparams *hp = &m->hp;
    sn_status st;
    if ((st = sn_model_key_int(m, "context_length", 1, 1, (int64_t)1 << 31, &hp->n_ctx_train, err))) return st;
    if ((st = sn_model_key_int(m, "embedding_length", 1, 1, (int64_t)1 << 24, &hp->n_embd, err))) return st;
    if ((st = sn_model_key_int(m, "block_count", 1, 1, 4096, &hp->n_layer, err))) return st;
    const sn_gguf_tensor *te = sn_model_find_tensor(m, "token_embd.weight");
    if (!te) return sn_err_set(err, SN_EFORMAT, "%s: missing tensor token_embd.weight", m->path);
    if (te->n_dims != 2 || te->ne[1] < 1 || te->ne[1] > ((uint64_t)1 << 31))
        return sn_err_set(err, SN_EFORMAT, "%s: token_embd.weight must be 2-D [n_embd, n_vocab]", m->path);
    hp->n_vocab = (int64_t)te->ne[1];
    const int64_t vi = sn_gguf_find_key(m->g, "tokenizer.ggml.tokens");
    if (vi >= 0 && sn_gguf_kv_type(m->g, vi) == SN_GGUF_ARR && (int64_t)sn_gguf_arr_n(m->g, vi) > hp->n_vocab)
        return sn_err_set(err, SN_EFORMAT, "%s: tokenizer has %llu tokens but token_embd.weight only %lld rows",
                          m->path, (unsigned long long)sn_gguf_arr_n(m->g, vi), (long long)hp->n_vocab);
    return SN_OK;
}

/* ---- tensor helpers ---- */

const sn_gguf_tensor *sn_model_find_tensor(const sn_model *m, const char *name) {
    if (m->blob) {
        const int64_t i = sn_blob_find_tensor(m->blob, name);
        return i < 0 ? NULL : &m->blob_tensors[i];
    }
    const int64_t i = sn_gguf_find_tensor(m->g, name);
    return i < 0 ? NULL : sn_gguf_tensor_at(m->g, i);
}

/* Kernel type of a blob dtype/layout pair (-1 if the kernels cannot take it). */
static int blob_ktype(const sn_blob_tensor *t) {
    if (t->dtype == SN_BLOB_FP32 && t->layout == SN_BLOB_ROWMAJOR) return SN_GGML_F32;
    if (t->dtype == SN_BLOB_FP16 && t->layout == SN_BLOB_ROWMAJOR) return SN_GGML_F16;
    if (t->dtype == SN_BLOB_INT4G32 && (t->layout == SN_BLOB_INT4_ROWS || t->layout == SN_BLOB_INT4_X8)) return SN_KTYPE_INT4G32;
    if (t->dtype == SN_BLOB_Q6_K && t->layout == SN_BLOB_ROWMAJOR) return SN_GGML_Q6_K;
    if (t->dtype == SN_BLOB_Q8_0 && t->layout == SN_BLOB_ROWMAJOR) return SN_GGML_Q8_0;
    return -1;
}

/* Opens path as a blob when its content (or its .snb name) says so; m->g becomes the blob's metadata. */
static sn_status open_blob(sn_model *m, int flags, sn_err *err) {
    sn_status st = sn_blob_open(m->path, flags, &m->blob, err);
    if (st) return st;
    m->g = (sn_gguf *)sn_blob_meta(m->blob); /* owned by the blob; see sn_model_free */
    const int64_t n = sn_blob_n_tensors(m->blob);
    m->blob_tensors = calloc((size_t)(n > 0 ? n : 1), sizeof(*m->blob_tensors));
    if (!m->blob_tensors) return sn_err_set(err, SN_ENOMEM, "out of memory");
    for (int64_t i = 0; i < n; i++) {
        const sn_blob_tensor *bt = sn_blob_tensor_at(m->blob, i);
        sn_gguf_tensor *t = &m->blob_tensors[i];
        t->name = bt->name;
        t->n_dims = bt->n_dims;
        for (int d = 0; d < SN_GGUF_MAX_DIMS; d++) t->ne[d] = bt->ne[d];
        t->type = blob_ktype(bt);
        if (t->type < 0)
            return sn_err_set(err, SN_EUNSUPPORTED, "%s: tensor %s has blob dtype %d / layout %d, which sunny-run cannot use",
                              m->path, bt->name, (int)bt->dtype, (int)bt->layout);
        t->offset = bt->offset;
        t->size = bt->nbytes;
        t->data = bt->data;
    }
    return SN_OK;
}

static int has_suffix(const char *s, const char *suf) {
    const size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

/* A file is read as a blob if it starts with the blob magic, or if it is named *.snb (then anything
 * else, e.g. a renamed GGUF, is refused by the blob reader rather than silently run). */
static int is_blob_path(const char *path) { return sn_blob_sniff(path) || has_suffix(path, ".snb"); }

struct sn_model_meta {
    sn_gguf *g;
    sn_blob *b;
};

sn_status sn_model_meta_open(const char *path, sn_model_meta **out, sn_err *err) {
    *out = NULL;
    sn_model_meta *mm = calloc(1, sizeof(*mm));
    if (!mm) return sn_err_set(err, SN_ENOMEM, "out of memory");
    const sn_status st = is_blob_path(path) ? sn_blob_open(path, 0, &mm->b, err)
                                            : sn_gguf_open(path, SN_GGUF_NO_DATA, &mm->g, err);
    if (st) { free(mm); return st; }
    *out = mm;
    return SN_OK;
}

const sn_gguf *sn_model_meta_gguf(const sn_model_meta *mm) { return mm->b ? sn_blob_meta(mm->b) : mm->g; }

void sn_model_meta_close(sn_model_meta *mm) {
    if (!mm) return;
    sn_blob_close(mm->b);
    sn_gguf_close(mm->g);
    free(mm);
}

sn_status sn_model_tensor_nd(sn_model *m, const char *name, int n_dims, const int64_t *ne, int required,
                             const sn_gguf_tensor **out, sn_err *err) {
    *out = NULL;
    const sn_gguf_tensor *t = sn_model_find_tensor(m, name);
    if (!t) {
        if (required) return sn_err_set(err, SN_EFORMAT, "%s: missing tensor %s", m->path, name);
        return SN_OK;
    }
    int64_t want[4] = {1, 1, 1, 1};
    for (int d = 0; d < n_dims && d < 4; d++) want[d] = ne[d];
    int ok = n_dims >= 1 && n_dims <= 4;
    for (int d = 0; d < 4 && ok; d++) ok = (int64_t)t->ne[d] == want[d];
    if (!ok) {
        char have_s[96], want_s[96];
        int a = 0, b = 0;
        for (int d = 0; d < (int)t->n_dims && d < 4; d++)
            a += snprintf(have_s + a, sizeof(have_s) - (size_t)a, "%s%llu", d ? ", " : "", (unsigned long long)t->ne[d]);
        for (int d = 0; d < n_dims && d < 4; d++)
            b += snprintf(want_s + b, sizeof(want_s) - (size_t)b, "%s%lld", d ? ", " : "", (long long)want[d]);
        return sn_err_set(err, SN_EFORMAT, "%s: tensor %s has shape [%s], expected [%s] from the hyperparameters",
                          m->path, name, have_s, want_s);
    }
    *out = t;
    return SN_OK;
}

/* Records w for the placement pass (sn_model_place). */
static sn_status record(sn_model *m, sn_matrix *w, int embd, sn_err *err) {
    sn_model_mat *list = realloc(m->mats, (size_t)(m->n_mats + 1) * sizeof(*list));
    if (!list) return sn_err_set(err, SN_ENOMEM, "out of memory");
    m->mats = list;
    m->mats[m->n_mats++] = (sn_model_mat){w, embd};
    return SN_OK;
}

static const char *full_name(sn_model *m, int il, const char *name) {
    return il >= 0 ? sn_model_layer_name(m, il, name) : name;
}

sn_status sn_model_matrix(sn_model *m, int il, const char *name, int n_dims, const int64_t *ne, int required,
                          sn_matrix *out, sn_err *err) {
    memset(out, 0, sizeof(*out));
    name = full_name(m, il, name);
    if (n_dims != 2 && n_dims != 3) return sn_err_set(err, SN_EINVAL, "%s: matrix %s: %d dimensions", m->path, name, n_dims);
    const int64_t n_in = ne[0], n_out = ne[1], n_expert = n_dims == 3 ? ne[2] : 1;
    const sn_gguf_tensor *t;
    sn_status st = sn_model_tensor_nd(m, name, n_dims, ne, required, &t, err);
    if (st || !t) return st;
    if (!m->k->type[t->type].dot || sn_kernel_act_type(t->type) < 0) {
        const char *tn = sn_ggml_type_name(t->type);
        return sn_err_set(err, SN_EUNSUPPORTED,
                          "%s: tensor %s has type %s, which sunny-run does not implement (supported: %s)", m->path,
                          name, tn ? tn : "unknown", k_supported_types);
    }
    const int int4 = t->type == SN_KTYPE_INT4G32;
    const uint64_t rb = sn_ggml_row_size(t->type, (uint64_t)n_in);
    if (rb == 0 || sn_kernel_act_row_size(t->type, n_in) == 0)
        return sn_err_set(err, SN_EFORMAT, "%s: tensor %s: row length %lld is not a multiple of the %s block size",
                          m->path, name, (long long)n_in, sn_ggml_type_name(t->type));
    /* a blob's INT4 matrices come in 8-row groups (kernels/int4.h), padded to whole groups; they
     * serve matmuls only, never row lookups */
    int64_t bi = int4 && m->blob ? sn_blob_find_tensor(m->blob, t->name) : -1;
    const int x8 = bi >= 0 && sn_blob_tensor_at(m->blob, bi)->layout == SN_BLOB_INT4_X8;
    const uint64_t rows = x8 ? (uint64_t)(n_out + SN_INT4X8_ROWS - 1) / SN_INT4X8_ROWS * SN_INT4X8_ROWS : (uint64_t)n_out;
    if (rows > UINT64_MAX / rb / (uint64_t)n_expert || rb * rows * (uint64_t)n_expert != t->size)
        return sn_err_set(err, SN_EFORMAT, "%s: tensor %s: %llu bytes, expected %llu x %lld", m->path, name,
                          (unsigned long long)t->size, (unsigned long long)(rb * rows), (long long)n_expert);
    if (x8 && !strcmp(t->name, "token_embd.weight"))
        return sn_err_set(err, SN_EFORMAT, "%s: tensor %s is stored in INT4 8-row groups (layout 2), which cannot serve "
                          "the embedding lookup; regenerate the blob with sunny-convert --blob", m->path, name);
    m->act_types |= 1ull << sn_kernel_act_type(t->type);
    out->name = t->name;
    out->data = t->data; /* non-NULL: the families tell a present matrix (e.g. an untied head) by it */
    out->x8 = x8 ? t->data : NULL;
    out->layout = x8 ? &sn_layout_int4x8 : &sn_layout_rows;
    out->type = t->type;
    out->n_in = n_in;
    out->n_out = n_out;
    out->row_bytes = rb;
    out->n_expert = n_expert;
    out->expert_bytes = rb * rows;
    out->expert_x8_bytes = x8 ? rb * rows : 0;
    return record(m, out, il < 0 && !strcmp(name, "token_embd.weight"), err);
}

sn_status sn_model_output_head(sn_model *m, const sn_matrix *embd, int required, sn_matrix *head, sn_err *err) {
    sn_status st = sn_model_matrix(m, SN_MODEL_GLOBAL, "output.weight", SN_NE(embd->n_in, embd->n_out), required, head,
                                   err);
    if (st || head->data) return st;
    *head = *embd; /* tied: a matrix of its own for the placement pass, which gives both one copy */
    return record(m, head, 0, err);
}

sn_status sn_model_vector(sn_model *m, int il, const char *name, int n_dims, const int64_t *ne, int required,
                          const float **out, sn_err *err) {
    *out = NULL;
    name = full_name(m, il, name);
    const sn_gguf_tensor *t;
    sn_status st = sn_model_tensor_nd(m, name, n_dims, ne, required, &t, err);
    if (st || !t) return st;
    if (t->type == SN_GGML_F32 && ((uintptr_t)t->data % sizeof(float)) == 0) {
        *out = t->data;
        return SN_OK;
    }
    if (t->type != SN_GGML_F32 && t->type != SN_GGML_F16 && t->type != SN_GGML_BF16)
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: tensor %s has type %s (expected F32, F16 or BF16)", m->path, name,
                          sn_ggml_type_name(t->type) ? sn_ggml_type_name(t->type) : "unknown");
    int64_t n = 1;
    for (int d = 0; d < n_dims; d++) n *= ne[d];
    float **o = realloc(m->owned, (size_t)(m->n_owned + 1) * sizeof(*o));
    if (!o) return sn_err_set(err, SN_ENOMEM, "out of memory");
    m->owned = o;
    float *v = malloc((size_t)n * sizeof(float));
    if (!v) return sn_err_set(err, SN_ENOMEM, "out of memory converting %s", name);
    m->owned[m->n_owned++] = v;
    if (sn_dequantize_row(t->type, t->data, v, n) != 0)
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: cannot convert tensor %s", m->path, name);
    *out = v;
    return SN_OK;
}

/* ---- lifecycle ---- */

/* Maps the page tables of every tensor still read from the GGUF mapping at load time, as
 * llama.cpp's loader does (MAP_POPULATE), instead of one minor fault per 64 KB during the first
 * prompt (~12k faults on a 400 MB file). Pages of matrices repacked or copied (and released) at load
 * and an untied token embedding (read a row per token) are skipped, so RSS is what the first
 * token touches anyway. Best effort: kernels without
 * MADV_POPULATE_READ (before Linux 5.14) answer EINVAL and the faults happen later as before. */
static void prefault_weights(const sn_model *m) {
#ifdef MADV_POPULATE_READ
    if (m->blob || !m->params.tuning.prefault) return;
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const int untied = sn_gguf_find_tensor(m->g, "output.weight") >= 0;
    for (int64_t i = 0; i < sn_gguf_n_tensors(m->g); i++) {
        const sn_gguf_tensor *t = sn_gguf_tensor_at(m->g, i);
        if (!t || !t->data || t->size == 0) continue;
        if (untied && strcmp(t->name, "token_embd.weight") == 0) continue; /* only looked up by row */
        int repacked = 0;
        for (int j = 0; j < m->n_repacked && !repacked; j++) repacked = m->repacked_src[j] == t->data;
        if (repacked) continue;
        const uintptr_t a = (uintptr_t)t->data & ~(page - 1), b = (uintptr_t)t->data + t->size;
        if (madvise((void *)a, b - a, MADV_POPULATE_READ) != 0) return;
    }
#else
    (void)m;
#endif
}

sn_status sn_model_load(const char *path, const sn_model_params *params, sn_model **out, sn_err *err) {
    *out = NULL;
    sn_model_params p;
    if (params) p = *params;
    else sn_model_params_default(&p);
    if (p.n_threads < 1 || p.n_threads > 1024)
        return sn_err_set(err, SN_EINVAL, "thread count %d out of range", p.n_threads);
    if (p.kv_type != SN_KV_F16 && p.kv_type != SN_KV_F32)
        return sn_err_set(err, SN_EINVAL, "unknown KV cache type %d", p.kv_type);
    if (p.n_ctx < 0) return sn_err_set(err, SN_EINVAL, "context size %lld < 0", (long long)p.n_ctx);

    sn_model *m = calloc(1, sizeof(*m));
    if (!m) return sn_err_set(err, SN_ENOMEM, "out of memory");
    m->params = p;
    m->huge_budget = -1;
    m->path = strdup(path);
    if (!m->path) { free(m); return sn_err_set(err, SN_ENOMEM, "out of memory"); }
    sn_status st = is_blob_path(path) ? open_blob(m, p.verify ? SN_BLOB_VERIFY : 0, err) : sn_gguf_open(path, 0, &m->g, err);
    if (st) { sn_model_free(m); return st; }
    char *arch = sn_gguf_str_dup(m->g, "general.architecture");
    if (!arch) {
        sn_model_free(m);
        return sn_err_set(err, SN_EFORMAT, "%s: missing metadata key general.architecture", path);
    }
    const int row = family_row(arch);
    if (row < 0 || strlen(arch) >= sizeof(m->hp.arch)) {
        st = sn_err_set(err, SN_EUNSUPPORTED,
                        "%s: architecture '%s' is not supported by sunny's runtime (supported: %s; docs/MODELS.md); "
                        "the GGUF still installs into Ollama or LM Studio: sunny-integrate ollama|lmstudio %s "
                        "(without --smoke)", path, arch, sn_model_supported_archs(), path);
        free(arch);
        sn_model_free(m);
        return st;
    }
    m->fam = FAMILIES[row].fam;
    m->opts = FAMILIES[row].opts;
    strcpy(m->hp.arch, arch);
    free(arch);
    if (!(m->k = sn_kernels_for(&p.tuning))) { /* this model's tuning: its own kernel object */
        sn_model_free(m);
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    }
    if ((st = read_common(m, err)) != SN_OK) { sn_model_free(m); return st; }

    if (m->fam->state_kind == SN_STATE_KV) { /* the cache holds n_ctx positions */
        /* the default is capped at the trained context; an explicit size is honoured above it,
         * as llama.cpp does (sunny-run warns) */
        m->n_ctx = p.n_ctx ? p.n_ctx : 4096;
        if (!p.n_ctx && m->n_ctx > m->hp.n_ctx_train) m->n_ctx = m->hp.n_ctx_train;
    } else { /* a fixed-size state: the context only bounds the positions */
        m->n_ctx = p.n_ctx ? p.n_ctx : m->hp.n_ctx_train;
        if (m->n_ctx > m->hp.n_ctx_train) m->n_ctx = m->hp.n_ctx_train;
    }

    if ((st = sn_pool_new(p.n_threads, &m->pool, err)) != SN_OK) { sn_model_free(m); return st; }
    if (!(m->impl = calloc(1, m->fam->impl_size))) {
        sn_model_free(m);
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    }
    if ((st = m->fam->load(m, err)) != SN_OK || (st = sn_model_place(m, err)) != SN_OK) {
        sn_model_free(m);
        return st;
    }
    /* The scratch a micro-batch needs is allocated and faulted in now, as llama.cpp sizes its
     * compute buffers for n_ubatch when the context is made: the first eval then pays no page faults. */
    if (p.validate_only) { *out = m; return SN_OK; } /* nothing to prepare for an eval that never runs */
    if (m->ops && (st = sn_ops_prepare(m->ops, m->n_ctx < SN_UBATCH ? m->n_ctx : SN_UBATCH, m->act_types, err))) {
        sn_model_free(m);
        return st;
    }
    prefault_weights(m);
    *out = m;
    return SN_OK;
}

sn_status sn_model_validate(const char *path, int flags, sn_err *err) {
    if (!is_blob_path(path)) { /* structure: every tensor's data inside the file (a truncated file fails) */
        sn_gguf *g = NULL;
        sn_status st = sn_gguf_open(path, 0, &g, err);
        if (st) return st;
        char *arch = sn_gguf_str_dup(g, "general.architecture");
        const int known = arch && family_row(arch) >= 0;
        free(arch);
        sn_gguf_close(g);
        if (!known || (flags & SN_VALIDATE_STRUCTURE)) return SN_OK;
    }
    sn_model_params p;
    sn_model_params_default(&p);
    p.n_ctx = 1;
    p.mmap_weights = 1;
    p.validate_only = 1;
    sn_model *m = NULL;
    sn_status st = sn_model_load(path, &p, &m, err);
    if (st) return st;
    sn_tokenizer *tok = NULL;
    st = sn_tok_load(m->g, &tok, err);
    if (st) sn_err_prefix(err, "%s", path);
    sn_tok_free(tok);
    sn_model_free(m);
    return st;
}

void sn_model_free(sn_model *m) {
    if (!m) return;
    if (m->fam && m->impl) m->fam->free(m);
    free(m->impl);
    free(m->state);
    sn_pool_free(m->pool);
    if (m->blob) sn_blob_close(m->blob); /* also frees m->g, its embedded metadata */
    else sn_gguf_close(m->g);
    free(m->blob_tensors);
    for (int i = 0; i < m->n_arenas; i++) free(m->arenas[i]);
    free(m->arenas);
    free(m->repacked);
    for (int i = 0; i < m->n_owned; i++) free(m->owned[i]);
    free(m->owned);
    free(m->expert_hist);
    free(m->mats);
    free(m->repacked_src);
    free(m->path);
    free(m);
}

sn_status sn_model_eval(sn_model *m, const int32_t *tokens, int64_t n, float *logits, sn_err *err) {
    if (n <= 0) return sn_err_set(err, SN_EINVAL, "no tokens to evaluate");
    if (n > m->n_ctx - m->n_past)
        return sn_err_set(err, SN_EINVAL, "context full: %lld + %lld tokens exceed the context size %lld",
                          (long long)m->n_past, (long long)n, (long long)m->n_ctx);
    for (int64_t i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= m->hp.n_vocab)
            return sn_err_set(err, SN_EINVAL, "token id %d at index %lld is outside the vocabulary [0, %lld)",
                              tokens[i], (long long)i, (long long)m->hp.n_vocab);
    for (int64_t i = 0; i < n; i += SN_UBATCH) {
        const int64_t T = n - i < SN_UBATCH ? n - i : SN_UBATCH;
        sn_status st = m->fam->forward(m, tokens + i, T, i + T == n ? logits : NULL, err);
        if (st) return st;
        m->n_past += T;
    }
    return SN_OK;
}

void sn_model_reset(sn_model *m) {
    if (m->fam->reset) m->fam->reset(m);
    if (m->state)
        memset(m->state, 0, (size_t)(m->state_floats * (uint64_t)m->hp.n_layer) * sizeof(float));
    m->n_past = 0;
}

/* ---- recurrent state ---- */

sn_status sn_model_state_declare(sn_model *m, const sn_state_decl *d, sn_err *err) {
    if (d->n_parts < 1 || d->n_parts > SN_STATE_MAX_PARTS)
        return sn_err_set(err, SN_EINVAL, "state declaration with %d parts", d->n_parts);
    uint64_t per = 0;
    for (int i = 0; i < d->n_parts; i++) {
        if (d->floats[i] > ((uint64_t)1 << 36) || per + d->floats[i] > ((uint64_t)1 << 36))
            return sn_err_set(err, SN_ENOMEM, "%s: recurrent state part %s is too large", m->path, d->name[i]);
        per += d->floats[i];
    }
    const uint64_t total = per * (uint64_t)m->hp.n_layer;
    if (total > ((uint64_t)1 << 36) || total * sizeof(float) > SIZE_MAX)
        return sn_err_set(err, SN_ENOMEM, "%s: recurrent state too large", m->path);
    free(m->state);
    m->state = calloc((size_t)(total ? total : 1), sizeof(float));
    if (!m->state)
        return sn_err_set(err, SN_ENOMEM, "out of memory allocating the recurrent state (%llu MB)",
                          (unsigned long long)(total * 4 >> 20));
    /* Fault every page in now, on the loading thread: the first prompt's scan writing calloc's
     * zero pages from two threads paid a copy-on-write fault with a cross-CPU TLB flush per page
     * (Mamba-2 130m: 19 MB of state). */
    sn_populate(m->state, (size_t)total * sizeof(float));
    m->state_decl = *d;
    m->state_floats = per;
    return SN_OK;
}

float *sn_model_state_part(const sn_model *m, int64_t il, int part) {
    uint64_t off = (uint64_t)il * m->state_floats;
    for (int i = 0; i < part; i++) off += m->state_decl.floats[i];
    return m->state + off;
}

/* Saved state: "SNST", u32 version 1, u64 n_past, u64 floats per layer, u64 layers, then floats. */
enum { STATE_HEADER = 32 };

uint64_t sn_model_state_size(const sn_model *m) {
    if (!m->state) return 0;
    return STATE_HEADER + m->state_floats * (uint64_t)m->hp.n_layer * sizeof(float);
}

sn_status sn_model_state_get(const sn_model *m, void *buf, uint64_t cap, sn_err *err) {
    const uint64_t need = sn_model_state_size(m);
    if (!need) return sn_err_set(err, SN_EUNSUPPORTED, "%s: a %s model has no recurrent state to save", m->path, m->hp.arch);
    if (cap < need) return sn_err_set(err, SN_EINVAL, "state buffer of %llu bytes, %llu needed",
                                      (unsigned long long)cap, (unsigned long long)need);
    unsigned char *p = buf;
    const uint32_t ver = 1;
    const uint64_t np = (uint64_t)m->n_past, per = m->state_floats, nl = (uint64_t)m->hp.n_layer;
    memcpy(p, "SNST", 4);
    memcpy(p + 4, &ver, 4);
    memcpy(p + 8, &np, 8);
    memcpy(p + 16, &per, 8);
    memcpy(p + 24, &nl, 8);
    memcpy(p + STATE_HEADER, m->state, (size_t)(need - STATE_HEADER));
    return SN_OK;
}

sn_status sn_model_state_set(sn_model *m, const void *buf, uint64_t n, sn_err *err) {
    const uint64_t need = sn_model_state_size(m);
    if (!need) return sn_err_set(err, SN_EUNSUPPORTED, "%s: a %s model has no recurrent state to restore", m->path, m->hp.arch);
    const unsigned char *p = buf;
    uint32_t ver = 0;
    uint64_t np = 0, per = 0, nl = 0;
    if (n >= STATE_HEADER) {
        memcpy(&ver, p + 4, 4);
        memcpy(&np, p + 8, 8);
        memcpy(&per, p + 16, 8);
        memcpy(&nl, p + 24, 8);
    }
    if (n != need || memcmp(p, "SNST", 4) != 0 || ver != 1 || per != m->state_floats || nl != (uint64_t)m->hp.n_layer)
        return sn_err_set(err, SN_EINVAL, "saved state (%llu bytes) does not belong to this model (%llu bytes expected)",
                          (unsigned long long)n, (unsigned long long)need);
    if (np > (uint64_t)m->n_ctx)
        return sn_err_set(err, SN_EINVAL, "saved state holds %llu positions, more than the context size %lld",
                          (unsigned long long)np, (long long)m->n_ctx);
    memcpy(m->state, p + STATE_HEADER, (size_t)(need - STATE_HEADER));
    m->n_past = (int64_t)np;
    return SN_OK;
}

int64_t sn_model_n_vocab(const sn_model *m) { return m->hp.n_vocab; }
int64_t sn_model_n_ctx(const sn_model *m) { return m->n_ctx; }
const char *sn_model_kernels_name(const sn_model *m) { return m->k->name; }
const sn_gguf *sn_model_gguf(const sn_model *m) { return m->g; }
const char *sn_model_format(const sn_model *m) { return m->blob ? "blob" : "gguf"; }

int64_t sn_model_expert_histogram(const sn_model *m, const uint64_t **counts) {
    *counts = m->expert_hist;
    return m->expert_hist ? m->n_expert_hist : 0;
}
