/* model.h - a loaded model: the mmapped GGUF, its hyperparameters, and a per-family forward pass.
 *
 * The part every architecture shares lives here and in model.c: open the GGUF read-only with mmap,
 * read the hyperparameters under the "<arch>." keys, pick the family by general.architecture from a
 * table, and hold the thread pool and kernel table. Each family (model_llama.c for llama, qwen2,
 * qwen3) supplies an sn_family vtable: load = map and validate its tensors and allocate its state
 * (a KV cache for transformers; a recurrent family would keep a fixed-size state instead), eval =
 * append tokens and produce the last token's logits. Adding a family is one new file plus one row
 * in model.c's table. sn_abi.h wraps this for outside callers; this header is runtime-internal.
 *
 * The model file may also be a sunny runtime blob (.snb, docs/BLOB.md): model.c then takes the
 * metadata from the blob's embedded GGUF and serves its tensors through the same sn_gguf_tensor
 * records (FP32 -> SN_GGML_F32, FP16 -> SN_GGML_F16, INT4G64 -> SN_KTYPE_INT4G64), pointing into
 * the blob's mapping, so families never need to know which format they got. */
#ifndef SN_MODEL_H
#define SN_MODEL_H
#include "gguf.h"
#include "kernels/kernels.h"
#include "sn_err.h"
#include "threadpool.h"
#include <stddef.h>
#include <stdint.h>

enum { SN_KV_F16 = 0, SN_KV_F32 = 1 };
enum { SN_ROPE_SCALING_NONE = 0, SN_ROPE_SCALING_LINEAR = 1, SN_ROPE_SCALING_YARN = 2 };

typedef struct sn_model_params {
    int n_threads;   /* >= 1 */
    int64_t n_ctx;   /* 0 = min(model's context length, 4096); capped at the model's */
    int kv_type;     /* SN_KV_F16 (default, as llama.cpp) or SN_KV_F32 */
    int verify;      /* blobs: check every tensor's CRC32 at load (default: header and table only) */
} sn_model_params;

void sn_model_params_default(sn_model_params *p);

/* Hyperparameters as llama.cpp derives them from the GGUF (defaults included). */
typedef struct sn_hparams {
    char arch[32];
    int64_t n_vocab;        /* rows of token_embd */
    int64_t n_ctx_train;
    int64_t n_embd, n_layer, n_ff, n_head, n_head_kv;
    int64_t head_dim_k, head_dim_v, n_rot;
    float rms_eps;
    float rope_freq_base, rope_freq_scale; /* freq_scale = 1/factor */
    int rope_scaling;                      /* SN_ROPE_SCALING_* */
    int64_t n_ctx_orig_yarn;
    float yarn_ext_factor, yarn_attn_factor, yarn_beta_fast, yarn_beta_slow; /* resolved */
    float attn_scale;                      /* 0 = 1/sqrt(head_dim) */
} sn_hparams;

typedef struct sn_model sn_model;
typedef struct sn_blob sn_blob;

typedef struct sn_family {
    const char *name;
    sn_status (*load)(sn_model *m, sn_err *err);
    /* Append n tokens at positions n_past.. and write the last token's logits (n_vocab floats). */
    sn_status (*eval)(sn_model *m, const int32_t *tokens, int64_t n, float *logits, sn_err *err);
    void (*reset)(sn_model *m);
    void (*free)(sn_model *m);
    uint64_t (*state_bytes)(const sn_model *m); /* KV cache / recurrent state size */
} sn_family;

/* A weight matrix: n_out rows of n_in elements, rows contiguous in the mapping. x8, when set, is
 * the same matrix repacked at load into 8-row groups (kernels/q4_0_x8.h; Q4_0 only) and is what the
 * matmul reads; data then only serves row lookups (token embeddings). */
typedef struct sn_matrix {
    const char *name;
    const void *data;
    int type;
    int64_t n_in, n_out;
    uint64_t row_bytes;
    const void *x8;
} sn_matrix;

