/* gguf_write.c - the streaming GGUF writer (API and format in gguf.h).
 *
 * KVs are encoded as they are set (in order, a key set again keeps its place), tensors are declared
 * with their shapes before begin(), and begin() writes the header gguf-py's GGUFWriter writes
 * (magic, version, counts, KVs, tensor infos with padded offsets, zero padding to ALIGN). Tensor
 * data then streams through one 4 MiB buffer (large pieces go out uncopied in one writev), each
 * tensor padded to ALIGN; the output is NAME as given (callers write NAME.tmp and rename). */
#include "gguf_internal.h"

#include "ggml_types.h"
#include "grow.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define WBUF_SIZE (4u << 20)

typedef struct { char *key; uint8_t *enc; uint64_t len; } wkv; /* enc = key str + type + value */
typedef struct { char *name; uint32_t n_dims; uint64_t ne[4]; int type; uint64_t size, offset; } wtensor;

struct sn_gguf_writer {
    wkv *kv;
    int64_t n_kv;
    uint64_t cap_kv;
    wtensor *t;
    int64_t n_t;
    uint64_t cap_t;
    name_index t_ix;
    uint32_t alignment;     /* fixed at begin() */
    /* streaming state */
    int fd;
    char *path;
    uint8_t *buf;
    size_t buf_len;
    uint64_t written;       /* bytes handed to the file so far (incl. buffered) */
    uint64_t synced;        /* file bytes whose writeback has been started */
    int64_t cur;            /* tensor being written */
    uint64_t cur_bytes;
    int state;              /* 0 building, 1 streaming, 2 finished/failed */
};

sn_gguf_writer *sn_gguf_writer_new(void) {
    sn_gguf_writer *w = calloc(1, sizeof *w);
    if (w) w->fd = -1;
    return w;
}

void sn_gguf_writer_free(sn_gguf_writer *w) {
    if (!w) return;
    for (int64_t i = 0; i < w->n_kv; i++) { free(w->kv[i].key); free(w->kv[i].enc); }
    for (int64_t i = 0; i < w->n_t; i++) free(w->t[i].name);
    free(w->kv);
    free(w->t);
    free(w->t_ix.slot);
    free(w->buf);
    free(w->path);
    if (w->fd >= 0) close(w->fd);
    free(w);
}

static int64_t wkv_find(const sn_gguf_writer *w, const char *key) {
    for (int64_t i = 0; i < w->n_kv; i++)
        if (strcmp(w->kv[i].key, key) == 0) return i;
    return -1;
}

int sn_gguf_writer_has_key(const sn_gguf_writer *w, const char *key) { return wkv_find(w, key) >= 0; }

sn_status sn_gguf_writer_remove_key(sn_gguf_writer *w, const char *key) {
    if (w->state != 0) return SN_EINVAL;
    int64_t i = wkv_find(w, key);
    if (i < 0) return SN_EINVAL;
    free(w->kv[i].key);
    free(w->kv[i].enc);
    memmove(&w->kv[i], &w->kv[i + 1], (size_t)(w->n_kv - i - 1) * sizeof *w->kv);
    w->n_kv--;
    return SN_OK;
}

/* A growable byte string used to encode one KV. */
typedef struct { uint8_t *p; uint64_t len, cap; int oom; } bytes;

static void b_put(bytes *b, const void *src, uint64_t n) {
    if (b->oom) return;
    if (b->len + n > b->cap) {
        uint64_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n) cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) { b->oom = 1; return; }
        b->p = p;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->len, src, n);
    b->len += n;
}
static void b_u32(bytes *b, uint32_t v) { b_put(b, &v, 4); }
static void b_u64(bytes *b, uint64_t v) { b_put(b, &v, 8); }
static void b_str(bytes *b, const char *s, uint64_t n) { b_u64(b, n); b_put(b, s, n); }

static int key_ok(const char *key) {
    size_t n = key ? strlen(key) : 0;
    return n > 0 && sn_gguf_utf8_bad_at((const uint8_t *)key, n) == n;
}

