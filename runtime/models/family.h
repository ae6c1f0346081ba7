/* family.h - what a model family's file (runtime/models/model_<family>.c) sees of a loaded model.
 *
 * model.h is the API the rest of the tree calls; this header adds the model's layout (struct
 * sn_model), the family vtable every family fills, the options of the family table's rows, the
 * recurrent-state declaration, weight matrices with their layout records, and the helpers a
 * family's load uses: its hyperparameters, and its tensors through two verbs (sn_model_matrix,
 * sn_model_vector). The loader places the matrices after the load (sn_model_place); a family file
 * holds names, shapes and the forward pass. Only runtime/models/ and the unit tests include it. */
#ifndef SN_FAMILY_H
#define SN_FAMILY_H
#include "kernels/kernels.h"
#include "model.h"
#include "threadpool.h"

/* The hyperparameters every family has, read by model.c before the family's load (llama.cpp reads
 * these generically too). Everything else (head counts, norm epsilons, rope, LoRA ranks, ...) is
 * the family's own: its load reads and validates it with sn_model_key_int / sn_model_key_float. */
typedef struct sn_hparams {
    char arch[32];
    int64_t n_vocab;        /* rows of token_embd */
    int64_t n_ctx_train;    /* <arch>.context_length */
    int64_t n_embd, n_layer;
} sn_hparams;

typedef struct sn_blob sn_blob;

/* What a family keeps between evals, which decides what the context size means:
 *   SN_STATE_KV: a cache of n_ctx positions (memory grows with the context; the default context is
 *     min(train context, 4096), capped at the train context);
 *   SN_STATE_RECURRENT: a fixed-size state (sn_model_state_declare; memory does not depend on the
 *     context, which only bounds the positions evaluated: default and cap are the train context).
 *     The state can be saved and restored (sn_model_state_get / _set). */
enum { SN_STATE_KV = 1, SN_STATE_RECURRENT = 2 };

/* llama.cpp's default micro-batch (n_ubatch): a family's forward pass sees at most this many tokens. */
enum { SN_UBATCH = 512 };

typedef struct sn_family {
    const char *name;
    int state_kind; /* SN_STATE_* */
    size_t impl_size; /* bytes of the family's own record, m->impl: model.c allocates it zeroed before
                       * load and frees it after free */
    /* Reads and validates the family's hyperparameters (m->opts says which variant of the table row
     * it is), maps its tensors, allocates its cache or declares its recurrent state. */
    sn_status (*load)(sn_model *m, sn_err *err);
    /* The forward pass over one micro-batch: T <= SN_UBATCH tokens at positions n_past.., the last
     * token's logits (n_vocab floats) when logits is not NULL. sn_model_eval splits longer inputs
     * (as llama.cpp's n_ubatch does) and advances n_past after each. */
    sn_status (*forward)(sn_model *m, const int32_t *tokens, int64_t T, float *logits, sn_err *err);
    void (*reset)(sn_model *m); /* may be NULL; a recurrent state is zeroed by model.c */
    void (*free)(sn_model *m); /* releases what load allocated inside m->impl */
    uint64_t (*state_bytes)(const sn_model *m); /* KV cache size; NULL: the declared recurrent state */
} sn_family;

/* Family options of a table row (model.c FAMILIES), read by the family as m->opts. */
enum {
    SN_OPT_ROPE_NEOX = 1 << 0,  /* llama family: NEOX-style rotation (qwen2, qwen3) */
    SN_OPT_FULL_ROT = 1 << 1,   /* llama family: rope.dimension_count must equal the head size (llama) */
    SN_OPT_QK_NORM = 1 << 2,    /* llama family: per-head q/k RMSNorm tensors required (qwen3) */
    SN_OPT_MOE = 1 << 3,        /* llama family: experts required, their width expert_feed_forward_length
                                 * (qwen3moe); without it a file with expert_count > 0 has experts of
                                 * feed_forward_length (Mixtral). qwen35 family: every layer's FFN is
                                 * the experts plus the gated shared expert (qwen35moe) */
    SN_OPT_GDN_GROUPED = 1 << 5 /* qwen35 family: value heads grouped by key head, beta and alpha fused
                                 * per key head in ssm_ba (qwen3next) */
};

/* A recurrent state: per layer, n_parts float arrays of the given sizes (e.g. RWKV-7's token-shift
 * vectors and wkv matrices; Mamba-2's conv window and SSM state), one zeroed allocation. */
enum { SN_STATE_MAX_PARTS = 4 };
typedef struct sn_state_decl {
    int n_parts;
    const char *name[SN_STATE_MAX_PARTS];
    uint64_t floats[SN_STATE_MAX_PARTS]; /* per layer */
} sn_state_decl;

