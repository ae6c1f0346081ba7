/* test_gguf_malformed.c - the GGUF reader on broken input: every truncation, every corrupted header
 * field, and a random-mutation loop.
 *
 * A GGUF arrives from the network or from other tools; the reader must answer SN_EFORMAT with the
 * file, the field and the byte offset, and never read outside the buffer (the ASan build runs this
 * file). Buffers are malloc'd at their exact size so any overread is caught. */
#include "ggml_types.h"
#include "gguf.h"
#include "sn_test.h"

#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* --- a growable byte buffer with little-endian helpers ------------------------------------------ */
typedef struct { uint8_t *p; size_t n, cap; } buf;
static void put(buf *b, const void *src, size_t n) {
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}
static void p8(buf *b, uint8_t v) { put(b, &v, 1); }
static void p32(buf *b, uint32_t v) { put(b, &v, 4); }
static void p64(buf *b, uint64_t v) { put(b, &v, 8); }
static void pstrn(buf *b, const char *s, size_t n) { p64(b, n); put(b, s, n); }
static void pstr(buf *b, const char *s) { pstrn(b, s, strlen(s)); }
static void pad(buf *b, size_t a) { while (b->n % a) p8(b, 0); }

/* --- the file generator: a valid file unless a knob says otherwise ------------------------------ */
enum { KV_OK, KV_EMPTY_KEY, KV_DUP_KEY, KV_BAD_TYPE, KV_BAD_ELEM_TYPE, KV_NESTED, KV_BOOL2,
       KV_BOOL_ARR2, KV_HUGE_COUNT, KV_HUGE_STRLEN, KV_HUGE_ELEM_STRLEN, KV_ALIGN_U64, KV_ALIGN_48,
       KV_ALIGN_0, KV_ALIGN_64, KV_BAD_UTF8_KEY, KV_NUL_KEY, KV_STRLEN_PAST_EOF, KV_FIT_COUNT,
       KV_STRLEN_ONE_PAST };

typedef struct { const char *name; uint32_t nd; uint64_t ne[4]; uint32_t type; } tspec;

typedef struct {
    uint32_t magic, version;
    int kv_mode;
    const tspec *ts;
    int nt;
    int64_t off_delta[4];  /* added to the correct offset of tensor i */
    int nt_huge, nkv_huge;
    size_t at_field;       /* out: byte offset of the field the knob corrupts */
    size_t at_off[4];      /* out: byte offset of each tensor's offset field */
    size_t at_ti[4];       /* out: start of each tensor info */
} gen;

static const tspec k_tensors[2] = {
    {"blk.0.attn_q.weight", 2, {32, 2, 1, 1}, SN_GGML_Q8_0},
    {"output_norm.weight", 1, {4, 1, 1, 1}, SN_GGML_F32},
};

