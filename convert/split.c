/* split.c - --split-max-tensors / --split-max-size: the finished GGUF cut into shards the way
 * convert_hf_to_gguf.py's writer (gguf-py GGUFWriter) cuts it:
 *   - tensors in file order; a new shard starts when the current one holds max_tensors tensors, or
 *     when adding the tensor would take its unpadded bytes over max_bytes (at least one per shard);
 *   - one shard only: no split at all (the plain OUT file);
 *   - names SHARD_NAME_FORMAT "{stem}-{i:05d}-of-{n:05d}.gguf" beside OUT (stem: OUT without its
 *     last suffix);
 *   - shard 0 holds every KV of the model, then split.no (u16), split.count (u16) and
 *     split.tensors.count (i32); the other shards hold only those three; each shard's tensor data is
 *     aligned and padded on its own, offsets from its own data section.
 * Each shard is written to a temp file of its own; all are renamed only when every one is complete. */
#include "convert_internal.h"
#include "outfile.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

size_t sn_conv_split_count(const uint64_t *sizes, size_t n, int64_t max_tensors, uint64_t max_bytes, size_t *first_of) {
    size_t shards = 0, cur_n = 0;
    uint64_t cur_b = 0;
    for (size_t i = 0; i < n; i++) {
        if (cur_n == 0 || (max_tensors > 0 && (int64_t)cur_n >= max_tensors) ||
            (max_bytes > 0 && cur_b + sizes[i] > max_bytes)) {
            if (first_of) first_of[shards] = i;
            shards++;
            cur_n = 0;
            cur_b = 0;
        }
        cur_n++;
        cur_b += sizes[i];
    }
    return shards ? shards : 1;
}

int sn_conv_shard_name(const char *out_path, size_t i, size_t n, char *buf, size_t cap) {
    const char *slash = strrchr(out_path, '/');
    const char *base = slash ? slash + 1 : out_path;
    const char *dot = strrchr(base, '.');
    size_t stem = dot && dot != base ? (size_t)(dot - out_path) : strlen(out_path);
    int k = snprintf(buf, cap, "%.*s-%05zu-of-%05zu.gguf", (int)stem, out_path, i + 1, n);
    return k < 0 || (size_t)k >= cap ? -1 : 0;
}

sn_status sn_conv_split_file(const char *src, const char *out_path, int64_t max_tensors, uint64_t max_bytes,
                             int force, size_t *n_shards, sn_err *err) {
    sn_gguf *g = NULL;
    sn_status st = sn_gguf_open(src, 0, &g, err);
    if (st) return st;
    const size_t nt = (size_t)sn_gguf_n_tensors(g);
    uint64_t *sizes = calloc(nt ? nt : 1, sizeof *sizes);
    size_t *first = calloc(nt ? nt + 1 : 2, sizeof *first);
    char **tmps = NULL;
    size_t ns = 0;
    if (!sizes || !first) { st = sn_err_set(err, SN_ENOMEM, "out of memory"); goto done; }
    for (size_t i = 0; i < nt; i++) sizes[i] = sn_gguf_tensor_at(g, (int64_t)i)->size;
    ns = sn_conv_split_count(sizes, nt, max_tensors, max_bytes, first);
    *n_shards = ns;
    if (ns <= 1) goto done; /* "Model fails split requirements, not splitting" */
    first[ns] = nt;
    tmps = calloc(ns, sizeof *tmps);
    if (!tmps) { st = sn_err_set(err, SN_ENOMEM, "out of memory"); goto done; }
    char name[4096];
    for (size_t s = 0; s < ns && st == SN_OK; s++) {
        if (sn_conv_shard_name(out_path, s, ns, name, sizeof name)) {
            st = sn_err_set(err, SN_EINVAL, "%s: shard name too long", out_path);
            break;
        }
        if (!force && access(name, F_OK) == 0) {
            st = sn_err_set(err, SN_EINVAL, "%s: already exists (use --force to overwrite)", name);
            break;
        }
        sn_gguf_writer *w = sn_gguf_writer_new();
        if (!w) { st = sn_err_set(err, SN_ENOMEM, "out of memory"); break; }
        if (s == 0)
            for (int64_t k = 0; k < sn_gguf_n_kv(g) && st == SN_OK; k++) st = sn_gguf_writer_copy_kv(w, g, k);
        if (st == SN_OK) st = sn_gguf_writer_set_u16(w, "split.no", (uint16_t)s);
        if (st == SN_OK) st = sn_gguf_writer_set_u16(w, "split.count", (uint16_t)ns);
        if (st == SN_OK) st = sn_gguf_writer_set_i32(w, "split.tensors.count", (int32_t)nt);
        if (st) sn_err_set(err, st, "%s: cannot set the split keys", name);
        for (size_t i = first[s]; i < first[s + 1] && st == SN_OK; i++) {
            const sn_gguf_tensor *t = sn_gguf_tensor_at(g, (int64_t)i);
            sn_status r = sn_gguf_writer_add_tensor(w, t->name, t->n_dims, t->ne, t->type, err);
            if (r < 0) st = r;
        }
        int fd = st == SN_OK ? sn_tmp_create(name, "", &tmps[s], err) : -1;
        if (st == SN_OK && fd < 0) st = SN_EIO;
        if (st == SN_OK) st = sn_gguf_writer_begin_fd(w, fd, tmps[s], err);
        for (size_t i = first[s]; i < first[s + 1] && st == SN_OK; i++) {
            const sn_gguf_tensor *t = sn_gguf_tensor_at(g, (int64_t)i);
            st = sn_gguf_writer_write(w, t->data, t->size, err);
            if (st == SN_OK) st = sn_gguf_writer_end_tensor(w, err);
        }
        if (st == SN_OK) st = sn_gguf_writer_finish(w, err);
        sn_gguf_writer_free(w);
    }
    for (size_t s = 0; s < ns && st == SN_OK; s++) {
        sn_conv_shard_name(out_path, s, ns, name, sizeof name);
        if (rename(tmps[s], name) != 0) st = sn_err_set(err, SN_EIO, "%s: cannot rename to %s: %s", tmps[s], name, strerror(errno));
        else { free(tmps[s]); tmps[s] = NULL; }
    }
done:
    for (size_t s = 0; tmps && s < ns; s++) {
        if (tmps[s]) unlink(tmps[s]);
        free(tmps[s]);
    }
    free(tmps);
    free(sizes);
    free(first);
    sn_gguf_close(g);
    return st;
}
