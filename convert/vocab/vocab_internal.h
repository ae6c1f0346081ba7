/* vocab_internal.h - what the converter's vocabulary files share (internal to convert/, not an API).
 *
 * vocab.c runs the whole conversion of a folder's tokenizer: it loads the JSON files, picks the
 * path as convert_hf_to_gguf.py does and emits the plan. The paths fill one `plan`:
 * vocab_spm.c (model "llama": tokenizer.model, or a tokenizer.json BPE with byte_fallback),
 * vocab_bpe.c (model "gpt2": byte-level BPE and its merges), vocab_special.c (gguf-py's
 * SpecialVocab: special ids, add_* flags, chat templates, normalizer flags). vocab_table.c holds
 * the token table they all write into, the added-token rules and a string -> id hash map. */
#ifndef SN_VOCAB_INTERNAL_H
#define SN_VOCAB_INTERNAL_H
#include "vocab.h"
#include "mapfile.h"

#include <cJSON.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Largest vocabulary accepted (real ones are < 300k); keeps ids exact as f32 merge-rank scores. */
#define SN_VOCAB_MAX (1 << 24)

enum { TT_NORMAL = 1, TT_UNKNOWN = 2, TT_CONTROL = 3, TT_USER_DEFINED = 4, TT_UNUSED = 5, TT_BYTE = 6 };

/* ------------------------------------------------------------------------------------------------
 * small JSON helpers with Python semantics where the reference relies on them */

