/* arch.h - the per-architecture table: how one HF model family becomes GGUF.
 *
 * Each family is one sn_arch value (convert/archs/arch_<family>.c) with one row in the table in
 * convert/archs/archs.c; every list of architectures (the converter's lookup, config.json class defaults,
 * the tokenizer path, the type rules, the blob writer) is derived from that table. The driver asks a
 * family: which tokenizer files it needs, to complete its config (fallback keys, padding), to check
 * it, the {arch}.* metadata keys (in llama.cpp's converter order, ending with general.file_type and
 * any family extras), how each HF tensor maps to a GGUF tensor with the shape the config implies (so
 * mismatches are caught before anything is written) and which declared transforms its data goes
 * through, and which tensors it generates from the config alone (rope_freqs.weight for Llama-3).
 *
 * Declared transforms (applied row by row while streaming, see transform.h):
 *   - reshape / squeeze: the source shape (src_ne) may differ from the output shape (ne) when the
 *     element count is equal; the bytes are the same;
 *   - fuse: n_parts source tensors, each one equal slice along the outermost output dimension, are
 *     stacked into one GGUF tensor (RWKV-7's time_mix_lerp_fused, a layer's experts into one 3-D
 *     tensor); fused tensors of one `group` are placed together, in rank order, where the group's
 *     last part arrives (the reference collects a layer's experts and yields all stacks at once);
 *   - row slice: of every slice_group source rows, a contiguous run (the fused gate_up of experts
 *     split into gate and up), or that run cut into pieces gathered piece by piece (Qwen3-Next's
 *     q, k, v of each key head written as all q, all k, all v);
 *   - row trim: only the first rows of a longer source (Gemma's embedding past the vocabulary);
 *   - copy: the same data is written a second time under also_name (RWKV-7 layer-0 a -> v);
 *   - transpose: a 2-D source [R][C] is written as [C][R] (a 3-D one: each [R][C] matrix of the stack);
 *   - MXFP4 repack: OpenAI's MXFP4 blocks (uint8 [.., rows, cols/32, 16], two E2M1 codes a byte) and
 *     the E8M0 scales beside them become GGML MXFP4 blocks, bits moved, nothing dequantized;
 *   - permute_heads: llama's rope row interleave of q/k;
 *   - an elementwise map (Mamba-2's A = -exp(A_log), Qwen3.5's norm + 1);
 *   - a value-head reordering of rows or columns (Qwen3.5's linear attention);
 *   - forced types: tensor-name substrings the converter keeps F32 and llama-quantize leaves alone.
 * Adding a family = a new file + one table row. */
#ifndef SN_ARCH_H
#define SN_ARCH_H
#include "gguf.h"
#include "hf_config.h"
#include "sn_err.h"
#include <stddef.h>
#include <stdint.h>

struct sn_st_model;                  /* convert/readers/safetensors.h */

#define SN_ARCH_MAX_PARTS 65536      /* most source tensors fused into one GGUF tensor (experts) */

typedef enum sn_arch_ew {            /* elementwise maps, applied in f32 */
    SN_ARCH_EW_NONE = 0,
    SN_ARCH_EW_NEG_EXP,              /* y = -exp(x) (Mamba A from A_log) */
    SN_ARCH_EW_ADD_ONE,              /* y = x + 1 (Gemma's and Qwen3.5's norm weights) */
} sn_arch_ew;

/* Value heads stored grouped by key head ([n_k][n_per] blocks of hd) rewritten in tiled order
 * ([n_per][n_k]), from row (or, cols, column/element) `start` on (Qwen3.5's linear attention). */
typedef struct sn_arch_vreorder {
    uint64_t n_k, n_per, hd, start;  /* n_k 0: none */
    int cols;
} sn_arch_vreorder;

/* The source index that lands at index o under r. */
static inline uint64_t sn_arch_vreorder_src(const sn_arch_vreorder *r, uint64_t o) {
    if (!r->n_k || o < r->start) return o;
    uint64_t l = o - r->start, blk = l / r->hd;
    if (blk >= r->n_k * r->n_per) return o;
    return r->start + ((blk % r->n_k) * r->n_per + blk / r->n_k) * r->hd + l % r->hd;
}

