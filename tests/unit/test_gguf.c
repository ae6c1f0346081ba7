/* test_gguf.c - GGUF writer -> reader round trips and the exact bytes the writer produces.
 *
 * The writer must produce what gguf-py's GGUFWriter produces (llama.cpp reads both), so one test
 * spells out a whole small file byte by byte from the format description; the others write every
 * KV type, arrays (numeric, string, empty), an alignment override and several tensor types, read
 * the file back and compare every value, offset and data byte. */
#include "ggml_types.h"
#include "gguf.h"
#include "sn_test.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static char g_path[256];

static const char *tmp_path(const char *tag) {
    snprintf(g_path, sizeof g_path, "test_gguf_%s_%d.gguf", tag, (int)getpid());
    return g_path;
}

static uint8_t *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(sz > 0 ? (size_t)sz : 1);
    *n = fread(b, 1, (size_t)sz, f);
    fclose(f);
    return b;
}

/* --- a byte-exact expectation ------------------------------------------------------------------ */
typedef struct { uint8_t b[512]; size_t n; } buf;
static void put(buf *x, const void *p, size_t n) { memcpy(x->b + x->n, p, n); x->n += n; }
static void p32(buf *x, uint32_t v) { put(x, &v, 4); }
static void p64(buf *x, uint64_t v) { put(x, &v, 8); }
static void pstr(buf *x, const char *s) { p64(x, strlen(s)); put(x, s, strlen(s)); }
static void pzero(buf *x, size_t to) { while (x->n % to) x->b[x->n++] = 0; }

static void test_writer_exact_bytes(void) {
    sn_err e = {0};
    sn_gguf_writer *w = sn_gguf_writer_new();
    CU_ASSERT_EQUAL(sn_gguf_writer_set_str(w, "general.architecture", "llama"), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_u32(w, "n", 7), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_bool(w, "b", 1), SN_OK);
    const char *s[] = {"ab", ""};
    CU_ASSERT_EQUAL(sn_gguf_writer_set_arr_str(w, "s", s, NULL, 2), SN_OK);
    uint64_t ne1[1] = {3}, ne2[2] = {32, 1};
    CU_ASSERT_EQUAL(sn_gguf_writer_add_tensor(w, "t0", 1, ne1, SN_GGML_F32, &e), 0);
    CU_ASSERT_EQUAL(sn_gguf_writer_add_tensor(w, "t1", 2, ne2, SN_GGML_Q8_0, &e), 1);
    CU_ASSERT_EQUAL(sn_gguf_writer_tensor_size(w, 1), 34);
    const char *path = tmp_path("exact");
    CU_ASSERT_EQUAL_FATAL(sn_gguf_writer_begin(w, path, &e), SN_OK);
    float f[3] = {1.0f, -2.0f, 0.5f};
    CU_ASSERT_EQUAL(sn_gguf_writer_write(w, f, 8, &e), SN_OK); /* in two pieces */
    CU_ASSERT_EQUAL(sn_gguf_writer_write(w, (uint8_t *)f + 8, 4, &e), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_end_tensor(w, &e), SN_OK);
    uint8_t q[34];
    for (int i = 0; i < 34; i++) q[i] = (uint8_t)(i + 1);
    CU_ASSERT_EQUAL(sn_gguf_writer_write(w, q, 34, &e), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_end_tensor(w, &e), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_finish(w, &e), SN_OK);
    uint64_t total = sn_gguf_writer_total_size(w);
    sn_gguf_writer_free(w);

    buf x = {{0}, 0};
    put(&x, "GGUF", 4);
    p32(&x, 3);
    p64(&x, 2);
    p64(&x, 4);
    pstr(&x, "general.architecture"); p32(&x, 8); pstr(&x, "llama");
    pstr(&x, "n"); p32(&x, 4); p32(&x, 7);
    pstr(&x, "b"); p32(&x, 7); x.b[x.n++] = 1;
    pstr(&x, "s"); p32(&x, 9); p32(&x, 8); p64(&x, 2); pstr(&x, "ab"); pstr(&x, "");
    pstr(&x, "t0"); p32(&x, 1); p64(&x, 3); p32(&x, 0); p64(&x, 0);
    pstr(&x, "t1"); p32(&x, 2); p64(&x, 32); p64(&x, 1); p32(&x, 8); p64(&x, 32);
    pzero(&x, 32);
    put(&x, f, 12); pzero(&x, 32);
    put(&x, q, 34); pzero(&x, 32);

    size_t n = 0;
    uint8_t *got = slurp(path, &n);
    CU_ASSERT_EQUAL(n, x.n);
    CU_ASSERT_EQUAL(total, x.n);
    CU_ASSERT(got && n == x.n && memcmp(got, x.b, n) == 0);
    free(got);
    unlink(path);
}