static inline const cJSON *jget(const cJSON *o, const char *k) {
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static inline const char *jstr(const cJSON *o, const char *k) {
    const cJSON *v = jget(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Integral JSON number in [0, 2^53] -> 1 and *v. */
static inline int jint(const cJSON *v, int64_t *out) {
    if (!cJSON_IsNumber(v)) return 0;
    double d = v->valuedouble;
    if (!(d >= -9007199254740992.0 && d <= 9007199254740992.0) || d != floor(d)) return 0;
    *out = (int64_t)d;
    return 1;
}

/* Python truthiness of a JSON value (None, "", {}, [], 0, false are falsy). */
static inline int py_truthy(const cJSON *v) {
    if (!v || cJSON_IsNull(v) || cJSON_IsFalse(v)) return 0;
    if (cJSON_IsString(v)) return v->valuestring[0] != 0;
    if (cJSON_IsNumber(v)) return v->valuedouble != 0;
    if (cJSON_IsArray(v) || cJSON_IsObject(v)) return v->child != NULL;
    return 1;
}

/* Python `s == v` for a str s (NULL = None) against any JSON value (NULL = None). */
static inline int py_eq_str(const char *s, const cJSON *v) {
    if (!s) return !v || cJSON_IsNull(v);
    return v && cJSON_IsString(v) && !strcmp(s, v->valuestring);
}

/* ------------------------------------------------------------------------------------------------
 * the plan: everything that will be written, in order */

#define MAX_SPECIAL 12
#define MAX_TEMPLATES 32

/* Token and merge strings are NUL-terminated and either borrowed from the parsed tokenizer.json
 * (which outlives the table: it is freed after emit) or copied into `blocks`, a bump allocator
 * freed as a whole. A 128K-token vocabulary with 280K merges used to cost ~700K malloc/free
 * pairs; now it costs a few 1 MiB blocks. */
typedef struct sblock { struct sblock *next; size_t used, cap; char data[]; } sblock;

typedef struct {
    const char **tok;
    uint64_t *len;
    float *scores;    /* NULL unless the model is "llama" */
    int32_t *types;
    size_t n;
    const char **merges; /* gpt2 only */
    uint64_t n_merges;
    sblock *blocks;   /* owned string storage */
} tok_table;

typedef struct { const char *typ; int64_t id; } special_id;
typedef struct { const char *typ; int v; } special_add;
typedef struct { char *name; char *text; uint64_t len; } named_tmpl;

typedef struct {
    int space_prefix;            /* -1 absent */
    int space_prefix_last;       /* -1 absent; else written after all other keys (Gemma 3) */
    const char *model;
    char pre[32];
    tok_table t;
    /* SpecialVocab */
    const char *types[MAX_SPECIAL];
    int n_types;
    int64_t n_vocab;             /* range check for ids; -1 = none (gpt2 path) */
    special_id ids[MAX_SPECIAL];
    int n_ids;
    special_add adds[MAX_SPECIAL];
    int n_adds;
    named_tmpl tmpl[MAX_TEMPLATES]; /* named ones; default kept separately */
    int n_tmpl;
    char *tmpl_default;
    uint64_t tmpl_default_len;
    int norm_lowercase, norm_strip_accents; /* -1 absent */
    /* llama-family extras applied after SpecialVocab */
    int codellama_eot;           /* vocab_size 32016 */
    int granite_no_bos;          /* vocab_size 49152 */
} plan;


/* ------------------------------------------------------------------------------------------------
 * inputs shared by the paths */

typedef struct {
    const char *dir;
    cJSON *tok_json;   /* tokenizer.json or NULL */
    cJSON *tok_config; /* tokenizer_config.json or NULL (mutated like the reference does) */
    cJSON *config;     /* config.json or NULL */
    int64_t vocab_size; /* config vocab_size, -1 if absent */
    int llama_family;   /* architecture uses LlamaModel.set_vocab */
    int added_literal;  /* sn_arch.vocab_added_literal: SPM added tokens typed by "special" alone */
} inputs;

/* ---- a string -> id hash map for vocab lookups (vocab_table.c) ---- */
typedef struct { const char *s; size_t len; int64_t id; } hent;
typedef struct { hent *e; size_t cap; } hmap;

/* ---- files (vocab.c) ---- */
int sn_vocab_file_exists(const char *path);
typedef struct { uint8_t *base; size_t used, cap; } json_arena;
/* Parses DIR/NAME as JSON into *out; *out stays NULL (and SN_OK) when the file does not exist.
 * With ARENA, the tree lives in ARENA (released by vocab.c, never cJSON_Delete); ARENA stays empty
 * when the arena parse was not possible and the tree came from malloc. */
sn_status sn_vocab_json_load(const char *dir, const char *name, cJSON **out, json_arena *arena, sn_err *err);

/* ---- the token table (vocab_table.c) ---- */
void sn_vocab_table_free(tok_table *t);
/* n bytes of string storage owned by the table, NULL when out of memory. */
char *sn_vocab_table_str_alloc(tok_table *t, size_t n);
sn_status sn_vocab_table_alloc(tok_table *t, size_t n, int with_scores, sn_err *err);
/* Token i = a copy of s[0..len). */
sn_status sn_vocab_table_set(tok_table *t, size_t i, const char *s, size_t len, sn_err *err);
/* Token i = s itself, a string of the parsed tokenizer.json (no copy). */
void sn_vocab_table_ref(tok_table *t, size_t i, const char *s);
/* Token i = "[PAD{i}]", UNUSED. */
sn_status sn_vocab_table_pad(tok_table *t, size_t i, float score, sn_err *err);
/* An added token: CONTROL if special or looks special, else USER_DEFINED with U+2581 -> ' '. */
sn_status sn_vocab_set_added(tok_table *t, size_t id, const char *content, int special, sn_err *err);
/* Splits a merge into its two parts ("a b" or a ["a","b"] pair); 0 when malformed. */
int sn_vocab_merge_parts(const cJSON *m, const char **a, size_t *la, const char **b, size_t *lb);
int sn_vocab_hmap_init(hmap *m, size_t n);
/* The slot of s[0..n): its entry, or the empty slot where it would go. */
hent *sn_vocab_hmap_slot(hmap *m, const char *s, size_t n);
/* model.vocab's tokens into t (NORMAL) at their ids, except a string that is also an added token
 * under another id: transformers' get_vocab() keeps only the added one, so that base id keeps its
 * [PAD{id}] (writing the string twice would make llama.cpp abort on duplicate tokens). */
sn_status sn_vocab_table_base(tok_table *t, const cJSON *vocab, const cJSON *added, sn_err *err);

/* ---- the paths ---- */
/* vocab_spm.c: _create_vocab_sentencepiece() from tokenizer.model (+ added tokens) */
sn_status sn_vocab_spm(plan *p, inputs *in, const char *spm_path, sn_err *err);
/* vocab_spm.c: LlamaHfVocab, a tokenizer.json BPE with byte_fallback -> model "llama" */
sn_status sn_vocab_llama_hf(plan *p, inputs *in, sn_err *err);
/* vocab_bpe.c: byte-level BPE -> model "gpt2" (pre-tokenizer fingerprinted, merges) */
sn_status sn_vocab_gpt2(plan *p, inputs *in, const sn_vocab_opts *opts, sn_err *err);
/* vocab_special.c: gguf-py's SpecialVocab over the plan */
sn_status sn_vocab_special(plan *p, inputs *in, sn_err *err);

#endif
