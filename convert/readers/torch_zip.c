/* torch_zip.c - validated zip reader over a mapping (see torch_zip.h for the format and checks).
 *
 * Only what torch archives need: one disk, stored or deflated entries, zip64 sizes and offsets.
 * The central directory is the truth (local headers may omit sizes when a data descriptor follows);
 * each local header is still checked against it so data offsets cannot be steered outside. */
#include "torch_zip.h"
#include "budget.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

struct sn_zip {
    const char *what;
    const uint8_t *buf;
    uint64_t size;
    sn_zip_entry *e;
    size_t *order;           /* entry indices sorted by name */
    size_t n;
};

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24); }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | ((uint64_t)rd32(p + 4) << 32); }

#define SIG_LOCAL 0x04034b50u
#define SIG_CDIR 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_LOC64 0x07064b50u

static int cmp_order(const void *a, const void *b, void *ctx) {
    const sn_zip *z = ctx;
    return strcmp(z->e[*(const size_t *)a].name, z->e[*(const size_t *)b].name);
}

void sn_zip_close(sn_zip *z) {
    if (!z) return;
    for (size_t i = 0; i < z->n; i++) free((char *)z->e[i].name);
    free(z->e);
    free(z->order);
    free(z);
}

/* Finds the end record: the last 'PK\5\6' whose comment ends exactly at the end of the file. */
static int64_t find_eocd(const uint8_t *b, uint64_t size) {
    if (size < 22) return -1;
    uint64_t lo = size > 22 + 65535 ? size - 22 - 65535 : 0;
    for (uint64_t p = size - 22 + 1; p-- > lo;) {
        if (rd32(b + p) == SIG_EOCD && p + 22 + rd16(b + p + 20) == size) return (int64_t)p;
    }
    return -1;
}

/* Applies the zip64 extra field (id 1) of a directory record to the 0xFFFFFFFF fields. */
static sn_status zip64_extra(const sn_zip *z, const uint8_t *ex, uint32_t exlen, uint64_t rec_off, uint64_t *usize,
                             uint64_t *csize, uint64_t *lho, sn_err *err) {
    int need_u = *usize == 0xFFFFFFFFu, need_c = *csize == 0xFFFFFFFFu, need_o = *lho == 0xFFFFFFFFu;
    if (!need_u && !need_c && !need_o) return SN_OK;
    uint32_t p = 0;
    while (p + 4 <= exlen) {
        uint16_t id = rd16(ex + p), len = rd16(ex + p + 2);
        if ((uint64_t)p + 4 + len > exlen) break;
        if (id == 1) {
            const uint8_t *d = ex + p + 4;
            uint32_t k = 0;
            if (need_u) { if (k + 8 > len) goto bad; *usize = rd64(d + k); k += 8; }
            if (need_c) { if (k + 8 > len) goto bad; *csize = rd64(d + k); k += 8; }
            if (need_o) { if (k + 8 > len) goto bad; *lho = rd64(d + k); k += 8; }
            return SN_OK;
        }
        p += 4u + len;
    }
bad:
    return sn_err_set(err, SN_EFORMAT, "%s: zip central directory record at offset %llu has 0xFFFFFFFF sizes but no "
                      "valid zip64 extra field", z->what, (unsigned long long)rec_off);
}

