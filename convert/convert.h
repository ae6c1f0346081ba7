/* convert.h - HF model folder -> GGUF, in one streaming pass.
 *
 * sn_convert() reads config.json and the weights - safetensors, or PyTorch checkpoints through
 * torch_ckpt.h, both presented as safetensors.h tensors (mmapped, never copied whole) - maps every
 * tensor through the architecture table (arch.h), decides each tensor's GGUF type by llama.cpp's
 * rules, writes the complete header (general.*, {arch}.*, tokenizer.* via vocab.h, tensor infos)
 * and then converts and writes one tensor at a time, multi-threaded by row ranges, into OUT.tmp,
 * which is fsynced and renamed to OUT at the end. On any error or cancellation the tmp file is
 * removed and OUT is untouched. The library never prints: the plan, progress and the verify report
 * come back through callbacks and the result struct. */
#ifndef SN_CONVERT_H
#define SN_CONVERT_H
#include "gguf.h"
#include "hf_config.h"
#include "sn_err.h"
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

/* Output types (--outtype): llama.cpp's converter types and llama-quantize's file types. Their
 * meaning is one table (outtype.c). */
typedef enum sn_outtype {
    SN_OUTTYPE_AUTO = 0, SN_OUTTYPE_F32, SN_OUTTYPE_F16, SN_OUTTYPE_BF16, SN_OUTTYPE_Q8_0, SN_OUTTYPE_Q4_0,
    SN_OUTTYPE_Q4_1, SN_OUTTYPE_Q5_0, SN_OUTTYPE_Q5_1, SN_OUTTYPE_Q2_K, SN_OUTTYPE_Q3_K_S, SN_OUTTYPE_Q3_K_M,
    SN_OUTTYPE_Q3_K_L, SN_OUTTYPE_Q4_K_S, SN_OUTTYPE_Q4_K_M, SN_OUTTYPE_Q5_K_S, SN_OUTTYPE_Q5_K_M, SN_OUTTYPE_Q6_K,
    SN_OUTTYPE_IQ4_NL, SN_OUTTYPE_IQ4_XS, SN_OUTTYPE_COUNT
} sn_outtype;

/* How the tensors' types are picked: llama.cpp's converter rules (one type for every matrix), or
 * llama-quantize's per-file-type rules run on the f32 conversion (quant_rules.c). */
enum { SN_RECIPE_CONVERTER = 0, SN_RECIPE_QUANTIZE = 1 };

typedef struct sn_outtype_info {
    const char *name;        /* lower case; --outtype accepts any case */
    uint32_t ftype;          /* llama_ftype written to general.file_type */
    int type;                /* default per-tensor sn_ggml_type */
    int recipe;              /* SN_RECIPE_* */
    const char *desc;        /* one line for the help text */
} sn_outtype_info;

/* The table row of t, NULL if out of range. */
const sn_outtype_info *sn_outtype_info_of(sn_outtype t);
/* Name in any case ("Q4_K_M", "q8_0", "auto") -> value; -1 if unknown. */
int sn_outtype_parse(const char *s);
const char *sn_outtype_name(sn_outtype t);
/* The name of a general.file_type value ("q4_k_m" for 15; also the llama_ftype values sunny does not
 * write, "iq2_xxs" for 19), NULL if unknown. */
const char *sn_outtype_of_ftype(uint32_t ftype);
/* The same in upper case, as llama-quantize prints it ("Q4_K_M"), into buf; returns its length, 0 if
 * ftype is unknown (buf then ""). */
size_t sn_ftype_label(uint32_t ftype, char *buf, size_t n);
/* "auto, f32, f16, ..." into buf (truncated to n); returns the length it needed. */
size_t sn_outtype_list(char *buf, size_t n);

