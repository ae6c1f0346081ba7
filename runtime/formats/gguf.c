/* gguf.c - GGUF reader (mmap, validated up front); the format is in gguf.h.
 *
 * The reader walks the header once, checking every count, length, type, shape and offset against
 * the bytes that are actually there (the rules of llama.cpp's ggml/src/gguf.cpp, plus UTF-8 checks
 * on keys and tensor names), and records pointers into the mapping. Nothing is allocated from a
 * count before the count is known to fit in the file, so a hostile header cannot make us allocate
 * more than a small multiple of the file size. The streaming writer is gguf_write.c; what the two
 * share (value sizes, the UTF-8 rule, padding, the name index) is in gguf_internal.h. */
#include "gguf_internal.h"
#include "budget.h"

#include "ggml_types.h"
#include "mapfile.h"
#include "utf8.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STRING_LEN SN_BUDGET_GGUF_STRING /* llama.cpp's limits: 1 GiB per string, */
#define MAX_ARRAY_LEN SN_BUDGET_GGUF_ARRAY   /* 2^30 elements per array */

static const char *const k_type_names[SN_GGUF_TYPE_COUNT] = {
    "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64"};
const uint8_t sn_gguf_scalar_size[SN_GGUF_TYPE_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

const char *sn_gguf_type_name(sn_gguf_type t) {
    return (unsigned)t < SN_GGUF_TYPE_COUNT ? k_type_names[t] : "invalid";
}

/* llama.cpp's rule for keys and tensor names (gguf_internal.h): well-formed UTF-8 without NUL */
uint64_t sn_gguf_utf8_bad_at(const uint8_t *s, uint64_t len) {
    uint64_t i = 0;
    uint32_t cp;
    for (size_t l; i < len && (l = sn_utf8_decode(s + i, len - i, &cp)) != 0 && cp != 0;) i += l;
    return i;
}

/* FNV-1a; used by the name -> index tables. */
static uint64_t hash_bytes(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) { h ^= (uint8_t)s[i]; h *= 1099511628211ull; }
    return h;
}

/* Open-addressing table of indices into an array of names (lookup by NUL-terminated name). The
 * entries are always 0..count-1, so the table can be rebuilt from the names when it grows; it
 * grows with the parsed data, never from a count read from the file. */
static const char *name_at(const char *const *names, size_t stride, int64_t i) {
    return *(const char *const *)((const char *)names + (size_t)i * stride);
}

static void index_insert(name_index *ix, const char *name, int64_t idx) {
    uint64_t h = hash_bytes(name, strlen(name)) & (ix->cap - 1);
    while (ix->slot[h] >= 0) h = (h + 1) & (ix->cap - 1);
    ix->slot[h] = idx;
}

/* Returns the existing index for name, -1 after inserting idx (== count), -2 when out of memory. */
int64_t sn_gguf_index_put(name_index *ix, const char *name, int64_t idx, const char *const *names,
                         size_t stride) {
    if ((ix->count + 1) * 2 > ix->cap) {
        uint64_t cap = ix->cap ? ix->cap * 2 : 16;
        int64_t *slot = malloc(cap * sizeof *slot);
        if (!slot) return -2;
        for (uint64_t i = 0; i < cap; i++) slot[i] = -1;
        free(ix->slot);
        ix->slot = slot;
        ix->cap = cap;
        for (uint64_t i = 0; i < ix->count; i++) index_insert(ix, name_at(names, stride, (int64_t)i), (int64_t)i);
    }
    uint64_t h = hash_bytes(name, strlen(name)) & (ix->cap - 1);
    for (;;) {
        int64_t s = ix->slot[h];
        if (s < 0) break;
        if (strcmp(name_at(names, stride, s), name) == 0) return s;
        h = (h + 1) & (ix->cap - 1);
    }
    ix->slot[h] = idx;
    ix->count++;
    return -1;
}

static int64_t index_get(const name_index *ix, const char *name, const char *const *names,
                         size_t stride) {
    if (!ix->slot) return -1;
    uint64_t h = hash_bytes(name, strlen(name)) & (ix->cap - 1);
    for (;;) {
        int64_t s = ix->slot[h];
        if (s < 0) return -1;
        if (strcmp(name_at(names, stride, s), name) == 0) return s;
        h = (h + 1) & (ix->cap - 1);
    }
}

/* ================================================================================================
 * Reader */
typedef struct gguf_kv {
    char *key;              /* first member: name_index reads it */
    sn_gguf_type type;      /* SN_GGUF_ARR for arrays */
    sn_gguf_type arr_type;
    uint64_t n;             /* array element count (1 for scalars) */
    const uint8_t *val;     /* scalar bytes / first array element / string length field */
    uint64_t *str_off;      /* string arrays: file offset of each element's u64 length */
    uint64_t raw_off, raw_len;
} gguf_kv;