typedef struct sn_arch_tensor {
    char gguf_name[SN_GGUF_MAX_NAME];
    uint32_t n_dims;                 /* GGUF rank */
    uint64_t ne[SN_GGUF_MAX_DIMS];   /* expected output shape, ne[0] contiguous */
    uint64_t permute_heads;          /* > 0: llama rope row interleave with this many heads */
    /* Expected source shape in ne order (HF shape reversed) when it is not the output shape (a
     * reshape, squeeze, one part of a fusion, or a transpose); src_n_dims 0 = same as the output. */
    uint32_t src_n_dims;
    uint64_t src_ne[SN_GGUF_MAX_DIMS];
    uint32_t part, n_parts;          /* n_parts > 1: this source is slice `part` of the output */
    /* > 0: fused tensors sharing `group` are emitted together, ordered by group_rank, once all
     * group_size of them are complete */
    char group[SN_GGUF_MAX_NAME];
    uint32_t group_rank, group_size;
    /* > 0: the source's rows come in groups of slice_group; the output takes rows slice_off.. of
     * each group (as many as the output has rows per group); the also_name copy takes the rows from
     * also_slice_off */
    uint64_t slice_group, slice_off, also_slice_off;
    /* non-zero: the run of each group is these consecutive pieces, and the output holds piece 0 of
     * every group, then piece 1 of every group, ... (the also_name copy takes a plain run) */
    uint64_t slice_piece[4];
    uint64_t also_rows;              /* > 0: the also_name copy has this many rows (ne[1]), not ne[1] */
    int transpose;                   /* 2-D source [R][C] (src_ne {C, R}) written as [C][R] (ne {R, C}); a
                                      * 3-D source: each matrix of the stack */
    int elem_rows;                   /* the row slice runs over single elements (an [E, 2F] bias whose
                                      * gate and up values alternate) */
    /* the source is MXFP4 blocks; its scales are the tensor of the same name ending "_scales" instead
     * of "_blocks"; the output is GGML MXFP4 whatever the outtype */
    int mxfp4;
    int early;                       /* emitted before every other source tensor, in arrival order (the
                                      * reference writes it while it prepares the others) */
    int trim_rows;                   /* a 2-D source may have more rows than ne[1]: the first ne[1] are kept */
    sn_arch_ew ew;                   /* elementwise map */
    sn_arch_vreorder vr;             /* value-head reordering of rows or columns */
    char also_name[SN_GGUF_MAX_NAME]; /* non-empty: the same tensor is written again under this name */
} sn_arch_tensor;

typedef struct sn_arch_extra {       /* a 1-D F32 tensor computed from the config */
    char gguf_name[SN_GGUF_MAX_NAME];
    uint64_t n;
    float *data;                     /* malloc'd; the caller frees */
} sn_arch_extra;

enum { SN_ARCH_MAP_SKIP = 0, SN_ARCH_MAP_OK = 1 };

/* One config.json architectures[0] value and the defaults its transformers config class applies
 * (NULL: the reference reads config.json raw, with no class defaults). */
typedef struct sn_arch_class {
    const char *name;
    const sn_hf_defaults *defaults;
} sn_arch_class;

typedef enum sn_arch_vocab {
    SN_ARCH_VOCAB_TEXT = 0,          /* TextModel / Qwen2Model: tokenizer.model (SPM) else tokenizer.json */
    SN_ARCH_VOCAB_LLAMA,             /* LlamaModel.set_vocab: + the llama_hf path, add_space_prefix */
    SN_ARCH_VOCAB_RWKV,              /* _set_vocab_rwkv_world: rwkv_vocab_v20230424.txt (vocab_rwkv.c) */
    SN_ARCH_VOCAB_SPM_NO_PREFIX,     /* Gemma3Model.set_vocab: tokenizer.model, then add_space_prefix = false */
} sn_arch_vocab;

