/* test_sparse4g.c - offsets above 4 GiB: a safetensors file, a GGUF (single and split) and a runtime
 * blob whose last tensor starts past 4 GiB, written as sparse files (a hole where the big tensor's
 * zeros would be, so the test costs no disk), must open and give that tensor's values - the ones
 * written at its offset; and the GGUF writer, streaming such a file into a pipe, must place the last
 * tensor where it writes it. A 32-bit offset anywhere on the way would read the hole's zeros, refuse
 * the file or misplace the tensor. */
#include "sn_test.h"

#include "blob.h"
#include "gguf.h"
#include "safetensors.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define BIG_ELEMS 1207959552ull /* F32: 4.5 GiB */
static const float LAST[4] = {1.5f, -2.25f, 3.0f, 4096.125f};

static int make_tmp(char *path, size_t cap, const char *suffix) {
    const char *dir = getenv("TMPDIR");
    snprintf(path, cap, "%s/sn-sparse4g-XXXXXX%s", dir && *dir ? dir : "/tmp", suffix);
    return mkstemps(path, (int)strlen(suffix));
}

static void test_safetensors(void) {
    char path[512];
    int fd = make_tmp(path, sizeof path, ".safetensors");
    CU_ASSERT_FATAL(fd >= 0);
    const uint64_t big = BIG_ELEMS * 4;
    char hdr[512];
    int n = snprintf(hdr, sizeof hdr,
                     "{\"big\":{\"dtype\":\"F32\",\"shape\":[%llu],\"data_offsets\":[0,%llu]},"
                     "\"last\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[%llu,%llu]}}",
                     (unsigned long long)BIG_ELEMS, (unsigned long long)big, (unsigned long long)big,
                     (unsigned long long)big + 16);
    while (n % 8) hdr[n++] = ' '; /* the header is padded with spaces to 8 bytes */
    uint64_t hl = (uint64_t)n;
    CU_ASSERT(pwrite(fd, &hl, 8, 0) == 8);
    CU_ASSERT(pwrite(fd, hdr, (size_t)n, 8) == n);
    const uint64_t at = 8 + hl + big;
    CU_ASSERT(pwrite(fd, LAST, sizeof LAST, (off_t)at) == (ssize_t)sizeof LAST); /* the rest is a hole */
    close(fd);
    sn_st_file *f = NULL;
    sn_err err = {0};
    sn_status st = sn_st_file_open(path, &f, &err);
    if (st) fprintf(stderr, "safetensors: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(st, SN_OK);
    int64_t i = sn_st_file_find(f, "last");
    CU_ASSERT_FATAL(i >= 0);
    const sn_st_tensor *t = sn_st_file_tensor(f, (size_t)i);
    CU_ASSERT_EQUAL(t->file_offset, at);
    CU_ASSERT(t->file_offset > (1ull << 32));
    CU_ASSERT(memcmp(t->data, LAST, sizeof LAST) == 0);
    sn_st_file_close(f);
    unlink(path);
}

static void put_str(uint8_t *b, size_t *k, const char *s) {
    uint64_t l = strlen(s);
    memcpy(b + *k, &l, 8);
    memcpy(b + *k + 8, s, l);
    *k += 8 + l;
}
static void put_u32(uint8_t *b, size_t *k, uint32_t v) { memcpy(b + *k, &v, 4); *k += 4; }
static void put_u64(uint8_t *b, size_t *k, uint64_t v) { memcpy(b + *k, &v, 8); *k += 8; }

/* One GGUF: "big" (BIG_ELEMS F32) then "last" (4 F32), optionally with split keys of part no/count
 * (no < 0: none). Returns the absolute offset of "last"'s data. */
static uint64_t write_gguf(const char *path, int fd, int no, int count, int with_big, int with_last) {
    uint8_t b[1024];
    size_t k = 0;
    const int n_kv = (no >= 0 ? 3 : 0) + (no <= 0 ? 1 : 0);
    put_u32(b, &k, 0x46554747u);
    put_u32(b, &k, 3);
    put_u64(b, &k, (uint64_t)(with_big + with_last));
    put_u64(b, &k, (uint64_t)n_kv);
    if (no <= 0) {
        put_str(b, &k, "general.architecture");
        put_u32(b, &k, 8);
        put_str(b, &k, "llama");
    }
    if (no >= 0) {
        put_str(b, &k, "split.no");
        put_u32(b, &k, 2);
        uint16_t v = (uint16_t)no;
        memcpy(b + k, &v, 2), k += 2;
        put_str(b, &k, "split.count");
        put_u32(b, &k, 2);
        v = (uint16_t)count;
        memcpy(b + k, &v, 2), k += 2;
        put_str(b, &k, "split.tensors.count");
        put_u32(b, &k, 5);
        put_u32(b, &k, 2);
    }
    const uint64_t big = BIG_ELEMS * 4;
    if (with_big) {
        put_str(b, &k, "big");
        put_u32(b, &k, 1);
        put_u64(b, &k, BIG_ELEMS);
        put_u32(b, &k, 0);
        put_u64(b, &k, 0);
    }
    if (with_last) {
        put_str(b, &k, "last");
        put_u32(b, &k, 1);
        put_u64(b, &k, 4);
        put_u32(b, &k, 0);
        put_u64(b, &k, with_big ? big : 0); /* big is a multiple of 32: no padding between */
    }
    const uint64_t data = (k + 31) / 32 * 32;
    CU_ASSERT(pwrite(fd, b, k, 0) == (ssize_t)k);
    const uint64_t at = data + (with_big ? big : 0);
    if (with_last) CU_ASSERT(pwrite(fd, LAST, sizeof LAST, (off_t)at) == (ssize_t)sizeof LAST);
    CU_ASSERT(ftruncate(fd, (off_t)(at + (with_last ? 32 : 0))) == 0); /* each tensor padded to 32 */
    (void)path;
    return at;
}

static void check_last(const char *path, int64_t want_tensors) {
    sn_gguf *g = NULL;
    sn_err err = {0};
    sn_status st = sn_gguf_open(path, 0, &g, &err);
    if (st) fprintf(stderr, "gguf: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(st, SN_OK);
    CU_ASSERT_EQUAL(sn_gguf_n_tensors(g), want_tensors);
    int64_t i = sn_gguf_find_tensor(g, "last");
    CU_ASSERT_FATAL(i >= 0);
    const sn_gguf_tensor *t = sn_gguf_tensor_at(g, i);
    CU_ASSERT(memcmp(t->data, LAST, sizeof LAST) == 0);
    sn_gguf_close(g);
}

static void test_gguf(void) {
    char path[512];
    int fd = make_tmp(path, sizeof path, ".gguf");
    CU_ASSERT_FATAL(fd >= 0);
    uint64_t at = write_gguf(path, fd, -1, 0, 1, 1);
    close(fd);
    CU_ASSERT(at > (1ull << 32));
    check_last(path, 2);
    unlink(path);
}

/* A split model opened by its first part; the second part holds the big tensor and, past 4 GiB in
 * that part, the last one. */
static void test_gguf_split(void) {
    char dir[512], p1[600], p2[600];
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/sn-sparse4g-XXXXXX", t && *t ? t : "/tmp");
    CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
    snprintf(p1, sizeof p1, "%s/m-00001-of-00002.gguf", dir);
    snprintf(p2, sizeof p2, "%s/m-00002-of-00002.gguf", dir);
    int fd = open(p1, O_RDWR | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(fd >= 0);
    write_gguf(p1, fd, 0, 2, 0, 0); /* part 1: the metadata, no tensors */
    close(fd);
    fd = open(p2, O_RDWR | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT(write_gguf(p2, fd, 1, 2, 1, 1) > (1ull << 32));
    close(fd);
    check_last(p1, 2);
    unlink(p1);
    unlink(p2);
    rmdir(dir);
}

/* A blob (docs/BLOB.md) laid out by hand: header, a zero-KV GGUF as metadata, the table of "big"
 * (BIG_ELEMS FP32 from data offset 0) and "last" right after it, the header CRC; only "last"'s bytes
 * are written. The cheap open (no data CRCs) must place "last" past 4 GiB and read its values. */
static void test_blob(void) {
    char path[512];
    int fd = make_tmp(path, sizeof path, ".snb");
    CU_ASSERT_FATAL(fd >= 0);
    uint8_t b[512] = {0};
    size_t k = 64;
    put_u64(b, &k, 24); /* metadata: GGUF v3, no tensors, no KVs */
    put_u32(b, &k, 0x46554747u);
    put_u32(b, &k, 3);
    put_u64(b, &k, 0);
    put_u64(b, &k, 0);
    const uint64_t big = BIG_ELEMS * 4; /* a multiple of the 64-byte alignment */
    const char *names[2] = {"big", "last"};
    const uint64_t ne0[2] = {BIG_ELEMS, 4}, offs[2] = {0, big};
    for (int i = 0; i < 2; i++) {
        put_str(b, &k, names[i]);
        put_u32(b, &k, SN_BLOB_FP32);
        put_u32(b, &k, SN_BLOB_ROWMAJOR);
        put_u32(b, &k, 1);
        put_u64(b, &k, ne0[i]);
        for (int d = 1; d < 4; d++) put_u64(b, &k, 1);
        put_u64(b, &k, offs[i]);
        put_u64(b, &k, ne0[i] * 4);
        put_u32(b, &k, 0); /* data CRC: checked only with SN_BLOB_VERIFY */
    }
    const uint64_t table_end = (k + 7) & ~7ull, data_off = SN_BLOB_DATA_ALIGN;
    const uint64_t at = data_off + big, fsize = at + sizeof LAST;
    size_t h = 0;
    memcpy(b, SN_BLOB_MAGIC, 4), h = 4;
    put_u32(b, &h, SN_BLOB_VERSION);
    put_u32(b, &h, SN_BLOB_ENDIAN_MARK);
    h += 4; /* header CRC, below */
    put_u64(b, &h, 0);
    put_u64(b, &h, 2);
    put_u64(b, &h, table_end);
    put_u64(b, &h, data_off);
    put_u64(b, &h, fsize);
    put_u32(b, &h, SN_BLOB_ALIGN);
    put_u32(b, &h, 0);
    uint32_t crc = (uint32_t)crc32(0L, b + 16, (uInt)(table_end - 16));
    memcpy(b + 12, &crc, 4);
    CU_ASSERT(pwrite(fd, b, table_end, 0) == (ssize_t)table_end);
    CU_ASSERT(pwrite(fd, LAST, sizeof LAST, (off_t)at) == (ssize_t)sizeof LAST);
    close(fd);
    sn_blob *bl = NULL;
    sn_err err = {0};
    sn_status st = sn_blob_open(path, 0, &bl, &err);
    if (st) fprintf(stderr, "blob: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(st, SN_OK);
    int64_t i = sn_blob_find_tensor(bl, "last");
    CU_ASSERT_FATAL(i >= 0);
    const sn_blob_tensor *t = sn_blob_tensor_at(bl, i);
    CU_ASSERT(data_off + t->offset > (1ull << 32));
    CU_ASSERT(memcmp(t->data, LAST, sizeof LAST) == 0);
    sn_blob_close(bl);
    unlink(path);
}

/* The GGUF writer's side: "big" then "last" written through sn_gguf_writer into a pipe (no disk). A
 * reader thread keeps the stream's head (the header) and tail and counts its bytes; the header must
 * place "last" past 4 GiB, at exactly where the stream carries its values. */
typedef struct {
    int fd;
    uint8_t head[65536], tail[32];
    size_t head_len;
    uint64_t total;
} pipe_sink;

static void *drain(void *arg) {
    pipe_sink *s = arg;
    static uint8_t buf[1 << 20];
    for (;;) {
        ssize_t k = read(s->fd, buf, sizeof buf);
        if (k <= 0) break;
        size_t n = (size_t)k, h = s->head_len < sizeof s->head ? sizeof s->head - s->head_len : 0;
        memcpy(s->head + s->head_len, buf, n < h ? n : h);
        s->head_len += n < h ? n : h;
        if (n >= sizeof s->tail) memcpy(s->tail, buf + n - sizeof s->tail, sizeof s->tail);
        else { /* shift the tail */
            memmove(s->tail, s->tail + n, sizeof s->tail - n);
            memcpy(s->tail + sizeof s->tail - n, buf, n);
        }
        s->total += n;
    }
    return NULL;
}

static void test_gguf_writer(void) {
    int p[2];
    CU_ASSERT_FATAL(pipe(p) == 0);
    (void)fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
    pipe_sink s = {.fd = p[0]};
    pthread_t th;
    CU_ASSERT_FATAL(pthread_create(&th, NULL, drain, &s) == 0);
    sn_gguf_writer *w = sn_gguf_writer_new();
    sn_err err = {0};
    const uint64_t ne_big = BIG_ELEMS, ne_last = 4, chunk = 64u << 20;
    uint8_t *zeros = calloc(chunk, 1);
    CU_ASSERT_FATAL(w && zeros);
    CU_ASSERT(sn_gguf_writer_set_str(w, "general.architecture", "llama") == SN_OK);
    CU_ASSERT(sn_gguf_writer_add_tensor(w, "big", 1, &ne_big, 0, &err) >= 0);
    CU_ASSERT(sn_gguf_writer_add_tensor(w, "last", 1, &ne_last, 0, &err) >= 0);
    sn_status st = sn_gguf_writer_begin_fd(w, p[1], "pipe", &err);
    for (uint64_t left = BIG_ELEMS * 4; st == SN_OK && left;) {
        uint64_t k = left < chunk ? left : chunk;
        st = sn_gguf_writer_write(w, zeros, k, &err);
        left -= k;
    }
    if (st == SN_OK) st = sn_gguf_writer_end_tensor(w, &err);
    if (st == SN_OK) st = sn_gguf_writer_write(w, LAST, sizeof LAST, &err);
    if (st == SN_OK) st = sn_gguf_writer_end_tensor(w, &err);
    if (st == SN_OK) st = sn_gguf_writer_finish(w, &err); /* closes p[1]: the reader sees the end */
    if (st) fprintf(stderr, "gguf writer: %s\n", err.msg);
    CU_ASSERT_EQUAL(st, SN_OK);
    if (st) close(p[1]);
    pthread_join(th, NULL);
    close(p[0]);
    sn_gguf_writer_free(w);
    free(zeros);
    sn_gguf *g = NULL;
    st = sn_gguf_open_mem(s.head, s.head_len, SN_GGUF_NO_DATA, &g, &err);
    if (st) fprintf(stderr, "gguf header: %s\n", err.msg);
    CU_ASSERT_EQUAL_FATAL(st, SN_OK);
    int64_t i = sn_gguf_find_tensor(g, "last");
    CU_ASSERT_FATAL(i >= 0);
    const uint64_t at = sn_gguf_data_offset(g) + sn_gguf_tensor_at(g, i)->offset;
    CU_ASSERT(at > (1ull << 32));
    CU_ASSERT_EQUAL(s.total, at + 32); /* "last" and its padding to 32 end the stream */
    CU_ASSERT(memcmp(s.tail, LAST, sizeof LAST) == 0);
    sn_gguf_close(g);
}

static const sn_test_case cases[] = {
    {"safetensors: a tensor past 4 GiB", test_safetensors},
    {"gguf: a tensor past 4 GiB", test_gguf},
    {"gguf split: the parts opened by the first, one of them past 4 GiB", test_gguf_split},
    {"blob: a tensor past 4 GiB", test_blob},
    {"gguf writer: a tensor written past 4 GiB", test_gguf_writer},
};
SN_TEST_MAIN("sparse4g", cases)