struct sn_gguf {
    const uint8_t *base;
    uint64_t size;
    sn_mapped_file map;     /* zeroed for an in-memory GGUF */
    uint32_t version, alignment;
    uint64_t data_off;
    int64_t n_kv, n_tensors;
    gguf_kv *kv;
    sn_gguf_tensor *t;
    uint64_t *t_off_pos;    /* file offset of each tensor info's offset field (for errors) */
    name_index kv_ix, t_ix;
    sn_gguf **parts;        /* a split model opened by its first part: the other parts, whose
                             * tensors are appended to t */
    int64_t n_parts;
};

typedef struct {
    const uint8_t *b;
    uint64_t size, pos;
    const char *fname;
    sn_err *err;
    char field[256]; /* what is being read, for error messages */
} cursor;

__attribute__((format(printf, 3, 4))) static sn_status fail(cursor *c, uint64_t off,
                                                             const char *fmt, ...) {
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return sn_err_set(c->err, SN_EFORMAT, "%s: %s: %s (at byte %" PRIu64 ")", c->fname, c->field,
                      what, off);
}

static sn_status need(cursor *c, uint64_t n) {
    if (n > c->size - c->pos)
        return fail(c, c->pos, "truncated: needs %" PRIu64 " bytes, file has %" PRIu64 " left", n,
                    c->size - c->pos);
    return SN_OK;
}

/* the next n bytes, as they are in the file (little-endian, as this host) */
static sn_status rd_raw(cursor *c, void *v, uint64_t n) {
    sn_status st = need(c, n);
    if (st) return st;
    memcpy(v, c->b + c->pos, n);
    c->pos += n;
    return SN_OK;
}
static sn_status rd_u32(cursor *c, uint32_t *v) { return rd_raw(c, v, 4); }
static sn_status rd_u64(cursor *c, uint64_t *v) { return rd_raw(c, v, 8); }

/* A string: u64 length + bytes. *s points into the buffer. */
static sn_status rd_str(cursor *c, const uint8_t **s, uint64_t *len) {
    uint64_t at = c->pos;
    sn_status st = rd_u64(c, len);
    if (st) return st;
    if (*len > MAX_STRING_LEN)
        return fail(c, at, "string length %" PRIu64 " exceeds llama.cpp's limit of 1 GiB (SN_BUDGET_GGUF_STRING, budget.h)", *len);
    if (*len > c->size - c->pos)
        return fail(c, at, "string length %" PRIu64 " exceeds the %" PRIu64 " bytes left in the file",
                    *len, c->size - c->pos);
    *s = c->b + c->pos;
    c->pos += *len;
    return SN_OK;
}

/* A name (key or tensor name): a string that is valid UTF-8 without NUL; returns a malloc'd copy. */
int sn_gguf_utf8_ok(const char *s, uint64_t n) { return sn_gguf_utf8_bad_at((const uint8_t *)s, n) == n; }

static sn_status rd_name(cursor *c, const char *what, uint64_t max_len, char **out) {
    const uint8_t *s;
    uint64_t len, at = c->pos;
    sn_status st = rd_str(c, &s, &len);
    if (st) return st;
    if (len == 0 && max_len == 0) return fail(c, at, "%s is empty", what);
    if (max_len && len >= max_len)
        return fail(c, at, "%s is %" PRIu64 " bytes, the limit is %" PRIu64, what, len, max_len - 1);
    uint64_t bad = sn_gguf_utf8_bad_at(s, len);
    if (bad < len)
        return fail(c, at + 8 + bad, "%s has %s at byte %" PRIu64 " of the name", what,
                    s[bad] ? "invalid UTF-8" : "a NUL byte", bad);
    *out = malloc(len + 1);
    if (!*out) return sn_err_set(c->err, SN_ENOMEM, "%s: out of memory", c->fname);
    memcpy(*out, s, len);
    (*out)[len] = 0;
    return SN_OK;
}

/* Reads the value of one element of type t (not ARR). */
static sn_status rd_value(cursor *c, sn_gguf_type t) {
    if (t == SN_GGUF_STR) {
        const uint8_t *s;
        uint64_t len;
        return rd_str(c, &s, &len);
    }
    uint64_t at = c->pos;
    sn_status st = need(c, sn_gguf_scalar_size[t]);
    if (st) return st;
    if (t == SN_GGUF_BOOL && c->b[c->pos] > 1)
        return fail(c, at, "bool value is %u, must be 0 or 1", c->b[c->pos]);
    c->pos += sn_gguf_scalar_size[t];
    return SN_OK;
}

/* Array elements are read without formatting a field name each time (tokenizer arrays have 10^5
 * strings); on failure the element is read again with the field named, to produce the message. */