/* --- full round trip ---------------------------------------------------------------------------- */
static void test_round_trip_all_types(void) {
    sn_err e = {0};
    sn_gguf_writer *w = sn_gguf_writer_new();
    CU_ASSERT_EQUAL(sn_gguf_writer_set_str(w, "general.architecture", "test"), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_u8(w, "k.u8", 250), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_i8(w, "k.i8", -120), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_u16(w, "k.u16", 65000), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_i16(w, "k.i16", -32000), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_u32(w, "k.u32", 4000000000u), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_i32(w, "k.i32", -2000000000), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_f32(w, "k.f32", 3.25f), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_bool(w, "k.bool", 1), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_u64(w, "k.u64", UINT64_MAX - 1), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_i64(w, "k.i64", INT64_MIN + 1), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_f64(w, "k.f64", -1.0e300), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_strn(w, "k.str", "h\xc3\xa9llo\0x", 8), SN_OK); /* embedded NUL ok in values */
    CU_ASSERT_EQUAL(sn_gguf_writer_set_str(w, "k.empty_str", ""), SN_OK);
    float fa[4] = {1.5f, -0.0f, INFINITY, 1e-40f};
    CU_ASSERT_EQUAL(sn_gguf_writer_set_arr(w, "a.f32", SN_GGUF_F32, fa, 4), SN_OK);
    int64_t ia[3] = {INT64_MIN, 0, INT64_MAX};
    CU_ASSERT_EQUAL(sn_gguf_writer_set_arr(w, "a.i64", SN_GGUF_I64, ia, 3), SN_OK);
    uint8_t ba[3] = {1, 0, 1};
    CU_ASSERT_EQUAL(sn_gguf_writer_set_arr(w, "a.bool", SN_GGUF_BOOL, ba, 3), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_arr(w, "a.empty", SN_GGUF_U32, NULL, 0), SN_OK);
    const char *strs[] = {"<s>", "", "\xe2\x96\x81the", "x"};
    uint64_t lens[] = {3, 0, 6, 1};
    CU_ASSERT_EQUAL(sn_gguf_writer_set_arr_str(w, "a.str", strs, lens, 4), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_arr_str(w, "a.str_empty", NULL, NULL, 0), SN_OK);
    /* bad inputs */
    CU_ASSERT_EQUAL(sn_gguf_writer_set_u32(w, "", 1), SN_EINVAL);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_u32(w, "bad\xff", 1), SN_EINVAL);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_arr(w, "a.nested", SN_GGUF_ARR, ia, 1), SN_EINVAL);
    uint8_t bad_bool = 2;
    CU_ASSERT_EQUAL(sn_gguf_writer_set_arr(w, "a.badbool", SN_GGUF_BOOL, &bad_bool, 1), SN_EINVAL);
    /* replacing keeps the position; removing drops it */
    CU_ASSERT_EQUAL(sn_gguf_writer_set_u32(w, "k.u32", 4000000001u), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_u8(w, "k.gone", 1), SN_OK);
    CU_ASSERT(sn_gguf_writer_has_key(w, "k.gone"));
    CU_ASSERT_EQUAL(sn_gguf_writer_remove_key(w, "k.gone"), SN_OK);
    CU_ASSERT(!sn_gguf_writer_has_key(w, "k.gone"));

    /* tensors of several types, including a zero-size one */
    struct { const char *name; uint32_t nd; uint64_t ne[4]; int type; } ts[] = {
        {"token_embd.weight", 2, {64, 3}, SN_GGML_F16},
        {"blk.0.attn_q.weight", 2, {32, 2}, SN_GGML_Q8_0},
        {"blk.0.attn_k.weight", 3, {32, 1, 2}, SN_GGML_Q4_0},
        {"blk.0.ffn_down.weight", 2, {256, 2}, SN_GGML_Q4_K},
        {"output.weight", 2, {256, 1}, SN_GGML_Q6_K},
        {"output_norm.weight", 1, {5}, SN_GGML_F32},
        {"empty", 2, {0, 4}, SN_GGML_BF16},
        {"i32s", 4, {1, 2, 1, 3}, SN_GGML_I32},
    };
    const int nt = (int)(sizeof ts / sizeof ts[0]);
    for (int i = 0; i < nt; i++)
        CU_ASSERT_EQUAL(sn_gguf_writer_add_tensor(w, ts[i].name, ts[i].nd, ts[i].ne, ts[i].type, &e), i);
    uint64_t ne_bad[2] = {33, 1};
    CU_ASSERT(sn_gguf_writer_add_tensor(w, "bad", 2, ne_bad, SN_GGML_Q8_0, &e) < 0);
    CU_ASSERT(sn_gguf_writer_add_tensor(w, "output.weight", 2, ts[4].ne, SN_GGML_F32, &e) < 0);
    CU_ASSERT(sn_gguf_writer_add_tensor(w, "x", 0, ne_bad, SN_GGML_F32, &e) < 0);
    CU_ASSERT(sn_gguf_writer_add_tensor(w, "x", 5, ne_bad, SN_GGML_F32, &e) < 0);
    CU_ASSERT(sn_gguf_writer_add_tensor(w, "x", 1, ne_bad, 4, &e) < 0); /* retired type */
    char longname[80];
    memset(longname, 'a', 64);
    longname[64] = 0;
    CU_ASSERT(sn_gguf_writer_add_tensor(w, longname, 1, ne_bad, SN_GGML_F32, &e) < 0);
    longname[63] = 0; /* 63 bytes is the maximum */
    CU_ASSERT_EQUAL(sn_gguf_writer_add_tensor(w, longname, 1, ne_bad, SN_GGML_F32, &e), nt);

    const char *path = tmp_path("rt");
    CU_ASSERT_EQUAL_FATAL(sn_gguf_writer_begin(w, path, &e), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_set_u8(w, "late", 1), SN_EINVAL);
    uint8_t *data[16];
    for (int i = 0; i <= nt; i++) {
        uint64_t sz = sn_gguf_writer_tensor_size(w, i);
        data[i] = malloc(sz + 1);
        for (uint64_t j = 0; j < sz; j++) data[i][j] = (uint8_t)(j * 31 + (uint64_t)i * 7);
        if (i == 1) { /* wrong byte count is refused */
            CU_ASSERT_NOT_EQUAL(sn_gguf_writer_end_tensor(w, &e), SN_OK);
            CU_ASSERT_NOT_EQUAL(sn_gguf_writer_write(w, data[i], sz + 1, &e), SN_OK);
        }
        CU_ASSERT_EQUAL(sn_gguf_writer_write(w, data[i], sz, &e), SN_OK);
        CU_ASSERT_EQUAL(sn_gguf_writer_end_tensor(w, &e), SN_OK);
    }
    CU_ASSERT_EQUAL(sn_gguf_writer_finish(w, &e), SN_OK);
    uint64_t total = sn_gguf_writer_total_size(w);
    sn_gguf_writer_free(w);

    sn_gguf *g = NULL;
    sn_status st = sn_gguf_open(path, 0, &g, &e);
    if (st) fprintf(stderr, "open: %s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(st, SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_file_size(g), total);
    CU_ASSERT_EQUAL(sn_gguf_version(g), 3);
    CU_ASSERT_EQUAL(sn_gguf_alignment(g), 32);
    CU_ASSERT_EQUAL(sn_gguf_data_offset(g) % 32, 0);
    CU_ASSERT_EQUAL(sn_gguf_n_kv(g), 20);
    CU_ASSERT_STRING_EQUAL(sn_gguf_key(g, 0), "general.architecture");
    CU_ASSERT_STRING_EQUAL(sn_gguf_key(g, 5), "k.u32"); /* replaced in place */
    CU_ASSERT_EQUAL(sn_gguf_find_key(g, "k.gone"), -1);
    CU_ASSERT_EQUAL(sn_gguf_find_key(g, "nope"), -1);
#define KV(name) sn_gguf_find_key(g, name)
    CU_ASSERT_EQUAL(sn_gguf_kv_type(g, KV("k.u8")), SN_GGUF_U8);
    CU_ASSERT_EQUAL(sn_gguf_get_u8(g, KV("k.u8")), 250);
    CU_ASSERT_EQUAL(sn_gguf_get_i8(g, KV("k.i8")), -120);
    CU_ASSERT_EQUAL(sn_gguf_get_u16(g, KV("k.u16")), 65000);
    CU_ASSERT_EQUAL(sn_gguf_get_i16(g, KV("k.i16")), -32000);
    CU_ASSERT_EQUAL(sn_gguf_get_u32(g, KV("k.u32")), 4000000001u);
    CU_ASSERT_EQUAL(sn_gguf_get_i32(g, KV("k.i32")), -2000000000);
    CU_ASSERT_EQUAL(sn_gguf_get_f32(g, KV("k.f32")), 3.25f);
    CU_ASSERT_EQUAL(sn_gguf_get_bool(g, KV("k.bool")), 1);
    CU_ASSERT_EQUAL(sn_gguf_get_u64(g, KV("k.u64")), UINT64_MAX - 1);
    CU_ASSERT_EQUAL(sn_gguf_get_i64(g, KV("k.i64")), INT64_MIN + 1);
    CU_ASSERT_EQUAL(sn_gguf_get_f64(g, KV("k.f64")), -1.0e300);
    CU_ASSERT_EQUAL(sn_gguf_get_u32(g, KV("k.u8")), 0); /* type mismatch -> 0 */
    sn_gguf_str s = sn_gguf_get_str(g, KV("k.str"));
    CU_ASSERT(s.len == 8 && memcmp(s.ptr, "h\xc3\xa9llo\0x", 8) == 0);
    CU_ASSERT_EQUAL(sn_gguf_get_str(g, KV("k.empty_str")).len, 0);
    CU_ASSERT_EQUAL(sn_gguf_u32_or(g, "k.u32", 1), 4000000001u);
    CU_ASSERT_EQUAL(sn_gguf_u32_or(g, "k.u8", 1), 1);
    CU_ASSERT_EQUAL(sn_gguf_u32_or(g, "absent", 9), 9);
    CU_ASSERT_EQUAL(sn_gguf_f32_or(g, "k.f32", 0), 3.25f);
    CU_ASSERT_EQUAL(sn_gguf_bool_or(g, "absent", 1), 1);
    char *arch = sn_gguf_str_dup(g, "general.architecture");
    CU_ASSERT(arch && strcmp(arch, "test") == 0);
    free(arch);
    CU_ASSERT_PTR_NULL(sn_gguf_str_dup(g, "k.u8"));

    CU_ASSERT_EQUAL(sn_gguf_kv_type(g, KV("a.f32")), SN_GGUF_ARR);
    CU_ASSERT_EQUAL(sn_gguf_arr_type(g, KV("a.f32")), SN_GGUF_F32);
    CU_ASSERT_EQUAL(sn_gguf_arr_n(g, KV("a.f32")), 4);
    CU_ASSERT(memcmp(sn_gguf_arr_data(g, KV("a.f32")), fa, sizeof fa) == 0);
    CU_ASSERT(memcmp(sn_gguf_arr_data(g, KV("a.i64")), ia, sizeof ia) == 0);
    CU_ASSERT(memcmp(sn_gguf_arr_data(g, KV("a.bool")), ba, sizeof ba) == 0);
    CU_ASSERT_EQUAL(sn_gguf_arr_type(g, KV("a.empty")), SN_GGUF_U32);
    CU_ASSERT_EQUAL(sn_gguf_arr_n(g, KV("a.empty")), 0);
    CU_ASSERT_EQUAL(sn_gguf_arr_n(g, KV("a.str")), 4);
    for (int j = 0; j < 4; j++) {
        sn_gguf_str a = sn_gguf_arr_str(g, KV("a.str"), (uint64_t)j);
        CU_ASSERT(a.len == lens[j] && memcmp(a.ptr, strs[j], lens[j]) == 0);
    }
    CU_ASSERT_EQUAL(sn_gguf_arr_str(g, KV("a.str"), 4).len, 0); /* out of range -> empty */
    CU_ASSERT_PTR_NULL(sn_gguf_arr_data(g, KV("a.str")));
    CU_ASSERT_EQUAL(sn_gguf_arr_n(g, KV("a.str_empty")), 0);
    CU_ASSERT_EQUAL(sn_gguf_arr_type(g, KV("a.str_empty")), SN_GGUF_STR);
#undef KV

    CU_ASSERT_EQUAL(sn_gguf_n_tensors(g), nt + 1);
    uint64_t expect_off = 0;
    for (int i = 0; i <= nt; i++) {
        const sn_gguf_tensor *t = sn_gguf_tensor_at(g, i);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_EQUAL(sn_gguf_find_tensor(g, t->name), i);
        if (i < nt) {
            CU_ASSERT_STRING_EQUAL(t->name, ts[i].name);
            CU_ASSERT_EQUAL(t->n_dims, ts[i].nd);
            CU_ASSERT_EQUAL(t->type, ts[i].type);
            for (uint32_t d = 0; d < 4; d++)
                CU_ASSERT_EQUAL(t->ne[d], d < ts[i].nd ? ts[i].ne[d] : 1);
        }
        CU_ASSERT_EQUAL(t->offset, expect_off);
        uint64_t nel = t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
        CU_ASSERT_EQUAL(t->size, nel / sn_ggml_blck_size(t->type) * sn_ggml_type_size(t->type));
        CU_ASSERT(t->data == NULL || t->size == 0 || memcmp(t->data, data[i], t->size) == 0);
        CU_ASSERT_PTR_NOT_NULL(t->data);
        expect_off += (t->size + 31) / 32 * 32;
        free(data[i]);
    }
    CU_ASSERT_EQUAL(sn_gguf_data_offset(g) + expect_off, total);
    CU_ASSERT_EQUAL(sn_gguf_find_tensor(g, "nope"), -1);
    CU_ASSERT_PTR_NULL(sn_gguf_tensor_at(g, nt + 1));

    /* copying KVs from a reader reproduces them byte for byte */
    sn_gguf_writer *w2 = sn_gguf_writer_new();
    for (int64_t i = 0; i < sn_gguf_n_kv(g); i++) CU_ASSERT_EQUAL(sn_gguf_writer_copy_kv(w2, g, i), SN_OK);
    const char *p2 = "test_gguf_copy.gguf";
    CU_ASSERT_EQUAL(sn_gguf_writer_begin(w2, p2, &e), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_finish(w2, &e), SN_OK);
    sn_gguf_writer_free(w2);
    sn_gguf *g2 = NULL;
    CU_ASSERT_EQUAL_FATAL(sn_gguf_open(p2, 0, &g2, &e), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_n_kv(g2), sn_gguf_n_kv(g));
    for (int64_t i = 0; i < sn_gguf_n_kv(g); i++) {
        uint64_t l1, l2;
        const void *r1 = sn_gguf_kv_raw(g, i, &l1), *r2 = sn_gguf_kv_raw(g2, i, &l2);
        CU_ASSERT(l1 == l2 && memcmp(r1, r2, l1) == 0);
    }
    sn_gguf_close(g2);
    unlink(p2);
    sn_gguf_close(g);
    unlink(path);
}

