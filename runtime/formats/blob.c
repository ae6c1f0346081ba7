/* blob.c - reader and streaming writer of sunny's runtime blob (docs/BLOB.md).
 *
 * Why a second format next to GGUF: the blob carries weights in layouts made for sunny's kernels
 * (INT4 groups of 32: nibble codes + fp16 scales per row) that GGUF has no type for. Everything a
 * blob says is checked against the file size before use, so a damaged cache file is an error
 * message, never a crash. */
#include "blob.h"
#include "ggml_types.h"
#include "grow.h"
#include "mapfile.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define HDR_SIZE 64u
#define REC_FIXED (4 + 4 + 4 + 32 + 8 + 8 + 4) /* after the name */

struct sn_blob {
    const uint8_t *base;
    uint64_t size;
    sn_mapped_file map; /* zeroed for a caller buffer */
    uint32_t flags;
    sn_gguf *meta;
    int64_t n_tensors;
    sn_blob_tensor *t;
    char *names;
};

static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static uint32_t crc32_buf(const void *p, uint64_t n) {
    uLong c = crc32(0L, Z_NULL, 0);
    const uint8_t *b = p;
    while (n) {
        uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
        c = crc32(c, b, chunk);
        b += chunk;
        n -= chunk;
    }
    return (uint32_t)c;
}

uint64_t sn_blob_int4_row_bytes(uint64_t cols) { return cols / 2 + cols / SN_BLOB_INT4_GROUP * 2; }

uint64_t sn_blob_tensor_nbytes(sn_blob_dtype dt, sn_blob_layout lay, uint32_t n_dims, const uint64_t *ne) {
    if (n_dims < 1 || n_dims > 4) return 0;
    uint64_t n = 1;
    for (uint32_t i = 0; i < n_dims; i++) {
        if (ne[i] == 0 || ne[i] > (1ull << 40)) return 0;
        if (n > UINT64_MAX / ne[i]) return 0;
        n *= ne[i];
    }
    if (n > (1ull << 42)) return 0;
    switch (dt) {
    case SN_BLOB_FP32: return lay == SN_BLOB_ROWMAJOR ? n * 4 : 0;
    case SN_BLOB_FP16: return lay == SN_BLOB_ROWMAJOR ? n * 2 : 0;
    case SN_BLOB_INT4G32: {
        if ((lay != SN_BLOB_INT4_ROWS && lay != SN_BLOB_INT4_X8) || n_dims != 2 || ne[0] % SN_BLOB_INT4_COLS) return 0;
        const uint64_t rows = lay == SN_BLOB_INT4_X8 ? (ne[1] + 7) / 8 * 8 : ne[1]; /* x8: padded to whole groups */
        return rows * sn_blob_int4_row_bytes(ne[0]);
    }
    case SN_BLOB_Q6_K:
    case SN_BLOB_Q8_0: {
        const int gt = dt == SN_BLOB_Q6_K ? SN_GGML_Q6_K : SN_GGML_Q8_0;
        if (lay != SN_BLOB_ROWMAJOR || ne[0] % sn_ggml_blck_size(gt)) return 0;
        return n / ne[0] * sn_ggml_row_size(gt, ne[0]);
    }
    }
    return 0;
}

