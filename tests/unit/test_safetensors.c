/* test_safetensors.c - the safetensors reader against hand-built files, good and malformed.
 *
 * Files are assembled byte by byte here (u64 LE header length + JSON + data) so every failure mode
 * can be produced: truncation at every header byte, bad JSON, overlapping or out-of-file offsets,
 * duplicate names, unsupported dtypes, sharded folders with a missing shard. */
#include "safetensors.h"
#include "sn_test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* header JSON + data_len bytes of data (filled with i & 0xff) -> malloc'd file image */
static uint8_t *build(const char *json, size_t data_len, size_t *out_len) {
    size_t h = strlen(json);
    uint8_t *b = malloc(8 + h + data_len + 1);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)h >> (8 * i));
    memcpy(b + 8, json, h);
    for (size_t i = 0; i < data_len; i++) b[8 + h + i] = (uint8_t)i;
    *out_len = 8 + h + data_len;
    return b;
}

static uint8_t *g_keep[64]; /* buffers of open handles must outlive them */
static int g_nkeep;

static sn_status open_json(const char *json, size_t data_len, sn_st_file **f, sn_err *err) {
    size_t n;
    uint8_t *b = build(json, data_len, &n);
    sn_status st = sn_st_file_open_mem(b, n, "t.safetensors", f, err);
    if (st == SN_OK) {
        if (g_nkeep < 64) g_keep[g_nkeep++] = b;
    } else
        free(b);
    return st;
}

static const char *GOOD =
    "{\"__metadata__\":{\"format\":\"pt\"},"
    "\"b.weight\":{\"dtype\":\"BF16\",\"shape\":[2,3],\"data_offsets\":[16,28]},"
    "\"a.weight\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}";

static void test_good_file(void) {
    sn_st_file *f = NULL;
    sn_err err = {0};
    CU_ASSERT_EQUAL_FATAL(open_json(GOOD, 28, &f, &err), SN_OK);
    CU_ASSERT_EQUAL(sn_st_file_n_tensors(f), 2);
    const sn_st_tensor *a = sn_st_file_tensor(f, 0), *b = sn_st_file_tensor(f, 1);
    CU_ASSERT_STRING_EQUAL(a->name, "a.weight"); /* sorted by name */
    CU_ASSERT_STRING_EQUAL(b->name, "b.weight");
    CU_ASSERT_EQUAL(a->dtype, SN_ST_F32);
    CU_ASSERT_EQUAL(b->dtype, SN_ST_BF16);
    CU_ASSERT_EQUAL(b->n_dims, 2);
    CU_ASSERT_EQUAL(b->shape[0], 2);
    CU_ASSERT_EQUAL(b->shape[1], 3);
    CU_ASSERT_EQUAL(b->nbytes, 12);
    CU_ASSERT_EQUAL(b->file_offset, 8 + strlen(GOOD) + 16);
    CU_ASSERT_EQUAL(b->data[0], 16); /* data byte i holds i */
    CU_ASSERT_EQUAL(sn_st_file_find(f, "b.weight"), 1);
    CU_ASSERT_EQUAL(sn_st_file_find(f, "c.weight"), -1);
    sn_st_file_close(f);
}

static void test_truncation_every_byte(void) {
    size_t n;
    uint8_t *b = build(GOOD, 28, &n);
    size_t hdr_end = 8 + strlen(GOOD);
    int failures = 0;
    for (size_t len = 0; len < n; len++) {
        sn_st_file *f = NULL;
        sn_err err = {0};
        sn_status st = sn_st_file_open_mem(b, len, "trunc.safetensors", &f, &err);
        if (st == SN_OK) {
            failures++;
            sn_st_file_close(f);
            continue;
        }
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "trunc.safetensors"));
        if (len < hdr_end) CU_ASSERT(strstr(err.msg, "truncated") != NULL || strstr(err.msg, "header") != NULL);
    }
    CU_ASSERT_EQUAL(failures, 0);
    free(b);
}

/* Random byte flips in the header: every outcome is either a clean error or a file whose tensors all
 * lie inside the buffer (ASan catches any out-of-bounds read). */