static void emit_kvs(buf *b, gen *g) {
    pstr(b, "general.architecture");
    p32(b, SN_GGUF_STR);
    pstr(b, "llama");
    switch (g->kv_mode) {
    case KV_EMPTY_KEY: g->at_field = b->n; pstr(b, ""); p32(b, SN_GGUF_U8); p8(b, 1); break;
    case KV_DUP_KEY: g->at_field = b->n; pstr(b, "general.architecture"); p32(b, SN_GGUF_U8); p8(b, 1); break;
    case KV_BAD_TYPE: pstr(b, "k"); g->at_field = b->n; p32(b, 13); p8(b, 1); break;
    case KV_BAD_ELEM_TYPE: pstr(b, "k"); p32(b, SN_GGUF_ARR); g->at_field = b->n; p32(b, 99); p64(b, 1); p8(b, 1); break;
    case KV_NESTED: pstr(b, "k"); p32(b, SN_GGUF_ARR); g->at_field = b->n; p32(b, SN_GGUF_ARR); p64(b, 1); p32(b, 0); p64(b, 0); break;
    case KV_BOOL2: pstr(b, "k"); p32(b, SN_GGUF_BOOL); g->at_field = b->n; p8(b, 2); break;
    case KV_BOOL_ARR2: pstr(b, "k"); p32(b, SN_GGUF_ARR); p32(b, SN_GGUF_BOOL); p64(b, 3); p8(b, 1); p8(b, 0); g->at_field = b->n; p8(b, 7); break;
    case KV_HUGE_COUNT: pstr(b, "k"); p32(b, SN_GGUF_ARR); p32(b, SN_GGUF_U32); g->at_field = b->n; p64(b, UINT64_MAX / 2); p32(b, 1); break;
    case KV_FIT_COUNT: pstr(b, "k"); p32(b, SN_GGUF_ARR); p32(b, SN_GGUF_U64); g->at_field = b->n; p64(b, 1000); p64(b, 1); break;
    case KV_HUGE_STRLEN: g->at_field = b->n; p64(b, UINT64_MAX); put(b, "kkkk", 4); p32(b, SN_GGUF_U8); p8(b, 0); break;
    case KV_STRLEN_PAST_EOF: pstr(b, "k"); p32(b, SN_GGUF_STR); g->at_field = b->n; p64(b, 1u << 20); put(b, "abc", 3); break;
    /* length set by generate() to one byte more than is left after it: shorter than the file */
    case KV_STRLEN_ONE_PAST: pstr(b, "k"); p32(b, SN_GGUF_STR); g->at_field = b->n; p64(b, 0); put(b, "abc", 3); break;
    case KV_HUGE_ELEM_STRLEN: pstr(b, "k"); p32(b, SN_GGUF_ARR); p32(b, SN_GGUF_STR); p64(b, 2); pstr(b, "a"); g->at_field = b->n; p64(b, (uint64_t)1 << 40); break;
    case KV_ALIGN_U64: g->at_field = b->n; pstr(b, "general.alignment"); p32(b, SN_GGUF_U64); p64(b, 64); break;
    case KV_ALIGN_48: g->at_field = b->n; pstr(b, "general.alignment"); p32(b, SN_GGUF_U32); p32(b, 48); break;
    case KV_ALIGN_0: g->at_field = b->n; pstr(b, "general.alignment"); p32(b, SN_GGUF_U32); p32(b, 0); break;
    case KV_ALIGN_64: pstr(b, "general.alignment"); p32(b, SN_GGUF_U32); p32(b, 64); break;
    case KV_BAD_UTF8_KEY: g->at_field = b->n; pstr(b, "tok\xc3\x28"); p32(b, SN_GGUF_U8); p8(b, 1); break;
    case KV_NUL_KEY: g->at_field = b->n; pstrn(b, "a\0b", 3); p32(b, SN_GGUF_U8); p8(b, 1); break;
    default: break;
    }
    pstr(b, "llama.block_count");
    p32(b, SN_GGUF_U32);
    p32(b, 1);
    pstr(b, "tokenizer.ggml.tokens");
    p32(b, SN_GGUF_ARR);
    p32(b, SN_GGUF_STR);
    p64(b, 3);
    pstr(b, "<s>");
    pstr(b, "");
    pstr(b, "\xe2\x96\x81hi");
    pstr(b, "flags");
    p32(b, SN_GGUF_ARR);
    p32(b, SN_GGUF_BOOL);
    p64(b, 2);
    p8(b, 0);
    p8(b, 1);
}

static uint64_t tsize(const tspec *t) {
    uint64_t r = sn_ggml_row_size((int)t->type, t->ne[0]);
    for (uint32_t d = 1; d < t->nd && d < 4; d++) r *= t->ne[d];
    return r;
}

