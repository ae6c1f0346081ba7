/* model.h - a loaded model: the mmapped GGUF, its hyperparameters, and a per-family forward pass.
 *
 * The part every architecture shares lives here and in model.c: open the GGUF read-only with mmap,
 * read the hyperparameters under the "<arch>." keys, pick the family by general.architecture from a
 * table, and hold the thread pool and kernel table. Each family (model_llama.c for llama, qwen2,
 * qwen3) supplies an sn_family vtable: load = read its own hyperparameters, map and validate its
 * tensors and allocate its state (a KV cache for transformers; a recurrent family declares a
 * fixed-size state that model.c allocates, resets, saves and restores), eval = append tokens and
 * produce the last token's logits. The shared batched matmuls and norms are in ops.h. Adding a
 * family is one new file plus one row in model.c's table. sn_abi.h wraps this for outside callers; this header is runtime-internal.
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

typedef struct sn_model_params {
    int n_threads;   /* >= 1 */
    int64_t n_ctx;   /* 0 = the family's default (sn_family state_kind); a KV family honours an
                      * explicit size above the trained context */
    int kv_type;     /* SN_KV_F16 (default, as llama.cpp) or SN_KV_F32 */
    int verify;      /* blobs: check every tensor's CRC32 at load (default: header and table only) */
} sn_model_params;

void sn_model_params_default(sn_model_params *p);

/* The hyperparameters every family has, read by model.c before the family's load (llama.cpp reads
 * these generically too). Everything else (head counts, norm epsilons, rope, LoRA ranks, ...) is
 * the family's own: its load reads and validates it with sn_model_key_int / sn_model_key_float. */
typedef struct sn_hparams {
    char arch[32];
    int64_t n_vocab;        /* rows of token_embd */
    int64_t n_ctx_train;    /* <arch>.context_length */
    int64_t n_embd, n_layer;
} sn_hparams;

typedef struct sn_model sn_model;
typedef struct sn_blob sn_blob;

/* What a family keeps between evals, which decides what the context size means:
 *   SN_STATE_KV: a cache of n_ctx positions (memory grows with the context; the default context is
 *     min(train context, 4096), capped at the train context);
 *   SN_STATE_RECURRENT: a fixed-size state (sn_model_state_declare; memory does not depend on the
 *     context, which only bounds the positions evaluated: default and cap are the train context).
 *     The state can be saved and restored (sn_model_state_get / _set). */
enum { SN_STATE_KV = 1, SN_STATE_RECURRENT = 2 };

typedef struct sn_family {
    const char *name;
    int state_kind; /* SN_STATE_* */
    /* Reads and validates the family's hyperparameters (m->opts says which variant of the table row
     * it is), maps its tensors, allocates its cache or declares its recurrent state. */
    sn_status (*load)(sn_model *m, sn_err *err);
    /* Append n tokens at positions n_past.. and write the last token's logits (n_vocab floats). */
    sn_status (*eval)(sn_model *m, const int32_t *tokens, int64_t n, float *logits, sn_err *err);
    void (*reset)(sn_model *m); /* may be NULL; a recurrent state is zeroed by model.c */
    void (*free)(sn_model *m);
    uint64_t (*state_bytes)(const sn_model *m); /* KV cache size; NULL: the declared recurrent state */
} sn_family;

/* Family options of a table row (model.c FAMILIES), read by the family as m->opts. */
enum {
    SN_OPT_ROPE_NEOX = 1 << 0,  /* llama family: NEOX-style rotation (qwen2, qwen3) */
    SN_OPT_FULL_ROT = 1 << 1,   /* llama family: rope.dimension_count must equal the head size (llama) */
    SN_OPT_QK_NORM = 1 << 2     /* llama family: per-head q/k RMSNorm tensors required (qwen3) */
};

/* A recurrent state: per layer, n_parts float arrays of the given sizes (e.g. RWKV-7's token-shift
 * vectors and wkv matrices; Mamba-2's conv window and SSM state), one zeroed allocation. */
enum { SN_STATE_MAX_PARTS = 4 };
typedef struct sn_state_decl {
    int n_parts;
    const char *name[SN_STATE_MAX_PARTS];
    uint64_t floats[SN_STATE_MAX_PARTS]; /* per layer */
} sn_state_decl;

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
    unsigned opts;   /* SN_OPT_* of the table row */
    sn_hparams hp;
    sn_model_params params;
    const sn_kernels *k;
    sn_pool *pool;
    int64_t n_ctx;   /* positions the state can hold */
    int64_t n_past;  /* positions filled */
    sn_state_decl state_decl; /* recurrent families */
    float *state;    /* recurrent families: [layer][part] floats, see sn_model_state_part */
    uint64_t state_floats; /* per layer */
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
const char *sn_model_supported_archs(void); /* "llama, qwen2, qwen3, ..." from the table */

/* Recurrent state save/restore (SN_EUNSUPPORTED for KV-cache families). The bytes hold the
 * position count and the state floats in this machine's byte order, for the same model file. */
uint64_t sn_model_state_size(const sn_model *m); /* 0 if the family has no recurrent state */
sn_status sn_model_state_get(const sn_model *m, void *buf, uint64_t cap, sn_err *err);
sn_status sn_model_state_set(sn_model *m, const void *buf, uint64_t n, sn_err *err);

/* ---- helpers for family files ---- */
/* Integer key "<arch>.<suffix>" (any integer type; uniform per-layer arrays accepted) in [lo, hi].
 * Absent: SN_EFORMAT if required, else *out is left alone. */
sn_status sn_model_key_int(const sn_model *m, const char *suffix, int required, int64_t lo, int64_t hi,
                           int64_t *out, sn_err *err);
/* Float key "<arch>.<suffix>" (F32/F64, finite). Absent: SN_EFORMAT if required, else untouched. */
sn_status sn_model_key_float(const sn_model *m, const char *suffix, int required, float *out, sn_err *err);
/* Declares and allocates (zeroed) the recurrent state; a SN_STATE_RECURRENT family's load calls it. */
sn_status sn_model_state_declare(sn_model *m, const sn_state_decl *d, sn_err *err);
/* Part `part` of layer il of the recurrent state. */
float *sn_model_state_part(const sn_model *m, int64_t il, int part);
/* The tensor called name (GGUF or blob), or NULL. Families use this, never sn_gguf_find_tensor. */
const sn_gguf_tensor *sn_model_find_tensor(const sn_model *m, const char *name);
/* Finds tensor name; checks n_dims and ne (ne1 = 1 for vectors). required=0: absent -> *out NULL. */
sn_status sn_model_tensor(sn_model *m, const char *name, int64_t ne0, int64_t ne1, int required,
                          const sn_gguf_tensor **out, sn_err *err);
/* The same for up to 4-D tensors: shape ne[0..n_dims) must match exactly (trailing dimensions of
 * size 1 in the file beyond n_dims are accepted, as ggml treats them as the same shape). */
sn_status sn_model_tensor_nd(sn_model *m, const char *name, int n_dims, const int64_t *ne, int required,
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