typedef struct sn_convert_plan_entry {
    const char *hf_name;         /* "(generated)" for rope_freqs */
    const char *gguf_name;
    uint32_t n_dims;
    uint64_t ne[SN_GGUF_MAX_DIMS];
    int type;                    /* sn_ggml_type written */
    const char *src_dtype;       /* "BF16", "F32", ... */
    uint64_t bytes;              /* bytes in the GGUF (unpadded) */
} sn_convert_plan_entry;

typedef struct sn_convert_progress {
    size_t i_tensor, n_tensors;  /* tensor being written (0-based) */
    const char *gguf_name;
    uint64_t bytes_done, bytes_total; /* tensor data written so far / in all */
    double seconds;
} sn_convert_progress;

/* A consumer of the converted stream instead of a GGUF file (the blob writer uses it, so an HF
 * folder becomes a blob without an intermediate GGUF on disk). Every tensor is handed over as F32
 * rows in the plan's order (the plan entries come through on_plan first); calls come from one
 * writer thread, in order: begin once, then per tensor any number of writes and one end_tensor,
 * then finish. The consumer owns its output file and its cleanup. */
typedef struct sn_convert_sink {
    sn_status (*begin)(void *ud, const sn_gguf_writer *kv, sn_err *err); /* kv: every KV, no tensors */
    sn_status (*write)(void *ud, const void *data, uint64_t n, sn_err *err);
    sn_status (*end_tensor)(void *ud, sn_err *err);
    sn_status (*finish)(void *ud, sn_err *err);
    void *ud;
} sn_convert_sink;

typedef struct sn_convert_opts {
    const char *model_dir;       /* HF folder, one weight file (.safetensors, PyTorch .bin/.pt/.pth), or a
                                  * GGUF to requantize (requantize.c) */
    const char *config_path;     /* config.json; NULL: in the folder (or next to the file) */
    const char *state_key;       /* PyTorch checkpoints: key of the state dict in the saved dict, NULL = auto */
    const char *tmp_dir;         /* PyTorch checkpoints: where deflated storages are inflated ($TMPDIR
                                  * from cmd/), NULL = /tmp */
    const char *out_path;
    sn_outtype outtype;
    const char *name;            /* general.name override or NULL */
    const char *pre_override;    /* tokenizer pre-tokenizer name or NULL */
    int n_threads;               /* <= 0: number of online CPUs */
    int dry_run, force, verify;
    int allow_requantize;        /* a GGUF input whose matrices are already quantized: requantize them */
    int64_t split_max_tensors;   /* > 0: shards of at most this many tensors (gguf-split layout) */
    uint64_t split_max_bytes;    /* > 0: shards of at most this many tensor bytes (one tensor at least) */
    volatile sig_atomic_t *cancel; /* non-zero -> stop, clean up, return SN_EIO "interrupted" */
    void (*on_plan)(void *ud, const sn_convert_plan_entry *e);      /* every tensor, before writing */
    void (*on_progress)(void *ud, const sn_convert_progress *p);    /* after each written chunk */
    /* per tensor (max_err, bound: 0 = exact) and per tokenizer key (both 0) */
    void (*on_verify)(void *ud, const char *gguf_name, int ok, double max_err, double bound);
    void *ud;
    const sn_convert_sink *sink; /* NULL: write out_path as GGUF; else stream F32 tensors to it */
    const char *vocab_path;      /* RWKV: the world vocabulary file (--vocab); NULL: the
                                  * rwkv_vocab_v20230424.txt in the folder / beside the weight file */
} sn_convert_opts;

