/* vocab.c - HF tokenizer files -> GGUF tokenizer.* metadata, the way llama.cpp's converter writes them.
 *
 * Three vocab paths, chosen as convert_hf_to_gguf.py chooses them: tokenizer.model (SentencePiece,
 * model "llama"), a tokenizer.json BPE with byte_fallback (Mistral/Llama-2 HF format, model "llama",
 * scores from merge ranks - sunny's one deliberate difference, see docs/TOKENIZER.md), and byte-level
 * BPE (model "gpt2", pre-tokenizer fingerprinted). Then gguf-py's SpecialVocab logic: special ids,
 * add_bos/add_eos/add_sep, chat templates, normalizer flags, in its key order. Everything is computed
 * into a plan first and written to the GGUF writer only when nothing can fail any more. */
#include "path.h"
#include "vocab.h"

#include "arch.h"
#include "hf_config.h"
#include "spm_model.h"

#include "mapfile.h"

#include <cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Largest vocabulary accepted (real ones are < 300k); keeps ids exact as f32 merge-rank scores. */
#define SN_VOCAB_MAX (1 << 24)

enum { TT_NORMAL = 1, TT_UNKNOWN = 2, TT_CONTROL = 3, TT_USER_DEFINED = 4, TT_UNUSED = 5, TT_BYTE = 6 };

/* ------------------------------------------------------------------------------------------------
 * files */

static int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}



/* A tokenizer.json is big (Llama 3: 9 MB, ~1M JSON values). cJSON allocates every value and
 * string separately, and the first touch of that much fresh heap (page faults) plus the frees cost
 * more than the parsing itself (~70 ms of ~100 ms measured). So it can be parsed into one private
 * mapping instead: cJSON's allocation hooks point at a bump allocator for the length of the parse
 * (transparent huge pages requested), and the whole tree goes with one munmap. No node of such a
 * tree may be cJSON_Delete'd. The hooks are process-wide, so the vocab code must not run
 * concurrently with other cJSON use in the process (the converter runs it on one thread, before
 * any worker starts). */
typedef struct { uint8_t *base; size_t used, cap; } json_arena;
static json_arena *g_json_arena; /* the arena cJSON allocates from during json_load_opt */

static void *json_arena_malloc(size_t n) {
    json_arena *a = g_json_arena;
    n = (n + 15) & ~(size_t)15;
    if (!a || n > a->cap - a->used) return NULL; /* the parse fails and is redone with malloc */
    void *p = a->base + a->used;
    a->used += n;
    return p;
}

static void json_arena_free(void *p) { (void)p; }

static void json_arena_release(json_arena *a) {
    if (a->base) munmap(a->base, a->cap);
    memset(a, 0, sizeof *a);
}

/* Parses DIR/NAME as JSON into *out; *out stays NULL (and SN_OK) when the file does not exist.
 * With ARENA, the tree lives in ARENA (release it with json_arena_release, never cJSON_Delete);
 * ARENA stays empty when the arena parse was not possible and the tree came from malloc. */
static sn_status json_load_opt(const char *dir, const char *name, cJSON **out, json_arena *arena, sn_err *err) {
    *out = NULL;
    char *path = sn_path_join(dir, name);
    if (!path) return sn_err_set(err, SN_ENOMEM, "out of memory");
    if (!file_exists(path)) {
        free(path);
        return SN_OK;
    }
    sn_mapped_file b;
    sn_status st = sn_map_file(path, &b, err);
    if (st) {
        free(path);
        return st;
    }
    const char *data = (const char *)b.data;
    size_t len = (size_t)b.size;
    const char *end = NULL;
    cJSON *j = NULL;
    if (arena && len > 0 && len < (SIZE_MAX - (16u << 20)) / 8) {
        /* cJSON needs ~4x the text for typical tokenizer files; 8x + 16 MiB of address space,
         * touched only as used */
        memset(arena, 0, sizeof *arena);
        arena->cap = len * 8 + (16u << 20);
        void *m = mmap(NULL, arena->cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m != MAP_FAILED) {
            arena->base = m;
#ifdef MADV_HUGEPAGE
            madvise(m, arena->cap, MADV_HUGEPAGE);
#endif
            cJSON_Hooks h = {json_arena_malloc, json_arena_free};
            g_json_arena = arena;
            cJSON_InitHooks(&h);
            j = cJSON_ParseWithLengthOpts(data, len, &end, 0);
            cJSON_InitHooks(NULL);
            g_json_arena = NULL;
            if (!j) json_arena_release(arena); /* invalid JSON or arena full: malloc path decides */
        } else {
            arena->cap = 0;
        }
    }
    if (!j) j = cJSON_ParseWithLengthOpts(data, len, &end, 0);
    if (!j) {
        size_t off = end && end >= data ? (size_t)(end - data) : 0;
        const char *e = cJSON_GetErrorPtr();
        if (e && e >= data && e <= data + len) off = (size_t)(e - data);
        st = sn_err_set(err, SN_EFORMAT, "%s: invalid JSON near byte %zu", path, off);
    }
    sn_unmap_file(&b);
    free(path);
    *out = j;
    return st;
}

/* ------------------------------------------------------------------------------------------------
 * small JSON helpers with Python semantics where the reference relies on them */