/* Takes ownership of b: stores it as the encoding of key (in place if the key exists). */
static sn_status put_kv(sn_gguf_writer *w, const char *key, bytes *b) {
    if (b->oom) { free(b->p); return SN_ENOMEM; }
    int64_t i = wkv_find(w, key);
    if (i >= 0) {
        free(w->kv[i].enc);
        w->kv[i].enc = b->p;
        w->kv[i].len = b->len;
        return SN_OK;
    }
    wkv *kv = sn_grow(w->kv, (uint64_t)w->n_kv, &w->cap_kv, sizeof *kv, 32);
    if (!kv) { free(b->p); return SN_ENOMEM; }
    w->kv = kv;
    char *k = strdup(key);
    if (!k) { free(b->p); return SN_ENOMEM; }
    w->kv[w->n_kv++] = (wkv){k, b->p, b->len};
    return SN_OK;
}

static sn_status set_scalar(sn_gguf_writer *w, const char *key, sn_gguf_type t, const void *v) {
    if (w->state != 0 || !key_ok(key)) return SN_EINVAL;
    bytes b = {0};
    b_str(&b, key, strlen(key));
    b_u32(&b, (uint32_t)t);
    b_put(&b, v, sn_gguf_scalar_size[t]);
    return put_kv(w, key, &b);
}

sn_status sn_gguf_writer_set_u8(sn_gguf_writer *w, const char *key, uint8_t v) { return set_scalar(w, key, SN_GGUF_U8, &v); }
sn_status sn_gguf_writer_set_i8(sn_gguf_writer *w, const char *key, int8_t v) { return set_scalar(w, key, SN_GGUF_I8, &v); }
sn_status sn_gguf_writer_set_u16(sn_gguf_writer *w, const char *key, uint16_t v) { return set_scalar(w, key, SN_GGUF_U16, &v); }
sn_status sn_gguf_writer_set_i16(sn_gguf_writer *w, const char *key, int16_t v) { return set_scalar(w, key, SN_GGUF_I16, &v); }
sn_status sn_gguf_writer_set_u32(sn_gguf_writer *w, const char *key, uint32_t v) { return set_scalar(w, key, SN_GGUF_U32, &v); }
sn_status sn_gguf_writer_set_i32(sn_gguf_writer *w, const char *key, int32_t v) { return set_scalar(w, key, SN_GGUF_I32, &v); }
sn_status sn_gguf_writer_set_f32(sn_gguf_writer *w, const char *key, float v) { return set_scalar(w, key, SN_GGUF_F32, &v); }
sn_status sn_gguf_writer_set_u64(sn_gguf_writer *w, const char *key, uint64_t v) { return set_scalar(w, key, SN_GGUF_U64, &v); }
sn_status sn_gguf_writer_set_i64(sn_gguf_writer *w, const char *key, int64_t v) { return set_scalar(w, key, SN_GGUF_I64, &v); }
sn_status sn_gguf_writer_set_f64(sn_gguf_writer *w, const char *key, double v) { return set_scalar(w, key, SN_GGUF_F64, &v); }

sn_status sn_gguf_writer_set_bool(sn_gguf_writer *w, const char *key, int v) {
    uint8_t b = v ? 1 : 0;
    return set_scalar(w, key, SN_GGUF_BOOL, &b);
}

sn_status sn_gguf_writer_set_strn(sn_gguf_writer *w, const char *key, const char *v, uint64_t len) {
    if (w->state != 0 || !key_ok(key) || (!v && len)) return SN_EINVAL;
    bytes b = {0};
    b_str(&b, key, strlen(key));
    b_u32(&b, SN_GGUF_STR);
    b_str(&b, v, len);
    return put_kv(w, key, &b);
}

sn_status sn_gguf_writer_set_str(sn_gguf_writer *w, const char *key, const char *v) {
    if (!v) return SN_EINVAL;
    return sn_gguf_writer_set_strn(w, key, v, strlen(v));
}