static buf generate(gen *g) {
    buf b = {0};
    uint32_t align = g->kv_mode == KV_ALIGN_64 ? 64 : 32;
    if (!g->ts) { g->ts = k_tensors; g->nt = 2; }
    p32(&b, g->magic ? g->magic : 0x46554747u);
    p32(&b, g->version ? g->version : 3);
    p64(&b, g->nt_huge ? (uint64_t)1 << 62 : (uint64_t)g->nt);
    p64(&b, g->nkv_huge ? (uint64_t)1 << 62 : (g->kv_mode == KV_OK ? 4 : 5));
    emit_kvs(&b, g);
    uint64_t off = 0;
    for (int i = 0; i < g->nt; i++) {
        const tspec *t = &g->ts[i];
        g->at_ti[i] = b.n;
        pstr(&b, t->name);
        p32(&b, t->nd);
        for (uint32_t d = 0; d < t->nd; d++) p64(&b, d < 4 ? t->ne[d] : 1);
        p32(&b, t->type);
        g->at_off[i] = b.n;
        p64(&b, off + (uint64_t)g->off_delta[i]);
        off += (tsize(t) + align - 1) / align * align;
    }
    pad(&b, align);
    for (int i = 0; i < g->nt; i++) {
        uint64_t n = tsize(&g->ts[i]);
        for (uint64_t j = 0; j < n && j < 4096; j++) p8(&b, (uint8_t)(j * 13 + 1));
        pad(&b, align);
    }
    if (g->kv_mode == KV_STRLEN_ONE_PAST) { /* the string claims every remaining byte and one more */
        uint64_t len = b.n - (g->at_field + 8) + 1;
        memcpy(b.p + g->at_field, &len, 8);
    }
    return b;
}

/* Parse from an exact-size heap copy (so ASan sees any overread); returns the status. */
static sn_status parse_copy(const uint8_t *p, size_t n, sn_err *e) {
    uint8_t *c = malloc(n ? n : 1);
    if (n) memcpy(c, p, n);
    sn_gguf *g = NULL;
    sn_status st = sn_gguf_open_mem(c, n, 0, &g, e);
    sn_gguf_close(g);
    free(c);
    return st;
}

/* Expect SN_EFORMAT, a message naming <memory> and the given phrases, and the byte offset `at`:
 * AT_ANY (not checked), AT_FIELD (the field the knob corrupted), AT_OFF0/1 (tensor offset field). */
enum { AT_ANY = -1, AT_FIELD = -2, AT_OFF0 = -3, AT_OFF1 = -4 };
static void expect_bad(gen *g, const char *phrase1, const char *phrase2, int where) {
    buf b = generate(g);
    size_t at = where == AT_FIELD ? g->at_field : where == AT_OFF0 ? g->at_off[0]
              : where == AT_OFF1 ? g->at_off[1] : where >= 0 ? (size_t)where : SIZE_MAX;
    sn_err e = {0};
    sn_status st = parse_copy(b.p, b.n, &e);
    CU_ASSERT_EQUAL(st, SN_EFORMAT);
    int ok = st == SN_EFORMAT && strstr(e.msg, "<memory>") && strstr(e.msg, phrase1) &&
             (!phrase2 || strstr(e.msg, phrase2));
    char at_s[64];
    snprintf(at_s, sizeof at_s, "(at byte %zu)", at);
    if (where != AT_ANY) ok = ok && strstr(e.msg, at_s);
    if (!ok)
        fprintf(stderr, "\n  want '%s' '%s' %s, got [%d] %s\n", phrase1, phrase2 ? phrase2 : "",
                where != AT_ANY ? at_s : "", st, e.msg);
    CU_ASSERT(ok);
    free(b.p);
}