static const cJSON *jget(const cJSON *o, const char *k) {
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

static const char *jstr(const cJSON *o, const char *k) {
    const cJSON *v = jget(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Integral JSON number in [0, 2^53] -> 1 and *v. */
static int jint(const cJSON *v, int64_t *out) {
    if (!cJSON_IsNumber(v)) return 0;
    double d = v->valuedouble;
    if (!(d >= -9007199254740992.0 && d <= 9007199254740992.0) || d != floor(d)) return 0;
    *out = (int64_t)d;
    return 1;
}

/* Python truthiness of a JSON value (None, "", {}, [], 0, false are falsy). */
static int py_truthy(const cJSON *v) {
    if (!v || cJSON_IsNull(v) || cJSON_IsFalse(v)) return 0;
    if (cJSON_IsString(v)) return v->valuestring[0] != 0;
    if (cJSON_IsNumber(v)) return v->valuedouble != 0;
    if (cJSON_IsArray(v) || cJSON_IsObject(v)) return v->child != NULL;
    return 1;
}

/* Python `s == v` for a str s (NULL = None) against any JSON value (NULL = None). */
static int py_eq_str(const char *s, const cJSON *v) {
    if (!s) return !v || cJSON_IsNull(v);
    return v && cJSON_IsString(v) && !strcmp(s, v->valuestring);
}

/* `x.get('SpecialToken', {}).get('id')` on a template element, NULL when absent or not a str. */
static const char *tmpl_id(const cJSON *elem, const char *kind) { return jstr(jget(elem, kind), "id"); }

/* cfg[key] = copy of v (NULL = None); returns the stored item. */
static const cJSON *cfg_set(cJSON *cfg, const char *key, const cJSON *v) {
    cJSON *nv = v ? cJSON_Duplicate(v, 1) : cJSON_CreateNull();
    if (!nv) return NULL;
    if (cJSON_GetObjectItemCaseSensitive(cfg, key))
        cJSON_ReplaceItemInObjectCaseSensitive(cfg, key, nv);
    else
        cJSON_AddItemToObject(cfg, key, nv);
    return nv;
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

static void table_free(tok_table *t) {
    free(t->tok);
    free(t->len);
    free(t->scores);
    free(t->types);
    free(t->merges);
    for (sblock *b = t->blocks, *nx; b; b = nx) {
        nx = b->next;
        free(b);
    }
    memset(t, 0, sizeof *t);
}

/* n bytes of string storage owned by the table, NULL when out of memory. */
static char *table_str_alloc(tok_table *t, size_t n) {
    sblock *b = t->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > (1u << 20) ? n : (1u << 20);
        sblock *nb = malloc(sizeof *nb + cap);
        if (!nb) return NULL;
        nb->next = b;
        nb->used = 0;
        nb->cap = cap;
        t->blocks = b = nb;
    }
    char *r = b->data + b->used;
    b->used += n;
    return r;
}

static void plan_free(plan *p) {
    table_free(&p->t);
    for (int i = 0; i < p->n_tmpl; i++) {
        free(p->tmpl[i].name);
        free(p->tmpl[i].text);
    }
    free(p->tmpl_default);
}

static sn_status table_alloc(tok_table *t, size_t n, int with_scores, sn_err *err) {
    t->n = n;
    t->tok = calloc(n ? n : 1, sizeof *t->tok);
    t->len = calloc(n ? n : 1, sizeof *t->len);
    t->types = calloc(n ? n : 1, sizeof *t->types);
    t->scores = with_scores ? calloc(n ? n : 1, sizeof *t->scores) : NULL;
    if (!t->tok || !t->len || !t->types || (with_scores && !t->scores))
        return sn_err_set(err, SN_ENOMEM, "out of memory for %zu tokens", n);
    return SN_OK;
}

/* Token i = a copy of s[0..len). */
static sn_status table_set(tok_table *t, size_t i, const char *s, size_t len, sn_err *err) {
    char *c = table_str_alloc(t, len + 1);
    if (!c) return sn_err_set(err, SN_ENOMEM, "out of memory");
    memcpy(c, s, len);
    c[len] = 0;
    t->tok[i] = c;
    t->len[i] = len;
    return SN_OK;
}

/* Token i = s itself, a string of the parsed tokenizer.json (no copy). */
static void table_ref(tok_table *t, size_t i, const char *s) {
    t->tok[i] = s;
    t->len[i] = strlen(s);
}

/* Token i = "[PAD{i}]", UNUSED. Formatted by hand: it runs for every id of the vocabulary. */
static sn_status table_pad(tok_table *t, size_t i, float score, sn_err *err) {
    char d[24];
    int nd = 0;
    size_t v = i;
    do {
        d[nd++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    char *c = table_str_alloc(t, (size_t)nd + 6);
    if (!c) return sn_err_set(err, SN_ENOMEM, "out of memory");
    memcpy(c, "[PAD", 4);
    for (int k = 0; k < nd; k++) c[4 + k] = d[nd - 1 - k];
    c[4 + nd] = ']';
    c[5 + nd] = 0;
    t->tok[i] = c;
    t->len[i] = (uint64_t)nd + 5;
    t->types[i] = TT_UNUSED;
    if (t->scores) t->scores[i] = score;
    return SN_OK;
}

/* convert_hf_to_gguf.py does_token_look_special() */
static int looks_special(const char *s) {
    size_t n = strlen(s);
    if (!strcmp(s, "<pad>") || !strcmp(s, "<mask>") || !strcmp(s, "<2mass>") || !strcmp(s, "[@BOS@]"))
        return 1;
#define PFX(p) (n >= sizeof(p) - 1 && !memcmp(s, p, sizeof(p) - 1))
#define SFX(p) (n >= sizeof(p) - 1 && !memcmp(s + n - (sizeof(p) - 1), p, sizeof(p) - 1))
    if (PFX("<|") && SFX("|>")) return 1;
    if (PFX("<\xef\xbd\x9c") && SFX("\xef\xbd\x9c>")) return 1; /* <｜ ... ｜> */
    if (PFX("<unused") && SFX(">")) return 1;
#undef PFX
#undef SFX
    return 0;
}

/* Copy of S (in T's storage) with every U+2581 (▁) replaced by a space (user-defined tokens are
 * pre-normalized). */
static char *unspace(tok_table *t, const char *s, size_t *out_len) {
    size_t n = strlen(s), o = 0;
    char *r = table_str_alloc(t, n + 1);
    if (!r) return NULL;
    for (size_t i = 0; i < n;) {
        if (i + 3 <= n && (unsigned char)s[i] == 0xe2 && (unsigned char)s[i + 1] == 0x96 &&
            (unsigned char)s[i + 2] == 0x81) {
            r[o++] = ' ';
            i += 3;
        } else {
            r[o++] = s[i++];
        }
    }
    r[o] = 0;
    *out_len = o;
    return r;
}

/* An added token: CONTROL if special or looks special, else USER_DEFINED with ▁ -> ' '. */
static sn_status set_added(tok_table *t, size_t id, const char *content, int special, sn_err *err) {
    if (special || looks_special(content)) {
        t->types[id] = TT_CONTROL;
        return table_set(t, id, content, strlen(content), err);
    }
    size_t len;
    char *u = unspace(t, content, &len);
    if (!u) return sn_err_set(err, SN_ENOMEM, "out of memory");
    t->tok[id] = u;
    t->len[id] = len;
    t->types[id] = TT_USER_DEFINED;
    return SN_OK;
}

/* ------------------------------------------------------------------------------------------------
 * inputs shared by the paths */

typedef struct {
    const char *dir;
    cJSON *tok_json;   /* tokenizer.json or NULL */
    cJSON *tok_config; /* tokenizer_config.json or NULL (mutated like the reference does) */
    cJSON *config;     /* config.json or NULL */
    int64_t vocab_size; /* config vocab_size, -1 if absent */
    int llama_family;   /* architecture uses LlamaModel.set_vocab */
} inputs;

/* ------------------------------------------------------------------------------------------------
 * SpecialVocab (gguf-py/gguf/vocab.py) */

static void sv_add_type(plan *p, const char *typ) {
    if (p->n_types < MAX_SPECIAL) p->types[p->n_types++] = typ;
}

static int sv_has_type(const plan *p, const char *typ) {
    for (int i = 0; i < p->n_types; i++)
        if (!strcmp(p->types[i], typ)) return 1;
    return 0;
}

static sn_status sv_set_id(plan *p, const char *typ, const cJSON *v, const char *what, sn_err *err) {
    int64_t id;
    if (!cJSON_IsNumber(v)) return SN_OK;
    if (!jint(v, &id)) return SN_OK;
    if (id < 0)
        return sn_err_set(err, SN_EFORMAT, "%s: invalid value for special token type %s: %" PRId64,
                          what, typ, id);
    if (p->n_vocab >= 0 && id >= p->n_vocab) return SN_OK; /* out of range: skipped, as the reference */
    if (id > (int64_t)UINT32_MAX) return SN_OK;
    for (int i = 0; i < p->n_ids; i++)
        if (!strcmp(p->ids[i].typ, typ)) return SN_OK;
    if (p->n_ids < MAX_SPECIAL) p->ids[p->n_ids++] = (special_id){typ, id};
    return SN_OK;
}

static void sv_set_add(plan *p, const char *typ, int v) {
    for (int i = 0; i < p->n_adds; i++)
        if (!strcmp(p->adds[i].typ, typ)) {
            p->adds[i].v = v;
            return;
        }
    if (p->n_adds < MAX_SPECIAL) p->adds[p->n_adds++] = (special_add){typ, v};
}

static void sv_normalizer(plan *p, const cJSON *n) {
    const char *type = jstr(n, "type");
    if (!type) return;
    if (!strcmp(type, "Lowercase")) {
        p->norm_lowercase = 1;
    } else if (!strcmp(type, "StripAccents")) {
        p->norm_strip_accents = 1;
    } else if (!strcmp(type, "BertNormalizer")) {
        const cJSON *l = jget(n, "lowercase"), *s = jget(n, "strip_accents");
        if (cJSON_IsBool(l)) p->norm_lowercase = cJSON_IsTrue(l);
        if (cJSON_IsBool(s)) p->norm_strip_accents = cJSON_IsTrue(s);
    } else if (!strcmp(type, "Sequence")) {
        const cJSON *c;
        cJSON_ArrayForEach(c, jget(n, "normalizers")) sv_normalizer(p, c);
    }
}

/* The crude post_processor parsing of SpecialVocab._try_load_from_tokenizer_json. */
static sn_status sv_post_processor(plan *p, inputs *in, sn_err *err) {
    cJSON *cfg = in->tok_config;
    int cfg_ok = py_truthy(cfg);
    const cJSON *sp_bos = jget(cfg, "bos_token"), *sp_cls = jget(cfg, "cls_token");
    const cJSON *sp_eos = jget(cfg, "eos_token"), *sp_sep = jget(cfg, "sep_token");
    if (!py_truthy(sp_bos) && py_truthy(sp_cls) && cfg_ok) sp_bos = cfg_set(cfg, "bos_token", sp_cls);
    if (!py_truthy(sp_eos) && py_truthy(sp_sep) && cfg_ok) sp_eos = cfg_set(cfg, "eos_token", sp_sep);

    const cJSON *pp = jget(in->tok_json, "post_processor");
    if (!py_truthy(pp)) return SN_OK;
    const cJSON *procs = jget(pp, "processors");
    const cJSON *one[1] = {pp};
    int n_procs = procs ? cJSON_GetArraySize(procs) : 1;
    for (int k = 0; k < n_procs; k++) {
        const cJSON *proc = procs ? cJSON_GetArrayItem(procs, k) : one[0];
        const char *type = jstr(proc, "type");
        if (!type) continue;
        if (!strcmp(type, "RobertaProcessing")) {
            sv_set_add(p, "bos", 1);
            sv_set_add(p, "eos", 1);
            sv_set_add(p, "sep", 1);
            if (!py_truthy(sp_cls) && cfg_ok) {
                const cJSON *c = jget(proc, "cls");
                sp_cls = cfg_set(cfg, "cls_token", c ? cJSON_GetArrayItem(c, 0) : sp_bos);
            }
            if (!py_truthy(sp_sep) && cfg_ok) {
                const cJSON *c = jget(proc, "sep");
                sp_sep = cfg_set(cfg, "sep_token", c ? cJSON_GetArrayItem(c, 0) : sp_eos);
            }
            continue;
        }
        if (strcmp(type, "TemplateProcessing") != 0) continue;
        const cJSON *single = jget(proc, "single"), *pair = jget(proc, "pair");
        int n_single = cJSON_IsArray(single) ? cJSON_GetArraySize(single) : 0;
        /* special_first / special_last as JSON items inside tokenizer.json (live as long as it) */
        const cJSON *first_it = NULL, *last_it = NULL;
        const char *first = NULL, *last = NULL;
        if (n_single > 1) {
            first_it = jget(jget(cJSON_GetArrayItem(single, 0), "SpecialToken"), "id");
            first = py_truthy(first_it) && cJSON_IsString(first_it) ? first_it->valuestring : NULL;
            if (first) {
                if (!cfg_ok) {
                    sp_bos = first_it;
                } else if (!py_eq_str(first, sp_bos) && !py_eq_str(first, sp_cls)) {
                    if (!py_truthy(sp_bos)) sp_bos = cfg_set(cfg, "bos_token", first_it);
                    if (!py_truthy(sp_cls)) sp_cls = cfg_set(cfg, "cls_token", first_it);
                }
                sv_set_add(p, "bos", py_eq_str(first, sp_bos) || py_eq_str(first, sp_cls));
            }
            last_it = jget(jget(cJSON_GetArrayItem(single, n_single - 1), "SpecialToken"), "id");
            last = py_truthy(last_it) && cJSON_IsString(last_it) ? last_it->valuestring : NULL;
            if (last) {
                if (!cfg_ok) {
                    sp_eos = last_it;
                } else if (!py_eq_str(last, sp_eos)) {
                    if (!sv_has_type(p, "eot")) {
                        sv_add_type(p, "eot");
                        cfg_set(cfg, "eot_token", sp_eos);
                    } else if (!sv_has_type(p, "eom")) {
                        sv_add_type(p, "eom");
                        cfg_set(cfg, "eom_token", sp_eos);
                    }
                    sp_eos = cfg_set(cfg, "eos_token", last_it);
                }
                sv_set_add(p, "eos", py_eq_str(last, sp_eos));
            }
        }
        int n_pair = cJSON_IsArray(pair) ? cJSON_GetArraySize(pair) : 0;
        if (n_pair > 0) {
            int lo = first && py_eq_str(first, jget(jget(cJSON_GetArrayItem(pair, 0), "SpecialToken"), "id"));
            int hi = (last && py_eq_str(last, jget(jget(cJSON_GetArrayItem(pair, n_pair - 1), "SpecialToken"), "id")))
                         ? n_pair - 1 : n_pair;
            if (hi - lo > 0) {
                const char *a = tmpl_id(cJSON_GetArrayItem(pair, lo), "Sequence");
                const char *b = tmpl_id(cJSON_GetArrayItem(pair, hi - 1), "Sequence");
                int mid_lo = lo + 1, mid_hi = hi - 1; /* tmpl_pair[1:-1] */
                if (a && b && !strcmp(a, "A") && !strcmp(b, "B") && mid_hi - mid_lo > 0) {
                    int add_sep = 0;
                    const char *e = tmpl_id(cJSON_GetArrayItem(pair, mid_lo), "SpecialToken");
                    if (e && e[0] && (py_eq_str(e, sp_sep) || py_eq_str(e, sp_eos)) && !last) add_sep = 1;
                    if (mid_hi - mid_lo == 2) {
                        e = tmpl_id(cJSON_GetArrayItem(pair, mid_lo + 1), "SpecialToken");
                        if (e && e[0] && (py_eq_str(e, sp_sep) || py_eq_str(e, sp_eos))) add_sep = 1;
                    }
                    sv_set_add(p, "sep", add_sep);
                    if (add_sep && !py_truthy(sp_sep) && cfg_ok) sp_sep = cfg_set(cfg, "sep_token", sp_eos);
                }
            }
        }
    }
    return SN_OK;
}

static sn_status read_text_file(const char *path, char **out, uint64_t *out_len, sn_err *err) {
    sn_mapped_file b;
    sn_status st = sn_map_file(path, &b, err);
    if (st) return st;
    size_t len = (size_t)b.size;
    char *s = malloc(len + 1);
    if (!s) {
        sn_unmap_file(&b);
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    }
    memcpy(s, (const char *)b.data, len);
    s[len] = 0;
    sn_unmap_file(&b);
    *out = s;
    *out_len = len;
    return SN_OK;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* gguf_writer.add_chat_template: names keep [A-Za-z0-9], others become '_'. */
static sn_status tmpl_add_named(plan *p, const char *name, const char *text, uint64_t len, sn_err *err) {
    char *nm = strdup(name), *tx = malloc(len + 1);
    if (!nm || !tx) {
        free(nm);
        free(tx);
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    }
    for (char *c = nm; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9'))) *c = '_';
    memcpy(tx, text, len);
    tx[len] = 0;
    if (!strcmp(nm, "default")) {
        free(nm);
        free(p->tmpl_default);
        p->tmpl_default = tx;
        p->tmpl_default_len = len;
        return SN_OK;
    }
    for (int i = 0; i < p->n_tmpl; i++)
        if (!strcmp(p->tmpl[i].name, nm)) { /* same key again: value replaced in place */
            free(nm);
            free(p->tmpl[i].text);
            p->tmpl[i].text = tx;
            p->tmpl[i].len = len;
            return SN_OK;
        }
    if (p->n_tmpl >= MAX_TEMPLATES) {
        free(nm);
        free(tx);
        return sn_err_set(err, SN_EUNSUPPORTED, "more than %d named chat templates", MAX_TEMPLATES);
    }
    p->tmpl[p->n_tmpl++] = (named_tmpl){nm, tx, len};
    return SN_OK;
}

static sn_status sv_chat_template_list(plan *p, const cJSON *list, const char *what, sn_err *err) {
    const cJSON *c;
    cJSON_ArrayForEach(c, list) {
        const char *name = jstr(c, "name");
        const cJSON *t = jget(c, "template");
        if (!name) name = "";
        if (!name[0] || !t || cJSON_IsNull(t)) continue;
        if (!cJSON_IsString(t))
            return sn_err_set(err, SN_EFORMAT, "%s: chat_template entry \"%s\": template is not a string",
                              what, name);
        sn_status st = tmpl_add_named(p, name, t->valuestring, strlen(t->valuestring), err);
        if (st) return st;
    }
    return SN_OK;
}

/* chat_template: tokenizer_config.json, else chat_template.jinja (+ additional_chat_templates/), else
 * chat_template.json. */
static sn_status sv_chat_template(plan *p, inputs *in, sn_err *err) {
    sn_status st = SN_OK;
    const cJSON *tc = jget(in->tok_config, "chat_template");
    if (tc) {
        if (cJSON_IsString(tc)) {
            p->tmpl_default = strdup(tc->valuestring);
            if (!p->tmpl_default) return sn_err_set(err, SN_ENOMEM, "out of memory");
            p->tmpl_default_len = strlen(tc->valuestring);
            return SN_OK;
        }
        if (cJSON_IsArray(tc)) return sv_chat_template_list(p, tc, "tokenizer_config.json", err);
        return SN_OK; /* null or a bad type: ignored, as the reference does */
    }
    char *jinja = sn_path_join(in->dir, "chat_template.jinja");
    char *jsonp = sn_path_join(in->dir, "chat_template.json");
    char *adir = sn_path_join(in->dir, "additional_chat_templates");
    char *text = NULL;
    uint64_t len = 0;
    if (!jinja || !jsonp || !adir) {
        st = sn_err_set(err, SN_ENOMEM, "out of memory");
        goto done;
    }
    if (file_exists(jinja)) {
        if ((st = read_text_file(jinja, &text, &len, err))) goto done;
        DIR *d = opendir(adir);
        char *names[MAX_TEMPLATES];
        int n = 0;
        if (d) {
            struct dirent *e;
            while ((e = readdir(d)) && n < MAX_TEMPLATES) {
                size_t l = strlen(e->d_name);
                if (l > 6 && !strcmp(e->d_name + l - 6, ".jinja") && e->d_name[0] != '.') {
                    names[n] = strdup(e->d_name);
                    if (names[n]) n++;
                }
            }
            closedir(d);
        }
        if (n == 0) {
            p->tmpl_default = text;
            p->tmpl_default_len = len;
            text = NULL;
            goto done;
        }
        qsort(names, (size_t)n, sizeof names[0], cmp_str); /* glob order is unspecified; sort */
        st = tmpl_add_named(p, "default", text, len, err);
        for (int i = 0; i < n && !st; i++) {
            char *fp = sn_path_join(adir, names[i]);
            char *t2 = NULL;
            uint64_t l2 = 0;
            if (!fp) {
                st = sn_err_set(err, SN_ENOMEM, "out of memory");
                break;
            }
            st = read_text_file(fp, &t2, &l2, err);
            free(fp);
            if (!st) {
                names[i][strlen(names[i]) - 6] = 0; /* stem */
                st = tmpl_add_named(p, names[i], t2, l2, err);
            }
            free(t2);
        }
        for (int i = 0; i < n; i++) free(names[i]);
        goto done;
    }
    if (file_exists(jsonp)) {
        cJSON *j = NULL;
        if ((st = json_load_opt(in->dir, "chat_template.json", &j, NULL, err))) goto done;
        const cJSON *ct = jget(j, "chat_template");
        if (cJSON_IsString(ct)) {
            p->tmpl_default = strdup(ct->valuestring);
            p->tmpl_default_len = strlen(ct->valuestring);
            if (!p->tmpl_default) st = sn_err_set(err, SN_ENOMEM, "out of memory");
        } else if (cJSON_IsArray(ct)) {
            st = sv_chat_template_list(p, ct, "chat_template.json", err);
        }
        cJSON_Delete(j);
    }
done:
    free(text);
    free(jinja);
    free(jsonp);
    free(adir);
    return st;
}

static sn_status special_vocab(plan *p, inputs *in, sn_err *err) {
    static const char *const base_types[] = {"bos", "eos", "unk", "sep", "pad", "cls", "mask"};
    sn_status st;
    for (size_t i = 0; i < sizeof base_types / sizeof base_types[0]; i++) sv_add_type(p, base_types[i]);
    const cJSON *added = NULL;
    if (in->tok_json) {
        const cJSON *norm = jget(in->tok_json, "normalizer");
        if (py_truthy(norm)) sv_normalizer(p, norm);
        added = jget(in->tok_json, "added_tokens");
        if ((st = sv_post_processor(p, in, err))) return st;
    }
    if (py_truthy(in->tok_config)) {
        if ((st = sv_chat_template(p, in, err))) return st;
        for (int i = 0; i < p->n_types; i++) {
            const char *typ = p->types[i];
            char key[32];
            snprintf(key, sizeof key, "add_%s_token", typ);
            const cJSON *a = jget(in->tok_config, key);
            if (cJSON_IsBool(a)) sv_set_add(p, typ, cJSON_IsTrue(a));
            snprintf(key, sizeof key, "%s_token", typ);
            const cJSON *e = jget(in->tok_config, key);
            const char *content = cJSON_IsString(e) ? e->valuestring : jstr(e, "content");
            if (!content) continue;
            const cJSON *at;
            cJSON_ArrayForEach(at, added) {
                if (py_eq_str(content, jget(at, "content"))) {
                    if ((st = sv_set_id(p, typ, jget(at, "id"), "tokenizer.json added_tokens", err)))
                        return st;
                    break;
                }
            }
        }
    }
    if (in->config) {
        for (int i = 0; i < p->n_types; i++) {
            char key[32];
            snprintf(key, sizeof key, "%s_token_id", p->types[i]);
            const cJSON *v = jget(in->config, key);
            if ((!v || cJSON_IsNull(v)) && jget(in->config, "text_config"))
                v = jget(jget(in->config, "text_config"), key);
            if ((st = sv_set_id(p, p->types[i], v, "config.json", err))) return st;
        }
    }
    return SN_OK;
}

/* ------------------------------------------------------------------------------------------------
 * vocab paths */

/* _create_vocab_sentencepiece(): tokenizer.model + added_tokens.json + added_tokens_decoder */
static sn_status vocab_spm(plan *p, inputs *in, const char *spm_path, sn_err *err) {
    sn_mapped_file b;
    sn_spm_model m;
    sn_status st = sn_map_file(spm_path, &b, err);
    if (st) return st;
    st = sn_spm_parse(b.data, (size_t)b.size, spm_path, &m, err);
    if (st) {
        sn_unmap_file(&b);
        return st;
    }
    size_t n = in->vocab_size > 0 ? (size_t)in->vocab_size : m.n;
    tok_table *t = &p->t;
    if ((st = table_alloc(t, n, 1, err))) goto out;
    for (size_t i = 0; i < n && !st; i++) st = table_pad(t, i, -10000.0f, err);
    for (size_t i = 0; i < m.n && i < n && !st; i++) {
        const sn_spm_piece *pc = &m.pieces[i];
        int tt = TT_NORMAL;
        if (pc->type == SN_SPM_UNKNOWN) tt = TT_UNKNOWN;
        else if (pc->type == SN_SPM_CONTROL) tt = TT_CONTROL;
        else if (pc->type == SN_SPM_UNUSED) tt = TT_UNUSED;
        else if (pc->type == SN_SPM_BYTE) tt = TT_BYTE;
        st = table_set(t, i, pc->piece, pc->len, err);
        t->scores[i] = pc->score;
        t->types[i] = tt;
    }
    if (st) goto out;

    cJSON *atj = NULL;
    if ((st = json_load_opt(in->dir, "added_tokens.json", &atj, NULL, err))) goto out;
    const cJSON *c;
    cJSON_ArrayForEach(c, atj) {
        int64_t id;
        if (!c->string || !jint(c, &id)) {
            st = sn_err_set(err, SN_EFORMAT, "added_tokens.json: entry \"%s\" is not an integer id",
                            c->string ? c->string : "?");
            break;
        }
        if (id < 0 || (uint64_t)id >= n) continue; /* out of range: ignored with a warning upstream */
        if ((st = table_set(t, (size_t)id, c->string, strlen(c->string), err))) break;
        t->scores[id] = -1000.0f;
        t->types[id] = TT_USER_DEFINED;
    }
    cJSON_Delete(atj);
    if (st) goto out;

    cJSON_ArrayForEach(c, jget(in->tok_config, "added_tokens_decoder")) {
        char *endp;
        errno = 0;
        long long id = c->string ? strtoll(c->string, &endp, 10) : -1;
        if (!c->string || errno || endp == c->string || *endp) {
            st = sn_err_set(err, SN_EFORMAT, "tokenizer_config.json: added_tokens_decoder key \"%s\" is not an integer",
                            c->string ? c->string : "?");
            break;
        }
        const char *content = jstr(c, "content");
        if (!content) {
            st = sn_err_set(err, SN_EFORMAT, "tokenizer_config.json: added_tokens_decoder[\"%s\"].content missing",
                            c->string);
            break;
        }
        if (id < 0 || (uint64_t)id >= n) continue;
        if ((st = set_added(t, (size_t)id, content, py_truthy(jget(c, "special")), err))) break;
        t->scores[id] = -1000.0f;
    }
    if (st) goto out;
    p->model = "llama";
    snprintf(p->pre, sizeof p->pre, "default");
    p->n_vocab = (int64_t)n;
out:
    sn_spm_free(&m);
    sn_unmap_file(&b);
    return st;
}

/* Splits a merge into its two parts: "a b" at the first ' ' at or after byte 1 (as llama.cpp), or a
 * ["a","b"] pair. */
static int merge_parts(const cJSON *m, const char **a, size_t *la, const char **b, size_t *lb) {
    if (cJSON_IsString(m)) {
        const char *s = m->valuestring;
        if (!s[0]) return 0;
        const char *sp = strchr(s + 1, ' ');
        if (!sp) return 0;
        *a = s;
        *la = (size_t)(sp - s);
        *b = sp + 1;
        *lb = strlen(sp + 1);
        return 1;
    }
    if (cJSON_IsArray(m) && cJSON_GetArraySize(m) == 2) {
        const cJSON *x = cJSON_GetArrayItem(m, 0), *y = cJSON_GetArrayItem(m, 1);
        if (!cJSON_IsString(x) || !cJSON_IsString(y)) return 0;
        *a = x->valuestring;
        *la = strlen(*a);
        *b = y->valuestring;
        *lb = strlen(*b);
        return 1;
    }
    return 0;
}

/* ---- a string -> id hash map for vocab lookups ---- */
typedef struct { const char *s; size_t len; int64_t id; } hent;
typedef struct { hent *e; size_t cap; } hmap;

static uint64_t fnv(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static int hmap_init(hmap *m, size_t n) {
    m->cap = 16;
    while (m->cap < n * 2 + 16) m->cap *= 2;
    m->e = calloc(m->cap, sizeof *m->e);
    return m->e != NULL;
}

static hent *hmap_slot(hmap *m, const char *s, size_t n) {
    size_t i = (size_t)fnv(s, n) & (m->cap - 1);
    while (m->e[i].s && !(m->e[i].len == n && !memcmp(m->e[i].s, s, n))) i = (i + 1) & (m->cap - 1);
    return &m->e[i];
}

/* Scores for a byte_fallback BPE read by llama.cpp's SPM tokenizer: token t made by merge rank r
 * (first such merge) gets -r, so the merge HF applies first is the pair llama.cpp merges first;
 * tokens no merge produces get -n_merges (below every merge). See docs/TOKENIZER.md. */
static sn_status rank_scores(tok_table *t, const cJSON *merges, sn_err *err) {
    uint64_t n_merges = (uint64_t)cJSON_GetArraySize(merges);
    if (n_merges >= (1u << 24))
        return sn_err_set(err, SN_EUNSUPPORTED,
                          "tokenizer.json: %" PRIu64 " merges; ranks above 2^24 are not exact as f32 scores",
                          n_merges);
    hmap m;
    if (!hmap_init(&m, t->n)) return sn_err_set(err, SN_ENOMEM, "out of memory");
    for (size_t i = 0; i < t->n; i++) {
        hent *e = hmap_slot(&m, t->tok[i], t->len[i]);
        if (!e->s) *e = (hent){t->tok[i], t->len[i], (int64_t)i};
        t->scores[i] = -(float)n_merges;
    }
    char *tmp = NULL;
    size_t cap = 0;
    uint64_t r = 0;
    const cJSON *mg;
    sn_status st = SN_OK;
    cJSON_ArrayForEach(mg, merges) {
        const char *a, *b;
        size_t la, lb;
        if (!merge_parts(mg, &a, &la, &b, &lb)) {
            st = sn_err_set(err, SN_EFORMAT, "tokenizer.json: model.merges[%" PRIu64 "] is malformed", r);
            break;
        }
        if (la + lb + 1 > cap) {
            cap = (la + lb + 1) * 2;
            char *nt = realloc(tmp, cap);
            if (!nt) {
                st = sn_err_set(err, SN_ENOMEM, "out of memory");
                break;
            }
            tmp = nt;
        }
        memcpy(tmp, a, la);
        memcpy(tmp + la, b, lb);
        hent *e = hmap_slot(&m, tmp, la + lb);
        if (e->s && t->scores[e->id] < -(float)r) t->scores[e->id] = -(float)r;
        r++;
    }
    free(tmp);
    free(m.e);
    return st;
}

/* Content -> id of tokenizer.json's added tokens (the last entry wins, as in a dict). */
static sn_status added_map(const cJSON *added, hmap *m, sn_err *err) {
    if (!hmap_init(m, (size_t)cJSON_GetArraySize(added))) return sn_err_set(err, SN_ENOMEM, "out of memory");
    const cJSON *c;
    cJSON_ArrayForEach(c, added) {
        const char *s = jstr(c, "content");
        int64_t id;
        if (!s || !jint(jget(c, "id"), &id)) continue;
        hent *e = hmap_slot(m, s, strlen(s));
        *e = (hent){s, strlen(s), id};
    }
    return SN_OK;
}

/* A vocab string that is also an added token under another id: transformers' get_vocab() keeps
 * only the added one, so the base id has no token (llama.cpp's converter writes [PAD{id}] there).
 * Writing the string twice would make llama.cpp abort on duplicate tokens. */
static int shadowed(hmap *m, const char *s, int64_t id) {
    hent *e = hmap_slot(m, s, strlen(s));
    return e->s && e->id != id;
}

/* Content -> id among model.vocab and added_tokens (added win), for special-token lookups. */
static int64_t lookup_id(const cJSON *vocab, const cJSON *added, const char *content) {
    const cJSON *a;
    cJSON_ArrayForEach(a, added) if (py_eq_str(content, jget(a, "content"))) {
        int64_t id;
        if (jint(jget(a, "id"), &id)) return id;
    }
    int64_t id;
    if (jint(jget(vocab, content), &id)) return id;
    return -1;
}

/* LlamaHfVocab: tokenizer.json BPE with byte_fallback -> model "llama" (scores from merge ranks). */
static sn_status vocab_llama_hf(plan *p, inputs *in, sn_err *err) {
    const cJSON *model = jget(in->tok_json, "model");
    const cJSON *vocab = jget(model, "vocab");
    const cJSON *added = jget(in->tok_json, "added_tokens");
    const cJSON *merges = jget(model, "merges");
    sn_status st;
    if (!cJSON_IsObject(vocab))
        return sn_err_set(err, SN_EFORMAT, "tokenizer.json: model.vocab is not an object");
    if (!cJSON_IsArray(merges))
        return sn_err_set(err, SN_EFORMAT, "tokenizer.json: model.merges is not an array");
    size_t n_base = (size_t)cJSON_GetArraySize(vocab), n = n_base;
    const cJSON *c;
    cJSON_ArrayForEach(c, vocab) {
        int64_t id;
        if (!jint(c, &id) || id < 0 || (uint64_t)id >= n_base)
            return sn_err_set(err, SN_EFORMAT, "tokenizer.json: model.vocab[\"%s\"] = id outside 0..%zu",
                              c->string, n_base - 1);
    }
    cJSON_ArrayForEach(c, added) {
        int64_t id;
        if (!jint(jget(c, "id"), &id) || id < 0 || !jstr(c, "content"))
            return sn_err_set(err, SN_EFORMAT, "tokenizer.json: added_tokens entry without a valid id/content");
        if (id >= SN_VOCAB_MAX || (id >= (int64_t)n_base + cJSON_GetArraySize(added) && id >= in->vocab_size))
            return sn_err_set(err, SN_EFORMAT,
                              "tokenizer.json: added token \"%s\" has id %" PRId64 ", beyond the %zu base tokens + "
                              "added tokens and config.json vocab_size", jstr(c, "content"), id, n_base);
        if ((size_t)id + 1 > n) n = (size_t)id + 1;
    }
    if (in->vocab_size > 0 && (size_t)in->vocab_size > n) n = (size_t)in->vocab_size;
    tok_table *t = &p->t;
    if ((st = table_alloc(t, n, 1, err))) return st;
    for (size_t i = 0; i < n && !st; i++) st = table_pad(t, i, 0.0f, err);
    hmap am;
    if ((st = added_map(added, &am, err))) return st;
    cJSON_ArrayForEach(c, vocab) {
        if (st) break;
        size_t id = (size_t)c->valuedouble;
        if (shadowed(&am, c->string, (int64_t)id)) continue;
        table_ref(t, id, c->string);
        t->types[id] = TT_NORMAL;
    }
    free(am.e);
    if (st) return st;
    /* all_special_ids: the tokenizer_config special-token attributes + additional_special_tokens;
     * sunny also counts added tokens marked special (HF matches them atomically; see TOKENIZER.md). */
    static const char *const attrs[] = {"bos_token", "eos_token", "unk_token", "sep_token",
                                        "pad_token", "cls_token", "mask_token"};
    unsigned char *special = calloc(n, 1);
    if (!special) return sn_err_set(err, SN_ENOMEM, "out of memory");
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        const cJSON *e = jget(in->tok_config, attrs[i]);
        const char *s = cJSON_IsString(e) ? e->valuestring : jstr(e, "content");
        int64_t id = s ? lookup_id(vocab, added, s) : -1;
        if (id >= 0 && (size_t)id < n) special[id] = 1;
    }
    cJSON_ArrayForEach(c, jget(in->tok_config, "additional_special_tokens")) {
        const char *s = cJSON_IsString(c) ? c->valuestring : jstr(c, "content");
        int64_t id = s ? lookup_id(vocab, added, s) : -1;
        if (id >= 0 && (size_t)id < n) special[id] = 1;
    }
    cJSON_ArrayForEach(c, added) {
        int64_t id = 0;
        jint(jget(c, "id"), &id);
        const char *content = jstr(c, "content");
        if (py_truthy(jget(c, "special"))) special[id] = 1;
        if ((size_t)id >= n_base) { /* an added token beyond the base vocab */
            st = table_set(t, (size_t)id, content, strlen(content), err);
            t->types[id] = special[id] ? TT_CONTROL : TT_USER_DEFINED;
        } else {
            st = table_set(t, (size_t)id, content, strlen(content), err);
        }
        if (st) break;
    }
    for (size_t i = 0; i < n_base && !st; i++) {
        const char *s = t->tok[i];
        if (t->len[i] == 6 && !memcmp(s, "<0x", 3) && s[5] == '>' && isxdigit((unsigned char)s[3]) &&
            isxdigit((unsigned char)s[4]))
            t->types[i] = TT_BYTE;
        else if (special[i])
            t->types[i] = TT_CONTROL;
        else if (t->types[i] != TT_UNUSED)
            t->types[i] = TT_NORMAL;
    }
    free(special);
    if (st) return st;
    if ((st = rank_scores(t, merges, err))) return st;
    p->model = "llama";
    snprintf(p->pre, sizeof p->pre, "default");
    p->n_vocab = (int64_t)n;
    return SN_OK;
}

/* merges as llama.cpp stores them: "a b", spaces inside a part of a [a,b] pair encoded as 'Ġ'. */
static const char *merge_string(tok_table *t, const cJSON *m) {
    if (cJSON_IsString(m)) return m->valuestring; /* borrowed, like the vocab strings */
    const char *a, *b;
    size_t la, lb;
    if (!merge_parts(m, &a, &la, &b, &lb)) return NULL;
    size_t spaces = 0;
    for (size_t i = 0; i < la; i++) spaces += a[i] == ' ';
    for (size_t i = 0; i < lb; i++) spaces += b[i] == ' ';
    char *r = table_str_alloc(t, la + lb + spaces + 2), *o = r;
    if (!r) return NULL;
    for (int part = 0; part < 2; part++) {
        const char *s = part ? b : a;
        size_t l = part ? lb : la;
        if (part) *o++ = ' ';
        for (size_t i = 0; i < l; i++) {
            if (s[i] == ' ') {
                *o++ = (char)0xc4; /* U+0120 'Ġ' */
                *o++ = (char)0xa0;
            } else {
                *o++ = s[i];
            }
        }
    }
    *o = 0;
    return r;
}

static sn_status merges_from_txt(plan *p, inputs *in, sn_err *err) {
    char *path = sn_path_join(in->dir, "merges.txt");
    if (!path) return sn_err_set(err, SN_ENOMEM, "out of memory");
    if (!file_exists(path)) {
        free(path);
        return SN_OK;
    }
    char *text = NULL;
    uint64_t len = 0;
    sn_status st = read_text_file(path, &text, &len, err);
    if (st) {
        free(path);
        return st;
    }
    uint64_t lines = 1;
    for (uint64_t i = 0; i < len; i++) lines += text[i] == '\n';
    p->t.merges = calloc(lines, sizeof *p->t.merges);
    if (!p->t.merges) st = sn_err_set(err, SN_ENOMEM, "out of memory");
    char *save = NULL;
    int first = 1;
    for (char *line = st ? NULL : strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        while (*line == ' ' || *line == '\t' || *line == '\r') line++;
        size_t l = strlen(line);
        while (l && (line[l - 1] == ' ' || line[l - 1] == '\t' || line[l - 1] == '\r')) line[--l] = 0;
        if (first && line[0] == '#') {
            first = 0;
            continue;
        }
        first = 0;
        if (!l) continue;
        char *a = line, *sp = strpbrk(a, " \t");
        if (!sp) continue; /* malformed line: skipped, as the reference */
        char *b = sp;
        while (*b == ' ' || *b == '\t') b++;
        if (strpbrk(b, " \t")) continue;
        size_t la = (size_t)(sp - a), lb = strlen(b);
        char *m = table_str_alloc(&p->t, la + lb + 2);
        if (!m) {
            st = sn_err_set(err, SN_ENOMEM, "out of memory");
            break;
        }
        memcpy(m, a, la);
        m[la] = ' ';
        memcpy(m + la + 1, b, lb + 1);
        p->t.merges[p->t.n_merges++] = m;
    }
    free(text);
    free(path);
    return st;
}

/* get_vocab_base() + _set_vocab_gpt2(): byte-level BPE -> model "gpt2". */
static sn_status vocab_gpt2(plan *p, inputs *in, const sn_vocab_opts *opts, sn_err *err) {
    const cJSON *model = jget(in->tok_json, "model");
    const cJSON *vocab = jget(model, "vocab");
    const cJSON *added = jget(in->tok_json, "added_tokens");
    sn_status st;
    const char *mtype = jstr(model, "type");
    if (!mtype || strcmp(mtype, "BPE") != 0)
        return sn_err_set(err, SN_EUNSUPPORTED,
                          "tokenizer.json: model.type is \"%s\"; only BPE tokenizers (or a tokenizer.model) "
                          "are supported", mtype ? mtype : "(missing)");
    if (!cJSON_IsObject(vocab))
        return sn_err_set(err, SN_EFORMAT, "tokenizer.json: model.vocab is not an object");
    /* pre-tokenizer name first: it is the most likely failure and the cheapest */
    if (opts && opts->pre_override) {
        if (!sn_pretok_known_name(opts->pre_override))
            return sn_err_set(err, SN_EINVAL, "--pre %s: llama.cpp does not know this pre-tokenizer",
                              opts->pre_override);
        snprintf(p->pre, sizeof p->pre, "%s", opts->pre_override);
    } else if ((st = sn_pretok_fingerprint(in->tok_json, in->tok_config, "tokenizer.json", p->pre,
                                           sizeof p->pre, err))) {
        if (cJSON_IsTrue(jget(model, "byte_fallback")) && err) {
            /* a SentencePiece-style BPE that is not in the legacy Llama-2 layout (e.g. a Metaspace
             * pre-tokenizer): neither sunny nor llama.cpp's converter reads it from tokenizer.json */
            size_t l = strlen(err->msg);
            snprintf(err->msg + l, sizeof err->msg - l,
                     "; this is a SentencePiece-style tokenizer (byte_fallback): put the model's "
                     "tokenizer.model next to it");
        }
        return st;
    }
    /* vocab_size = config.vocab_size else len(vocab with added tokens). Which added contents are
     * in the vocab is found by one pass over the vocab against a small hash set of the added
     * contents (id field: 1 = seen in the vocab): cJSON's object lookup is a linear strcmp scan,
     * and 256 added tokens x 128K vocab entries cost ~100 ms. */
    int64_t max_id = -1, n_distinct = cJSON_GetArraySize(vocab);
    const cJSON *c;
    hmap av;
    if (!hmap_init(&av, (size_t)cJSON_GetArraySize(added))) return sn_err_set(err, SN_ENOMEM, "out of memory");
    cJSON_ArrayForEach(c, added) {
        const char *content = jstr(c, "content");
        if (!content) continue;
        hent *e = hmap_slot(&av, content, strlen(content));
        if (!e->s) *e = (hent){content, strlen(content), 0};
    }
    cJSON_ArrayForEach(c, vocab) {
        int64_t id;
        if (!jint(c, &id) || id < 0 || id >= SN_VOCAB_MAX) {
            free(av.e);
            return sn_err_set(err, SN_EFORMAT, "tokenizer.json: model.vocab[\"%s\"] is not a valid id",
                              c->string);
        }
        if (id > max_id) max_id = id;
        hent *e = hmap_slot(&av, c->string, strlen(c->string));
        if (e->s) e->id = 1;
    }
    cJSON_ArrayForEach(c, added) {
        int64_t id;
        const char *content = jstr(c, "content");
        if (!jint(jget(c, "id"), &id) || id < 0 || id >= SN_VOCAB_MAX || !content) {
            free(av.e);
            return sn_err_set(err, SN_EFORMAT, "tokenizer.json: added_tokens entry without a valid id/content");
        }
        if (id > max_id) max_id = id;
        if (!hmap_slot(&av, content, strlen(content))->id) n_distinct++;
    }
    free(av.e);
    int64_t n = in->vocab_size > 0 ? in->vocab_size : n_distinct;
    if (max_id >= n)
        return sn_err_set(err, SN_EFORMAT,
                          "tokenizer.json: token id %" PRId64 " is not below the vocabulary size %" PRId64
                          " (config.json vocab_size)", max_id, n);
    tok_table *t = &p->t;
    if ((st = table_alloc(t, (size_t)n, 0, err))) return st;
    for (int64_t i = 0; i < n && !st; i++) st = table_pad(t, (size_t)i, 0, err);
    hmap am;
    if ((st = added_map(added, &am, err))) return st;
    cJSON_ArrayForEach(c, vocab) {
        if (st) break;
        size_t id = (size_t)c->valuedouble;
        if (shadowed(&am, c->string, (int64_t)id)) continue;
        table_ref(t, id, c->string);
        t->types[id] = TT_NORMAL;
    }
    free(am.e);
    cJSON_ArrayForEach(c, added) {
        if (st) break;
        int64_t id = 0;
        jint(jget(c, "id"), &id);
        st = set_added(t, (size_t)id, jstr(c, "content"), py_truthy(jget(c, "special")), err);
    }
    if (st) return st;
    /* merges: tokenizer.json model.merges, else merges.txt */
    const cJSON *merges = jget(model, "merges");
    int nm = cJSON_IsArray(merges) ? cJSON_GetArraySize(merges) : 0;
    if (nm > 0) {
        const cJSON *m0 = cJSON_GetArrayItem(merges, 0);
        if (!cJSON_IsString(m0) && !(cJSON_IsArray(m0) && cJSON_GetArraySize(m0) == 2 &&
                                      cJSON_IsString(cJSON_GetArrayItem(m0, 0))))
            return sn_err_set(err, SN_EFORMAT, "tokenizer.json: unknown model.merges format");
        t->merges = calloc((size_t)nm, sizeof *t->merges);
        if (!t->merges) return sn_err_set(err, SN_ENOMEM, "out of memory");
        cJSON_ArrayForEach(c, merges) {
            const char *s = merge_string(t, c);
            if (!s)
                return sn_err_set(err, SN_EFORMAT, "tokenizer.json: model.merges[%" PRIu64 "] is malformed",
                                  t->n_merges);
            t->merges[t->n_merges++] = s;
        }
    } else if ((st = merges_from_txt(p, in, err))) {
        return st;
    }
    if (t->n_merges == 0)
        return sn_err_set(err, SN_EFORMAT,
                          "tokenizer.json: no merges (model.merges empty and no merges.txt); llama.cpp "
                          "cannot load a gpt2 vocabulary without tokenizer.ggml.merges");
    p->model = "gpt2";
    p->n_vocab = -1;
    return SN_OK;
}

/* ------------------------------------------------------------------------------------------------
 * writing */

static const char *id_key(const char *typ) {
    if (!strcmp(typ, "bos")) return "tokenizer.ggml.bos_token_id";
    if (!strcmp(typ, "eos")) return "tokenizer.ggml.eos_token_id";
    if (!strcmp(typ, "unk")) return "tokenizer.ggml.unknown_token_id";
    if (!strcmp(typ, "sep")) return "tokenizer.ggml.seperator_token_id";
    if (!strcmp(typ, "pad")) return "tokenizer.ggml.padding_token_id";
    if (!strcmp(typ, "mask")) return "tokenizer.ggml.mask_token_id";
    if (!strcmp(typ, "eot")) return "tokenizer.ggml.eot_token_id";
    if (!strcmp(typ, "eom")) return "tokenizer.ggml.eom_token_id";
    return NULL; /* cls: no GGUF key */
}

static const char *add_key(const char *typ) {
    if (!strcmp(typ, "bos")) return "tokenizer.ggml.add_bos_token";
    if (!strcmp(typ, "eos")) return "tokenizer.ggml.add_eos_token";
    if (!strcmp(typ, "sep")) return "tokenizer.ggml.add_sep_token";
    return NULL;
}

static sn_status emit(const plan *p, sn_gguf_writer *w, sn_err *err) {
    sn_status st = SN_OK;
#define TRY(x)                                                                                    \
    do {                                                                                          \
        if ((st = (x))) return sn_err_set(err, st, "writing tokenizer metadata: %s", sn_status_str(st)); \
    } while (0)
    if (p->space_prefix >= 0) TRY(sn_gguf_writer_set_bool(w, "tokenizer.ggml.add_space_prefix", p->space_prefix));
    TRY(sn_gguf_writer_set_str(w, "tokenizer.ggml.model", p->model));
    TRY(sn_gguf_writer_set_str(w, "tokenizer.ggml.pre", p->pre));
    TRY(sn_gguf_writer_set_arr_str(w, "tokenizer.ggml.tokens", (const char *const *)p->t.tok, p->t.len, p->t.n));
    if (p->t.scores) TRY(sn_gguf_writer_set_arr(w, "tokenizer.ggml.scores", SN_GGUF_F32, p->t.scores, p->t.n));
    TRY(sn_gguf_writer_set_arr(w, "tokenizer.ggml.token_type", SN_GGUF_I32, p->t.types, p->t.n));
    if (p->t.n_merges)
        TRY(sn_gguf_writer_set_arr_str(w, "tokenizer.ggml.merges", (const char *const *)p->t.merges, NULL,
                                       p->t.n_merges));
    for (int i = 0; i < p->n_ids; i++) {
        const char *k = id_key(p->ids[i].typ);
        if (k) TRY(sn_gguf_writer_set_u32(w, k, (uint32_t)p->ids[i].id));
    }
    for (int i = 0; i < p->n_adds; i++) {
        const char *k = add_key(p->adds[i].typ);
        if (k) TRY(sn_gguf_writer_set_bool(w, k, p->adds[i].v));
    }
    if (p->n_tmpl) {
        const char *names[MAX_TEMPLATES];
        for (int i = 0; i < p->n_tmpl; i++) {
            char key[300];
            snprintf(key, sizeof key, "tokenizer.chat_template.%s", p->tmpl[i].name);
            TRY(sn_gguf_writer_set_strn(w, key, p->tmpl[i].text, p->tmpl[i].len));
            names[i] = p->tmpl[i].name;
        }
        TRY(sn_gguf_writer_set_arr_str(w, "tokenizer.chat_templates", names, NULL, (uint64_t)p->n_tmpl));
    }
    if (p->tmpl_default) TRY(sn_gguf_writer_set_strn(w, "tokenizer.chat_template", p->tmpl_default, p->tmpl_default_len));
    if (p->norm_lowercase >= 0) TRY(sn_gguf_writer_set_bool(w, "tokenizer.ggml.normalizer.lowercase", p->norm_lowercase));
    if (p->norm_strip_accents >= 0)
        TRY(sn_gguf_writer_set_bool(w, "tokenizer.ggml.normalizer.strip_accents", p->norm_strip_accents));
    if (p->codellama_eot) TRY(sn_gguf_writer_set_u32(w, "tokenizer.ggml.eot_token_id", 32010));
    if (p->granite_no_bos) TRY(sn_gguf_writer_set_bool(w, "tokenizer.ggml.add_bos_token", 0));
#undef TRY
    return SN_OK;
}

/* ------------------------------------------------------------------------------------------------ */

static int is_llama_family(const char *arch) {
    /* the architecture table says which set_vocab the family follows; a folder of an architecture
     * we do not convert (vocab-only use) is read as LlamaModel.set_vocab reads it */
    const sn_arch *a = sn_arch_find(arch);
    return !a || a->vocab == SN_ARCH_VOCAB_LLAMA;
}

sn_status sn_vocab_write_gguf(const char *model_dir, const struct sn_hf_config *cfg,
                              sn_gguf_writer *w, const sn_vocab_opts *opts, sn_vocab_report *rep,
                              sn_err *err) {
    if (!model_dir || !w) return sn_err_set(err, SN_EINVAL, "sn_vocab_write_gguf: missing argument");
    plan p;
    memset(&p, 0, sizeof p);
    p.space_prefix = p.norm_lowercase = p.norm_strip_accents = -1;
    inputs in = {.dir = model_dir, .vocab_size = -1};
    json_arena tok_arena = {0};
    char *spm_path = NULL, *tj_path = NULL;
    sn_status st;

    if ((st = json_load_opt(model_dir, "tokenizer.json", &in.tok_json, &tok_arena, err))) goto out;
    if ((st = json_load_opt(model_dir, "tokenizer_config.json", &in.tok_config, NULL, err))) goto out;
    /* with a parsed config (the converter's), its tree is used: it already has the family's
     * completions (Mamba-2's padded vocab_size) and Python json's Infinity/NaN */
    if (cfg && cfg->root) in.config = cfg->root;
    else if ((st = json_load_opt(model_dir, "config.json", &in.config, NULL, err))) goto out;
    {
        int64_t vs;
        if (cfg && cfg->vocab_size > 0) in.vocab_size = cfg->vocab_size;
        else if (jint(jget(in.config, "vocab_size"), &vs) && vs > 0) in.vocab_size = vs;
        if (in.vocab_size > SN_VOCAB_MAX) {
            st = sn_err_set(err, SN_EFORMAT, "config.json: vocab_size %" PRId64 " is larger than %d",
                            in.vocab_size, SN_VOCAB_MAX);
            goto out;
        }
        const cJSON *archs = jget(in.config, "architectures");
        const cJSON *a0 = cJSON_GetArrayItem(archs, 0);
        const char *arch = cJSON_IsString(a0) ? a0->valuestring : (cfg ? cfg->architecture : NULL);
        in.llama_family = is_llama_family(arch);
        const sn_arch *fam = sn_arch_find(arch);
        if (fam && fam->vocab == SN_ARCH_VOCAB_RWKV) { /* a vocabulary file of its own */
            st = sn_vocab_rwkv_write(model_dir, in.config, in.vocab_size, w, rep, err);
            goto out;
        }
    }
    if (in.tok_config && !cJSON_IsObject(in.tok_config)) {
        st = sn_err_set(err, SN_EFORMAT, "tokenizer_config.json: not a JSON object");
        goto out;
    }
    if (in.tok_json && !cJSON_IsObject(in.tok_json)) {
        st = sn_err_set(err, SN_EFORMAT, "tokenizer.json: not a JSON object");
        goto out;
    }

    if (in.llama_family) {
        const cJSON *aps = jget(in.tok_config, "add_prefix_space");
        if (cJSON_IsBool(aps)) p.space_prefix = cJSON_IsTrue(aps);
    }
    spm_path = sn_path_join(model_dir, "tokenizer.model");
    tj_path = sn_path_join(model_dir, "tokenizer.json");
    if (!spm_path || !tj_path) {
        st = sn_err_set(err, SN_ENOMEM, "out of memory");
        goto out;
    }
    if (file_exists(spm_path)) {
        st = vocab_spm(&p, &in, spm_path, err);
    } else if (!in.tok_json) {
        st = sn_err_set(err, SN_EFORMAT, "%s: no tokenizer: neither tokenizer.model nor tokenizer.json exists",
                        model_dir);
    } else {
        const cJSON *m = jget(in.tok_json, "model");
        const char *mtype = jstr(m, "type");
        const cJSON *bf = jget(m, "byte_fallback");
        int is_bpe = mtype && !strcmp(mtype, "BPE");
        int is_llama3 = is_bpe && cJSON_IsTrue(jget(m, "ignore_merges")) && cJSON_IsFalse(bf);
        const char *dec = jstr(jget(in.tok_json, "decoder"), "type");
        if (in.llama_family && !is_llama3 && is_bpe && cJSON_IsTrue(bf) && dec && !strcmp(dec, "Sequence"))
            st = vocab_llama_hf(&p, &in, err);
        else
            st = vocab_gpt2(&p, &in, opts, err);
    }
    if (st) goto out;
    if ((st = special_vocab(&p, &in, err))) goto out;
    if (in.llama_family) {
        p.codellama_eot = in.vocab_size == 32016;
        p.granite_no_bos = in.vocab_size == 49152;
    }
    if ((st = emit(&p, w, err))) goto out;
    if (rep) {
        memset(rep, 0, sizeof *rep);
        snprintf(rep->model, sizeof rep->model, "%s", p.model);
        snprintf(rep->pre, sizeof rep->pre, "%s", p.pre);
        rep->n_tokens = (int)p.t.n;
    }
out:
    /* name the folder once, unless the message already carries a full path */
    if (st && err && strncmp(err->msg, model_dir, strlen(model_dir)) != 0) sn_err_prefix(err, "%s", model_dir);
    free(spm_path);
    free(tj_path);
    if (tok_arena.base) json_arena_release(&tok_arena); /* the tree of tokenizer.json */
    else cJSON_Delete(in.tok_json);
    cJSON_Delete(in.tok_config);
    if (!cfg || in.config != cfg->root) cJSON_Delete(in.config);
    plan_free(&p);
    return st;
}