static sn_status elem_fail(cursor *c, const gguf_kv *kv, int64_t i, uint64_t j, sn_gguf_type t) {
    c->pos = t == SN_GGUF_STR ? kv->str_off[j] : (uint64_t)(kv->val - c->b) + j;
    snprintf(c->field, sizeof c->field, "key '%s' (#%" PRId64 ") element %" PRIu64, kv->key, i, j);
    return rd_value(c, t);
}

static sn_status parse_kv(sn_gguf *g, cursor *c, int64_t i) {
    gguf_kv *kv = &g->kv[i];
    kv->raw_off = c->pos;
    snprintf(c->field, sizeof c->field, "key #%" PRId64, i);
    sn_status st = rd_name(c, "key", 0, &kv->key);
    if (st) return st;
    int64_t dup = sn_gguf_index_put(&g->kv_ix, kv->key, i, (const char *const *)&g->kv[0].key, sizeof *kv);
    if (dup == -2) return sn_err_set(c->err, SN_ENOMEM, "%s: out of memory", c->fname);
    if (dup >= 0) return fail(c, kv->raw_off, "duplicate key '%s' (also key #%" PRId64 ")", kv->key, dup);

    snprintf(c->field, sizeof c->field, "key '%s' (#%" PRId64 ") type", kv->key, i);
    uint64_t at = c->pos;
    uint32_t type;
    if ((st = rd_u32(c, &type))) return st;
    if (type >= SN_GGUF_TYPE_COUNT)
        return fail(c, at, "value type %" PRIu32 " is not a GGUF type (0..12)", type);
    kv->type = (sn_gguf_type)type;
    kv->n = 1;
    if (type != SN_GGUF_ARR) {
        snprintf(c->field, sizeof c->field, "key '%s' (#%" PRId64 ") value", kv->key, i);
        kv->val = c->b + c->pos;
        if ((st = rd_value(c, kv->type))) return st;
        kv->raw_len = c->pos - kv->raw_off;
        return SN_OK;
    }
    at = c->pos;
    if ((st = rd_u32(c, &type))) return st;
    if (type == SN_GGUF_ARR) return fail(c, at, "nested arrays are not allowed");
    if (type >= SN_GGUF_TYPE_COUNT)
        return fail(c, at, "array element type %" PRIu32 " is not a GGUF type (0..12)", type);
    kv->arr_type = (sn_gguf_type)type;
    snprintf(c->field, sizeof c->field, "key '%s' (#%" PRId64 ") array count", kv->key, i);
    at = c->pos;
    if ((st = rd_u64(c, &kv->n))) return st;
    if (kv->n > MAX_ARRAY_LEN)
        return fail(c, at, "%" PRIu64 " elements exceed llama.cpp's limit of 2^30 (SN_BUDGET_GGUF_ARRAY, budget.h)", kv->n);
    uint64_t min_elem = type == SN_GGUF_STR ? 8 : sn_gguf_scalar_size[type];
    if (kv->n > (c->size - c->pos) / min_elem)
        return fail(c, at, "%" PRIu64 " elements of type %s cannot fit in the %" PRIu64
                    " bytes left in the file", kv->n, k_type_names[type], c->size - c->pos);
    kv->val = c->b + c->pos;
    if (type == SN_GGUF_STR) {
        kv->str_off = malloc((kv->n ? kv->n : 1) * sizeof *kv->str_off);
        if (!kv->str_off) return sn_err_set(c->err, SN_ENOMEM, "%s: out of memory", c->fname);
        for (uint64_t j = 0; j < kv->n; j++) {
            kv->str_off[j] = c->pos;
            if (rd_value(c, SN_GGUF_STR)) return elem_fail(c, kv, i, j, SN_GGUF_STR);
        }
    } else if (type == SN_GGUF_BOOL) {
        for (uint64_t j = 0; j < kv->n; j++)
            if (rd_value(c, SN_GGUF_BOOL)) return elem_fail(c, kv, i, j, SN_GGUF_BOOL);
    } else {
        c->pos += kv->n * min_elem; /* checked above */
    }
    kv->raw_len = c->pos - kv->raw_off;
    return SN_OK;
}