typedef struct sn_convert_result {
    char out_path[4096];         /* the GGUF written (or a dry run's would-be name): opts.out_path, or
                                  * the name derived from it (sn_convert_out_path) */
    size_t n_shards;             /* files written: 1, or the shards out_path-0000i-of-0000N.gguf (out_path
                                  * is then the first) */
    char arch[32];               /* GGUF architecture */
    char ftype[16];              /* "F16", "Q4_K_M", ... (resolved outtype, upper case) */
    uint32_t file_type;          /* general.file_type written */
    size_t n_tensors;
    size_t n_skipped;            /* vision / audio tower tensors not converted (text model only) */
    uint64_t bytes;              /* size of the GGUF file */
    uint64_t src_bytes;          /* tensor bytes read from safetensors */
    uint64_t n_params;
    double seconds;              /* wall time of the whole conversion (excluding verify) */
    double data_seconds;         /* of which streaming tensor data (header + vocab excluded) */
    double sync_seconds;         /* of which the final fsync (disk-bound, not CPU) */
    char vocab_model[16], vocab_pre[32];
    int vocab_tokens;
    /* --verify */
    size_t verify_checked, verify_failed;           /* tensors */
    size_t verify_keys_checked, verify_keys_failed; /* tokenizer.* keys */
    char verify_first_bad[128];
    /* a single checkpoint without config.json: the config the family derived from its tensor
     * shapes (JSON, with "_derived_from" saying which shape gave which value); "" otherwise */
    char derived_config[1024];
    /* a GGUF input: tensors that were already quantized and were quantized again (--allow-requantize) */
    size_t requantized;
} sn_convert_result;

/* out_path may be NULL (the default name in the model's folder), an existing folder (the default
 * name in it) or a file name with {ftype}-style fields; the name is resolved once the metadata is
 * known and before any tensor is converted, and an existing file there is refused without force. */
sn_status sn_convert(const sn_convert_opts *opts, sn_convert_result *res, sn_err *err);

/* 1 when out_path needs sn_convert_out_path: NULL, an existing folder, or a name with '{' / '}'. */
int sn_convert_out_needs_name(const char *out_path);
/* convert_hf_to_gguf.py's output name: spec a file name -> its last component through
 * gguf.fill_templated_filename ({ftype} {outtype} {} lower case, {FTYPE} {OUTTYPE} upper, {{ }}
 * braces); spec a folder -> spec/DEFAULT_NAME.gguf; spec NULL -> the same in in_path's folder (or
 * in_path when it is one). default_name is naming_convention's "Name-7B-Instruct-Q8_0". */
sn_status sn_convert_out_path(const char *spec, const char *in_path, const char *default_name, const char *ftype,
                              char *out, size_t cap, sn_err *err);

/* ---- internals shared with metadata.c, blob_convert.c and tests ---- */

/* 1 if llama-quantize never quantizes a tensor of this name (its condition list: names not ending
 * in "weight", norms, routers, RWKV's and Mamba's small matrices, ...; quant_rules.c). */
int sn_quant_never(const char *name);

/* The parameter counts gguf-py's get_total_parameter_count reports: tensors named "*_exps.*" with
 * 3 dimensions are experts (per_expert = their elements / expert count, expert_count the mean
 * count), the rest shared. */
typedef struct sn_param_count {
    uint64_t total, shared, per_expert, expert_count;
} sn_param_count;

/* general.sampling.*, general.name and the other general.* keys llama.cpp's gguf.Metadata derives
 * from README.md front matter, config.json _name_or_path and the directory name. The parameter
 * counts drive size_label when the name carries none. stem (may be NULL) gets the default file
 * name's start, gguf.naming_convention without the encoding ("Qwen2.5-7B-Instruct"). */
sn_status sn_metadata_write(const char *model_dir, const sn_hf_config *cfg, const char *name_override,
                            const sn_param_count *pc, sn_gguf_writer *w, char *stem, size_t stem_cap, sn_err *err);

/* gguf.Metadata.get_model_id_components for one id ("org/Name-7B-Instruct"): each out may be
 * NULL-terminated empty when absent. Exposed for tests. */
typedef struct sn_model_id_parts {
    char name[256], org[128], basename[128], finetune[128], version[64], size_label[64];
} sn_model_id_parts;
void sn_metadata_id_components(const char *model_id, int64_t total_params, sn_model_id_parts *out);
/* gguf.utility.model_weight_count_rounded_notation(n, 2), e.g. 7241732096 -> "7.2B". */
void sn_metadata_size_label(uint64_t n_params, char *out, size_t out_size);

#endif