/* A weight matrix: n_out rows of n_in elements, rows contiguous in `data` (the mapping, or the
 * huge-page copy the loader made). `layout` says how the matmul reads it and is set once per matrix:
 * rows as they are, or 8-row groups at `x8` (a GGUF's Q4_0 / Q4_K repacked by the loader,
 * kernels/q4_0_x8.h, kernels/q4_K_x8.h; a blob's INT4 stored so, kernels/int4.h); `data` then only
 * serves row lookups and the last n_out % 8 rows. A 3-D tensor (GGML shape {n_in, n_out, n_expert},
 * a stack of experts) is one sn_matrix with n_expert > 1: sn_matrix_expert views one expert. */
typedef struct sn_matrix sn_matrix;
/* y[t*ldy + r] = row r of w . activation row t for r in [r0, r1), t < T (see sn_matrix_mul). */
typedef void (*sn_matrix_mul_fn)(const sn_kernels *k, const sn_matrix *w, const void *x, uint64_t x_row, int64_t T,
                                 float *y, int64_t ldy, int64_t r0, int64_t r1);
typedef struct sn_layout {
    const char *name;     /* "rows", "q4_0x8", "mxfp4x8", "q4_Kx8", "int4x8", "unpacked" */
    int group_rows;       /* the thread split hands out whole groups of this many rows */
    sn_matrix_mul_fn mul; /* the multiply that reads this layout */
} sn_layout;
extern const sn_layout sn_layout_rows, sn_layout_q4_0x8, sn_layout_mxfp4x8, sn_layout_q4_Kx8, sn_layout_int4x8,
    sn_layout_unpacked;

struct sn_matrix {
    const char *name;
    const void *data;
    int type;
    int64_t n_in, n_out;
    uint64_t row_bytes;
    const void *x8;
    const sn_layout *layout;
    int64_t n_expert;         /* 1, or the experts of a 3-D tensor */
    uint64_t expert_bytes;    /* bytes from one expert's rows to the next in data */
    uint64_t expert_x8_bytes; /* the same in x8 */
};

/* The loader's record of a matrix a family declared (sn_model_matrix), placed after the load. */
typedef struct sn_model_mat {
    sn_matrix *w;
    int embd; /* the token embedding: placed last, read by row lookups */
} sn_model_mat;

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
    sn_model_mat *mats; /* every matrix the family declared, in order, for the placement pass */
    int n_mats;
    float **owned;   /* f32 copies of F16/BF16 vectors (sn_model_vector) */
    int n_owned;
    void **repacked; /* matrices the placement pass made (inside `arenas`) */
    const void **repacked_src; /* the mapped data each was made from (tied matrices share one) */
    int n_repacked;
    void **arenas;   /* 2 MB-aligned blocks the repacked matrices live in, freed with the model */
    int n_arenas;
    uint64_t arena_used, arena_cap; /* of the last block */
    int64_t huge_budget; /* bytes the placement pass may still copy to huge pages (-1: not read yet) */
    uint64_t act_types; /* bit per activation type (sn_kernel_act_type) of the matrices loaded */
    struct sn_ops *ops; /* the family's matmul scratch, registered by sn_ops_init: model.c reserves
                         * it for a whole micro-batch at the end of the load */
    uint64_t *expert_hist; /* mixture of experts: selections per expert over all layers and evals (moe.c) */
    int64_t n_expert_hist;
    char layer_name[SN_GGUF_MAX_NAME + 32]; /* sn_model_layer_name's result */
    void *impl;      /* family-private */
};

/* ---- helpers for family files ---- */
/* Integer key "<arch>.<suffix>" (any integer type; uniform per-layer arrays accepted) in [lo, hi].
 * Absent: SN_EFORMAT if required, else *out is left alone. */
sn_status sn_model_key_int(const sn_model *m, const char *suffix, int required, int64_t lo, int64_t hi,
                           int64_t *out, sn_err *err);
/* Float key "<arch>.<suffix>" (F32/F64, finite). Absent: SN_EFORMAT if required, else untouched. */
sn_status sn_model_key_float(const sn_model *m, const char *suffix, int required, float *out, sn_err *err);
/* A norm's epsilon: the required float key "<arch>.<suffix>", >= 0. */
sn_status sn_model_key_eps(const sn_model *m, const char *suffix, float *out, sn_err *err);
/* One required integer key of a family's table: "<arch>.<suffix>" in [lo, hi] into *out. */
typedef struct sn_key_int {
    const char *suffix;
    int64_t lo, hi;
    int64_t *out;
} sn_key_int;
/* sn_model_key_int(required) for each of keys[0..n), in order. */
sn_status sn_model_keys_int(const sn_model *m, const sn_key_int *keys, int n, sn_err *err);
/* "blk.<il>.<suffix>", the name of one of layer il's tensors, in a buffer of m that the next call
 * overwrites (a family's load_layer passes it straight to the tensor lookups). */