sn_status sn_gguf_writer_set_arr(sn_gguf_writer *w, const char *key, sn_gguf_type elem_type,
                                 const void *data, uint64_t n) {
    if (w->state != 0 || !key_ok(key) || (unsigned)elem_type >= SN_GGUF_TYPE_COUNT ||
        elem_type == SN_GGUF_STR || elem_type == SN_GGUF_ARR || (!data && n))
        return SN_EINVAL;
    uint64_t es = sn_gguf_scalar_size[elem_type];
    if (n > UINT64_MAX / es) return SN_EINVAL;
    if (elem_type == SN_GGUF_BOOL)
        for (uint64_t j = 0; j < n; j++)
            if (((const uint8_t *)data)[j] > 1) return SN_EINVAL;
    bytes b = {0};
    b_str(&b, key, strlen(key));
    b_u32(&b, SN_GGUF_ARR);
    b_u32(&b, (uint32_t)elem_type);
    b_u64(&b, n);
    b_put(&b, data, n * es);
    return put_kv(w, key, &b);
}

sn_status sn_gguf_writer_set_arr_str(sn_gguf_writer *w, const char *key, const char *const *strs,
                                     const uint64_t *lens, uint64_t n) {
    if (w->state != 0 || !key_ok(key) || (!strs && n)) return SN_EINVAL;
    bytes b = {0};
    b_str(&b, key, strlen(key));
    b_u32(&b, SN_GGUF_ARR);
    b_u32(&b, SN_GGUF_STR);
    b_u64(&b, n);
    for (uint64_t j = 0; j < n; j++) {
        if (!strs[j] && (!lens || lens[j])) { free(b.p); return SN_EINVAL; }
        b_str(&b, strs[j] ? strs[j] : "", lens ? lens[j] : strlen(strs[j]));
    }
    return put_kv(w, key, &b);
}

sn_status sn_gguf_writer_copy_kv(sn_gguf_writer *w, const sn_gguf *g, int64_t i) {
    uint64_t len;
    const void *raw = sn_gguf_kv_raw(g, i, &len);
    if (!raw || w->state != 0) return SN_EINVAL;
    bytes b = {0};
    b_put(&b, raw, len);
    return put_kv(w, sn_gguf_key(g, i), &b);
}

sn_status sn_gguf_writer_copy_kvs(sn_gguf_writer *w, const sn_gguf_writer *src) {
    if (w->state != 0) return SN_EINVAL;
    for (int64_t i = 0; i < src->n_kv; i++) {
        bytes b = {0};
        b_put(&b, src->kv[i].enc, src->kv[i].len);
        sn_status st = put_kv(w, src->kv[i].key, &b);
        if (st) return st;
    }
    return SN_OK;
}

