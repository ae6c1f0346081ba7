/* test_torch_ckpt.c - the zip reader, the pickle VM and the checkpoint reader on hand-built bytes.
 *
 * Archives are assembled here byte by byte (local headers, central directory, end record, and the
 * zip64 variants torch uses past 4 GiB: 0xFFFFFFFF fields, the 0x0001 extra field, the zip64 end
 * record and locator) so the zip64 path is exercised without writing 4 GiB. Pickles are written with
 * the opcodes torch emits. Also: truncation at every byte and random bit flips never crash, and
 * every file in tests/fuzz/regress/ (inputs the fuzzers once found) is replayed. Real torch.save
 * files are tested in tests/integration/test_convert_torch.sh. */
#include "pickle.h"
#include "sn_test.h"
#include "torch_ckpt.h"
#include "torch_zip.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- byte buffers ---- */
typedef struct { uint8_t *b; size_t n, cap; } buf;
static void put(buf *x, const void *p, size_t n) {
    if (x->n + n > x->cap) {
        x->cap = (x->n + n) * 2 + 64;
        x->b = realloc(x->b, x->cap);
    }
    memcpy(x->b + x->n, p, n);
    x->n += n;
}
static void u8(buf *x, unsigned v) { uint8_t c = (uint8_t)v; put(x, &c, 1); }
static void u16(buf *x, unsigned v) { u8(x, v & 255); u8(x, (v >> 8) & 255); }
static void u32(buf *x, uint32_t v) { u16(x, v & 0xffff); u16(x, v >> 16); }
static void u64(buf *x, uint64_t v) { u32(x, (uint32_t)v); u32(x, (uint32_t)(v >> 32)); }
static void str(buf *x, const char *s) { put(x, s, strlen(s)); }

/* ---- zip builder: entries stored (or raw-deflated when .deflate); zip64 = every size/offset
 * through the zip64 records ---- */
typedef struct { const char *name; const uint8_t *data; size_t n; int deflate; } ent;