static sn_status parse(sn_zip *z, sn_err *err) {
    const uint8_t *b = z->buf;
    uint64_t size = z->size;
    if (size >= 4 && rd32(b) != SIG_LOCAL && rd32(b) != SIG_EOCD)
        return sn_err_set(err, SN_EFORMAT, "%s: not a zip archive (no 'PK' signature at offset 0)", z->what);
    int64_t eo = find_eocd(b, size);
    if (eo < 0)
        return sn_err_set(err, SN_EFORMAT, "%s: zip end-of-central-directory record not found (file truncated?)", z->what);
    uint64_t eocd = (uint64_t)eo;
    const uint8_t *e = b + eocd;
    if (rd16(e + 4) != 0 || rd16(e + 6) != 0)
        return sn_err_set(err, SN_EUNSUPPORTED, "%s: multi-disk zip archives are not supported (offset %llu)", z->what,
                          (unsigned long long)eocd);
    uint64_t n = rd16(e + 10), cd_size = rd32(e + 12), cd_off = rd32(e + 16);
    uint64_t cd_limit = eocd; /* the directory must end before this */
    if (n == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_off == 0xFFFFFFFFu ||
        (eocd >= 20 && rd32(b + eocd - 20) == SIG_LOC64)) {
        if (eocd < 20 || rd32(b + eocd - 20) != SIG_LOC64)
            return sn_err_set(err, SN_EFORMAT, "%s: zip end record at offset %llu needs zip64 but has no zip64 locator",
                              z->what, (unsigned long long)eocd);
        uint64_t z64 = rd64(b + eocd - 20 + 8);
        if (z64 > eocd - 20 || eocd - 20 - z64 < 56 || rd32(b + z64) != SIG_EOCD64)
            return sn_err_set(err, SN_EFORMAT, "%s: zip64 locator at offset %llu points to %llu, which is not a zip64 end "
                              "record inside the file", z->what, (unsigned long long)(eocd - 20), (unsigned long long)z64);
        n = rd64(b + z64 + 32);
        cd_size = rd64(b + z64 + 40);
        cd_off = rd64(b + z64 + 48);
        cd_limit = z64;
    }
    if (cd_off > cd_limit || cd_size > cd_limit - cd_off)
        return sn_err_set(err, SN_EFORMAT, "%s: zip central directory (offset %llu, %llu bytes) lies outside the file "
                          "(it must end before offset %llu; file is %llu bytes)", z->what, (unsigned long long)cd_off,
                          (unsigned long long)cd_size, (unsigned long long)cd_limit, (unsigned long long)size);
    if (n > cd_size / 46)
        return sn_err_set(err, SN_EFORMAT, "%s: zip claims %llu entries but its central directory holds at most %llu",
                          z->what, (unsigned long long)n, (unsigned long long)(cd_size / 46));
    z->e = calloc(n ? n : 1, sizeof(*z->e));
    z->order = calloc(n ? n : 1, sizeof(*z->order));
    if (!z->e || !z->order) return sn_err_set(err, SN_ENOMEM, "%s: out of memory for %llu zip entries", z->what,
                                              (unsigned long long)n);
    uint64_t p = cd_off, cd_end = cd_off + cd_size;
    for (uint64_t i = 0; i < n; i++) {
        if (cd_end - p < 46 || rd32(b + p) != SIG_CDIR)
            return sn_err_set(err, SN_EFORMAT, "%s: zip central directory record %llu at offset %llu is malformed",
                              z->what, (unsigned long long)i, (unsigned long long)p);
        const uint8_t *r = b + p;
        uint16_t flags = rd16(r + 8), method = rd16(r + 10);
        uint32_t crc = rd32(r + 16);
        uint64_t csize = rd32(r + 20), usize = rd32(r + 24);
        uint32_t nlen = rd16(r + 28), xlen = rd16(r + 30), clen = rd16(r + 32);
        uint64_t lho = rd32(r + 42);
        if (cd_end - p - 46 < (uint64_t)nlen + xlen + clen)
            return sn_err_set(err, SN_EFORMAT, "%s: zip central directory record %llu at offset %llu runs past the "
                              "directory", z->what, (unsigned long long)i, (unsigned long long)p);
        const uint8_t *nm = r + 46;
        if (nlen == 0 || memchr(nm, 0, nlen))
            return sn_err_set(err, SN_EFORMAT, "%s: zip entry %llu (offset %llu) has an empty or NUL-containing name",
                              z->what, (unsigned long long)i, (unsigned long long)p);
        char *name = malloc(nlen + 1u);
        if (!name) return sn_err_set(err, SN_ENOMEM, "out of memory");
        memcpy(name, nm, nlen);
        name[nlen] = 0;
        sn_zip_entry *en = &z->e[i];
        en->name = name;
        z->n = i + 1;
        sn_status st = zip64_extra(z, nm + nlen, xlen, p, &usize, &csize, &lho, err);
        if (st != SN_OK) return st;
        if (flags & 1)
            return sn_err_set(err, SN_EUNSUPPORTED, "%s: zip entry '%s' is encrypted", z->what, name);
        if (method != SN_ZIP_STORED && method != SN_ZIP_DEFLATED)
            return sn_err_set(err, SN_EUNSUPPORTED, "%s: zip entry '%s' uses compression method %u (only stored and "
                              "deflate are supported)", z->what, name, method);
        if (method == SN_ZIP_STORED && csize != usize)
            return sn_err_set(err, SN_EFORMAT, "%s: zip entry '%s' is stored but its sizes differ (compressed %llu, "
                              "uncompressed %llu; central directory offset %llu)", z->what, name,
                              (unsigned long long)csize, (unsigned long long)usize, (unsigned long long)p);
        /* the local header: inside the file, before the directory, same name and method */
        if (lho > cd_off || cd_off - lho < 30 || rd32(b + lho) != SIG_LOCAL)
            return sn_err_set(err, SN_EFORMAT, "%s: zip entry '%s': local header offset %llu is not a local header "
                              "before the central directory (offset %llu)", z->what, name, (unsigned long long)lho,
                              (unsigned long long)cd_off);
        const uint8_t *l = b + lho;
        uint64_t lnlen = rd16(l + 26), lxlen = rd16(l + 28);
        uint64_t data = lho + 30 + lnlen + lxlen;
        if (data > cd_off || lnlen != nlen || memcmp(l + 30, nm, nlen) != 0 || rd16(l + 8) != method)
            return sn_err_set(err, SN_EFORMAT, "%s: zip entry '%s': local header at offset %llu disagrees with the "
                              "central directory (name, method or extent)", z->what, name, (unsigned long long)lho);
        if (!(rd16(l + 6) & 8)) {
            uint64_t lc = rd32(l + 18), lu = rd32(l + 22);
            if ((lc != 0xFFFFFFFFu && lc != csize) || (lu != 0xFFFFFFFFu && lu != usize))
                return sn_err_set(err, SN_EFORMAT, "%s: zip entry '%s': local header at offset %llu gives sizes %llu/%llu "
                                  "but the central directory %llu/%llu (entry size lies)", z->what, name, (unsigned long long)lho,
                                  (unsigned long long)lc, (unsigned long long)lu, (unsigned long long)csize,
                                  (unsigned long long)usize);
        }
        if (csize > cd_off - data)
            return sn_err_set(err, SN_EFORMAT, "%s: zip entry '%s': %llu bytes of data at offset %llu run past the start "
                              "of the central directory (offset %llu; entry size lies or file truncated)", z->what, name,
                              (unsigned long long)csize, (unsigned long long)data, (unsigned long long)cd_off);
        en->method = method;
        en->crc32 = crc;
        en->comp_size = csize;
        en->size = usize;
        en->data_offset = data;
        z->order[i] = i;
        p += 46u + nlen + xlen + clen;
    }
    qsort_r(z->order, z->n, sizeof(*z->order), cmp_order, z);
    for (size_t i = 1; i < z->n; i++)
        if (strcmp(z->e[z->order[i - 1]].name, z->e[z->order[i]].name) == 0)
            return sn_err_set(err, SN_EFORMAT, "%s: zip entry name '%s' appears twice", z->what, z->e[z->order[i]].name);
    return SN_OK;
}