sn_status sn_gguf_writer_add_tensor(sn_gguf_writer *w, const char *name, uint32_t n_dims,
                                    const uint64_t *ne, int type, sn_err *err) {
    if (w->state != 0) return sn_err_set(err, SN_EINVAL, "gguf writer: tensors must be added before begin");
    size_t nl = name ? strlen(name) : 0;
    if (nl == 0 || nl >= SN_GGUF_MAX_NAME || sn_gguf_utf8_bad_at((const uint8_t *)name, nl) != nl)
        return sn_err_set(err, SN_EINVAL, "gguf writer: tensor name '%s' must be 1..%d bytes of UTF-8",
                          name ? name : "(null)", SN_GGUF_MAX_NAME - 1);
    if (n_dims < 1 || n_dims > SN_GGUF_MAX_DIMS || !ne)
        return sn_err_set(err, SN_EINVAL, "gguf writer: tensor '%s': n_dims %" PRIu32 " not in 1..4",
                          name, n_dims);
    uint32_t blck = sn_ggml_blck_size(type);
    if (blck == 0)
        return sn_err_set(err, SN_EINVAL, "gguf writer: tensor '%s': unknown ggml type %d", name, type);
    if (ne[0] % blck != 0)
        return sn_err_set(err, SN_EINVAL, "gguf writer: tensor '%s': ne[0]=%" PRIu64 " is not a "
                          "multiple of the %s block size %" PRIu32, name, ne[0],
                          sn_ggml_type_name(type), blck);
    uint64_t nel = 1;
    for (uint32_t d = 0; d < n_dims; d++) {
        if (ne[d] > (uint64_t)INT64_MAX || (ne[d] && nel > (uint64_t)INT64_MAX / ne[d]))
            return sn_err_set(err, SN_EINVAL, "gguf writer: tensor '%s': shape overflows", name);
        nel *= ne[d];
    }
    uint64_t blocks = nel / blck, ts = sn_ggml_type_size(type);
    if (blocks > (uint64_t)INT64_MAX / ts)
        return sn_err_set(err, SN_EINVAL, "gguf writer: tensor '%s': byte size overflows", name);
    wtensor *nt = sn_grow(w->t, (uint64_t)w->n_t, &w->cap_t, sizeof *nt, 64);
    if (!nt) return sn_err_set(err, SN_ENOMEM, "out of memory");
    w->t = nt;
    wtensor *t = &w->t[w->n_t];
    memset(t, 0, sizeof *t);
    t->name = strdup(name);
    if (!t->name) return sn_err_set(err, SN_ENOMEM, "out of memory");
    int64_t dup = sn_gguf_index_put(&w->t_ix, t->name, w->n_t, (const char *const *)&w->t[0].name, sizeof *w->t);
    if (dup != -1) {
        free(t->name);
        if (dup == -2) return sn_err_set(err, SN_ENOMEM, "out of memory");
        return sn_err_set(err, SN_EINVAL, "gguf writer: duplicate tensor name '%s'", name);
    }
    t->n_dims = n_dims;
    for (uint32_t d = 0; d < SN_GGUF_MAX_DIMS; d++) t->ne[d] = d < n_dims ? ne[d] : 1;
    t->type = type;
    t->size = blocks * ts;
    return (sn_status)w->n_t++;
}

uint64_t sn_gguf_writer_tensor_size(const sn_gguf_writer *w, int64_t i) {
    return (i >= 0 && i < w->n_t) ? w->t[i].size : 0;
}

/* Alignment from general.alignment if it is a u32 power of two (else 0 = invalid). */
static uint32_t writer_alignment(const sn_gguf_writer *w) {
    int64_t i = wkv_find(w, "general.alignment");
    if (i < 0) return SN_GGUF_DEFAULT_ALIGNMENT;
    const wkv *kv = &w->kv[i];
    uint64_t kl;
    memcpy(&kl, kv->enc, 8);
    uint32_t type, a;
    if (kv->len != 8 + kl + 4 + 4) return 0;
    memcpy(&type, kv->enc + 8 + kl, 4);
    memcpy(&a, kv->enc + 8 + kl + 4, 4);
    if (type != SN_GGUF_U32 || a == 0 || (a & (a - 1))) return 0;
    return a;
}

static uint64_t header_size(const sn_gguf_writer *w) {
    uint64_t n = 4 + 4 + 8 + 8;
    for (int64_t i = 0; i < w->n_kv; i++) n += w->kv[i].len;
    for (int64_t i = 0; i < w->n_t; i++)
        n += 8 + strlen(w->t[i].name) + 4 + 8ull * w->t[i].n_dims + 4 + 8;
    return n;
}

uint64_t sn_gguf_writer_total_size(const sn_gguf_writer *w) {
    uint32_t a = writer_alignment(w);
    if (!a) a = SN_GGUF_DEFAULT_ALIGNMENT;
    uint64_t n = sn_gguf_pad_to(header_size(w), a);
    for (int64_t i = 0; i < w->n_t; i++) n += sn_gguf_pad_to(w->t[i].size, a);
    return n;
}

static sn_status w_fail(sn_gguf_writer *w, sn_err *err, sn_status code, const char *what) {
    int e = errno;
    w->state = 2;
    return sn_err_set(err, code, "%s: %s%s%s", w->path ? w->path : "(gguf writer)", what,
                      code == SN_EIO ? ": " : "", code == SN_EIO ? strerror(e) : "");
}