static sn_status parse_tensor(sn_gguf *g, cursor *c, int64_t i) {
    sn_gguf_tensor *t = &g->t[i];
    uint64_t start = c->pos;
    snprintf(c->field, sizeof c->field, "tensor #%" PRId64 " name", i);
    char *name = NULL;
    sn_status st = rd_name(c, "tensor name", SN_GGUF_MAX_NAME, &name);
    if (st) return st;
    t->name = name;
    int64_t dup = sn_gguf_index_put(&g->t_ix, name, i, (const char *const *)&g->t[0].name, sizeof *t);
    if (dup == -2) return sn_err_set(c->err, SN_ENOMEM, "%s: out of memory", c->fname);
    if (dup >= 0)
        return fail(c, start, "duplicate tensor name '%s' (also tensor #%" PRId64 ")", name, dup);

    snprintf(c->field, sizeof c->field, "tensor '%s' (#%" PRId64 ") n_dims", name, i);
    uint64_t at = c->pos;
    if ((st = rd_u32(c, &t->n_dims))) return st;
    if (t->n_dims < 1 || t->n_dims > SN_GGUF_MAX_DIMS)
        return fail(c, at, "n_dims is %" PRIu32 ", must be 1..%d", t->n_dims, SN_GGUF_MAX_DIMS);
    for (uint32_t d = 0; d < SN_GGUF_MAX_DIMS; d++) t->ne[d] = 1;
    for (uint32_t d = 0; d < t->n_dims; d++) {
        snprintf(c->field, sizeof c->field, "tensor '%s' (#%" PRId64 ") ne[%" PRIu32 "]", name, i, d);
        at = c->pos;
        if ((st = rd_u64(c, &t->ne[d]))) return st;
        if (t->ne[d] > (uint64_t)INT64_MAX)
            return fail(c, at, "dimension %" PRIu64 " is negative as int64", t->ne[d]);
    }
    snprintf(c->field, sizeof c->field, "tensor '%s' (#%" PRId64 ") shape", name, i);
    uint64_t nel = 1;
    int zero = 0;
    for (uint32_t d = 0; d < SN_GGUF_MAX_DIMS; d++) zero |= t->ne[d] == 0;
    if (!zero) {
        for (uint32_t d = 0; d < SN_GGUF_MAX_DIMS; d++) {
            if (nel > (uint64_t)INT64_MAX / t->ne[d] || nel * t->ne[d] == (uint64_t)INT64_MAX)
                return fail(c, at, "element count overflows int64 (%" PRIu64 " x %" PRIu64 " x %" PRIu64
                            " x %" PRIu64 ")", t->ne[0], t->ne[1], t->ne[2], t->ne[3]);
            nel *= t->ne[d];
        }
    } else {
        nel = 0;
    }

    snprintf(c->field, sizeof c->field, "tensor '%s' (#%" PRId64 ") type", name, i);
    at = c->pos;
    uint32_t type;
    if ((st = rd_u32(c, &type))) return st;
    uint32_t blck = sn_ggml_blck_size((int)type);
    if (type >= SN_GGML_TYPE_COUNT || blck == 0)
        return fail(c, at, "ggml type %" PRIu32 " is unknown or retired", type);
    t->type = (int)type;
    if (t->ne[0] % blck != 0)
        return fail(c, at, "ne[0] = %" PRIu64 " is not a multiple of the %s block size %" PRIu32,
                    t->ne[0], sn_ggml_type_name(t->type), blck);
    uint64_t blocks = nel / blck, tsize = sn_ggml_type_size(t->type);
    if (blocks > UINT64_MAX / tsize || blocks * tsize > (uint64_t)INT64_MAX)
        return fail(c, at, "byte size overflows");
    t->size = blocks * tsize;

    snprintf(c->field, sizeof c->field, "tensor '%s' (#%" PRId64 ") offset", name, i);
    g->t_off_pos[i] = c->pos;
    return rd_u64(c, &t->offset);
}

static void gguf_free(sn_gguf *g) {
    if (!g) return;
    if (g->kv)
        for (int64_t i = 0; i < g->n_kv; i++) { free(g->kv[i].key); free(g->kv[i].str_off); }
    if (g->t)
        for (int64_t i = 0; i < g->n_tensors; i++) free((char *)g->t[i].name);
    free(g->kv);
    free(g->t);
    free(g->t_off_pos);
    free(g->kv_ix.slot);
    free(g->t_ix.slot);
    for (int64_t i = 0; i < g->n_parts; i++) gguf_free(g->parts[i]);
    free(g->parts);
    sn_unmap_file(&g->map);
    free(g);
}

void sn_gguf_close(sn_gguf *g) { gguf_free(g); }