static void test_valid_base(void) {
    gen g = {0};
    buf b = generate(&g);
    sn_err e = {0};
    sn_gguf *r = NULL;
    CU_ASSERT_EQUAL_FATAL(sn_gguf_open_mem(b.p, b.n, 0, &r, &e), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_n_kv(r), 4);
    CU_ASSERT_EQUAL(sn_gguf_n_tensors(r), 2);
    CU_ASSERT_EQUAL(sn_gguf_tensor_at(r, 1)->offset, 96);
    sn_gguf_close(r);
    gen g2 = {.version = 2};
    buf b2 = generate(&g2);
    CU_ASSERT_EQUAL(sn_gguf_open_mem(b2.p, b2.n, 0, &r, &e), SN_OK); /* v2 is accepted */
    sn_gguf_close(r);
    gen g3 = {.kv_mode = KV_ALIGN_64};
    buf b3 = generate(&g3);
    CU_ASSERT_EQUAL(sn_gguf_open_mem(b3.p, b3.n, 0, &r, &e), SN_OK);
    if (r) {
        CU_ASSERT_EQUAL(sn_gguf_alignment(r), 64);
        CU_ASSERT_EQUAL(sn_gguf_data_offset(r) % 64, 0);
        CU_ASSERT_EQUAL(sn_gguf_tensor_at(r, 1)->offset, 128);
    }
    sn_gguf_close(r);
    free(b.p);
    free(b2.p);
    free(b3.p);
}

/* Every prefix of a valid file that cuts into the header or into tensor data is refused. */
static void test_every_truncation(void) {
    for (int variant = 0; variant < 2; variant++) {
        gen g = {0};
        if (variant == 1) g.nt = 0, g.ts = k_tensors; /* header-only file */
        buf b = generate(&g);
        sn_err e = {0};
        sn_gguf *r = NULL;
        CU_ASSERT_EQUAL_FATAL(sn_gguf_open_mem(b.p, b.n, 0, &r, &e), SN_OK);
        size_t need = (size_t)sn_gguf_data_offset(r); /* no tensors: the header is everything */
        if (sn_gguf_n_tensors(r) > 0) {
            const sn_gguf_tensor *t = sn_gguf_tensor_at(r, sn_gguf_n_tensors(r) - 1);
            need = (size_t)(sn_gguf_data_offset(r) + t->offset + t->size); /* final padding optional */
        }
        sn_gguf_close(r);
        int bad = 0;
        for (size_t n = 0; n < b.n; n++) {
            sn_status st = parse_copy(b.p, n, &e);
            int want_fail = n < need;
            if (want_fail && (st != SN_EFORMAT || !strstr(e.msg, "<memory>") || !strstr(e.msg, "at byte"))) {
                if (bad++ < 3) fprintf(stderr, "\n  truncated to %zu: [%d] %s\n", n, st, e.msg);
            }
            if (!want_fail && st != SN_OK) {
                if (bad++ < 3) fprintf(stderr, "\n  truncated to %zu (only padding cut): %s\n", n, e.msg);
            }
        }
        CU_ASSERT_EQUAL(bad, 0);
        free(b.p);
    }
}

static void test_header_fields(void) {
    gen g;
    g = (gen){.magic = 0x46554746u};
    expect_bad(&g, "magic", "not a GGUF", 0);
    g = (gen){.version = 1};
    expect_bad(&g, "version", "version 1", 4);
    g = (gen){.version = 4};
    expect_bad(&g, "version", "unsupported", 4);
    g = (gen){.version = 0x03000000};
    expect_bad(&g, "version", "big-endian", 4);
    g = (gen){.version = 0x7fffffff};
    expect_bad(&g, "version", "unsupported", 4);
    g = (gen){.nt_huge = 1};
    expect_bad(&g, "n_tensors", "cannot fit", 8);
    g = (gen){.nkv_huge = 1};
    expect_bad(&g, "n_kv", "cannot fit", 16);
}