sn_status sn_zip_open_mem(const uint8_t *buf, uint64_t size, const char *what, sn_zip **out, sn_err *err) {
    *out = NULL;
    sn_zip *z = calloc(1, sizeof(*z));
    if (!z) return sn_err_set(err, SN_ENOMEM, "out of memory");
    z->what = what ? what : "<zip>";
    z->buf = buf;
    z->size = size;
    sn_status st = parse(z, err);
    if (st != SN_OK) {
        sn_zip_close(z);
        return st;
    }
    *out = z;
    return SN_OK;
}

size_t sn_zip_n_entries(const sn_zip *z) { return z->n; }
const sn_zip_entry *sn_zip_entry_at(const sn_zip *z, size_t i) { return i < z->n ? &z->e[i] : NULL; }

typedef struct { const sn_zip *z; const char *name; } find_key;
static int cmp_key_entry(const void *key, const void *ix) {
    const find_key *k = key;
    return strcmp(k->name, k->z->e[*(const size_t *)ix].name);
}

int64_t sn_zip_find(const sn_zip *z, const char *name) {
    if (!z->n) return -1;
    const find_key k = {z, name};
    const size_t *ix = bsearch(&k, z->order, z->n, sizeof *z->order, cmp_key_entry);
    return ix ? (int64_t)*ix : -1;
}