const char *sn_model_layer_name(sn_model *m, int il, const char *suffix);
/* Calls load(m, il, err) for each layer il in order, up to the first error (the family allocates
 * its layer records first). */
sn_status sn_model_each_layer(sn_model *m, sn_status (*load)(sn_model *m, int il, sn_err *err), sn_err *err);
/* Declares and allocates (zeroed) the recurrent state; a SN_STATE_RECURRENT family's load calls it. */
sn_status sn_model_state_declare(sn_model *m, const sn_state_decl *d, sn_err *err);
/* Part `part` of layer il of the recurrent state. */
float *sn_model_state_part(const sn_model *m, int64_t il, int part);
/* The tensor called name (GGUF or blob), or NULL. Families use this, never sn_gguf_find_tensor. */
const sn_gguf_tensor *sn_model_find_tensor(const sn_model *m, const char *name);
/* Finds tensor name; checks that its shape is ne[0..n_dims) exactly (trailing dimensions of size 1
 * in the file beyond n_dims are accepted, as ggml treats them as the same shape; up to 4-D).
 * required=0: absent -> *out NULL. */
sn_status sn_model_tensor_nd(sn_model *m, const char *name, int n_dims, const int64_t *ne, int required,
                             const sn_gguf_tensor **out, sn_err *err);

/* ---- the two verbs a family declares its tensors with ----
 * il >= 0: layer il's tensor "blk.<il>.<name>"; SN_MODEL_GLOBAL: the tensor called name. The shape
 * is ne[0..n_dims) in GGML order (SN_NE(n_in, n_out) for a matrix). required=0: an absent tensor
 * leaves the output zeroed / NULL. */
enum { SN_MODEL_GLOBAL = -1 };
#define SN_NE(...) (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (const int64_t[]){__VA_ARGS__}
/* A weight matrix SN_NE(n_in, n_out), or a stack of experts SN_NE(n_in, n_out, n_expert), of a
 * type the kernels multiply. The model records it; after the family's load the loader places every
 * recorded matrix once (sn_model_place): that is why *out must stay where it is (a field of the
 * family's state, not a local). A present matrix has data != NULL. */
sn_status sn_model_matrix(sn_model *m, int il, const char *name, int n_dims, const int64_t *ne, int required,
                          sn_matrix *out, sn_err *err);
/* A float tensor (norm, bias, small parameter block) of shape ne as f32: an aligned F32 tensor is
 * read in place; F16/BF16 ones are converted once into an array the model owns. */
sn_status sn_model_vector(sn_model *m, int il, const char *name, int n_dims, const int64_t *ne, int required,
                          const float **out, sn_err *err);
/* The output head "output.weight" [embd->n_in x embd->n_out] (sn_model_matrix). Absent: an error if
 * required, else the head is the embedding itself (tied; llama.cpp duplicates token_embd). */
sn_status sn_model_output_head(sn_model *m, const sn_matrix *embd, int required, sn_matrix *head, sn_err *err);

/* The placement pass, run by model.c after the family's load (weights.c): each recorded matrix, in
 * order, gets its layout once: Q4_0 and Q4_K are repacked into 8-row groups where the kernel
 * object reads that layout (Q4_K: the AVX-512 VNNI one) and sn_tuning allows it; every other matrix
 * is copied unchanged into 2 MB huge-page arenas (decode streams each weight once per token: fewer
 * TLB misses, docs/PERFORMANCE.md "Huge pages for mapped weights") unless sn_model_params keeps the
 * weights mapped; the copies stop at half of MemAvailable. Tied matrices share one copy. The token
 * embedding goes last, so a tight budget goes to the matrices first; tied to a repacked head its
 * lookups keep reading the mapping. Mapped pages read once are released (MADV_DONTNEED). */
sn_status sn_model_place(sn_model *m, sn_err *err);
/* Expert e of a 3-D matrix as a 2-D matrix view (no copy; same layout). */
sn_matrix sn_matrix_expert(const sn_matrix *w, int64_t e);
/* Rows [*r0, *r1) of w that thread ith of nth computes (whole groups of the layout's rows). */
void sn_matrix_split(const sn_matrix *w, int ith, int nth, int64_t *r0, int64_t *r1);
/* y[t*ldy + r] = row r of w . activation row t, for r in [r0, r1), t < T (x already converted to
 * w's activation type; r0 and r1 from sn_matrix_split): one call of w's layout's multiply. */
static inline void sn_matrix_mul(const sn_kernels *k, const sn_matrix *w, const void *x, uint64_t x_row, int64_t T,
                                 float *y, int64_t ldy, int64_t r0, int64_t r1) {
    if (r0 < r1) w->layout->mul(k, w, x, x_row, T, y, ldy, r0, r1);
}

#endif
