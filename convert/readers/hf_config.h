/* hf_config.h - a Hugging Face config.json, read the way llama.cpp's converter sees it.
 *
 * llama.cpp's converter loads config.json through transformers' AutoConfig, so the values it writes
 * include the defaults the config class applies (LlamaConfig's head_dim = hidden/heads, rope_theta
 * 10000, num_key_value_heads = num_attention_heads, ...). A C converter reading raw JSON must apply
 * the same defaults per architecture or its GGUF differs; this module does that once, and keeps the
 * parsed cJSON root for anything else (generation settings, rope_scaling details). `text_config` is
 * merged over the top level as the reference does. */
#ifndef SN_HF_CONFIG_H
#define SN_HF_CONFIG_H
#include "sn_err.h"
#include <stdint.h>

struct cJSON;

/* The defaults one transformers config class applies (LlamaConfig, MistralConfig, ...), as
 * AutoConfig(...).to_dict() would contain them. Each architecture's row in convert/archs/archs.c names its
 * classes' defaults; the table is the only place they are listed. */
typedef struct sn_hf_defaults {
    int64_t vocab, hidden, inter, layers, heads, kv_heads; /* kv_heads -1 = same as heads */
    int64_t max_pos;
    double rope_theta, rms_eps;
    int64_t head_dim;   /* -1: none; 0: hidden/heads (always present in the dict) */
    int64_t bos, eos;   /* -1 = None */
} sn_hf_defaults;

/* The class defaults of config.json architectures[0] (convert/archs/archs.c), NULL if none apply. */
const sn_hf_defaults *sn_hf_defaults_for(const char *hf_arch);

/* rope scaling kinds (rope_scaling / rope_parameters "rope_type" or legacy "type") */
typedef enum sn_rope_scaling {
    SN_ROPE_SCALING_NONE = 0,
    SN_ROPE_SCALING_LINEAR,
    SN_ROPE_SCALING_YARN,
    SN_ROPE_SCALING_LLAMA3,
    SN_ROPE_SCALING_LONGROPE,
    SN_ROPE_SCALING_OTHER /* present but not one we translate (e.g. "default", "dynamic") */
} sn_rope_scaling;

struct sn_hf_config {
    char architecture[128];         /* architectures[0], "" if absent */
    char model_type[64];            /* "llama", "qwen2", ... ("" if absent) */

    /* Values after transformers' defaults for the architecture. A field that neither the file nor
     * the config class defines is -1 (ints) / 0 with has_* == 0 (floats). */
    int64_t vocab_size;
    int64_t hidden_size;
    int64_t n_layers;               /* num_hidden_layers */
    int64_t n_heads;                /* num_attention_heads */
    int64_t n_kv_heads;             /* num_key_value_heads (defaults to n_heads) */
    int64_t head_dim;               /* explicit, else hidden_size / n_heads */
    int has_head_dim;               /* head_dim is a key of the config dict (file or class default) */
    int64_t intermediate_size;
    int64_t max_position_embeddings;
    double rope_theta;
    int has_rope_theta;
    double rms_norm_eps;
    int has_rms_norm_eps;
    int tie_word_embeddings;        /* 0/1 */

    /* rope scaling (rope_parameters or rope_scaling; "full_attention" sub-dict wins) */
    sn_rope_scaling rope_scaling;
    char rope_scaling_type[32];     /* the string as found ("" if none) */
    double rope_factor;             /* 0 if absent */
    int64_t rope_orig_ctx;          /* original_max_position_embeddings, -1 if absent */
    double rope_low_freq_factor;    /* llama3; 0 if absent */
    double rope_high_freq_factor;   /* llama3; 0 if absent */
    /* yarn extras: has_* says whether present */
    double yarn_ext_factor, yarn_attn_factor, yarn_beta_fast, yarn_beta_slow;
    int has_yarn_ext_factor, has_yarn_attn_factor, has_yarn_beta_fast, has_yarn_beta_slow;

    /* special token ids from config.json; -1 when absent, null or a list */
    int64_t bos_token_id, eos_token_id, pad_token_id;

    const char *name_or_path;       /* _name_or_path or NULL (points into root) */

    /* The parsed file with text_config merged into the top level; owned by this struct. */
    struct cJSON *root;
};
typedef struct sn_hf_config sn_hf_config;

/* Parses MODEL_DIR/config.json (path given directly). Errors name the file and the field.
 * config.json is read as Python's json module reads it: besides strict JSON, the bare literals
 * Infinity, -Infinity and NaN are numbers (real configs carry "time_step_limit": [0.0, Infinity]).
 * No other JSON file of a model folder gets this leniency. Without "architectures", a mamba_ssm
 * style "ssm_cfg" {"layer": L} names the architecture L + "ForCausalLM" (default "Mamba"). */
sn_status sn_hf_config_load(const char *config_json_path, sn_hf_config *cfg, sn_err *err);
/* Same from a NUL-terminated JSON text (tests); `what` names the source in errors. */
sn_status sn_hf_config_parse(const char *json, const char *what, sn_hf_config *cfg, sn_err *err);
void sn_hf_config_free(sn_hf_config *cfg);

/* Raw lookups on the merged root: 1 and *out set when KEY exists with a numeric value, else 0. */
int sn_hf_config_get_num(const sn_hf_config *cfg, const char *key, double *out);
/* String value or NULL. */
const char *sn_hf_config_get_str(const sn_hf_config *cfg, const char *key);

#endif