/* Inflates entry en, handing each produced piece to sink; checks the size and CRC-32. */
typedef sn_status (*sink_fn)(void *ud, const uint8_t *p, size_t n, sn_err *err);

static sn_status inflate_entry(const sn_zip *z, const sn_zip_entry *en, sink_fn sink, void *ud, sn_err *err) {
    z_stream s;
    memset(&s, 0, sizeof s);
    if (inflateInit2(&s, -15) != Z_OK) return sn_err_set(err, SN_ENOMEM, "%s: zlib init failed", z->what);
    enum { OUT = 1 << 18 };
    uint8_t *obuf = malloc(OUT);
    if (!obuf) {
        inflateEnd(&s);
        return sn_err_set(err, SN_ENOMEM, "out of memory");
    }
    const uint8_t *in = z->buf + en->data_offset;
    uint64_t in_left = en->comp_size, produced = 0;
    uLong crc = crc32(0L, Z_NULL, 0);
    sn_status st = SN_OK;
    int r = Z_OK;
    while (r != Z_STREAM_END) {
        if (s.avail_in == 0 && in_left) {
            uInt take = in_left > (1u << 30) ? (1u << 30) : (uInt)in_left;
            s.next_in = (Bytef *)(uintptr_t)in;
            s.avail_in = take;
            in += take;
            in_left -= take;
        }
        s.next_out = obuf;
        s.avail_out = OUT;
        r = inflate(&s, Z_NO_FLUSH);
        size_t got = OUT - s.avail_out;
        if (r != Z_OK && r != Z_STREAM_END && !(r == Z_BUF_ERROR && got)) {
            st = sn_err_set(err, SN_EFORMAT, "%s: zip entry '%s': deflate data is corrupt after %llu bytes (%s)", z->what,
                            en->name, (unsigned long long)produced, s.msg ? s.msg : "truncated");
            break;
        }
        if (got > en->size - produced) {
            st = sn_err_set(err, SN_EFORMAT, "%s: zip entry '%s' inflates to more than the %llu bytes the central "
                            "directory states (entry size lies)", z->what, en->name, (unsigned long long)en->size);
            break;
        }
        if (got) {
            crc = crc32(crc, obuf, (uInt)got);
            if ((st = sink(ud, obuf, got, err)) != SN_OK) break;
            produced += got;
        }
        if (r != Z_STREAM_END && got == 0 && s.avail_in == 0 && in_left == 0) {
            st = sn_err_set(err, SN_EFORMAT, "%s: zip entry '%s': deflate stream truncated after %llu of %llu bytes",
                            z->what, en->name, (unsigned long long)produced, (unsigned long long)en->size);
            break;
        }
    }
    if (st == SN_OK && produced != en->size)
        st = sn_err_set(err, SN_EFORMAT, "%s: zip entry '%s' inflates to %llu bytes but the central directory states %llu "
                        "(entry size lies)", z->what, en->name, (unsigned long long)produced, (unsigned long long)en->size);
    if (st == SN_OK && (uint32_t)crc != en->crc32)
        st = sn_err_set(err, SN_EFORMAT, "%s: zip entry '%s': CRC-32 mismatch (data 0x%08x, directory 0x%08x)", z->what,
                        en->name, (unsigned)crc, (unsigned)en->crc32);
    free(obuf);
    inflateEnd(&s);
    return st;
}

