/* test_blob.c - the runtime blob format: write/read round trip, INT4 quantizer pinned to exact
 * integer arithmetic, and every header field / truncation of a valid blob rejected cleanly. */
#include "blob.h"
#include "ggml_types.h"
#include "sn_test.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <unistd.h>

static char g_path[256];
static uint8_t *g_buf;
static uint64_t g_len;

static float frand(unsigned *s) { *s = *s * 1103515245u + 12345u; return ((int)((*s >> 8) & 0xffff) - 32768) / 8192.0f; }

static void write_sample(void) {
    snprintf(g_path, sizeof g_path, "/tmp/sn_test_blob_%d.snb", (int)getpid());
    sn_err err = {0};
    sn_blob_writer *w = sn_blob_writer_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    sn_gguf_writer *m = sn_blob_writer_meta(w);
    sn_gguf_writer_set_str(m, "general.architecture", "llama");
    sn_gguf_writer_set_u32(m, "llama.block_count", 2);
    sn_gguf_writer_set_str(m, "sunny.blob.dtype", "int4");
    uint64_t ne_a[1] = {10}, ne_b[2] = {8, 3}, ne_c[2] = {128, 5};
    CU_ASSERT_EQUAL(sn_blob_writer_add_tensor(w, "a", SN_BLOB_FP32, SN_BLOB_ROWMAJOR, 1, ne_a, &err), 0);
    CU_ASSERT_EQUAL(sn_blob_writer_add_tensor(w, "b", SN_BLOB_FP16, SN_BLOB_ROWMAJOR, 2, ne_b, &err), 1);
    CU_ASSERT_EQUAL(sn_blob_writer_add_tensor(w, "c", SN_BLOB_INT4G32, SN_BLOB_INT4_ROWS, 2, ne_c, &err), 2);
    CU_ASSERT(sn_blob_writer_add_tensor(w, "c", SN_BLOB_FP32, SN_BLOB_ROWMAJOR, 1, ne_a, &err) < 0);
    uint64_t bad[2] = {100, 2}; /* 100 % 64 != 0 */
    CU_ASSERT(sn_blob_writer_add_tensor(w, "d", SN_BLOB_INT4G32, SN_BLOB_INT4_ROWS, 2, bad, &err) < 0);
    CU_ASSERT_EQUAL_FATAL(sn_blob_writer_begin(w, g_path, &err), 0);
    float a[10];
    for (int i = 0; i < 10; i++) a[i] = (float)i * 0.5f;
    CU_ASSERT_EQUAL(sn_blob_writer_write(w, a, sizeof a, &err), 0);
    CU_ASSERT_EQUAL(sn_blob_writer_end_tensor(w, &err), 0);
    uint16_t b[24];
    for (int i = 0; i < 24; i++) b[i] = (uint16_t)(0x3c00 + i);
    CU_ASSERT_EQUAL(sn_blob_writer_write(w, b, sizeof b, &err), 0);
    CU_ASSERT_EQUAL(sn_blob_writer_end_tensor(w, &err), 0);
    uint64_t nb = sn_blob_tensor_nbytes(SN_BLOB_INT4G32, SN_BLOB_INT4_ROWS, 2, ne_c);
    /* 8-row groups: 5 rows take a whole group of 8; an unknown layout is no size at all */
    CU_ASSERT_EQUAL(sn_blob_tensor_nbytes(SN_BLOB_INT4G32, SN_BLOB_INT4_X8, 2, ne_c), 8 * sn_blob_int4_row_bytes(128));
    CU_ASSERT_EQUAL(sn_blob_tensor_nbytes(SN_BLOB_INT4G32, (sn_blob_layout)3, 2, ne_c), 0);
    CU_ASSERT_EQUAL(sn_blob_tensor_nbytes(SN_BLOB_INT4G32, SN_BLOB_ROWMAJOR, 2, ne_c), 0);
    uint8_t *c = calloc(1, nb);
    unsigned s = 7;
    float row[128];
    for (int r = 0; r < 5; r++) {
        for (int j = 0; j < 128; j++) row[j] = frand(&s);
        sn_blob_quantize_int4_row(row, 128, c + r * sn_blob_int4_row_bytes(128));
    }
    /* write in two pieces to exercise streaming */
    CU_ASSERT_EQUAL(sn_blob_writer_write(w, c, 100, &err), 0);
    CU_ASSERT_EQUAL(sn_blob_writer_write(w, c + 100, nb - 100, &err), 0);
    CU_ASSERT_EQUAL(sn_blob_writer_end_tensor(w, &err), 0);
    CU_ASSERT_EQUAL_FATAL(sn_blob_writer_finish(w, &err), 0);
    sn_blob_writer_free(w);
    free(c);
    FILE *f = fopen(g_path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fseek(f, 0, SEEK_END);
    g_len = (uint64_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    g_buf = malloc(g_len);
    CU_ASSERT_EQUAL(fread(g_buf, 1, g_len, f), g_len);
    fclose(f);
}

static void test_roundtrip(void) {
    write_sample();
    sn_err err = {0};
    sn_blob *b = NULL;
    CU_ASSERT_EQUAL_FATAL(sn_blob_open(g_path, SN_BLOB_VERIFY, &b, &err), 0);
    CU_ASSERT(sn_blob_sniff(g_path));
    const sn_gguf *m = sn_blob_meta(b);
    CU_ASSERT_EQUAL(sn_gguf_u32_or(m, "llama.block_count", 0), 2);
    CU_ASSERT_EQUAL(sn_blob_n_tensors(b), 3);
    const sn_blob_tensor *t = sn_blob_tensor_at(b, sn_blob_find_tensor(b, "a"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(((const float *)t->data)[3], 1.5f);
    CU_ASSERT_EQUAL((uintptr_t)t->data % 64, 0);
    t = sn_blob_tensor_at(b, sn_blob_find_tensor(b, "b"));
    CU_ASSERT_EQUAL(t->ne[0], 8);
    CU_ASSERT_EQUAL(t->ne[1], 3);
    CU_ASSERT_EQUAL(((const uint16_t *)t->data)[23], 0x3c00 + 23);
    CU_ASSERT_EQUAL(sn_blob_find_tensor(b, "zzz"), -1);
    sn_blob_close(b);
}

/* Squared error of one group of 32 as llama.cpp's Q4_0 stores it (quantize_row_q4_0_ref): d = the
 * signed max / -8, codes (int)(x / d + 8.5) clamped to 15, d kept as fp16. */
static double group_err_q4_0(const float *x) {
    float amax = 0, mx = 0;
    for (int j = 0; j < 32; j++) if (fabsf(x[j]) > amax) { amax = fabsf(x[j]); mx = x[j]; }
    const float d = mx / -8.0f, id = d ? 1.0f / d : 0.0f, d16 = sn_fp16_to_fp32(sn_fp32_to_fp16(d));
    double e = 0;
    for (int j = 0; j < 32; j++) {
        int c = (int)(x[j] * id + 8.5f);
        c = c > 15 ? 15 : c;
        const double r = (double)x[j] - (double)(c - 8) * d16;
        e += r * r;
    }
    return e;
}

/* Squared error of one group of 32 with the version-2 rule's simplest ancestor: scale amax/7. */
static double group_err_amax7(const float *x) {
    float amax = 0;
    for (int j = 0; j < 32; j++) amax = fmaxf(amax, fabsf(x[j]));
    const float d = sn_fp16_to_fp32(sn_fp32_to_fp16(amax / 7.0f));
    double e = 0;
    for (int j = 0; j < 32; j++) {
        int c = d != 0.0f ? (int)lrintf(x[j] / d) : 0;
        c = c < -8 ? -8 : c > 7 ? 7 : c;
        e += ((double)x[j] - (double)c * d) * ((double)x[j] - (double)c * d);
    }
    return e;
}

static void test_int4_exact(void) {
    /* Two groups that are exactly representable (k/2 for k in -8..7, -8 present in each): rebuilt
     * exactly, laid out as docs/BLOB.md says: 32 code bytes (byte j: element j = group 0 in the low
     * nibble, element j + 32 = group 1 in the high nibble, stored q + 8), then two fp16 scales. */
    float x[64];
    for (int j = 0; j < 64; j++) x[j] = 0.5f * (float)((j * 7) % 16 - 8);
    CU_ASSERT_EQUAL(sn_blob_int4_row_bytes(64), 36);
    uint8_t q[36];
    uint16_t sc[2];
    float y[64];
    sn_blob_quantize_int4_row(x, 64, q);
    memcpy(sc, q + 32, 4);
    sn_blob_dequantize_int4_row(q, 64, y);
    for (int j = 0; j < 64; j++) CU_ASSERT_DOUBLE_EQUAL(y[j], x[j], 1e-6);
    const float d0 = sn_fp16_to_fp32(sc[0]), d1 = sn_fp16_to_fp32(sc[1]);
    CU_ASSERT(fabsf(fabsf(d0) - 0.5f) < 1e-6f && fabsf(fabsf(d1) - 0.5f) < 1e-6f);
    for (int j = 0; j < 32; j++) {
        CU_ASSERT_EQUAL((int)(q[j] & 15) - 8, (int)lrintf(x[j] / d0));
        CU_ASSERT_EQUAL((int)(q[j] >> 4) - 8, (int)lrintf(x[j + 32] / d1));
    }
    /* different magnitudes in the two groups of a chunk get their own scales */
    for (int j = 32; j < 64; j++) x[j] *= 64.0f;
    sn_blob_quantize_int4_row(x, 64, q);
    sn_blob_dequantize_int4_row(q, 64, y);
    for (int j = 0; j < 64; j++) CU_ASSERT_DOUBLE_EQUAL(y[j], x[j], 1e-6);
    /* all-zero groups: scale 0, codes 8 */
    float z[64] = {0};
    sn_blob_quantize_int4_row(z, 64, q);
    memcpy(sc, q + 32, 4);
    CU_ASSERT_EQUAL(sc[0], 0);
    CU_ASSERT_EQUAL(sc[1], 0);
    CU_ASSERT_EQUAL(q[17], 0x88);
    /* huge values: the scale saturates at fp16's largest finite value instead of becoming inf */
    for (int j = 0; j < 64; j++) z[j] = j == 3 ? 1e9f : 1.0f;
    sn_blob_quantize_int4_row(z, 64, q);
    sn_blob_dequantize_int4_row(q, 64, y);
    for (int j = 0; j < 64; j++) CU_ASSERT(isfinite(y[j]));
    /* the scale search is never worse than Q4_0's encoding of the same group, and clearly better in
     * total (uniform and Gaussian-like weights) */
    unsigned s = 3;
    float r[256];
    uint8_t q4[144];
    double e_new = 0, e_q40 = 0, e_a7 = 0;
    for (int trial = 0; trial < 100; trial++) {
        for (int i = 0; i < 256; i++) {
            r[i] = frand(&s);
            if (trial & 1) r[i] = r[i] + frand(&s) + frand(&s) + frand(&s); /* bell-shaped */
        }
        CU_ASSERT_EQUAL(sn_blob_int4_row_bytes(256), 144);
        sn_blob_quantize_int4_row(r, 256, q4);
        float y4[256];
        sn_blob_dequantize_int4_row(q4, 256, y4);
        for (int g = 0; g < 8; g++) {
            const float *v = r + 32 * g;
            double en = 0;
            for (int j = 0; j < 32; j++) en += ((double)v[j] - y4[32 * g + j]) * ((double)v[j] - y4[32 * g + j]);
            const double eq = group_err_q4_0(v);
            CU_ASSERT(en <= eq * (1 + 1e-9) + 1e-12);
            e_new += en; e_q40 += eq; e_a7 += group_err_amax7(v);
        }
    }
    printf("(squared error vs Q4_0 %.3f, vs amax/7 %.3f) ", e_new / e_q40, e_new / e_a7);
    CU_ASSERT(e_new < 0.95 * e_q40);
    CU_ASSERT(e_new < 0.9 * e_a7);
}

static void test_damaged_header_fields(void) {
    CU_ASSERT_PTR_NOT_NULL_FATAL(g_buf);
    sn_err err = {0};
    sn_blob *b = NULL;
    CU_ASSERT_EQUAL(sn_blob_open_mem(g_buf, g_len, 0, &b, &err), 0);
    sn_blob_close(b);
    uint8_t *m = malloc(g_len);
    /* every byte of the 64-byte header, flipped: must be rejected (no field is unchecked) */
    for (int i = 0; i < 64; i++) {
        memcpy(m, g_buf, g_len);
        m[i] ^= 0x5a;
        b = NULL;
        err.msg[0] = 0;
        sn_status st = sn_blob_open_mem(m, g_len, 0, &b, &err);
        CU_ASSERT(st != 0);
        CU_ASSERT(err.msg[0] != 0);
        if (st == 0) { printf("header byte %d damage accepted\n", i); sn_blob_close(b); }
    }
    /* an older (version 1 or 2) or newer blob: the message names the field and says to regenerate */
    for (int v = 1; v <= 4; v++) {
        if (v == (int)SN_BLOB_VERSION) continue;
        memcpy(m, g_buf, g_len);
        m[4] = (uint8_t)v;
        CU_ASSERT(sn_blob_open_mem(m, g_len, 0, &b, &err) != 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "regenerate"));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "version"));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "offset 4"));
        if (v == 2) CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "groups of 64"));
    }
    /* a header field the CRC covers, set and the CRC recomputed: each field's own check must say so */
    {
        struct { int off; uint8_t v; const char *want; } f[] = {
            {16, 1, "reserved field at offset 16"}, {56, 1, "alignment"}, {60, 0x80, "unknown flags"}};
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
            memcpy(m, g_buf, g_len);
            m[f[i].off] ^= f[i].v;
            uint64_t te;
            memcpy(&te, m + 32, 8);
            uint32_t c = (uint32_t)crc32(crc32(0L, Z_NULL, 0), m + 16, (uInt)(te - 16));
            memcpy(m + 12, &c, 4);
            b = NULL;
            err.msg[0] = 0;
            CU_ASSERT(sn_blob_open_mem(m, g_len, 0, &b, &err) != 0);
            if (!strstr(err.msg, f[i].want)) printf("offset %d: '%s', want '%s'\n", f[i].off, err.msg, f[i].want);
            CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, f[i].want));
            if (b) sn_blob_close(b);
        }
    }
    /* damage in the table or metadata: caught by the header CRC */
    for (uint64_t i = 64; i < 400 && i < g_len; i += 7) {
        memcpy(m, g_buf, g_len);
        m[i] ^= 0x01;
        b = NULL;
        if (sn_blob_open_mem(m, g_len, 0, &b, &err) == 0) { CU_FAIL("table damage accepted"); sn_blob_close(b); }
    }
    /* tensor data damage: caught only with VERIFY */
    memcpy(m, g_buf, g_len);
    m[g_len - 1] ^= 0xff;
    b = NULL;
    CU_ASSERT_EQUAL(sn_blob_open_mem(m, g_len, 0, &b, &err), 0);
    sn_blob_close(b);
    b = NULL;
    CU_ASSERT(sn_blob_open_mem(m, g_len, SN_BLOB_VERIFY, &b, &err) != 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "CRC32"));
    free(m);
}

static void test_truncation_everywhere(void) {
    CU_ASSERT_PTR_NOT_NULL_FATAL(g_buf);
    for (uint64_t n = 0; n < g_len; n++) {
        uint8_t *m = malloc(n ? n : 1);
        memcpy(m, g_buf, n);
        sn_err err = {0};
        sn_blob *b = NULL;
        CU_ASSERT(sn_blob_open_mem(m, n, 0, &b, &err) != 0);
        if (b) sn_blob_close(b);
        free(m);
    }
    sn_err err = {0};
    sn_blob *b = NULL;
    CU_ASSERT(sn_blob_open("/nonexistent/x.snb", 0, &b, &err) != 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "/nonexistent/x.snb"));
    unlink(g_path);
    free(g_buf);
    g_buf = NULL;
}

static const sn_test_case cases[] = {
    {"round trip", test_roundtrip},
    {"int4 quantizer exact", test_int4_exact},
    {"damaged header fields rejected", test_damaged_header_fields},
    {"truncation at every byte rejected", test_truncation_everywhere},
};
SN_TEST_MAIN("blob", cases)