static int write_all(int fd, const uint8_t *p, size_t n) {
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (k == 0) { errno = EIO; return -1; }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Starts writeback of what the kernel holds so far, every 64 MiB: multi-GB outputs then stream to
 * disk while we compute instead of piling up dirty pages for the final fsync. Advisory only. */
static void w_writeback(sn_gguf_writer *w) {
#ifdef SYNC_FILE_RANGE_WRITE
    uint64_t in_kernel = w->written - w->buf_len;
    if (in_kernel - w->synced >= (UINT64_C(64) << 20)) {
        (void)sync_file_range(w->fd, (off_t)w->synced, (off_t)(in_kernel - w->synced),
                              SYNC_FILE_RANGE_WRITE);
        w->synced = in_kernel;
    }
#else
    (void)w;
#endif
}

static int w_flush(sn_gguf_writer *w) {
    if (w->buf_len && write_all(w->fd, w->buf, w->buf_len)) return -1;
    w->buf_len = 0;
    w_writeback(w);
    return 0;
}

/* Appends n bytes. Small pieces are copied into the buffer; a large piece (>= 1 MiB) or one that
 * would overflow the buffer goes out together with the buffered bytes in one writev, uncopied. */
static int w_put(sn_gguf_writer *w, const void *src, uint64_t n) {
    const uint8_t *p = src;
    w->written += n;
    if (n < WBUF_SIZE / 4 && w->buf_len + n <= WBUF_SIZE) {
        if (n) memcpy(w->buf + w->buf_len, p, (size_t)n);
        w->buf_len += (size_t)n;
        return 0;
    }
    struct iovec iov[2] = {{w->buf, w->buf_len}, {(void *)p, 0}};
    while (n > 0 || iov[0].iov_len > 0) {
        size_t k = n > (UINT64_C(1) << 30) ? (size_t)1 << 30 : (size_t)n;
        iov[1].iov_base = (void *)p;
        iov[1].iov_len = k;
        ssize_t r = writev(w->fd, iov[0].iov_len ? iov : iov + 1, iov[0].iov_len ? 2 : 1);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (r == 0) { errno = EIO; return -1; }
        size_t got = (size_t)r;
        size_t from_buf = got < iov[0].iov_len ? got : iov[0].iov_len;
        iov[0].iov_base = (uint8_t *)iov[0].iov_base + from_buf;
        iov[0].iov_len -= from_buf;
        got -= from_buf;
        p += got;
        n -= got;
    }
    w->buf_len = 0;
    w_writeback(w);
    return 0;
}

static int w_zeros(sn_gguf_writer *w, uint64_t n) {
    static const uint8_t z[256];
    while (n > 0) {
        uint64_t k = n > sizeof z ? sizeof z : n;
        if (w_put(w, z, k)) return -1;
        n -= k;
    }
    return 0;
}

sn_status sn_gguf_writer_begin(sn_gguf_writer *w, const char *path, sn_err *err) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return sn_err_set(err, SN_EIO, "%s: cannot create: %s", path, strerror(errno));
    return sn_gguf_writer_begin_fd(w, fd, path, err);
}