typedef struct { uint8_t *dst; uint64_t at; } mem_sink;
static sn_status to_mem(void *ud, const uint8_t *p, size_t n, sn_err *err) {
    mem_sink *m = ud;
    (void)err;
    memcpy(m->dst + m->at, p, n);
    m->at += n;
    return SN_OK;
}

typedef struct { int fd; const char *what; const char *name; } fd_sink;
static sn_status to_fd(void *ud, const uint8_t *p, size_t n, sn_err *err) {
    fd_sink *f = ud;
    while (n) {
        ssize_t w = write(f->fd, p, n);
        if (w <= 0) return sn_err_set(err, SN_EIO, "%s: entry '%s': cannot write the inflated data to a temporary file",
                                      f->what, f->name);
        p += w;
        n -= (size_t)w;
    }
    return SN_OK;
}

sn_status sn_zip_read(const sn_zip *z, size_t i, uint64_t max_size, const uint8_t **data, uint8_t **owned,
                      sn_err *err) {
    *data = NULL;
    *owned = NULL;
    if (i >= z->n) return sn_err_set(err, SN_EINVAL, "%s: no zip entry %zu", z->what, i);
    const sn_zip_entry *en = &z->e[i];
    if (en->method == SN_ZIP_STORED) {
        *data = z->buf + en->data_offset;
        return SN_OK;
    }
    if (en->size > max_size)
        return sn_err_set(err, SN_EFORMAT, "%s: zip entry '%s' inflates to %llu bytes, more than the %llu bytes allowed for it", z->what,
                          en->name, (unsigned long long)en->size, (unsigned long long)max_size);
    if (en->size > SN_BUDGET_INFLATE_SLACK && en->comp_size < (en->size - SN_BUDGET_INFLATE_SLACK) / SN_BUDGET_INFLATE_RATIO)
        return sn_err_set(err, SN_EFORMAT, "%s: zip entry '%s' states %llu bytes from %llu compressed, more than the "
                          "inflate budget of %ux + %llu MB (SN_BUDGET_INFLATE_*, budget.h)", z->what, en->name,
                          (unsigned long long)en->size, (unsigned long long)en->comp_size, SN_BUDGET_INFLATE_RATIO,
                          (unsigned long long)(SN_BUDGET_INFLATE_SLACK >> 20));
    uint8_t *buf = malloc(en->size ? en->size : 1);
    if (!buf) return sn_err_set(err, SN_ENOMEM, "%s: out of memory inflating '%s'", z->what, en->name);
    mem_sink m = {buf, 0};
    sn_status st = inflate_entry(z, en, to_mem, &m, err);
    if (st != SN_OK) {
        free(buf);
        return st;
    }
    *data = buf;
    *owned = buf;
    return SN_OK;
}

sn_status sn_zip_inflate_to_fd(const sn_zip *z, size_t i, int fd, sn_err *err) {
    if (i >= z->n) return sn_err_set(err, SN_EINVAL, "%s: no zip entry %zu", z->what, i);
    const sn_zip_entry *en = &z->e[i];
    if (en->method != SN_ZIP_DEFLATED) return sn_err_set(err, SN_EINVAL, "%s: entry '%s' is not deflated", z->what, en->name);
    fd_sink f = {fd, z->what, en->name};
    return inflate_entry(z, en, to_fd, &f, err);
}