struct sn_model {
    char *path;
    sn_gguf *g;      /* metadata; for a blob, owned by `blob` (its embedded GGUF) */
    sn_blob *blob;   /* NULL for a GGUF */
    sn_gguf_tensor *blob_tensors; /* blob only: the table as GGUF-style records, same order */
    const sn_family *fam;
    sn_hparams hp;
    sn_model_params params;
    const sn_kernels *k;
    sn_pool *pool;
    int64_t n_ctx;   /* positions the state can hold */
    int64_t n_past;  /* positions filled */
    void **repacked; /* matrices made by sn_model_repack (inside `arenas`) */
    const void **repacked_src; /* the mapped data each was made from (tied matrices share one) */
    int n_repacked;
    void **arenas;   /* 2 MB-aligned blocks the repacked matrices live in, freed with the model */
    int n_arenas;
    uint64_t arena_used, arena_cap; /* of the last block */
    void *impl;      /* family-private */
};

sn_status sn_model_load(const char *path, const sn_model_params *params, sn_model **out, sn_err *err);
void sn_model_free(sn_model *m);
/* Checks token ids and context room, then runs the family's eval. */
sn_status sn_model_eval(sn_model *m, const int32_t *tokens, int64_t n, float *logits, sn_err *err);
void sn_model_reset(sn_model *m);
int64_t sn_model_n_vocab(const sn_model *m);
const sn_gguf *sn_model_gguf(const sn_model *m);
/* "gguf" or "blob". */
const char *sn_model_format(const sn_model *m);

/* Only the metadata of a model file (GGUF or blob), e.g. for loading the tokenizer before the model. */
typedef struct sn_model_meta sn_model_meta;
sn_status sn_model_meta_open(const char *path, sn_model_meta **out, sn_err *err);
const sn_gguf *sn_model_meta_gguf(const sn_model_meta *mm);
void sn_model_meta_close(sn_model_meta *mm);
/* Is general.architecture = arch one we can run? */
int sn_model_arch_supported(const char *arch);
const char *sn_model_supported_archs(void); /* "llama, qwen2, qwen3" */

/* ---- helpers for family files ---- */
/* The tensor called name (GGUF or blob), or NULL. Families use this, never sn_gguf_find_tensor. */
const sn_gguf_tensor *sn_model_find_tensor(const sn_model *m, const char *name);
/* Finds tensor name; checks n_dims and ne (ne1 = 1 for vectors). required=0: absent -> *out NULL. */
sn_status sn_model_tensor(sn_model *m, const char *name, int64_t ne0, int64_t ne1, int required,
                          const sn_gguf_tensor **out, sn_err *err);
/* A matrix [n_in x n_out] whose type the kernels can multiply. */
sn_status sn_model_matrix(sn_model *m, const char *name, int64_t n_in, int64_t n_out, int required,
                          sn_matrix *out, sn_err *err);
/* Repacks a Q4_0 matrix's full 8-row groups (sets w->x8; the last n_out % 8 rows stay mapped) when
 * the kernel table reads that layout; otherwise leaves w alone. The mapped pages it read are released
 * (MADV_DONTNEED) so resident memory stays ~ the model size. Env SN_Q4_0_REPACK=0 disables it. */
sn_status sn_model_repack(sn_model *m, sn_matrix *w, sn_err *err);
/* Rows [*r0, *r1) of w that thread ith of nth computes (groups of 8 for a repacked matrix). */
void sn_matrix_split(const sn_matrix *w, int ith, int nth, int64_t *r0, int64_t *r1);
/* y[t*ldy + r] = row r of w . activation row t, for r in [r0, r1), t < T (x already converted to
 * w's activation type); reads w->x8 when set (then r0 and r1 must come from sn_matrix_split). */
void sn_matrix_mul(const sn_kernels *k, const sn_matrix *w, const void *x, uint64_t x_row, int64_t T, float *y,
                   int64_t ldy, int64_t r0, int64_t r1);
/* A vector of n floats, converted to f32 if stored as F16/BF16 (*owned set when allocated). */
sn_status sn_model_vector(sn_model *m, const char *name, int64_t n, int required, const float **out,
                          float **owned, sn_err *err);

#endif