static buf raw_deflate(const uint8_t *p, size_t n) {
    buf o = {0};
    z_stream s;
    memset(&s, 0, sizeof s);
    deflateInit2(&s, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    o.cap = deflateBound(&s, (uLong)n) + 16;
    o.b = malloc(o.cap);
    s.next_in = (Bytef *)(uintptr_t)p;
    s.avail_in = (uInt)n;
    s.next_out = o.b;
    s.avail_out = (uInt)o.cap;
    deflate(&s, Z_FINISH);
    o.n = o.cap - s.avail_out;
    deflateEnd(&s);
    return o;
}

static buf make_zip(const ent *e, int n, int zip64) {
    buf z = {0}, cd = {0};
    uint64_t offs[16];
    for (int i = 0; i < n; i++) {
        offs[i] = z.n;
        uint32_t crc = (uint32_t)crc32(0, e[i].data, (uInt)e[i].n);
        buf c = e[i].deflate ? raw_deflate(e[i].data, e[i].n) : (buf){(uint8_t *)(uintptr_t)e[i].data, e[i].n, 0};
        unsigned m = e[i].deflate ? 8 : 0;
        u32(&z, 0x04034b50); u16(&z, 45); u16(&z, 0); u16(&z, m); u16(&z, 0); u16(&z, 0); u32(&z, crc);
        u32(&z, zip64 ? 0xFFFFFFFFu : (uint32_t)c.n); u32(&z, zip64 ? 0xFFFFFFFFu : (uint32_t)e[i].n);
        u16(&z, (unsigned)strlen(e[i].name)); u16(&z, zip64 ? 20 : 0);
        str(&z, e[i].name);
        if (zip64) { u16(&z, 1); u16(&z, 16); u64(&z, e[i].n); u64(&z, c.n); }
        put(&z, c.b, c.n);
        u32(&cd, 0x02014b50); u16(&cd, 45); u16(&cd, 45); u16(&cd, 0); u16(&cd, m); u16(&cd, 0); u16(&cd, 0);
        u32(&cd, crc);
        u32(&cd, zip64 ? 0xFFFFFFFFu : (uint32_t)c.n); u32(&cd, zip64 ? 0xFFFFFFFFu : (uint32_t)e[i].n);
        u16(&cd, (unsigned)strlen(e[i].name)); u16(&cd, zip64 ? 28 : 0); u16(&cd, 0); u16(&cd, 0); u16(&cd, 0);
        u32(&cd, 0); u32(&cd, zip64 ? 0xFFFFFFFFu : (uint32_t)offs[i]);
        str(&cd, e[i].name);
        if (zip64) { u16(&cd, 1); u16(&cd, 24); u64(&cd, e[i].n); u64(&cd, c.n); u64(&cd, offs[i]); }
        if (e[i].deflate) free(c.b);
    }
    uint64_t cd_off = z.n;
    put(&z, cd.b, cd.n);
    if (zip64) {
        uint64_t z64 = z.n;
        u32(&z, 0x06064b50); u64(&z, 44); u16(&z, 45); u16(&z, 45); u32(&z, 0); u32(&z, 0);
        u64(&z, (uint64_t)n); u64(&z, (uint64_t)n); u64(&z, cd.n); u64(&z, cd_off);
        u32(&z, 0x07064b50); u32(&z, 0); u64(&z, z64); u32(&z, 1);
    }
    u32(&z, 0x06054b50); u16(&z, 0); u16(&z, 0);
    u16(&z, zip64 ? 0xFFFF : (unsigned)n); u16(&z, zip64 ? 0xFFFF : (unsigned)n);
    u32(&z, zip64 ? 0xFFFFFFFFu : (uint32_t)cd.n); u32(&z, zip64 ? 0xFFFFFFFFu : (uint32_t)cd_off); u16(&z, 0);
    free(cd.b);
    return z;
}

/* ---- pickle builder (the opcodes torch.save writes) ---- */
static void p_str(buf *p, const char *s) { u8(p, 'X'); u32(p, (uint32_t)strlen(s)); str(p, s); }
static void p_int(buf *p, int64_t v) { u8(p, 0x8a); u8(p, 8); u64(p, (uint64_t)v); }
static void p_glob(buf *p, const char *m, const char *n) { u8(p, 'c'); str(p, m); u8(p, '\n'); str(p, n); u8(p, '\n'); }
static void p_tensor(buf *p, const char *key, int64_t numel, int64_t off, int nd, const int64_t *size, const int64_t *stride) {
    p_glob(p, "torch._utils", "_rebuild_tensor_v2");
    u8(p, '(');
    u8(p, '('); p_str(p, "storage"); p_glob(p, "torch", "FloatStorage"); p_str(p, key); p_str(p, "cpu"); p_int(p, numel);
    u8(p, 't'); u8(p, 'Q');
    p_int(p, off);
    u8(p, '('); for (int i = 0; i < nd; i++) p_int(p, size[i]); u8(p, 't');
    u8(p, '('); for (int i = 0; i < nd; i++) p_int(p, stride[i]); u8(p, 't');
    u8(p, 0x89);
    p_glob(p, "collections", "OrderedDict"); u8(p, ')'); u8(p, 'R');
    u8(p, 't'); u8(p, 'R');
}

static float g_vals[6] = {0, 1, 2, 3, 4, 5};

/* {"a": 2x3 transposed view of storage 0, "b": same storage (tied), "c": [2] at offset 4} */
static buf good_pickle(void) {
    buf p = {0};
    u8(&p, 0x80); u8(&p, 2);
    p_glob(&p, "collections", "OrderedDict"); u8(&p, ')'); u8(&p, 'R');
    u8(&p, 'q'); u8(&p, 0);
    u8(&p, '(');
    int64_t s23[2] = {2, 3}, st_t[2] = {1, 2}, s6[1] = {6}, st1[1] = {1}, s2[1] = {2};
    p_str(&p, "a"); p_tensor(&p, "0", 6, 0, 2, s23, st_t);
    p_str(&p, "b"); p_tensor(&p, "0", 6, 0, 1, s6, st1);
    p_str(&p, "c"); p_tensor(&p, "0", 6, 4, 1, s2, st1);
    u8(&p, 'u');
    /* state_dict._metadata through BUILD, as torch writes it */
    u8(&p, '}'); p_str(&p, "_metadata"); u8(&p, '}'); u8(&p, 's'); u8(&p, 'b');
    u8(&p, '.');
    return p;
}

static buf good_archive(int zip64) {
    buf p = good_pickle();
    ent e[3] = {{"archive/data.pkl", p.b, p.n, 0}, {"archive/byteorder", (const uint8_t *)"little", 6, 0},
                {"archive/data/0", (const uint8_t *)g_vals, sizeof g_vals, 0}};
    buf z = make_zip(e, 3, zip64);
    free(p.b);
    return z;
}

static void test_zip_and_zip64(void) {
    for (int z64 = 0; z64 < 2; z64++) {
        buf z = good_archive(z64);
        sn_zip *zz = NULL;
        sn_err err = {0};
        CU_ASSERT_EQUAL_FATAL(sn_zip_open_mem(z.b, z.n, "t.zip", &zz, &err), SN_OK);
        CU_ASSERT_EQUAL(sn_zip_n_entries(zz), 3);
        int64_t k = sn_zip_find(zz, "archive/data/0");
        CU_ASSERT_TRUE_FATAL(k >= 0);
        const sn_zip_entry *e = sn_zip_entry_at(zz, (size_t)k);
        CU_ASSERT_EQUAL(e->size, sizeof g_vals);
        CU_ASSERT_EQUAL(memcmp(z.b + e->data_offset, g_vals, sizeof g_vals), 0);
        CU_ASSERT_EQUAL(sn_zip_find(zz, "nope"), -1);
        sn_zip_close(zz);
        free(z.b);
    }
}

static void test_checkpoint_views(void) {
    for (int z64 = 0; z64 < 2; z64++) {
        buf z = good_archive(z64);
        sn_tc_file *f = NULL;
        sn_err err = {0};
        CU_ASSERT_EQUAL_FATAL(sn_tc_open_mem(z.b, z.n, "t.bin", NULL, &f, &err), SN_OK);
        CU_ASSERT_EQUAL_FATAL(sn_tc_n_tensors(f), 3);
        CU_ASSERT_STRING_EQUAL(sn_tc_state_key(f), "");
        const sn_st_tensor *a = sn_tc_tensor(f, 0), *b = sn_tc_tensor(f, 1), *c = sn_tc_tensor(f, 2);
        CU_ASSERT_STRING_EQUAL(a->name, "a");
        CU_ASSERT_EQUAL(a->dtype, SN_ST_F32);
        CU_ASSERT_EQUAL(a->n_dims, 2);
        CU_ASSERT_EQUAL(a->shape[0], 2);
        CU_ASSERT_EQUAL(a->shape[1], 3);
        CU_ASSERT_EQUAL(a->stride[0], 1);
        CU_ASSERT_EQUAL(a->stride[1], 2);
        CU_ASSERT_FALSE(a->contiguous);
        CU_ASSERT_TRUE(b->contiguous);
        CU_ASSERT_PTR_EQUAL(a->data, b->data); /* tied: one storage */
        float row[3];
        sn_st_row_f32(a, 1, row); /* a = storage viewed as 3x2, transposed: a[1] = {1, 3, 5} */
        CU_ASSERT_EQUAL(row[0], 1.0f);
        CU_ASSERT_EQUAL(row[1], 3.0f);
        CU_ASSERT_EQUAL(row[2], 5.0f);
        CU_ASSERT_EQUAL(sn_st_elem_f32(a, 2), 4.0f); /* a[0][2] */
        CU_ASSERT_PTR_EQUAL(c->data, b->data + 16);  /* storage_offset 4 */
        CU_ASSERT_EQUAL(sn_st_elem_f32(c, 1), 5.0f);
        sn_tc_close(f);
        free(z.b);
    }
}

static void test_nested_and_state_key(void) {
    buf in = good_pickle(), p = {0};
    /* {"model": <state dict>, "epoch": 3} built around the good pickle's body */
    u8(&p, 0x80); u8(&p, 2); u8(&p, '}'); u8(&p, '(');
    p_str(&p, "epoch"); p_int(&p, 3);
    p_str(&p, "model");
    put(&p, in.b + 2, in.n - 3); /* without PROTO and STOP */
    u8(&p, 'u'); u8(&p, '.');
    ent e[2] = {{"x/data.pkl", p.b, p.n, 0}, {"x/data/0", (const uint8_t *)g_vals, sizeof g_vals, 0}};
    buf z = make_zip(e, 2, 0);
    sn_tc_file *f = NULL;
    sn_err err = {0};
    CU_ASSERT_EQUAL_FATAL(sn_tc_open_mem(z.b, z.n, "n.pth", NULL, &f, &err), SN_OK);
    CU_ASSERT_STRING_EQUAL(sn_tc_state_key(f), "model");
    CU_ASSERT_EQUAL(sn_tc_n_tensors(f), 3);
    sn_tc_close(f);
    sn_tc_opts o = {.state_key = "model"};
    CU_ASSERT_EQUAL(sn_tc_open_mem(z.b, z.n, "n.pth", &o, &f, &err), SN_OK);
    sn_tc_close(f);
    o.state_key = "epoch";
    CU_ASSERT_EQUAL(sn_tc_open_mem(z.b, z.n, "n.pth", &o, &f, &err), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "does not name a dict of tensors"));
    o.state_key = "nope";
    CU_ASSERT_EQUAL(sn_tc_open_mem(z.b, z.n, "n.pth", &o, &f, &err), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no key 'nope'"));
    free(z.b);
    free(p.b);
    free(in.b);
}

static sn_status load_pk(const char *bytes, size_t n, const sn_pk_limits *lim, sn_err *err) {
    sn_pk *p = NULL;
    sn_status st = sn_pk_load((const uint8_t *)bytes, n, "t.pkl", 100, lim, &p, err);
    sn_pk_free(p);
    return st;
}

static void test_pickle_refusals(void) {
    sn_err err = {0};
    const char ev[] = "\x80\x02" "cos\nsystem\n" "(X\x02\x00\x00\x00lst" "R.";
    CU_ASSERT_EQUAL(load_pk(ev, sizeof ev - 1, NULL, &err), SN_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "refused global os.system"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "byte 2 (file offset 102)"));
    const char sg[] = "\x80\x04\x8c\x08" "builtins" "\x8c\x04" "eval" "\x93" "." ;
    CU_ASSERT_EQUAL(load_pk(sg, sizeof sg - 1, NULL, &err), SN_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "refused global builtins.eval"));
    /* a name that only begins with an allowed one is not allowed: torch.FloatStorage.from_file maps
     * any file; torch.load(weights_only=True)'s unpickler refuses it too ("Unsupported class") */
    const char pre[] = "\x80\x02" "ctorch\nFloatStorage.from_file\n" ".";
    CU_ASSERT_EQUAL(load_pk(pre, sizeof pre - 1, NULL, &err), SN_EUNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "refused global torch.FloatStorage.from_file"));
    const char inst[] = "\x80\x02(iposix\nsystem\n.";
    CU_ASSERT_EQUAL(load_pk(inst, sizeof inst - 1, NULL, &err), SN_EUNSUPPORTED);
    const char memo[] = "\x80\x02h\x07.";
    CU_ASSERT_EQUAL(load_pk(memo, sizeof memo - 1, NULL, &err), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "memo index 7 out of range"));
    const char bigput[] = "\x80\x02]r\xff\xff\xff\xff.";
    CU_ASSERT_EQUAL(load_pk(bigput, sizeof bigput - 1, NULL, &err), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "exceeds the budget of 1048576 entries (SN_BUDGET_PKL_MEMO, budget.h)"));
    const char proto1[] = "\x80\x01N.";
    CU_ASSERT_EQUAL(load_pk(proto1, sizeof proto1 - 1, NULL, &err), SN_EUNSUPPORTED);
    const char nostop[] = "\x80\x02N";
    CU_ASSERT_EQUAL(load_pk(nostop, sizeof nostop - 1, NULL, &err), SN_EFORMAT);
    const char strlong[] = "\x80\x02X\xff\xff\xff\x7f" "ab.";
    CU_ASSERT_EQUAL(load_pk(strlong, sizeof strlong - 1, NULL, &err), SN_EFORMAT);
    /* limits: depth, stack, marks */
    sn_pk_limits lim = {.max_depth = 8, .max_stack = 16, .max_marks = 4};
    char deep[64] = "\x80\x02]";
    memset(deep + 3, 0x85, 20);
    deep[23] = '.';
    CU_ASSERT_EQUAL(load_pk(deep, 24, &lim, &err), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "nested deeper than 8"));
    char wide[64] = "\x80\x02";
    memset(wide + 2, 'N', 20);
    CU_ASSERT_EQUAL(load_pk(wide, 22, &lim, &err), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "stack deeper than 16"));
    char marks[64] = "\x80\x02";
    memset(marks + 2, '(', 8);
    CU_ASSERT_EQUAL(load_pk(marks, 10, &lim, &err), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "nested MARKs"));
    /* a cycle (a list appended to itself) loads and is harmless */
    const char cyc[] = "\x80\x02]q\x00h\x00" "a.";
    CU_ASSERT_EQUAL(load_pk(cyc, sizeof cyc - 1, NULL, &err), SN_OK);
}