static void test_random_flips(void) {
    size_t n;
    uint8_t *orig = build(GOOD, 28, &n);
    uint8_t *b = malloc(n);
    uint32_t rng = 12345;
    int ok = 0, bad = 0;
    for (int it = 0; it < 3000; it++) {
        memcpy(b, orig, n);
        int flips = 1 + it % 3;
        for (int k = 0; k < flips; k++) {
            rng = rng * 1103515245u + 12345u;
            size_t pos = (rng >> 8) % (8 + strlen(GOOD));
            rng = rng * 1103515245u + 12345u;
            b[pos] ^= (uint8_t)(1u << ((rng >> 16) % 8));
        }
        sn_st_file *f = NULL;
        sn_err err = {0};
        if (sn_st_file_open_mem(b, n, "flip", &f, &err) == SN_OK) {
            for (size_t i = 0; i < sn_st_file_n_tensors(f); i++) {
                const sn_st_tensor *t = sn_st_file_tensor(f, i);
                CU_ASSERT(t->file_offset + t->nbytes <= n);
                volatile uint8_t sink = t->nbytes ? t->data[t->nbytes - 1] : 0;
                (void)sink;
            }
            sn_st_file_close(f);
            ok++;
        } else {
            CU_ASSERT(err.msg[0] != 0);
            bad++;
        }
    }
    CU_ASSERT(bad > 0);
    free(b);
    free(orig);
}

static void expect_fail(const char *json, size_t data_len, sn_status code, const char *needle) {
    sn_st_file *f = NULL;
    sn_err err = {0};
    sn_status st = open_json(json, data_len, &f, &err);
    CU_ASSERT_EQUAL(st, code);
    if (st == SN_OK) {
        sn_st_file_close(f);
        return;
    }
    if (needle && !strstr(err.msg, needle)) {
        printf("\n  message '%s' lacks '%s'\n", err.msg, needle);
        CU_FAIL("error message");
    }
}

static void test_malformed(void) {
    expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]", 4, SN_EFORMAT, "JSON");
    expect_fail("[1,2,3]", 0, SN_EFORMAT, "JSON object");
    expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12, SN_EFORMAT, "overlap");
    expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 8, SN_EFORMAT, "past the end");
    expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, SN_EFORMAT, "twice");
    expect_fail("{\"w\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8, SN_EUNSUPPORTED, "unsupported dtype F64");
    expect_fail("{\"ids\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8, SN_EUNSUPPORTED, "'ids'");
    expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, SN_EFORMAT, "needs 12");
    /* U8 (MXFP4 blocks and scales): one byte an element, its size checked like any other */
    expect_fail("{\"b\":{\"dtype\":\"U8\",\"shape\":[2,16],\"data_offsets\":[0,16]}}", 16, SN_EFORMAT, "needs 32");
    sn_st_file *fu = NULL;
    sn_err eu = {0};
    CU_ASSERT_EQUAL(open_json("{\"b\":{\"dtype\":\"U8\",\"shape\":[2,16],\"data_offsets\":[0,32]}}", 32, &fu, &eu), SN_OK);
    if (fu) {
        CU_ASSERT_EQUAL(sn_st_file_tensor(fu, 0)->dtype, SN_ST_U8);
        CU_ASSERT_EQUAL(sn_st_file_tensor(fu, 0)->nbytes, 32);
        sn_st_file_close(fu);
    }
    expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, SN_EFORMAT, "shape[0]");
    expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}}", 8, SN_EFORMAT, "end");
    expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, SN_EFORMAT, "data_offsets");
    /* more than 4 dimensions: the file opens (a vision tower's Conv3d the converter skips), the tensor
     * is marked unsupported; its size is still checked against data_offsets */
    sn_st_file *f5 = NULL;
    sn_err e5 = {0};
    CU_ASSERT_EQUAL(open_json("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1],\"data_offsets\":[0,4]}}", 4, &f5, &e5),
                    SN_OK);
    if (f5) {
        CU_ASSERT(sn_st_file_tensor(f5, 0)->unsupported != NULL);
        sn_st_file_close(f5);
    }
    expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,2],\"data_offsets\":[0,4]}}", 4, SN_EFORMAT, "needs 8");
    expect_fail("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],\"data_offsets\":[0,4]}}", 4,
                SN_EFORMAT, "overflow");
}

static void test_header_length_limit(void) {
    uint8_t b[16] = {0};
    uint64_t h = 200ull * 1024 * 1024;
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)(h >> (8 * i));
    sn_st_file *f = NULL;
    sn_err err = {0};
    CU_ASSERT_EQUAL(sn_st_file_open_mem(b, sizeof b, "big.safetensors", &f, &err), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "100 MB"));
}

/* ---- sharded folders on disk ---- */

static char g_dir[256];

static void write_file(const char *name, const void *data, size_t n) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", g_dir, name);
    FILE *f = fopen(p, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fwrite(data, 1, n, f);
    fclose(f);
}

static void write_st(const char *name, const char *json, size_t data_len) {
    size_t n;
    uint8_t *b = build(json, data_len, &n);
    write_file(name, b, n);
    free(b);
}