typedef struct sn_arch {
    const char *gguf_arch;           /* "llama", "qwen2", "qwen3", "mamba2" */
    const sn_arch_class *classes;    /* terminated by a {NULL} entry */
    sn_arch_vocab vocab;             /* which set_vocab of the reference the tokenizer follows */
    const char *const *vocab_files;  /* NULL-terminated: the folder needs at least one of these */
    /* SentencePiece vocabularies: the added tokens (added_tokens_decoder, then tokenizer.json's
     * added_tokens) typed by their "special" flag alone, CONTROL or USER_DEFINED, the text as
     * written, when set (a set_vocab that applies them itself rather than the generic path) */
    int vocab_added_literal;
    /* a tokenizer_config.json tokenizer_class read from tokenizer.json even beside a tokenizer.model
     * (NULL: none) */
    const char *vocab_json_class;
    /* Substrings of GGUF tensor names (NULL-terminated, may be NULL) the converter keeps F32 for
     * every outtype. (What llama-quantize leaves alone is one list for all families: sn_quant_never.) */
    const char *const *keep_f32;
    /* Completes the config after the generic parse (family fallback keys, vocab padding); may be NULL. */
    sn_status (*prepare_config)(const struct sn_arch *a, sn_hf_config *cfg, sn_err *err);
    /* Completes the config from the checkpoint's tensor names before prepare_config (a count the
     * reference takes from the tensors when config.json has none); may be NULL. */
    sn_status (*prepare_from_tensors)(const struct sn_arch *a, sn_hf_config *cfg, const struct sn_st_model *m,
                                      sn_err *err);
    /* Checks the config has what the family needs (heads divide hidden, ...). */
    sn_status (*check_config)(const struct sn_arch *a, const sn_hf_config *cfg, sn_err *err);
    /* Keys the reference writes while it prepares the tensors (in generate_extra_tensors), so right
     * after general.architecture; may be NULL. */
    sn_status (*write_early_kv)(const struct sn_arch *a, const sn_hf_config *cfg, sn_gguf_writer *w, sn_err *err);
    /* {arch}.* keys and general.file_type, in the reference converter's order. */
    sn_status (*write_kv)(const struct sn_arch *a, const sn_hf_config *cfg, uint32_t file_type,
                          sn_gguf_writer *w, sn_err *err);
    /* SN_ARCH_MAP_OK (out filled), SN_ARCH_MAP_SKIP (tensor deliberately dropped) or an error
     * status with "cannot map tensor ..." in err. */
    int (*map_tensor)(const struct sn_arch *a, const sn_hf_config *cfg, const char *hf_name,
                      sn_arch_tensor *out, sn_err *err);
    /* Up to n_max generated tensors (emitted before all others); may be NULL (none). */
    sn_status (*extra_tensors)(const struct sn_arch *a, const sn_hf_config *cfg, sn_arch_extra *out,
                               size_t n_max, size_t *n_out, sn_err *err);
    /* A config.json text (malloc'd) derived from the names and shapes of a checkpoint that comes
     * without one (BlinkDL's RWKV .pth); SN_EUNSUPPORTED if the tensors are not this family's. May
     * be NULL. */
    sn_status (*config_from_tensors)(const struct sn_arch *a, const struct sn_st_model *m, char **json, sn_err *err);
    /* GGUF tensors that must exist (NULL-terminated): once, and per layer ("blk.%d." + name). */
    const char *const *required;
    const char *const *required_per_layer;
    /* llama.cpp's model type LLM_TYPE_70B, which llama-quantize's attn_v rule reads: the layer count
     * that makes a model of this family "70B" (0: never), and whether it must also use GQA. */
    int64_t type_70b_layers;
    int type_70b_needs_gqa;
} sn_arch;

/* The Llama row, whose functions a family the reference converts as a LlamaModel subclass reuses
 * (the other rows are declared beside the table, convert/archs/archs.c). */
extern const sn_arch sn_arch_llama;
/* A Mamba-2 mixer tensor of the Mamba2 layout (the name after "mixer.": in_proj.weight, conv1d.weight
 * / .bias, dt_bias, A_log, D, norm.weight, out_proj.weight) for d_model E, d_inner DI, H heads, G groups,
 * state N and conv kernel K: its shapes and transforms into out and the GGUF name after "blk.N.", or
 * NULL (convert/archs/arch_mamba2.c; hybrids name the same tensors under another prefix). */
const char *sn_arch_mamba2_mixer(const char *p, uint64_t E, uint64_t DI, uint64_t H, uint64_t G, uint64_t N,
                                 uint64_t K, sn_arch_tensor *out);

/* The first family whose config_from_tensors recognises m: *json (malloc'd config.json text) and *out. */
sn_status sn_arch_config_from_tensors(const struct sn_st_model *m, char **json, const sn_arch **out, sn_err *err);