static void test_zip_lies(void) {
    buf z = good_archive(0);
    sn_zip *zz = NULL;
    sn_err err = {0};
    size_t eocd = z.n - 22;
    uint8_t *c = malloc(z.n);
    memcpy(c, z.b, z.n);
    c[eocd + 19] = 0x7f; /* directory offset far outside */
    CU_ASSERT_EQUAL(sn_zip_open_mem(c, z.n, "t.zip", &zz, &err), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "lies outside the file"));
    memcpy(c, z.b, z.n);
    c[eocd + 10] = 200; /* more entries than the directory can hold */
    CU_ASSERT_EQUAL(sn_zip_open_mem(c, z.n, "t.zip", &zz, &err), SN_EFORMAT);
    free(c);
    /* truncation at every byte: an error each time, never a crash */
    int ok = 1;
    for (size_t n = 0; n < z.n; n++) {
        uint8_t *t = malloc(n ? n : 1);
        memcpy(t, z.b, n);
        sn_tc_file *f = NULL;
        if (sn_tc_open_mem(t, n, "trunc.bin", NULL, &f, &err) == SN_OK) ok = 0, sn_tc_close(f);
        free(t);
    }
    CU_ASSERT_TRUE(ok);
    /* random bit flips: anything but a crash */
    srand(7);
    for (int it = 0; it < 3000; it++) {
        uint8_t *t = malloc(z.n);
        memcpy(t, z.b, z.n);
        for (int k = 0; k < 1 + it % 4; k++) t[(size_t)rand() % z.n] ^= (uint8_t)(1u << (rand() % 8));
        sn_tc_file *f = NULL;
        if (sn_tc_open_mem(t, z.n, "flip.bin", NULL, &f, &err) == SN_OK) {
            for (size_t i = 0; i < sn_tc_n_tensors(f); i++) {
                const sn_st_tensor *x = sn_tc_tensor(f, i);
                if (!x->unsupported && x->n_elems) (void)sn_st_elem_f32(x, x->n_elems - 1);
            }
            sn_tc_close(f);
        }
        free(t);
    }
    free(z.b);
}

