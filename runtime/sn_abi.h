/* sn_abi.h - sunny's stable C ABI: load a GGUF, tokenize, evaluate, sample, from any language.
 *
 * This header is self-contained (only <stddef.h>/<stdint.h>) and is the one a caller includes.
 * Rules that keep it stable: handles are opaque; every function returns an int32 status (0 = OK,
 * negative = error, values below never change meaning); structs passed in carry their own size
 * (struct_size) so fields can be added at the end; a caller built against major version M calls
 * sn_abi_check(M) first and refuses to run if it fails. SN_ABI_VERSION = MAJOR<<16 | MINOR<<8 |
 * PATCH. Minor versions only add functions, capability bits and struct fields. */
#ifndef SN_ABI_H
#define SN_ABI_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SN_ABI_VERSION_MAJOR 1
#define SN_ABI_VERSION_MINOR 5
#define SN_ABI_VERSION_PATCH 0
#define SN_ABI_VERSION ((SN_ABI_VERSION_MAJOR << 16) | (SN_ABI_VERSION_MINOR << 8) | SN_ABI_VERSION_PATCH)

/* Status codes (fixed-width; identical to the runtime's sn_status values). */
#define SN_ABI_OK 0
#define SN_ABI_EINVAL (-1)      /* bad argument */
#define SN_ABI_ENOMEM (-2)
#define SN_ABI_EIO (-3)         /* cannot open/read/map the file */
#define SN_ABI_EFORMAT (-4)     /* malformed GGUF */
#define SN_ABI_EUNSUPPORTED (-5)/* valid input this runtime does not implement; or ABI major mismatch */

/* Capability bits (sn_abi_capabilities). */
#define SN_ABI_CAP_AVX2 (1u << 0)        /* AVX2/FMA/F16C kernels in use */
#define SN_ABI_CAP_AVX512 (1u << 1)      /* AVX-512 kernels in use */
#define SN_ABI_CAP_AVX512_VNNI (1u << 2)
#define SN_ABI_CAP_AVX512_BF16 (1u << 3)
#define SN_ABI_CAP_TOKENIZER (1u << 4)   /* sn_abi_tokenize / sn_abi_detokenize available */
#define SN_ABI_CAP_KV_F32 (1u << 5)      /* f32 KV cache selectable */
#define SN_ABI_CAP_KQUANTS (1u << 6)     /* Q4_K / Q6_K weights */
#define SN_ABI_CAP_SAMPLER (1u << 7)     /* temperature/top-k/top-p/seed sampling */
#define SN_ABI_CAP_STATE (1u << 8)       /* 1.1: sn_abi_state_size/_get/_set (recurrent models, e.g. rwkv7) */
#define SN_ABI_CAP_RECURRENT (1u << 9)   /* 1.1: recurrent families (rwkv7; mamba2, qwen35, qwen35moe, qwen3next) can be loaded */
#define SN_ABI_CAP_MOE (1u << 10)        /* 1.4: mixture-of-experts models (qwen3moe, Mixtral; qwen35moe and qwen3next,
                                          * with their gated shared expert) can be loaded */
#define SN_ABI_CAP_MXFP4 (1u << 11)      /* 1.5: MXFP4 weights and gpt-oss models (attention sinks) */

uint32_t sn_abi_version(void);
/* SN_ABI_OK if this library implements ABI major version `major`, else SN_ABI_EUNSUPPORTED. */
int32_t sn_abi_check(uint32_t major);
uint32_t sn_abi_capabilities(void);
/* A constant English name for a status code ("ok", "invalid argument", ...). */
const char *sn_abi_status_str(int32_t status);

typedef struct sn_abi_model sn_abi_model;
typedef struct sn_abi_sampler sn_abi_sampler;

/* 1.3: how the runtime runs on this machine; every field 0 = the default (from CPUID). Per model:
 * two models loaded with different tunings each run with their own kernels. None of these changes
 * a result except lanes. */
