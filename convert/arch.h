/* arch.h - the per-architecture table: how one HF model family becomes GGUF.
 *
 * Each family is one sn_arch value (convert/arch_<family>.c) listed in the table in convert.c. The
 * driver asks it three things: the {arch}.* metadata keys (written in llama.cpp's converter order,
 * ending with general.file_type and any family extras), how each HF tensor name maps to a GGUF
 * name with the shape the config implies (so mismatches are caught before anything is written) and
 * whether its rows must be permuted, and which tensors it generates from the config alone
 * (rope_freqs.weight for Llama-3 rope scaling). Adding a family = a new file + one table row. */
#ifndef SN_ARCH_H
#define SN_ARCH_H
#include "gguf.h"
#include "hf_config.h"
#include "sn_err.h"
#include <stddef.h>
#include <stdint.h>

typedef struct sn_arch_tensor {
    char gguf_name[SN_GGUF_MAX_NAME];
    uint32_t n_dims;                 /* GGUF rank = HF rank */
    uint64_t ne[SN_GGUF_MAX_DIMS];   /* expected shape, ne[0] contiguous (HF shape reversed) */
    uint64_t permute_heads;          /* > 0: llama rope row interleave with this many heads */
} sn_arch_tensor;

typedef struct sn_arch_extra {       /* a 1-D F32 tensor computed from the config */
    char gguf_name[SN_GGUF_MAX_NAME];
    uint64_t n;
    float *data;                     /* malloc'd; the caller frees */
} sn_arch_extra;

enum { SN_ARCH_MAP_SKIP = 0, SN_ARCH_MAP_OK = 1 };

typedef struct sn_arch {
    const char *gguf_arch;           /* "llama", "qwen2", "qwen3" */
    const char *const *hf_archs;     /* NULL-terminated config.json architectures[0] values */
    /* Checks the config has what the family needs (heads divide hidden, ...). */
    sn_status (*check_config)(const struct sn_arch *a, const sn_hf_config *cfg, sn_err *err);
    /* {arch}.* keys and general.file_type, in the reference converter's order. */
    sn_status (*write_kv)(const struct sn_arch *a, const sn_hf_config *cfg, uint32_t file_type,
                          sn_gguf_writer *w, sn_err *err);
    /* SN_ARCH_MAP_OK (out filled), SN_ARCH_MAP_SKIP (tensor deliberately dropped) or an error
     * status with "cannot map tensor ..." in err. */
    int (*map_tensor)(const struct sn_arch *a, const sn_hf_config *cfg, const char *hf_name,
                      sn_arch_tensor *out, sn_err *err);
    /* Up to n_max generated tensors (emitted before all others). */
    sn_status (*extra_tensors)(const struct sn_arch *a, const sn_hf_config *cfg, sn_arch_extra *out,
                               size_t n_max, size_t *n_out, sn_err *err);
    /* GGUF tensors that must exist (NULL-terminated): once, and per layer ("blk.%d." + name). */
    const char *const *required;
    const char *const *required_per_layer;
} sn_arch;

extern const sn_arch sn_arch_llama, sn_arch_qwen2, sn_arch_qwen3;

/* Looks up architectures[0]; NULL if unsupported. */
const sn_arch *sn_arch_find(const char *hf_arch);
/* "LlamaForCausalLM, MistralForCausalLM, ..." for error messages. */
const char *sn_arch_supported_list(void);

/* Llama rope permutation (HF rotate-half -> llama.cpp interleaved): the source row (or element) that
 * lands in destination row `dst` of a tensor with n_rows rows split into n_head heads:
 * out[h*hd + 2i + j] = in[h*hd + j*hd/2 + i]. */
static inline uint64_t sn_arch_permute_src(uint64_t dst, uint64_t n_rows, uint64_t n_head) {
    uint64_t hd = n_rows / n_head, h = dst / hd, w = dst % hd;
    return h * hd + (w & 1) * (hd / 2) + (w >> 1);
}

/* Llama-3 rope frequency factors ("rope_type": "llama3"): n = head_dim/2 values. */
sn_status sn_arch_llama3_rope_freqs(const sn_hf_config *cfg, float **out, uint64_t *n, sn_err *err);

#endif