static sn_status parse(sn_gguf *g, const char *fname, int flags, sn_err *err) {
    cursor c = {.b = g->base, .size = g->size, .pos = 0, .fname = fname, .err = err};
    sn_status st;
    uint32_t magic;
    snprintf(c.field, sizeof c.field, "magic");
    if ((st = rd_u32(&c, &magic))) return st;
    if (magic != GGUF_MAGIC) return fail(&c, 0, "not a GGUF file (bad magic)");
    snprintf(c.field, sizeof c.field, "version");
    if ((st = rd_u32(&c, &g->version))) return st;
    if (g->version == 1) return fail(&c, 4, "GGUF version 1 is no longer supported");
    if (g->version == 0x02000000u || g->version == 0x03000000u)
        return fail(&c, 4, "big-endian GGUF files are not supported");
    if (g->version != 2 && g->version != 3)
        return fail(&c, 4, "unsupported GGUF version %" PRIu32 " (expected 2 or 3)", g->version);

    uint64_t nt, nkv;
    snprintf(c.field, sizeof c.field, "n_tensors");
    if ((st = rd_u64(&c, &nt))) return st;
    snprintf(c.field, sizeof c.field, "n_kv");
    if ((st = rd_u64(&c, &nkv))) return st;
    /* smallest KV: 8-byte length + 1-byte key + u32 type + 1-byte value = 14;
     * smallest tensor info: 8 + 0 + 4 + 8 + 4 + 8 = 32 */
    uint64_t left = c.size - c.pos;
    snprintf(c.field, sizeof c.field, "n_tensors");
    if (nt > left / 32) return fail(&c, 8, "%" PRIu64 " tensors cannot fit in the file", nt);
    snprintf(c.field, sizeof c.field, "n_kv");
    if (nkv > left / 14 || nkv * 14 > left - nt * 32)
        return fail(&c, 16, "%" PRIu64 " key/value pairs (with %" PRIu64 " tensors) cannot fit in "
                    "the file", nkv, nt);

    /* arrays grow as entries are parsed, so memory follows the bytes actually present */
    uint64_t cap = 0;
    g->n_kv = 0;
    for (uint64_t i = 0; i < nkv; i++) {
        if (i == cap) {
            cap = cap ? (cap * 2 < nkv ? cap * 2 : nkv) : (nkv < 64 ? nkv : 64);
            gguf_kv *kv = realloc(g->kv, cap * sizeof *kv);
            if (!kv) return sn_err_set(err, SN_ENOMEM, "%s: out of memory", fname);
            memset(kv + i, 0, (cap - i) * sizeof *kv);
            g->kv = kv;
        }
        g->n_kv = (int64_t)i + 1; /* so gguf_free releases what this KV allocated */
        if ((st = parse_kv(g, &c, (int64_t)i))) return st;
    }

    g->alignment = SN_GGUF_DEFAULT_ALIGNMENT;
    int64_t ai = sn_gguf_find_key(g, "general.alignment");
    if (ai >= 0) {
        const gguf_kv *kv = &g->kv[ai];
        snprintf(c.field, sizeof c.field, "key 'general.alignment'");
        if (kv->type != SN_GGUF_U32)
            return fail(&c, kv->raw_off, "must be of type u32 but is %s", k_type_names[kv->type]);
        uint32_t a;
        memcpy(&a, kv->val, 4);
        if (a == 0 || (a & (a - 1)) != 0)
            return fail(&c, kv->raw_off, "alignment %" PRIu32 " is not a power of two", a);
        g->alignment = a;
    }

    g->n_tensors = 0;
    cap = 0;
    for (uint64_t i = 0; i < nt; i++) {
        if (i == cap) {
            cap = cap ? (cap * 2 < nt ? cap * 2 : nt) : (nt < 64 ? nt : 64);
            sn_gguf_tensor *t = realloc(g->t, cap * sizeof *t);
            if (t) g->t = t;
            uint64_t *op = realloc(g->t_off_pos, cap * sizeof *op);
            if (op) g->t_off_pos = op;
            if (!t || !op) return sn_err_set(err, SN_ENOMEM, "%s: out of memory", fname);
            memset(t + i, 0, (cap - i) * sizeof *t);
        }
        g->n_tensors = (int64_t)i + 1;
        if ((st = parse_tensor(g, &c, (int64_t)i))) return st;
    }

    g->data_off = nt > 0 ? sn_gguf_pad_to(c.pos, g->alignment) : c.pos;
    snprintf(c.field, sizeof c.field, "data section");
    if (nt > 0 && !(flags & SN_GGUF_NO_DATA) && g->data_off > g->size)
        return fail(&c, c.pos, "starts at %" PRIu64 ", past the end of the file (%" PRIu64 " bytes)",
                    g->data_off, g->size);
    uint64_t expect = 0;
    for (uint64_t i = 0; i < nt; i++) {
        sn_gguf_tensor *t = &g->t[i];
        snprintf(c.field, sizeof c.field, "tensor '%s' (#%" PRIu64 ") offset", t->name, i);
        if (t->offset != expect)
            return fail(&c, g->t_off_pos[i], "is %" PRIu64 ", expected %" PRIu64 " (tensor data must be contiguous, "
                        "in order, each padded to %" PRIu32 " bytes)", t->offset, expect, g->alignment);
        uint64_t padded = sn_gguf_pad_to(t->size, g->alignment);
        if (padded < t->size || expect > UINT64_MAX - padded || g->data_off > UINT64_MAX - expect - padded)
            return fail(&c, g->t_off_pos[i], "data size overflows");
        if (!(flags & SN_GGUF_NO_DATA)) {
            uint64_t end = g->data_off + t->offset + t->size;
            if (end > g->size)
                return fail(&c, g->data_off + t->offset, "data [%" PRIu64 ", %" PRIu64 ") extends past the "
                            "end of the file (%" PRIu64 " bytes)", g->data_off + t->offset, end, g->size);
            t->data = g->base + g->data_off + t->offset;
        }
        expect += padded;
    }
    return SN_OK;
}