static sn_status parse(sn_blob *b, const char *what, int flags, sn_err *err) {
    const uint8_t *p = b->base;
    uint64_t size = b->size;
    if (size < HDR_SIZE + 8)
        return sn_err_set(err, SN_EFORMAT, "%s: file too small for a sunny blob (%llu bytes)", what,
                          (unsigned long long)size);
    if (memcmp(p, SN_BLOB_MAGIC, 4) != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: not a sunny blob (bad magic at offset 0)", what);
    uint32_t version = rd32(p + 4), mark = rd32(p + 8), hcrc = rd32(p + 12);
    if (mark == 0x04030201u)
        return sn_err_set(err, SN_EFORMAT, "%s: blob written with the other byte order (endian mark at offset 8); regenerate it from the GGUF on this machine", what);
    if (mark != SN_BLOB_ENDIAN_MARK)
        return sn_err_set(err, SN_EFORMAT, "%s: bad endian mark 0x%08x at offset 8", what, mark);
    if (version != SN_BLOB_VERSION)
        return sn_err_set(err, SN_EFORMAT, "%s: blob format version %u (field 'version', offset 4) but this sunny reads only version %u%s; regenerate it from the GGUF with sunny-convert --blob", what, version, SN_BLOB_VERSION,
                          version == 2 ? " (version 2 stored INT4 in groups of 64 with fp32 scales, version 3 in groups of 32 with fp16 scales)" : "");
    uint64_t reserved = rd64(p + 16), n_t = rd64(p + 24), table_end = rd64(p + 32);
    uint64_t data_off = rd64(p + 40), fsize = rd64(p + 48);
    uint32_t align = rd32(p + 56);
    b->flags = rd32(p + 60);
    if (reserved != 0) return sn_err_set(err, SN_EFORMAT, "%s: reserved field at offset 16 is not 0", what);
    if (fsize != size)
        return sn_err_set(err, SN_EFORMAT, "%s: header says %llu bytes (offset 48) but the file has %llu: truncated or damaged", what, (unsigned long long)fsize, (unsigned long long)size);
    if (align != SN_BLOB_ALIGN)
        return sn_err_set(err, SN_EFORMAT, "%s: alignment %u at offset 56, expected %u", what, align, SN_BLOB_ALIGN);
    if (b->flags & ~(uint32_t)SN_BLOB_FLAG_INT4_HEAD)
        return sn_err_set(err, SN_EFORMAT, "%s: unknown flags 0x%x at offset 60", what, b->flags);
    if (table_end < HDR_SIZE + 8 || table_end > size)
        return sn_err_set(err, SN_EFORMAT, "%s: table end %llu (offset 32) outside the file", what, (unsigned long long)table_end);
    if (data_off % SN_BLOB_DATA_ALIGN || data_off < table_end || data_off > size)
        return sn_err_set(err, SN_EFORMAT, "%s: data offset %llu (offset 40) invalid", what, (unsigned long long)data_off);
    /* header CRC covers [16, table_end) */
    if (crc32_buf(p + 16, table_end - 16) != hcrc)
        return sn_err_set(err, SN_EFORMAT, "%s: header CRC32 mismatch (offset 12): metadata or tensor table damaged", what);
    uint64_t meta_len = rd64(p + HDR_SIZE);
    if (meta_len > table_end - HDR_SIZE - 8)
        return sn_err_set(err, SN_EFORMAT, "%s: metadata length %llu (offset 64) runs past the table end", what, (unsigned long long)meta_len);
    sn_status st = sn_gguf_open_mem(p + HDR_SIZE + 8, meta_len, SN_GGUF_NO_DATA, &b->meta, err);
    if (st) return sn_err_prefix(err, "%s: metadata at offset 72", what);
    if (sn_gguf_n_tensors(b->meta) != 0)
        return sn_err_set(err, SN_EFORMAT, "%s: embedded metadata must hold no tensors", what);
    uint64_t off = HDR_SIZE + 8 + meta_len;
    off = (off + 7) & ~7ull;
    if (n_t > (table_end - off) / (8 + REC_FIXED))
        return sn_err_set(err, SN_EFORMAT, "%s: %llu tensors (offset 24) cannot fit in the table", what, (unsigned long long)n_t);
    b->n_tensors = (int64_t)n_t;
    b->t = calloc(n_t ? n_t : 1, sizeof *b->t);
    b->names = calloc(n_t ? n_t : 1, 64);
    if (!b->t || !b->names) return sn_err_set(err, SN_ENOMEM, "%s: out of memory", what);
    uint64_t prev_end = 0;
    for (uint64_t i = 0; i < n_t; i++) {
        uint64_t rec = off;
        if (off + 8 > table_end) goto trunc;
        uint64_t nl = rd64(p + off);
        off += 8;
        if (nl == 0 || nl >= 64)
            return sn_err_set(err, SN_EFORMAT, "%s: tensor #%llu name length %llu at offset %llu (must be 1..63)", what, (unsigned long long)i, (unsigned long long)nl, (unsigned long long)rec);
        if (off + nl + REC_FIXED > table_end) goto trunc;
        char *nm = b->names + i * 64;
        memcpy(nm, p + off, nl);
        nm[nl] = 0;
        if (strlen(nm) != nl)
            return sn_err_set(err, SN_EFORMAT, "%s: tensor #%llu name contains a NUL byte (offset %llu)", what, (unsigned long long)i, (unsigned long long)off);
        off += nl;
        sn_blob_tensor *t = &b->t[i];
        t->name = nm;
        t->dtype = (sn_blob_dtype)rd32(p + off);
        t->layout = (sn_blob_layout)rd32(p + off + 4);
        t->n_dims = rd32(p + off + 8);
        for (int d = 0; d < 4; d++) t->ne[d] = rd64(p + off + 12 + 8 * d);
        t->offset = rd64(p + off + 44);
        t->nbytes = rd64(p + off + 52);
        t->crc32 = rd32(p + off + 60);
        uint64_t fld = off;
        off += REC_FIXED;
        if ((uint32_t)t->dtype > SN_BLOB_Q8_0 || (uint32_t)t->layout > SN_BLOB_INT4_X8)
            return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s' has unknown dtype %u / layout %u (offset %llu)", what, nm, (unsigned)t->dtype, (unsigned)t->layout, (unsigned long long)fld);
        for (uint32_t d = t->n_dims; d < 4 && t->n_dims <= 4; d++)
            if (t->ne[d] != 1)
                return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s' unused dim %u is %llu, expected 1 (offset %llu)", what, nm, d, (unsigned long long)t->ne[d], (unsigned long long)(fld + 12 + 8 * d));
        uint64_t want = sn_blob_tensor_nbytes(t->dtype, t->layout, t->n_dims, t->ne);
        if (!want || want != t->nbytes)
            return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s' byte length %llu does not match its dtype/layout/shape (record at offset %llu)", what, nm, (unsigned long long)t->nbytes, (unsigned long long)rec);
        if (t->offset % SN_BLOB_ALIGN || t->offset < prev_end || t->offset > size - data_off ||
            t->nbytes > size - data_off - t->offset)
            return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s' data [%llu, +%llu) misaligned, overlapping or outside the file (offset field at %llu)", what, nm, (unsigned long long)t->offset, (unsigned long long)t->nbytes, (unsigned long long)(fld + 44));
        prev_end = t->offset + t->nbytes;
        t->data = p + data_off + t->offset;
        for (uint64_t j = 0; j < i; j++)
            if (strcmp(b->t[j].name, nm) == 0)
                return sn_err_set(err, SN_EFORMAT, "%s: duplicate tensor name '%s' (offset %llu)", what, nm, (unsigned long long)rec);
        if ((flags & SN_BLOB_VERIFY) && crc32_buf(t->data, t->nbytes) != t->crc32)
            return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s' data CRC32 mismatch: the blob is damaged, regenerate it", what, nm);
    }
    if (((off + 7) & ~7ull) != table_end)
        return sn_err_set(err, SN_EFORMAT, "%s: tensor table ends at %llu but the header says %llu", what, (unsigned long long)off, (unsigned long long)table_end);
    return SN_OK;
trunc:
    return sn_err_set(err, SN_EFORMAT, "%s: tensor table truncated at offset %llu", what, (unsigned long long)off);
}

sn_status sn_blob_open_mem(const void *buf, uint64_t size, int flags, sn_blob **out, sn_err *err) {
    *out = NULL;
    sn_blob *b = calloc(1, sizeof *b);
    if (!b) return sn_err_set(err, SN_ENOMEM, "out of memory");
    b->base = buf;
    b->size = size;
    sn_status st = parse(b, "blob", flags, err);
    if (st) { sn_blob_close(b); return st; }
    *out = b;
    return SN_OK;
}

int sn_blob_sniff(const char *path) {
    char m[4];
    int fd = sn_open_regular(path, NULL);
    if (fd < 0) return 0;
    ssize_t n = read(fd, m, 4);
    close(fd);
    return n == 4 && memcmp(m, SN_BLOB_MAGIC, 4) == 0;
}

sn_status sn_blob_open(const char *path, int flags, sn_blob **out, sn_err *err) {
    *out = NULL;
    sn_mapped_file m;
    sn_status st = sn_map_file(path, &m, err);
    if (st) return st;
    if (m.size < HDR_SIZE + 8) {
        sn_unmap_file(&m);
        return sn_err_set(err, SN_EFORMAT, "%s: file too small for a sunny blob (%llu bytes)", path,
                          (unsigned long long)m.size);
    }
    sn_blob *b = calloc(1, sizeof *b);
    if (!b) {
        sn_unmap_file(&m);
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    }
    b->map = m;
    b->base = m.data;
    b->size = m.size;
    st = parse(b, path, flags, err);
    if (st) { sn_blob_close(b); return st; }
    *out = b;
    return SN_OK;
}

void sn_blob_close(sn_blob *b) {
    if (!b) return;
    if (b->meta) sn_gguf_close(b->meta);
    sn_unmap_file(&b->map);
    free(b->t);
    free(b->names);
    free(b);
}

const sn_gguf *sn_blob_meta(const sn_blob *b) { return b->meta; }
uint32_t sn_blob_flags(const sn_blob *b) { return b->flags; }
int64_t sn_blob_n_tensors(const sn_blob *b) { return b->n_tensors; }
const sn_blob_tensor *sn_blob_tensor_at(const sn_blob *b, int64_t i) {
    return i >= 0 && i < b->n_tensors ? &b->t[i] : NULL;
}
int64_t sn_blob_find_tensor(const sn_blob *b, const char *name) {
    for (int64_t i = 0; i < b->n_tensors; i++)
        if (strcmp(b->t[i].name, name) == 0) return i;
    return -1;
}

/* ---------------- INT4G32 quantization ---------------- */

/* One group of 32: try inverse scales around the signed-max rule (the value of largest magnitude
 * maps to -8, as Q4_0 does, or to +7, in steps of 1/16 of a level), round and clamp each
 * candidate's codes to -8..7, refit the scale by least squares for those codes, round it to fp16,
 * round the codes again with that stored scale, and keep the candidate whose stored form (fp16
 * scale × codes) has the smallest squared error. Q4_0's own choice (scale = max / -8) is the
 * first candidate, so no group comes out worse than its Q4_0 encoding. Returns the fp16 scale. */
static float clamp_fp16(double d) { return d > 65504.0 ? 65504.0f : d < -65504.0 ? -65504.0f : (float)d; }

/* Squared error of the group stored with fp16 scale h and the codes round(v / d) clamped (the best
 * codes for that scale); the codes go to q. */
static double eval_scale(const float *v, uint16_t h, int8_t *q) {
    const float d = sn_fp16_to_fp32(h);
    double e = 0;
    for (int j = 0; j < SN_BLOB_INT4_GROUP; j++) {
        int c = d != 0.0f ? (int)lrintf(v[j] / d) : 0;
        c = c < -8 ? -8 : c > 7 ? 7 : c;
        q[j] = (int8_t)c;
        const double r = (double)v[j] - (double)d * c;
        e += r * r;
    }
    return e;
}

static uint16_t quantize_group(const float *v, int8_t *codes) {
    float amax = 0.0f, mx = 0.0f;
    for (int j = 0; j < SN_BLOB_INT4_GROUP; j++)
        if (fabsf(v[j]) > amax) { amax = fabsf(v[j]); mx = v[j]; }
    memset(codes, 0, SN_BLOB_INT4_GROUP);
    if (!(amax > 0.0f)) return 0;
    int8_t q[SN_BLOB_INT4_GROUP];
    /* Q4_0's own encoding (its scale max / -8, stored as fp16) is the first candidate */
    uint16_t best = sn_fp32_to_fp16(clamp_fp16(mx / -8.0));
    double best_err = eval_scale(v, best, codes);
    for (int k = -12; k <= 12; k++) {
        /* k < 0: the extreme value toward +7 levels; k >= 0: toward -8 (Q4_0's rule at k = 0) */
        const float target = k < 0 ? 7.0f + 0.0625f * (float)(k + 1) : -8.0f + 0.0625f * (float)k;
        const float id = target / (k < 0 ? amax * (mx < 0 ? -1.0f : 1.0f) : mx);
        double sxq = 0, sqq = 0;
        for (int j = 0; j < SN_BLOB_INT4_GROUP; j++) {
            int c = (int)lrintf(v[j] * id);
            c = c < -8 ? -8 : c > 7 ? 7 : c;
            sxq += (double)v[j] * c;
            sqq += (double)c * c;
        }
        if (sqq == 0) continue;
        const uint16_t h = sn_fp32_to_fp16(clamp_fp16(sxq / sqq)); /* least-squares scale, as fp16 */
        const double e = eval_scale(v, h, q);
        if (e < best_err) { best_err = e; best = h; memcpy(codes, q, sizeof q); }
    }
    return best;
}

void sn_blob_quantize_int4_row(const float *x, uint64_t cols, uint8_t *q) {
    uint16_t *scales = (uint16_t *)(void *)(q + cols / 2);
    int8_t lo[SN_BLOB_INT4_GROUP], hi[SN_BLOB_INT4_GROUP];
    for (uint64_t c = 0; c < cols / SN_BLOB_INT4_COLS; c++) {
        /* chunk c: group 2c in the low nibbles, group 2c + 1 in the high nibbles */
        scales[2 * c] = quantize_group(x + c * SN_BLOB_INT4_COLS, lo);
        scales[2 * c + 1] = quantize_group(x + c * SN_BLOB_INT4_COLS + SN_BLOB_INT4_GROUP, hi);
        uint8_t *o = q + c * 32;
        for (int j = 0; j < 32; j++) o[j] = (uint8_t)((lo[j] + 8) | ((hi[j] + 8) << 4));
    }
}

void sn_blob_dequantize_int4_row(const uint8_t *q, uint64_t cols, float *y) {
    (void)sn_dequantize_row(SN_KTYPE_INT4G32, q, y, (int64_t)cols); /* a row of the type table */
}

/* ---------------- writer ---------------- */

typedef struct { char name[64]; sn_blob_dtype dt; sn_blob_layout lay; uint32_t n_dims; uint64_t ne[4];
                 uint64_t offset, nbytes; uint32_t crc; } wtensor;

struct sn_blob_writer {
    sn_gguf_writer *meta;
    uint32_t flags;
    wtensor *t;
    int64_t n;
    uint64_t cap;
    FILE *f;
    char *path;
    uint64_t data_off, table_off, table_end;
    int64_t cur;
    uint64_t cur_written;
    uLong cur_crc;
};

sn_blob_writer *sn_blob_writer_new(void) {
    sn_blob_writer *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->meta = sn_gguf_writer_new();
    if (!w->meta) { free(w); return NULL; }
    return w;
}

void sn_blob_writer_free(sn_blob_writer *w) {
    if (!w) return;
    if (w->f) fclose(w->f);
    sn_gguf_writer_free(w->meta);
    free(w->t);
    free(w->path);
    free(w);
}

sn_gguf_writer *sn_blob_writer_meta(sn_blob_writer *w) { return w->meta; }
void sn_blob_writer_set_flags(sn_blob_writer *w, uint32_t flags) { w->flags = flags; }

sn_status sn_blob_writer_add_tensor(sn_blob_writer *w, const char *name, sn_blob_dtype dt,
                                    sn_blob_layout lay, uint32_t n_dims, const uint64_t *ne, sn_err *err) {
    size_t nl = strlen(name);
    if (nl == 0 || nl >= 64) return sn_err_set(err, SN_EINVAL, "tensor name '%s' must be 1..63 bytes", name);
    uint64_t ne4[4] = {1, 1, 1, 1};
    for (uint32_t i = 0; i < n_dims && i < 4; i++) ne4[i] = ne[i];
    uint64_t nb = sn_blob_tensor_nbytes(dt, lay, n_dims, ne4);
    if (!nb) return sn_err_set(err, SN_EINVAL, "tensor '%s': invalid dtype/layout/shape for a blob", name);
    for (int64_t i = 0; i < w->n; i++)
        if (strcmp(w->t[i].name, name) == 0) return sn_err_set(err, SN_EINVAL, "duplicate tensor '%s'", name);
    wtensor *nt = sn_grow(w->t, (uint64_t)w->n, &w->cap, sizeof *nt, 64);
    if (!nt) return sn_err_set(err, SN_ENOMEM, "out of memory");
    w->t = nt;
    wtensor *t = &w->t[w->n];
    memset(t, 0, sizeof *t);
    memcpy(t->name, name, nl + 1);
    t->dt = dt; t->lay = lay; t->n_dims = n_dims;
    memcpy(t->ne, ne4, sizeof ne4);
    t->nbytes = nb;
    uint64_t prev = w->n ? w->t[w->n - 1].offset + w->t[w->n - 1].nbytes : 0;
    t->offset = (prev + SN_BLOB_ALIGN - 1) / SN_BLOB_ALIGN * SN_BLOB_ALIGN;
    return (sn_status)(w->n++);
}

static int put(FILE *f, const void *p, size_t n) { return fwrite(p, 1, n, f) == n ? 0 : -1; }
static int put32(FILE *f, uint32_t v) { return put(f, &v, 4); }
static int put64(FILE *f, uint64_t v) { return put(f, &v, 8); }
static int pad_to(FILE *f, uint64_t from, uint64_t to) {
    static const uint8_t z[4096];
    while (from < to) {
        uint64_t n = to - from > sizeof z ? sizeof z : to - from;
        if (put(f, z, (size_t)n)) return -1;
        from += n;
    }
    return 0;
}

/* The metadata GGUF is written to a temp file of its own beside the blob and read back. */
static sn_status slurp_meta(sn_blob_writer *w, const char *path, uint8_t **buf, uint64_t *len, sn_err *err) {
    char *mp = NULL;
    int fd = sn_tmp_create(path, ".meta", &mp, err);
    if (fd < 0) return SN_EIO;
    int rfd = dup(fd);
    sn_status st = sn_gguf_writer_begin_fd(w->meta, fd, mp, err);
    if (!st) st = sn_gguf_writer_finish(w->meta, err);
    struct stat sb;
    if (!st && (rfd < 0 || fstat(rfd, &sb) != 0)) st = sn_err_set(err, SN_EIO, "%s: %s", mp, strerror(errno));
    uint64_t n = st ? 0 : (uint64_t)sb.st_size;
    if (!st && !(*buf = malloc(n ? (size_t)n : 1))) st = sn_err_set(err, SN_ENOMEM, "out of memory");
    if (!st && pread(rfd, *buf, (size_t)n, 0) != (ssize_t)n) {
        free(*buf);
        *buf = NULL;
        st = sn_err_set(err, SN_EIO, "%s: reading back blob metadata failed", mp);
    }
    if (!st) *len = n;
    if (rfd >= 0) close(rfd);
    unlink(mp);
    free(mp);
    return st;
}

sn_status sn_blob_writer_begin(sn_blob_writer *w, const char *path, sn_err *err) {
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return sn_err_set(err, SN_EIO, "%s: %s", path, strerror(errno));
    return sn_blob_writer_begin_fd(w, fd, path, err);
}

sn_status sn_blob_writer_begin_fd(sn_blob_writer *w, int fd, const char *path, sn_err *err) {
    uint8_t *meta = NULL;
    uint64_t meta_len = 0;
    sn_status st = slurp_meta(w, path, &meta, &meta_len, err);
    if (st) { close(fd); return st; }
    w->f = fdopen(fd, "w+b"); /* read back for the header CRC */
    if (!w->f) { close(fd); free(meta); return sn_err_set(err, SN_EIO, "%s: %s", path, strerror(errno)); }
    setvbuf(w->f, NULL, _IOFBF, 1 << 22);
    w->path = strdup(path);
    uint64_t off = HDR_SIZE + 8 + meta_len;
    w->table_off = (off + 7) & ~7ull;
    uint64_t tl = 0;
    for (int64_t i = 0; i < w->n; i++) tl += 8 + strlen(w->t[i].name) + REC_FIXED;
    w->table_end = (w->table_off + tl + 7) & ~7ull;
    w->data_off = (w->table_end + SN_BLOB_DATA_ALIGN - 1) / SN_BLOB_DATA_ALIGN * SN_BLOB_DATA_ALIGN;
    uint64_t total = w->data_off + (w->n ? w->t[w->n - 1].offset + w->t[w->n - 1].nbytes : 0);
    int e = put(w->f, SN_BLOB_MAGIC, 4) | put32(w->f, SN_BLOB_VERSION) | put32(w->f, SN_BLOB_ENDIAN_MARK) |
            put32(w->f, 0) | put64(w->f, 0) | put64(w->f, (uint64_t)w->n) | put64(w->f, w->table_end) |
            put64(w->f, w->data_off) | put64(w->f, total) | put32(w->f, SN_BLOB_ALIGN) | put32(w->f, w->flags) |
            put64(w->f, meta_len) | put(w->f, meta, (size_t)meta_len) | pad_to(w->f, off, w->table_off);
    free(meta);
    for (int64_t i = 0; i < w->n && !e; i++) {
        wtensor *t = &w->t[i];
        uint64_t nl = strlen(t->name);
        e |= put64(w->f, nl) | put(w->f, t->name, nl) | put32(w->f, t->dt) | put32(w->f, t->lay) | put32(w->f, t->n_dims);
        for (int d = 0; d < 4; d++) e |= put64(w->f, t->ne[d]);
        e |= put64(w->f, t->offset) | put64(w->f, t->nbytes) | put32(w->f, 0);
    }
    e |= pad_to(w->f, w->table_off + tl, w->data_off);
    if (e) return sn_err_set(err, SN_EIO, "%s: write failed: %s", path, strerror(errno));
    w->cur = 0;
    w->cur_written = 0;
    w->cur_crc = crc32(0L, Z_NULL, 0);
    return SN_OK;
}

sn_status sn_blob_writer_write(sn_blob_writer *w, const void *data, uint64_t n, sn_err *err) {
    if (w->cur >= w->n) return sn_err_set(err, SN_EINVAL, "blob writer: no tensor left to write");
    wtensor *t = &w->t[w->cur];
    if (n > t->nbytes - w->cur_written)
        return sn_err_set(err, SN_EINVAL, "blob writer: tensor '%s' gets more than %llu bytes", t->name, (unsigned long long)t->nbytes);
    if (put(w->f, data, (size_t)n)) return sn_err_set(err, SN_EIO, "%s: write failed: %s", w->path, strerror(errno));
    const uint8_t *b = data;
    for (uint64_t done = 0; done < n;) {
        uInt c = n - done > (1u << 30) ? (1u << 30) : (uInt)(n - done);
        w->cur_crc = crc32(w->cur_crc, b + done, c);
        done += c;
    }
    w->cur_written += n;
    return SN_OK;
}

sn_status sn_blob_writer_end_tensor(sn_blob_writer *w, sn_err *err) {
    wtensor *t = &w->t[w->cur];
    if (w->cur_written != t->nbytes)
        return sn_err_set(err, SN_EINVAL, "blob writer: tensor '%s' got %llu of %llu bytes", t->name, (unsigned long long)w->cur_written, (unsigned long long)t->nbytes);
    t->crc = (uint32_t)w->cur_crc;
    uint64_t end = t->offset + t->nbytes;
    uint64_t next = w->cur + 1 < w->n ? w->t[w->cur + 1].offset : end;
    if (pad_to(w->f, end, next)) return sn_err_set(err, SN_EIO, "%s: write failed", w->path);
    w->cur++;
    w->cur_written = 0;
    w->cur_crc = crc32(0L, Z_NULL, 0);
    return SN_OK;
}

sn_status sn_blob_writer_finish(sn_blob_writer *w, sn_err *err) {
    if (w->cur != w->n) return sn_err_set(err, SN_EINVAL, "blob writer: %lld tensors not written", (long long)(w->n - w->cur));
    if (fflush(w->f)) return sn_err_set(err, SN_EIO, "%s: %s", w->path, strerror(errno));
    /* patch tensor CRCs into the table, then the header CRC over [16, table_end) */
    uint64_t off = w->table_off;
    for (int64_t i = 0; i < w->n; i++) {
        uint64_t nl = strlen(w->t[i].name);
        uint64_t pos = off + 8 + nl + REC_FIXED - 4;
        if (fseeko(w->f, (off_t)pos, SEEK_SET) || put32(w->f, w->t[i].crc))
            return sn_err_set(err, SN_EIO, "%s: patching CRC failed", w->path);
        off += 8 + nl + REC_FIXED;
    }
    fflush(w->f);
    int fd = fileno(w->f);
    uint64_t n = w->table_end - 16;
    uint8_t *buf = malloc(n);
    if (!buf) return sn_err_set(err, SN_ENOMEM, "out of memory");
    if (pread(fd, buf, n, 16) != (ssize_t)n) { free(buf); return sn_err_set(err, SN_EIO, "%s: read back failed", w->path); }
    uint32_t c = crc32_buf(buf, n);
    free(buf);
    if (fseeko(w->f, 12, SEEK_SET) || put32(w->f, c) || fflush(w->f) || fsync(fd))
        return sn_err_set(err, SN_EIO, "%s: %s", w->path, strerror(errno));
    fclose(w->f);
    w->f = NULL;
    return SN_OK;
}