static void make_dir(void) {
    snprintf(g_dir, sizeof g_dir, "/tmp/sn_test_st_%d", (int)getpid());
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
    mkdir(g_dir, 0755);
}

static void rm_dir(void) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
}

static void test_sharded(void) {
    make_dir();
    write_st("model-00002-of-00002.safetensors", "{\"z\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4);
    write_st("model-00001-of-00002.safetensors",
             "{\"y\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
             "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8);
    const char *idx = "{\"metadata\":{},\"weight_map\":{\"z\":\"model-00002-of-00002.safetensors\","
                      "\"y\":\"model-00001-of-00002.safetensors\",\"b\":\"model-00001-of-00002.safetensors\"}}";
    write_file("model.safetensors.index.json", idx, strlen(idx));
    sn_st_model *m = NULL;
    sn_err err = {0};
    CU_ASSERT_EQUAL_FATAL(sn_st_model_open(g_dir, &m, &err), SN_OK);
    CU_ASSERT_EQUAL(sn_st_model_n_files(m), 2);
    CU_ASSERT_EQUAL(sn_st_model_n_tensors(m), 3);
    /* shard order, then name order inside a shard (llama.cpp's visiting order) */
    CU_ASSERT_STRING_EQUAL(sn_st_model_tensor(m, 0)->name, "b");
    CU_ASSERT_STRING_EQUAL(sn_st_model_tensor(m, 1)->name, "y");
    CU_ASSERT_STRING_EQUAL(sn_st_model_tensor(m, 2)->name, "z");
    CU_ASSERT_EQUAL(sn_st_model_find(m, "z"), 2);
    CU_ASSERT_EQUAL(sn_st_model_data_bytes(m), 12);
    sn_st_model_close(m);

    /* index naming a shard that is not there */
    const char *idx2 = "{\"weight_map\":{\"z\":\"model-00002-of-00002.safetensors\",\"q\":\"model-00003-of-00003.safetensors\"}}";
    write_file("model.safetensors.index.json", idx2, strlen(idx2));
    CU_ASSERT_EQUAL(sn_st_model_open(g_dir, &m, &err), SN_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "model-00003-of-00003.safetensors"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "model.safetensors.index.json"));

    /* index placing a tensor in a shard that lacks it */
    const char *idx3 = "{\"weight_map\":{\"z\":\"model-00001-of-00002.safetensors\",\"y\":\"model-00001-of-00002.safetensors\"}}";
    write_file("model.safetensors.index.json", idx3, strlen(idx3));
    CU_ASSERT_EQUAL(sn_st_model_open(g_dir, &m, &err), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'z'"));

    /* a shard path with '/' (either index kind) is refused; the message quotes the parsed JSON, which
     * once was freed first (use after free under ASan, garbage otherwise) */
    const char *idx4 = "{\"weight_map\":{\"z\":\"../x.safetensors\"}}";
    write_file("model.safetensors.index.json", idx4, strlen(idx4));
    CU_ASSERT_EQUAL(sn_st_model_open(g_dir, &m, &err), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'../x.safetensors'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'z'"));
    rm_dir();
    make_dir();
    write_file("pytorch_model-00001-of-00001.bin", "PK", 2);
    const char *idx5 = "{\"weight_map\":{\"lm_head.weight\":\"sub/pytorch_model-00001-of-00001.bin\"}}";
    write_file("pytorch_model.bin.index.json", idx5, strlen(idx5));
    CU_ASSERT_EQUAL(sn_st_model_open(g_dir, &m, &err), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "'sub/pytorch_model-00001-of-00001.bin'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "pytorch_model.bin.index.json"));
    rm_dir();
}

static void test_unindexed_and_duplicates(void) {
    make_dir();
    write_st("model-00001-of-00002.safetensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4);
    write_st("model-00002-of-00002.safetensors", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4);
    sn_st_model *m = NULL;
    sn_err err = {0};
    CU_ASSERT_EQUAL(sn_st_model_open(g_dir, &m, &err), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "appears in both"));
    rm_dir();
    make_dir();
    CU_ASSERT_EQUAL(sn_st_model_open(g_dir, &m, &err), SN_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no model*.safetensors"));
    rm_dir();
}

static const sn_test_case cases[] = {
    {"good file", test_good_file},
    {"truncation at every byte", test_truncation_every_byte},
    {"random header bit flips", test_random_flips},
    {"malformed headers", test_malformed},
    {"header length limit", test_header_length_limit},
    {"sharded folder + index", test_sharded},
    {"unindexed shards, duplicates, empty folder", test_unindexed_and_duplicates},
};
SN_TEST_MAIN("safetensors", cases)