static void test_alignment_override(void) {
    sn_err e = {0};
    sn_gguf_writer *w = sn_gguf_writer_new();
    CU_ASSERT_EQUAL(sn_gguf_writer_set_u32(w, "general.alignment", 64), SN_OK);
    uint64_t ne[1] = {3};
    sn_gguf_writer_add_tensor(w, "a", 1, ne, SN_GGML_F32, &e);
    sn_gguf_writer_add_tensor(w, "b", 1, ne, SN_GGML_F16, &e);
    const char *path = tmp_path("align");
    CU_ASSERT_EQUAL_FATAL(sn_gguf_writer_begin(w, path, &e), SN_OK);
    float f[3] = {1, 2, 3};
    uint16_t h[3] = {1, 2, 3};
    sn_gguf_writer_write(w, f, 12, &e);
    sn_gguf_writer_end_tensor(w, &e);
    sn_gguf_writer_write(w, h, 6, &e);
    sn_gguf_writer_end_tensor(w, &e);
    CU_ASSERT_EQUAL(sn_gguf_writer_finish(w, &e), SN_OK);
    sn_gguf_writer_free(w);
    sn_gguf *g = NULL;
    CU_ASSERT_EQUAL_FATAL(sn_gguf_open(path, 0, &g, &e), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_alignment(g), 64);
    CU_ASSERT_EQUAL(sn_gguf_data_offset(g) % 64, 0);
    CU_ASSERT_EQUAL(sn_gguf_tensor_at(g, 1)->offset, 64);
    CU_ASSERT_EQUAL(sn_gguf_file_size(g), sn_gguf_data_offset(g) + 128);
    CU_ASSERT(memcmp(sn_gguf_tensor_at(g, 1)->data, h, 6) == 0);
    sn_gguf_close(g);
    unlink(path);

    /* a bad alignment key is refused by the writer */
    w = sn_gguf_writer_new();
    CU_ASSERT_EQUAL(sn_gguf_writer_set_u32(w, "general.alignment", 48), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_begin(w, path, &e), SN_EINVAL);
    sn_gguf_writer_free(w);
    w = sn_gguf_writer_new();
    CU_ASSERT_EQUAL(sn_gguf_writer_set_u64(w, "general.alignment", 64), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_writer_begin(w, path, &e), SN_EINVAL);
    sn_gguf_writer_free(w);
    unlink(path);
}