/* A handle for [base, base + size), parsed; `map` (NULL for a caller's buffer) is the mapping
 * those bytes are, which the handle then owns: released with it, also when this fails. */
static sn_status open_bytes(const uint8_t *base, uint64_t size, sn_mapped_file *map, const char *what, int flags,
                            sn_gguf **out, sn_err *err) {
    sn_gguf *g = calloc(1, sizeof *g);
    if (!g) {
        if (map) sn_unmap_file(map);
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    }
    if (map) g->map = *map;
    g->base = base;
    g->size = size;
    sn_status st = parse(g, what, flags, err);
    if (st) { gguf_free(g); return st; }
    *out = g;
    return SN_OK;
}

sn_status sn_gguf_open_mem(const void *buf, uint64_t size, int flags, sn_gguf **out, sn_err *err) {
    *out = NULL;
    if (!buf && size) return sn_err_set(err, SN_EINVAL, "sn_gguf_open_mem: NULL buffer");
    return open_bytes(buf, size, NULL, "<memory>", flags, out, err);
}

static sn_status open_one(const char *path, int flags, sn_gguf **out, sn_err *err) {
    *out = NULL;
    sn_mapped_file m;
    sn_status st = sn_map_file(path, &m, err);
    if (st) return st;
    return open_bytes(m.data, m.size, &m, path, flags, out, err);
}

/* An unsigned split.* value of any integer type, -1 when absent or not an integer. */
static int64_t split_key(const sn_gguf *g, const char *key) {
    int64_t i = sn_gguf_find_key(g, key);
    if (i < 0) return -1;
    switch (g->kv[i].type) {
    case SN_GGUF_U16: return sn_gguf_get_u16(g, i);
    case SN_GGUF_I32: return sn_gguf_get_i32(g, i);
    case SN_GGUF_U32: return sn_gguf_get_u32(g, i);
    default: return -1;
    }
}

/* A split model opened by its first part (split.no 0, split.count N > 1): the other parts, named as
 * llama_split_path names them (PREFIX-%05d-of-%05d.gguf beside the first), are opened and their
 * tensors appended, so the handle holds the whole model - what llama-model-loader.cpp does. Each
 * part must say its own split.no and the same split.count; tensor names stay unique across parts. */