/* Inputs the fuzzers found once: each must be handled (any status) without a crash. */
static void test_fuzz_regressions(void) {
    const char *src = getenv("SN_SRC");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/fuzz/regress", src ? src : "..");
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char p[8192];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        FILE *fp = fopen(p, "rb");
        if (!fp) continue;
        uint8_t *b = malloc(1 << 20);
        size_t n = fread(b, 1, 1 << 20, fp);
        fclose(fp);
        sn_err err = {0};
        sn_tc_file *f = NULL;
        sn_status st = sn_tc_open_mem(b, n, e->d_name, NULL, &f, &err);
        if (st == SN_OK) sn_tc_close(f);
        /* torch.save of 20 levels of dicts that each hold one child dict under three keys: a walk
         * that follows every key visits 3^16 dicts; the search for the state dict must give up and
         * say so instead. */
        if (strcmp(e->d_name, "torch_zip-shared-dicts.pt") == 0) {
            CU_ASSERT_EQUAL(st, SN_EFORMAT);
            CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "reference each other"));
            CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "torch_zip-shared-dicts.pt"));
        }
        sn_pk *pk = NULL;
        if (sn_pk_load(b, n, e->d_name, 0, NULL, &pk, &err) == SN_OK) sn_pk_free(pk);
        free(b);
    }
    closedir(d);
}