/* The table (convert/archs/archs.c). Looks up architectures[0]; NULL if unsupported. */
const sn_arch *sn_arch_find(const char *hf_arch);
/* Looks up a GGUF general.architecture value; NULL if no family writes it. */
const sn_arch *sn_arch_find_gguf(const char *gguf_arch);
/* "LlamaForCausalLM, MistralForCausalLM, ..." for error messages. */
const char *sn_arch_supported_list(void);
/* 1 if gguf_name contains one of the NULL-terminated substrings. */
int sn_arch_name_in(const char *gguf_name, const char *const *substrings);
/* 1 for a tensor of a vision / audio tower or projector, which llama.cpp's text conversion drops
 * (TextModel.filter_tensors). */
int sn_arch_is_multimodal(const char *hf_name);
/* Checks DIR holds one of a->vocab_files; the error names what is missing. */
sn_status sn_arch_check_vocab_files(const sn_arch *a, const char *dir, sn_err *err);

/* Llama rope permutation (HF rotate-half -> llama.cpp interleaved): the source row (or element) that
 * lands in destination row `dst` of a tensor with n_rows rows split into n_head heads:
 * out[h*hd + 2i + j] = in[h*hd + j*hd/2 + i]. */
static inline uint64_t sn_arch_permute_src(uint64_t dst, uint64_t n_rows, uint64_t n_head) {
    uint64_t hd = n_rows / n_head, h = dst / hd, w = dst % hd;
    return h * hd + (w & 1) * (hd / 2) + (w >> 1);
}

/* Metadata writers for an arch's write_kv: the key is "ARCH.SUFFIX" (just SUFFIX when arch is NULL).
 * A value that does not fit u32 is an SN_EFORMAT naming config.json and the key. */
sn_status sn_arch_kv_u32(sn_gguf_writer *w, const char *arch, const char *suffix, int64_t v, sn_err *err);
sn_status sn_arch_kv_f32(sn_gguf_writer *w, const char *arch, const char *suffix, double v, sn_err *err);
sn_status sn_arch_kv_str(sn_gguf_writer *w, const char *arch, const char *suffix, const char *v, sn_err *err);
/* A named integer of a family's config: a metadata key suffix and its value for sn_arch_kv_u32s, or a
 * required config.json field (as errors name it) and the value read for sn_arch_check_range. */
typedef struct { const char *name; int64_t v; } sn_arch_value;
/* Writes the n u32 keys "ARCH.NAME" in order. */
sn_status sn_arch_kv_u32s(sn_gguf_writer *w, const char *arch, const sn_arch_value *kv, size_t n, sn_err *err);
/* SN_EFORMAT "config.json: NAME is missing or not an integer in 1..2^LOG2_MAX" for the first of the
 * n values outside that range (a missing field reads as 0; the bound keeps shape products from
 * overflowing). */
sn_status sn_arch_check_range(const sn_arch_value *v, size_t n, int log2_max, sn_err *err);
/* TextModel.set_gguf_parameters of the reference: block_count (c->n_layers) through key/value_length
 * and general.file_type, each key when the config has its field (convert/archs/arch_llama.c). */
sn_status sn_arch_text_model_kv(const char *arch, const sn_hf_config *c, uint32_t file_type, sn_gguf_writer *w,
                                sn_err *err);
/* {arch}.rope.dimension_sections (INT32 x 4, zero-padded) when rope_parameters (or rope_scaling) has
 * "mrope_section"; an error naming config.json when it is not a list of at most 4 small integers. */
sn_status sn_arch_kv_mrope_sections(sn_gguf_writer *w, const char *arch, const sn_hf_config *c, sn_err *err);
/* Returns from the calling function on a failed status. */
#define SN_ARCH_TRY(x) do { sn_status st_ = (x); if (st_ != SN_OK) return st_; } while (0)

/* The expert count llama.cpp's converter writes ({arch}.expert_count: num_local_experts, num_experts
 * or n_routed_experts), 0 for a dense model (convert/archs/moe.c). */
int64_t sn_arch_expert_count(const sn_hf_config *cfg);

/* Llama-3 rope frequency factors ("rope_type": "llama3"): n = head_dim/2 values. */
sn_status sn_arch_llama3_rope_freqs(const sn_hf_config *cfg, float **out, uint64_t *n, sn_err *err);

#endif
