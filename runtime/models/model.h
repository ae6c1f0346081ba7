/* model.h - a loaded model: the mmapped GGUF, its hyperparameters, and a per-family forward pass.
 *
 * The part every architecture shares lives here and in model.c: open the GGUF read-only with mmap,
 * read the hyperparameters under the "<arch>." keys, pick the family by general.architecture from a
 * table, and hold the thread pool and kernel table. Each family (model_llama.c for llama, qwen2,
 * qwen3) supplies an sn_family vtable: load = read its own hyperparameters, map and validate its
 * tensors and allocate its state (a KV cache for transformers; a recurrent family declares a
 * fixed-size state that model.c allocates, resets, saves and restores), eval = append tokens and
 * produce the last token's logits. The shared batched matmuls and norms are in ops.h. Adding a
 * family is one new file plus one row in model.c's table. This header is what callers in the tree
 * use (cmd/, integrate/, tests); the model's layout and what family files need are in family.h;
 * sn_abi.h wraps this for programs outside the tree.
 *
 * The model file may also be a sunny runtime blob (.snb, docs/BLOB.md): model.c then takes the
 * metadata from the blob's embedded GGUF and serves its tensors through the same sn_gguf_tensor
 * records (FP32 -> SN_GGML_F32, FP16 -> SN_GGML_F16, INT4G32 -> SN_KTYPE_INT4G32), pointing into
 * the blob's mapping, so families never need to know which format they got. */
#ifndef SN_MODEL_H
#define SN_MODEL_H
#include "cpu.h"
#include "gguf.h"
#include "sn_err.h"
#include <stddef.h>
#include <stdint.h>

enum { SN_KV_F16 = 0, SN_KV_F32 = 1 };

typedef struct sn_model_params {
    int n_threads;   /* >= 1 */
    int64_t n_ctx;   /* 0 = the family's default (sn_family state_kind); a KV family honours an
                      * explicit size above the trained context */
    int kv_type;     /* SN_KV_F16 (default, as llama.cpp) or SN_KV_F32 */
    int verify;      /* blobs: check every tensor's CRC32 at load (default: header and table only) */
    int mmap_weights; /* 1: every matrix is read in place from the file mapping (shared between
                       * processes, evictable page cache); 0 (default): matrices not repacked are
                       * copied into 2 MB huge pages at load, within half of MemAvailable
                       * (the placement pass, family.h sn_model_place). */
    int validate_only; /* every check of a load (keys, ranges, tensor shapes and bytes), no weight
                        * copied, repacked or touched; the model cannot eval (sn_model_validate) */
    sn_tuning tuning; /* instruction sets, lanes, streams, repacks, huge pages, prefault (cpu.h): the
                       * model's own (its kernel object is built for it), so models with different
                       * tunings coexist in one process */
} sn_model_params;

/* Defaults; the tuning is CPUID's (sn_tuning_default; programs apply their environment to it). */
void sn_model_params_default(sn_model_params *p);

typedef struct sn_model sn_model; /* opaque outside the runtime's family files (family.h) */

sn_status sn_model_load(const char *path, const sn_model_params *params, sn_model **out, sn_err *err);
/* The file as sunny-run would take it, without loading weights: the GGUF or blob structure (every
 * tensor's bytes inside the file), then for an architecture the runtime implements its
 * hyperparameters (present, finite, in range, consistent with the tensor shapes) and its tokenizer.
 * The one check convert (before publishing), --blob (its input) and integrate (before placing or
 * uploading) share. SN_VALIDATE_STRUCTURE: the structure only (a split part, a projector). An
 * architecture the runtime does not implement gets the structural check and SN_OK. */
#define SN_VALIDATE_STRUCTURE 1
sn_status sn_model_validate(const char *path, int flags, sn_err *err);
void sn_model_free(sn_model *m);
/* Checks token ids and context room, then runs the family's eval. */
sn_status sn_model_eval(sn_model *m, const int32_t *tokens, int64_t n, float *logits, sn_err *err);
void sn_model_reset(sn_model *m);
int64_t sn_model_n_vocab(const sn_model *m);
/* Positions the cache or state can hold (the context size the model was loaded with). */
int64_t sn_model_n_ctx(const sn_model *m);
/* The kernel table in use: "avx512", "avx2", "scalar". */
const char *sn_model_kernels_name(const sn_model *m);
const sn_gguf *sn_model_gguf(const sn_model *m);
/* "gguf" or "blob". */
const char *sn_model_format(const sn_model *m);
/* A mixture-of-experts model: *counts = how often each expert was selected (summed over layers and
 * evals since the load), returns the number of experts; 0 for a model without experts. */
int64_t sn_model_expert_histogram(const sn_model *m, const uint64_t **counts);

/* Only the metadata of a model file (GGUF or blob), e.g. for loading the tokenizer before the model. */
typedef struct sn_model_meta sn_model_meta;
sn_status sn_model_meta_open(const char *path, sn_model_meta **out, sn_err *err);
const sn_gguf *sn_model_meta_gguf(const sn_model_meta *mm);
void sn_model_meta_close(sn_model_meta *mm);
/* Is general.architecture = arch one we can run? */
int sn_model_arch_supported(const char *arch);
const char *sn_model_supported_archs(void); /* "llama, qwen2, qwen3, ..." from the table */
const char *sn_model_supported_types(void); /* "F32, F16, ...": the weight types sunny-run runs */

/* Recurrent state save/restore (SN_EUNSUPPORTED for KV-cache families). The bytes hold the
 * position count and the state floats in this machine's byte order, for the same model file. */
uint64_t sn_model_state_size(const sn_model *m); /* 0 if the family has no recurrent state */
sn_status sn_model_state_get(const sn_model *m, void *buf, uint64_t cap, sn_err *err);
sn_status sn_model_state_set(sn_model *m, const void *buf, uint64_t n, sn_err *err);

#endif