static sn_status merge_split(sn_gguf *g, const char *path, int flags, sn_err *err) {
    int64_t count = split_key(g, "split.count"), no = split_key(g, "split.no");
    if (count <= 1) return SN_OK;
    if (no != 0) /* llama-model-loader.cpp: the model is opened by its first part */
        return sn_err_set(err, SN_EINVAL, "%s is part %" PRId64 " of a %" PRId64 "-part split model: pass the first "
                          "part (-00001-of-%05d.gguf)", path, no + 1, count, (int)count);
    if (count > 99999) return sn_err_set(err, SN_EFORMAT, "%s: split.count %" PRId64 " is out of range", path, count);
    char sfx[40];
    snprintf(sfx, sizeof sfx, "-%05d-of-%05d.gguf", 1, (int)count);
    size_t pl = strlen(path), sl = strlen(sfx);
    if (pl < sl || strcmp(path + pl - sl, sfx) != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: split.count is %" PRId64 " but the name does not end in %s, so the "
                          "other parts cannot be found (llama.cpp derives their names from the first's)", path, count, sfx);
    g->parts = calloc((size_t)count - 1, sizeof *g->parts);
    if (!g->parts) return sn_err_set(err, SN_ENOMEM, "out of memory");
    for (int64_t k = 1; k < count; k++) {
        char *name = malloc(pl + 1);
        if (!name) return sn_err_set(err, SN_ENOMEM, "out of memory");
        snprintf(name, pl + 1, "%.*s-%05d-of-%05d.gguf", (int)(pl - sl), path, (int)k + 1, (int)count);
        sn_gguf *p = NULL;
        sn_status st = open_one(name, flags, &p, err);
        if (st) {
            sn_err_prefix(err, "%s: split part %" PRId64 " of %" PRId64, path, k + 1, count);
            free(name);
            return st;
        }
        g->parts[g->n_parts++] = p;
        if (split_key(p, "split.no") != k || split_key(p, "split.count") != count) {
            st = sn_err_set(err, SN_EFORMAT, "%s: split.no %" PRId64 ", split.count %" PRId64 "; expected part %" PRId64
                            " of %" PRId64 " (index %" PRId64 ")", name, split_key(p, "split.no"),
                            split_key(p, "split.count"), k + 1, count, k);
            free(name);
            return st;
        }
        int64_t n = g->n_tensors + p->n_tensors;
        sn_gguf_tensor *t = realloc(g->t, (size_t)(n ? n : 1) * sizeof *t);
        if (t) g->t = t;
        uint64_t *op = t ? realloc(g->t_off_pos, (size_t)(n ? n : 1) * sizeof *op) : NULL;
        if (op) g->t_off_pos = op;
        if (!t || !op) { free(name); return sn_err_set(err, SN_ENOMEM, "out of memory"); }
        for (int64_t j = 0; j < p->n_tensors; j++) {
            int64_t i = g->n_tensors;
            g->t[i] = p->t[j];
            g->t[i].name = strdup(p->t[j].name);
            g->t_off_pos[i] = 0;
            if (!g->t[i].name) { free(name); return sn_err_set(err, SN_ENOMEM, "out of memory"); }
            g->n_tensors++;
            int64_t dup = sn_gguf_index_put(&g->t_ix, g->t[i].name, i, (const char *const *)&g->t[0].name, sizeof *g->t);
            if (dup == -2) { free(name); return sn_err_set(err, SN_ENOMEM, "out of memory"); }
            if (dup >= 0) {
                st = sn_err_set(err, SN_EFORMAT, "%s: tensor %s is also in an earlier part", name, g->t[i].name);
                free(name);
                return st;
            }
        }
        free(name);
    }
    int64_t want = split_key(g, "split.tensors.count");
    if (want >= 0 && want != g->n_tensors)
        return sn_err_set(err, SN_EFORMAT, "%s: split.tensors.count is %" PRId64 " but the %" PRId64 " parts hold %" PRId64
                          " tensors", path, want, count, g->n_tensors);
    return SN_OK;
}

sn_status sn_gguf_open(const char *path, int flags, sn_gguf **out, sn_err *err) {
    sn_status st = open_one(path, flags, out, err);
    if (st == SN_OK && (st = merge_split(*out, path, flags, err)) != SN_OK) {
        gguf_free(*out);
        *out = NULL;
    }
    return st;
}

uint32_t sn_gguf_version(const sn_gguf *g) { return g->version; }
uint32_t sn_gguf_alignment(const sn_gguf *g) { return g->alignment; }
uint64_t sn_gguf_data_offset(const sn_gguf *g) { return g->data_off; }
uint64_t sn_gguf_file_size(const sn_gguf *g) { return g->size; }
int64_t sn_gguf_n_kv(const sn_gguf *g) { return g->n_kv; }
int64_t sn_gguf_n_tensors(const sn_gguf *g) { return g->n_tensors; }

int64_t sn_gguf_find_key(const sn_gguf *g, const char *key) {
    if (!key || g->n_kv == 0) return -1;
    return index_get(&g->kv_ix, key, (const char *const *)&g->kv[0].key, sizeof(gguf_kv));
}

int64_t sn_gguf_find_tensor(const sn_gguf *g, const char *name) {
    if (!name || g->n_tensors == 0) return -1;
    return index_get(&g->t_ix, name, (const char *const *)&g->t[0].name, sizeof(sn_gguf_tensor));
}

static const gguf_kv *kv_at(const sn_gguf *g, int64_t i) {
    return (i >= 0 && i < g->n_kv) ? &g->kv[i] : NULL;
}

const char *sn_gguf_key(const sn_gguf *g, int64_t i) {
    const gguf_kv *kv = kv_at(g, i);
    return kv ? kv->key : NULL;
}

sn_gguf_type sn_gguf_kv_type(const sn_gguf *g, int64_t i) {
    const gguf_kv *kv = kv_at(g, i);
    return kv ? kv->type : SN_GGUF_TYPE_COUNT;
}

/* Copies the scalar of KV i if it has type t; else zero-fills. */
static void get_scalar(const sn_gguf *g, int64_t i, sn_gguf_type t, void *dst) {
    const gguf_kv *kv = kv_at(g, i);
    if (kv && kv->type == t) memcpy(dst, kv->val, sn_gguf_scalar_size[t]);
    else memset(dst, 0, sn_gguf_scalar_size[t]);
}

#define SN_GETTER(fn, ctype, T)                                   \
    ctype fn(const sn_gguf *g, int64_t i) {                       \
        ctype v;                                                  \
        get_scalar(g, i, T, &v);                                  \
        return v;                                                 \
    }