typedef struct sn_abi_tuning {
    uint32_t struct_size;  /* sizeof(sn_abi_tuning) as the caller knows it */
    int32_t isa;           /* 1: scalar kernels only; 2: up to AVX2; 0 or 3: every instruction set the CPU has */
    int32_t lanes;         /* 8 or 16: the float-sum width of the llama.cpp build to match */
    int32_t far_streams;   /* 1 on, 2 off: single-token matmuls read far-apart streams */
    int32_t page_kick;     /* 1 on, 2 off: single-stream F16 decode touches each page ahead */
    int32_t mm_f16;        /* 1: AVX-512 F16 batches convert per tile, 2: widen */
    int32_t no_repack;     /* 1: no Q4_0 / Q4_K 8-row repack at load */
    int32_t no_huge_pages; /* 1: as mmap_weights = 1 */
    int32_t no_prefault;   /* 1: the mapped weights' page tables are not filled at load */
} sn_abi_tuning;

typedef struct sn_abi_load_params {
    uint32_t struct_size; /* sizeof(sn_abi_load_params) as the caller knows it */
    int32_t n_threads;    /* <= 0: 1 */
    int64_t n_ctx;        /* 0: min(model context, 4096) */
    int32_t kv_f32;       /* 0: f16 KV cache (llama.cpp's default), 1: f32 */
    int32_t mmap_weights; /* 1.2: 1 reads every weight in place from the file mapping (shared, evictable);
                           * 0: matrices are copied into 2 MB huge pages at load (faster decode) */
    const sn_abi_tuning *tuning; /* 1.3: NULL = the defaults */
} sn_abi_load_params;

/* Loads MODEL.gguf. On failure *out is NULL and, if errbuf is given, a message naming the file
 * and the problem is written there (NUL-terminated, truncated to errcap). */
int32_t sn_abi_model_load(const char *path, const sn_abi_load_params *params, sn_abi_model **out,
                          char *errbuf, size_t errcap);
void sn_abi_model_free(sn_abi_model *m);
int32_t sn_abi_n_vocab(const sn_abi_model *m);
int32_t sn_abi_n_ctx(const sn_abi_model *m);
/* Message of the last failing call on this model ("" if none). Valid until the next call. */
const char *sn_abi_last_error(const sn_abi_model *m);

/* Text <-> ids with the GGUF's tokenizer. *n_out receives the full count even when it exceeds
 * cap (then nothing beyond cap is written and SN_ABI_EINVAL is returned). */
int32_t sn_abi_tokenize(sn_abi_model *m, const char *text, size_t len, int32_t add_special,
                        int32_t parse_special, int32_t *ids, size_t cap, size_t *n_out);
int32_t sn_abi_detokenize(sn_abi_model *m, const int32_t *ids, size_t n, char *buf, size_t cap,
                          size_t *n_out);
/* 1 if id ends generation (EOS/EOT/...), 0 otherwise. */
int32_t sn_abi_is_eog(const sn_abi_model *m, int32_t id);

/* Appends n tokens to the context and writes the last token's logits (n_vocab floats) if logits
 * is not NULL. */
int32_t sn_abi_eval(sn_abi_model *m, const int32_t *ids, size_t n, float *logits);
/* Forgets the context. */
int32_t sn_abi_reset(sn_abi_model *m);

/* 1.1, recurrent models (sn_abi_model_is_recurrent = 1): the whole evaluation state (position count
 * and the per-layer recurrent state, independent of the context length) can be copied out and
 * restored, so a conversation can be forked or resumed without re-evaluating its tokens. The bytes
 * are for the same model file on the same machine. A KV-cache model returns SN_ABI_EUNSUPPORTED. */
int32_t sn_abi_model_is_recurrent(const sn_abi_model *m);
int32_t sn_abi_state_size(const sn_abi_model *m, size_t *size);
/* Writes the state into buf (cap >= sn_abi_state_size); *n_out gets its size. */
int32_t sn_abi_state_get(sn_abi_model *m, void *buf, size_t cap, size_t *n_out);
/* Restores a state taken from this model by sn_abi_state_get. */
int32_t sn_abi_state_set(sn_abi_model *m, const void *buf, size_t n);

/* temp <= 0: greedy. top_k <= 0 and top_p >= 1 disable those filters. */
int32_t sn_abi_sampler_new(float temp, int32_t top_k, float top_p, uint32_t seed, sn_abi_sampler **out);
int32_t sn_abi_sample(sn_abi_sampler *s, const float *logits, int32_t n_vocab, int32_t *id);
void sn_abi_sampler_free(sn_abi_sampler *s);

#ifdef __cplusplus
}
#endif
#endif