static void test_open_errors(void) {
    sn_err e = {0};
    sn_gguf *g = NULL;
    CU_ASSERT_EQUAL(sn_gguf_open("/nonexistent/x.gguf", 0, &g, &e), SN_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "/nonexistent/x.gguf"));
    CU_ASSERT_PTR_NULL(g);
    const char *path = tmp_path("empty");
    FILE *f = fopen(path, "wb");
    fclose(f);
    CU_ASSERT_EQUAL(sn_gguf_open(path, 0, &g, &e), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, path));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "magic"));
    unlink(path);
}

/* A header-only open accepts a file whose data section is missing. */
static void test_no_data_flag(void) {
    sn_err e = {0};
    sn_gguf_writer *w = sn_gguf_writer_new();
    uint64_t ne[2] = {64, 64};
    sn_gguf_writer_add_tensor(w, "big", 2, ne, SN_GGML_F32, &e);
    const char *path = tmp_path("nodata");
    CU_ASSERT_EQUAL_FATAL(sn_gguf_writer_begin(w, path, &e), SN_OK);
    float row[64] = {0};
    for (int i = 0; i < 64; i++) sn_gguf_writer_write(w, row, sizeof row, &e);
    sn_gguf_writer_end_tensor(w, &e);
    CU_ASSERT_EQUAL(sn_gguf_writer_finish(w, &e), SN_OK);
    sn_gguf_writer_free(w);
    size_t n = 0;
    uint8_t *b = slurp(path, &n);
    sn_gguf *g = NULL;
    CU_ASSERT_EQUAL(sn_gguf_open_mem(b, n - 100, 0, &g, &e), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "'big'"));
    CU_ASSERT_EQUAL(sn_gguf_open_mem(b, 100, SN_GGUF_NO_DATA, &g, &e), SN_OK);
    CU_ASSERT_PTR_NULL(sn_gguf_tensor_at(g, 0)->data);
    CU_ASSERT_EQUAL(sn_gguf_tensor_at(g, 0)->size, 64 * 64 * 4);
    sn_gguf_close(g);
    free(b);
    unlink(path);
}