SN_GETTER(sn_gguf_get_u8, uint8_t, SN_GGUF_U8)
SN_GETTER(sn_gguf_get_i8, int8_t, SN_GGUF_I8)
SN_GETTER(sn_gguf_get_u16, uint16_t, SN_GGUF_U16)
SN_GETTER(sn_gguf_get_i16, int16_t, SN_GGUF_I16)
SN_GETTER(sn_gguf_get_u32, uint32_t, SN_GGUF_U32)
SN_GETTER(sn_gguf_get_i32, int32_t, SN_GGUF_I32)
SN_GETTER(sn_gguf_get_f32, float, SN_GGUF_F32)
SN_GETTER(sn_gguf_get_u64, uint64_t, SN_GGUF_U64)
SN_GETTER(sn_gguf_get_i64, int64_t, SN_GGUF_I64)
SN_GETTER(sn_gguf_get_f64, double, SN_GGUF_F64)
#undef SN_GETTER

int sn_gguf_get_bool(const sn_gguf *g, int64_t i) {
    uint8_t v;
    get_scalar(g, i, SN_GGUF_BOOL, &v);
    return v != 0;
}

static sn_gguf_str str_at(const uint8_t *p) {
    sn_gguf_str s;
    memcpy(&s.len, p, 8);
    s.ptr = (const char *)p + 8;
    return s;
}

sn_gguf_str sn_gguf_get_str(const sn_gguf *g, int64_t i) {
    const gguf_kv *kv = kv_at(g, i);
    if (!kv || kv->type != SN_GGUF_STR) return (sn_gguf_str){"", 0};
    return str_at(kv->val);
}

sn_gguf_type sn_gguf_arr_type(const sn_gguf *g, int64_t i) {
    const gguf_kv *kv = kv_at(g, i);
    return kv && kv->type == SN_GGUF_ARR ? kv->arr_type : SN_GGUF_TYPE_COUNT;
}

uint64_t sn_gguf_arr_n(const sn_gguf *g, int64_t i) {
    const gguf_kv *kv = kv_at(g, i);
    return kv && kv->type == SN_GGUF_ARR ? kv->n : 0;
}

const void *sn_gguf_arr_data(const sn_gguf *g, int64_t i) {
    const gguf_kv *kv = kv_at(g, i);
    if (!kv || kv->type != SN_GGUF_ARR || kv->arr_type == SN_GGUF_STR) return NULL;
    return kv->val;
}

sn_gguf_str sn_gguf_arr_str(const sn_gguf *g, int64_t i, uint64_t j) {
    const gguf_kv *kv = kv_at(g, i);
    if (!kv || kv->type != SN_GGUF_ARR || kv->arr_type != SN_GGUF_STR || j >= kv->n)
        return (sn_gguf_str){"", 0};
    return str_at(g->base + kv->str_off[j]);
}

const void *sn_gguf_kv_raw(const sn_gguf *g, int64_t i, uint64_t *len) {
    const gguf_kv *kv = kv_at(g, i);
    if (!kv) { if (len) *len = 0; return NULL; }
    if (len) *len = kv->raw_len;
    return g->base + kv->raw_off;
}

uint32_t sn_gguf_u32_or(const sn_gguf *g, const char *key, uint32_t dflt) {
    int64_t i = sn_gguf_find_key(g, key);
    return i >= 0 && g->kv[i].type == SN_GGUF_U32 ? sn_gguf_get_u32(g, i) : dflt;
}

float sn_gguf_f32_or(const sn_gguf *g, const char *key, float dflt) {
    int64_t i = sn_gguf_find_key(g, key);
    return i >= 0 && g->kv[i].type == SN_GGUF_F32 ? sn_gguf_get_f32(g, i) : dflt;
}

int sn_gguf_bool_or(const sn_gguf *g, const char *key, int dflt) {
    int64_t i = sn_gguf_find_key(g, key);
    return i >= 0 && g->kv[i].type == SN_GGUF_BOOL ? sn_gguf_get_bool(g, i) : dflt;
}

char *sn_gguf_str_dup(const sn_gguf *g, const char *key) {
    int64_t i = sn_gguf_find_key(g, key);
    if (i < 0 || g->kv[i].type != SN_GGUF_STR) return NULL;
    sn_gguf_str s = sn_gguf_get_str(g, i);
    char *r = malloc(s.len + 1);
    if (!r) return NULL;
    memcpy(r, s.ptr, s.len);
    r[s.len] = 0;
    return r;
}

const sn_gguf_tensor *sn_gguf_tensor_at(const sn_gguf *g, int64_t i) {
    return (i >= 0 && i < g->n_tensors) ? &g->t[i] : NULL;
}