static void test_kv_fields(void) {
    gen g;
    g = (gen){.kv_mode = KV_EMPTY_KEY};
    expect_bad(&g, "key #1", "empty", AT_ANY);
    g = (gen){.kv_mode = KV_DUP_KEY};
    expect_bad(&g, "duplicate key 'general.architecture'", NULL, AT_ANY);
    expect_bad(&g, "key #1", NULL, AT_FIELD);
    g = (gen){.kv_mode = KV_BAD_TYPE};
    expect_bad(&g, "key 'k' (#1) type", "value type 13", AT_FIELD);
    g = (gen){.kv_mode = KV_BAD_ELEM_TYPE};
    expect_bad(&g, "key 'k' (#1) type", "element type 99", AT_ANY);
    g = (gen){.kv_mode = KV_NESTED};
    expect_bad(&g, "key 'k'", "nested", AT_ANY);
    g = (gen){.kv_mode = KV_BOOL2};
    expect_bad(&g, "key 'k' (#1) value", "must be 0 or 1", AT_ANY);
    g = (gen){.kv_mode = KV_BOOL_ARR2};
    expect_bad(&g, "key 'k' (#1) element 2", "bool value is 7", AT_ANY);
    g = (gen){.kv_mode = KV_FIT_COUNT};
    expect_bad(&g, "key 'k' (#1) array count", "cannot fit", AT_FIELD);
    g = (gen){.kv_mode = KV_HUGE_COUNT};
    expect_bad(&g, "array count", "limit of 2^30 (SN_BUDGET_GGUF_ARRAY", AT_FIELD);
    g = (gen){.kv_mode = KV_HUGE_STRLEN};
    expect_bad(&g, "key #1", "string length", AT_ANY);
    g = (gen){.kv_mode = KV_STRLEN_PAST_EOF};
    expect_bad(&g, "key 'k' (#1) value", "exceeds", AT_ANY);
    /* shorter than the file but one byte longer than what is left (llama.cpp's gguf reader refuses
     * a string it cannot read whole); a check against the file size alone would read past the end */
    g = (gen){.kv_mode = KV_STRLEN_ONE_PAST};
    expect_bad(&g, "key 'k' (#1) value", "bytes left in the file", AT_FIELD);
    g = (gen){.kv_mode = KV_HUGE_ELEM_STRLEN};
    expect_bad(&g, "key 'k' (#1) element 1", "string length", AT_ANY);
    g = (gen){.kv_mode = KV_ALIGN_U64};
    expect_bad(&g, "general.alignment", "must be of type u32", AT_ANY);
    g = (gen){.kv_mode = KV_ALIGN_48};
    expect_bad(&g, "general.alignment", "not a power of two", AT_ANY);
    g = (gen){.kv_mode = KV_ALIGN_0};
    expect_bad(&g, "general.alignment", "not a power of two", AT_ANY);
    g = (gen){.kv_mode = KV_BAD_UTF8_KEY};
    expect_bad(&g, "key #1", "invalid UTF-8", AT_ANY);
    g = (gen){.kv_mode = KV_NUL_KEY};
    expect_bad(&g, "key #1", "NUL", AT_ANY);

    /* the reported offsets point at the field */
    int fields[] = {KV_BOOL2, KV_BOOL_ARR2, KV_HUGE_COUNT, KV_HUGE_STRLEN, KV_STRLEN_PAST_EOF,
                    KV_HUGE_ELEM_STRLEN, KV_BAD_ELEM_TYPE, KV_NESTED, KV_EMPTY_KEY};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        g = (gen){.kv_mode = fields[i]};
        expect_bad(&g, "key", NULL, AT_FIELD);
    }
}