sn_status sn_gguf_writer_begin_fd(sn_gguf_writer *w, int fd, const char *path, sn_err *err) {
    if (w->state != 0) { close(fd); return sn_err_set(err, SN_EINVAL, "gguf writer: begin called twice"); }
    w->fd = fd;
    w->alignment = writer_alignment(w);
    if (!w->alignment)
        return sn_err_set(err, SN_EINVAL, "%s: general.alignment must be a u32 power of two", path);
    w->path = strdup(path);
    w->buf = malloc(WBUF_SIZE);
    if (!w->path || !w->buf) return sn_err_set(err, SN_ENOMEM, "out of memory");
    w->state = 1;

    uint64_t offset = 0;
    for (int64_t i = 0; i < w->n_t; i++) {
        w->t[i].offset = offset;
        offset += sn_gguf_pad_to(w->t[i].size, w->alignment);
    }
    bytes h = {0};
    b_u32(&h, GGUF_MAGIC);
    b_u32(&h, GGUF_VERSION);
    b_u64(&h, (uint64_t)w->n_t);
    b_u64(&h, (uint64_t)w->n_kv);
    if (h.oom || w_put(w, h.p, h.len)) { free(h.p); return w_fail(w, err, SN_EIO, "write failed"); }
    free(h.p);
    for (int64_t i = 0; i < w->n_kv; i++)
        if (w_put(w, w->kv[i].enc, w->kv[i].len)) return w_fail(w, err, SN_EIO, "write failed");
    for (int64_t i = 0; i < w->n_t; i++) {
        const wtensor *t = &w->t[i];
        bytes b = {0};
        b_str(&b, t->name, strlen(t->name));
        b_u32(&b, t->n_dims);
        for (uint32_t d = 0; d < t->n_dims; d++) b_u64(&b, t->ne[d]);
        b_u32(&b, (uint32_t)t->type);
        b_u64(&b, t->offset);
        int bad = b.oom || w_put(w, b.p, b.len);
        free(b.p);
        if (bad) return w_fail(w, err, SN_EIO, "write failed");
    }
    if (w_zeros(w, sn_gguf_pad_to(w->written, w->alignment) - w->written))
        return w_fail(w, err, SN_EIO, "write failed");
    w->cur = 0;
    w->cur_bytes = 0;
    return SN_OK;
}

sn_status sn_gguf_writer_write(sn_gguf_writer *w, const void *data, uint64_t n, sn_err *err) {
    if (w->state != 1) return sn_err_set(err, SN_EINVAL, "gguf writer: write outside begin/finish");
    if (w->cur >= w->n_t)
        return sn_err_set(err, SN_EINVAL, "%s: data written after the last tensor", w->path);
    const wtensor *t = &w->t[w->cur];
    if (n > t->size - w->cur_bytes)
        return sn_err_set(err, SN_EINVAL, "%s: tensor '%s': %" PRIu64 " bytes written, the tensor "
                          "has %" PRIu64, w->path, t->name, w->cur_bytes + n, t->size);
    if (w_put(w, data, n)) return w_fail(w, err, SN_EIO, "write failed");
    w->cur_bytes += n;
    return SN_OK;
}

sn_status sn_gguf_writer_end_tensor(sn_gguf_writer *w, sn_err *err) {
    if (w->state != 1 || w->cur >= w->n_t)
        return sn_err_set(err, SN_EINVAL, "gguf writer: end_tensor without a tensor in progress");
    const wtensor *t = &w->t[w->cur];
    if (w->cur_bytes != t->size)
        return sn_err_set(err, SN_EINVAL, "%s: tensor '%s': %" PRIu64 " bytes written, expected %" PRIu64,
                          w->path, t->name, w->cur_bytes, t->size);
    if (w_zeros(w, sn_gguf_pad_to(t->size, w->alignment) - t->size))
        return w_fail(w, err, SN_EIO, "write failed");
    w->cur++;
    w->cur_bytes = 0;
    return SN_OK;
}

sn_status sn_gguf_writer_finish(sn_gguf_writer *w, sn_err *err) {
    if (w->state != 1) return sn_err_set(err, SN_EINVAL, "gguf writer: finish without begin");
    if (w->cur != w->n_t)
        return sn_err_set(err, SN_EINVAL, "%s: finish after %" PRId64 " of %" PRId64 " tensors",
                          w->path, w->cur, w->n_t);
    if (w_flush(w)) return w_fail(w, err, SN_EIO, "write failed");
    if (fsync(w->fd) != 0 && errno != EINVAL && errno != EROFS)
        return w_fail(w, err, SN_EIO, "fsync failed");
    int fd = w->fd;
    w->fd = -1;
    w->state = 2;
    if (close(fd) != 0) return w_fail(w, err, SN_EIO, "close failed");
    return SN_OK;
}