/* Data larger than the writer's buffer, in pieces that hit every path (copy, flush, writev of
 * buffer + piece, pieces larger than the buffer), comes back intact and correctly padded. */
static void test_large_streaming(void) {
    sn_err e = {0};
    sn_gguf_writer *w = sn_gguf_writer_new();
    CU_ASSERT_EQUAL(sn_gguf_writer_set_str(w, "general.architecture", "x"), SN_OK);
    uint64_t ne_a[1] = {(9u << 20) / 4 + 3}, ne_b[1] = {5}, ne_c[2] = {1u << 20, 7};
    CU_ASSERT_EQUAL(sn_gguf_writer_add_tensor(w, "a", 1, ne_a, SN_GGML_F32, &e), 0);
    CU_ASSERT_EQUAL(sn_gguf_writer_add_tensor(w, "b", 1, ne_b, SN_GGML_F16, &e), 1);
    CU_ASSERT_EQUAL(sn_gguf_writer_add_tensor(w, "c", 2, ne_c, SN_GGML_I8, &e), 2);
    const char *path = tmp_path("large");
    CU_ASSERT_EQUAL_FATAL(sn_gguf_writer_begin(w, path, &e), SN_OK);
    uint64_t sizes[3] = {ne_a[0] * 4, 10, ne_c[0] * ne_c[1]};
    const uint64_t pieces[][6] = {{7, 2u << 20, (1u << 20) - 7, 5u << 20, 1, 0},
                                  {3, 7, 0, 0, 0, 0},
                                  {1, (6u << 20) - 1, 12345, 0, 0, 0}};
    uint8_t *data[3];
    for (int t = 0; t < 3; t++) {
        data[t] = malloc(sizes[t]);
        for (uint64_t j = 0; j < sizes[t]; j++) data[t][j] = (uint8_t)((j * 2654435761u) >> 13) ^ (uint8_t)t;
        uint64_t done = 0;
        for (int k = 0; k < 6 && pieces[t][k]; k++) {
            CU_ASSERT_EQUAL(sn_gguf_writer_write(w, data[t] + done, pieces[t][k], &e), SN_OK);
            done += pieces[t][k];
        }
        CU_ASSERT_EQUAL(sn_gguf_writer_write(w, data[t] + done, sizes[t] - done, &e), SN_OK);
        CU_ASSERT_EQUAL(sn_gguf_writer_end_tensor(w, &e), SN_OK);
    }
    CU_ASSERT_EQUAL(sn_gguf_writer_finish(w, &e), SN_OK);
    uint64_t total = sn_gguf_writer_total_size(w);
    sn_gguf_writer_free(w);
    sn_gguf *g = NULL;
    CU_ASSERT_EQUAL_FATAL(sn_gguf_open(path, 0, &g, &e), SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_file_size(g), total);
    for (int t = 0; t < 3; t++) {
        const sn_gguf_tensor *ti = sn_gguf_tensor_at(g, t);
        CU_ASSERT_EQUAL(ti->size, sizes[t]);
        CU_ASSERT(memcmp(ti->data, data[t], sizes[t]) == 0);
        /* padding after each tensor is zeros */
        const uint8_t *end = (const uint8_t *)ti->data + ti->size;
        uint64_t padn = (32 - ti->size % 32) % 32;
        int nz = 0;
        for (uint64_t j = 0; j < padn; j++) nz += end[j] != 0;
        CU_ASSERT_EQUAL(nz, 0);
        free(data[t]);
    }
    sn_gguf_close(g);
    unlink(path);
}

static const sn_test_case cases[] = {
    {"large tensors stream through every buffer path", test_large_streaming},
    {"writer produces the exact bytes of the format", test_writer_exact_bytes},
    {"round trip of every KV type, arrays and tensors", test_round_trip_all_types},
    {"general.alignment override", test_alignment_override},
    {"open errors name the file", test_open_errors},
    {"SN_GGUF_NO_DATA reads headers of truncated files", test_no_data_flag},
};
SN_TEST_MAIN("gguf", cases)