static void test_tensor_fields(void) {
    gen g;
    tspec ts[2];
    memcpy(ts, k_tensors, sizeof ts);
    buf b;

#define TCASE(mutation, p1, p2)                  \
    do {                                         \
        memcpy(ts, k_tensors, sizeof ts);        \
        mutation;                                \
        g = (gen){.ts = ts, .nt = 2};            \
        expect_bad(&g, p1, p2, AT_ANY);        \
    } while (0)

    TCASE(ts[1].name = "blk.0.attn_q.weight", "duplicate tensor name 'blk.0.attn_q.weight'", NULL);
    TCASE(ts[1].name = "0123456789012345678901234567890123456789012345678901234567890123",
          "tensor #1 name", "limit is 63");
    TCASE(ts[1].name = "bad\xff", "tensor #1 name", "invalid UTF-8");
    TCASE(ts[1].name = "over\xc0\xaflong", "tensor #1 name", "invalid UTF-8");
    TCASE(ts[1].name = "surrogate\xed\xa0\x80", "tensor #1 name", "invalid UTF-8");
    g = (gen){0};
    buf b0 = generate(&g);
    free(b0.p);
    int ndims_at = (int)g.at_ti[0] + 8 + 19; /* after the 19-byte name */
    memcpy(ts, k_tensors, sizeof ts);
    ts[0].nd = 0;
    g = (gen){.ts = ts, .nt = 2};
    expect_bad(&g, "n_dims", NULL, ndims_at);
    TCASE(ts[0].nd = 0, "tensor 'blk.0.attn_q.weight' (#0) n_dims", "n_dims is 0");
    TCASE(ts[0].nd = 5, "tensor 'blk.0.attn_q.weight' (#0) n_dims", "n_dims is 5");
    TCASE(ts[1].ne[0] = (uint64_t)1 << 63, "tensor 'output_norm.weight' (#1) ne[0]", "negative");
    TCASE((ts[0].ne[0] = (uint64_t)1 << 32, ts[0].ne[1] = (uint64_t)1 << 31),
          "tensor 'blk.0.attn_q.weight' (#0) shape", "overflows");
    TCASE(ts[1].type = 4, "tensor 'output_norm.weight' (#1) type", "unknown or retired");
    TCASE(ts[1].type = 43, "tensor 'output_norm.weight' (#1) type", "unknown or retired");
    TCASE(ts[1].type = 0xFFFFFFFFu, "tensor 'output_norm.weight' (#1) type", "unknown");
    TCASE(ts[0].ne[0] = 33, "tensor 'blk.0.attn_q.weight' (#0) type", "block size 32");
#undef TCASE

    /* offsets: wrong start, overlap, out of order, past EOF; the message points at the field */
    g = (gen){.off_delta = {32, 0}};
    expect_bad(&g, "tensor 'blk.0.attn_q.weight' (#0) offset", "is 32, expected 0", AT_OFF0);
    g = (gen){.off_delta = {0, -96}};
    expect_bad(&g, "tensor 'output_norm.weight' (#1) offset", "is 0, expected 96", AT_OFF1);
    g = (gen){.off_delta = {0, 1}};
    expect_bad(&g, "(#1) offset", "expected 96", AT_ANY);
    g = (gen){.off_delta = {0, 1 << 20}};
    expect_bad(&g, "(#1) offset", "expected 96", AT_ANY);
    memcpy(ts, k_tensors, sizeof ts);
    tspec swapped[2] = {ts[1], ts[0]};
    g = (gen){.ts = swapped, .nt = 2, .off_delta = {96, -32}}; /* offsets of the original order */
    expect_bad(&g, "(#0) offset", "expected 0", AT_ANY);

    /* data past the end of the file */
    g = (gen){0};
    b = generate(&g);
    sn_err e = {0};
    sn_status st = parse_copy(b.p, b.n - 40, &e);
    CU_ASSERT_EQUAL(st, SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "tensor 'output_norm.weight' (#1) offset"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "past the end"));
    free(b.p);

    /* a tensor info claiming 2^40 elements of data in a tiny file */
    memcpy(ts, k_tensors, sizeof ts);
    ts[1].ne[0] = (uint64_t)1 << 40;
    g = (gen){.ts = ts, .nt = 2};
    expect_bad(&g, "(#1) offset", "past the end", AT_ANY);
}

static uint64_t g_seed = 12345;
static uint64_t mrand(void) {
    g_seed ^= g_seed << 13;
    g_seed ^= g_seed >> 7;
    g_seed ^= g_seed << 17;
    return g_seed;
}