/* Budgets (budget.h): a deflated data.pkl stating far more than its compressed size allows is
 * refused before it is inflated; a pickle whose values cost more memory than its size allows
 * (1-byte EMPTY_LIST opcodes gathered by APPENDS) is stopped by the VM's memory budget. */
static void test_budgets(void) {
    size_t n = 24u << 20;
    uint8_t *pk = malloc(n);
    pk[0] = 0x80; pk[1] = 2; pk[2] = ']'; pk[3] = '(';
    memset(pk + 4, 'N', n - 6); /* NONE x 24M: deflates ~1000:1 */
    pk[n - 2] = 'e'; pk[n - 1] = '.';
    const ent e[] = {{"archive/data.pkl", pk, n, 1}};
    buf z = make_zip(e, 1, 0);
    sn_tc_file *f = NULL;
    sn_err err = {0};
    CU_ASSERT_EQUAL(sn_tc_open_mem(z.b, z.n, "bomb.pt", NULL, &f, &err), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "inflate budget"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "bomb.pt"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "data.pkl"));
    free(z.b);

    /* 2M EMPTY_LIST in 8 APPENDS groups (the stack limit is 1M values): ~400 MB of values from 2 MB */
    size_t m = 2u << 20, k = 0;
    uint8_t *q = malloc(m + 64);
    q[k++] = 0x80; q[k++] = 2; q[k++] = ']';
    for (int g = 0; g < 8; g++) {
        q[k++] = '(';
        memset(q + k, ']', m / 8);
        k += m / 8;
        q[k++] = 'e';
    }
    q[k++] = '.';
    sn_pk *p = NULL;
    CU_ASSERT_EQUAL(sn_pk_load(q, k, "lists.pkl", 0, NULL, &p, &err), SN_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "budget"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "lists.pkl"));
    sn_pk_free(p);
    free(q);
    free(pk);
}

static const sn_test_case cases[] = {
    {"zip and zip64 archives", test_zip_and_zip64},
    {"tensors: transposed view, tied storage, storage_offset", test_checkpoint_views},
    {"nested state dict and --state-key", test_nested_and_state_key},
    {"pickle refusals and limits", test_pickle_refusals},
    {"zip lies, truncation, bit flips", test_zip_lies},
    {"fuzz regressions", test_fuzz_regressions},
    {"inflate and pickle memory budgets", test_budgets},
};
SN_TEST_MAIN("torch_ckpt", cases)