/* Random corruption must never crash or read out of bounds; whatever parses must be usable. */
static void test_random_mutations(void) {
    gen g = {0};
    buf base = generate(&g);
#define RND() mrand()
    int ok_count = 0;
    for (int it = 0; it < 4000; it++) {
        size_t n = base.n;
        uint8_t *c = malloc(n);
        memcpy(c, base.p, n);
        int muts = 1 + (int)(RND() % 3);
        for (int m = 0; m < muts; m++) {
            if (n == 0) break;
            size_t at = (size_t)(RND() % n);
            switch (RND() % 5) {
            case 0: c[at] = (uint8_t)RND(); break;
            case 1: c[at] ^= (uint8_t)(1u << (RND() % 8)); break;
            case 2: if (at + 8 <= n) { uint64_t v = RND(); v >>= RND() % 64; memcpy(c + at, &v, 8); } break;
            case 3: if (at + 8 <= n) { uint64_t v = UINT64_MAX - (RND() % 4); memcpy(c + at, &v, 8); } break;
            case 4: n = at; break;
            }
        }
        uint8_t *d = malloc(n ? n : 1);
        memcpy(d, c, n);
        free(c);
        sn_gguf *r = NULL;
        sn_err e = {0};
        sn_status st = sn_gguf_open_mem(d, n, 0, &r, &e);
        if (st == SN_OK) {
            ok_count++;
            uint64_t acc = 0;
            for (int64_t i = 0; i < sn_gguf_n_kv(r); i++) {
                acc += strlen(sn_gguf_key(r, i));
                CU_ASSERT_EQUAL(sn_gguf_find_key(r, sn_gguf_key(r, i)), i);
                sn_gguf_type t = sn_gguf_kv_type(r, i);
                if (t == SN_GGUF_STR) { sn_gguf_str x = sn_gguf_get_str(r, i); for (uint64_t j = 0; j < x.len; j++) acc += (uint8_t)x.ptr[j]; }
                else if (t == SN_GGUF_ARR && sn_gguf_arr_type(r, i) == SN_GGUF_STR) {
                    for (uint64_t k = 0; k < sn_gguf_arr_n(r, i); k++) {
                        sn_gguf_str x = sn_gguf_arr_str(r, i, k);
                        for (uint64_t j = 0; j < x.len; j++) acc += (uint8_t)x.ptr[j];
                    }
                } else if (t == SN_GGUF_ARR) {
                    const uint8_t *p = sn_gguf_arr_data(r, i);
                    uint64_t bytes = sn_gguf_arr_n(r, i);
                    for (uint64_t j = 0; j < bytes; j++) acc += p[j]; /* >= 1 byte per element */
                } else {
                    acc += sn_gguf_get_u64(r, i) + sn_gguf_get_u8(r, i);
                }
                uint64_t rl;
                const uint8_t *raw = sn_gguf_kv_raw(r, i, &rl);
                for (uint64_t j = 0; j < rl; j++) acc += raw[j];
            }
            for (int64_t i = 0; i < sn_gguf_n_tensors(r); i++) {
                const sn_gguf_tensor *t = sn_gguf_tensor_at(r, i);
                CU_ASSERT_EQUAL(sn_gguf_find_tensor(r, t->name), i);
                for (uint64_t j = 0; j < t->size; j++) acc += ((const uint8_t *)t->data)[j];
            }
            (void)acc;
            sn_gguf_close(r);
        } else {
            CU_ASSERT(st == SN_EFORMAT);
            CU_ASSERT(e.msg[0] != 0);
        }
        free(d);
    }
#undef RND
    printf("\n    (%d of 4000 mutants still parsed)\n", ok_count);
    free(base.p);
}

static const sn_test_case cases[] = {
    {"the generated base file is valid (v3, v2, alignment 64)", test_valid_base},
    {"every truncation is refused with a located message", test_every_truncation},
    {"header fields: magic, version, counts", test_header_fields},
    {"KV fields: keys, types, arrays, bools, strings, alignment", test_kv_fields},
    {"tensor infos: names, dims, types, offsets, data", test_tensor_fields},
    {"random mutations never crash", test_random_mutations},
};
SN_TEST_MAIN("gguf_malformed", cases)
