/* blob_convert.c - writes sunny runtime blobs from GGUFs (see blob_convert.h and docs/BLOB.md). */
#include "blob_convert.h"
#include "arch.h"
#include "blob.h"
#include "convert.h"
#include "ggml_types.h"
#include "gguf.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int sn_blobtype_parse(const char *s) {
    if (!s) return -1;
    if (!strcmp(s, "fp32") || !strcmp(s, "f32")) return SN_BLOBTYPE_FP32;
    if (!strcmp(s, "fp16") || !strcmp(s, "f16")) return SN_BLOBTYPE_FP16;
    if (!strcmp(s, "int4")) return SN_BLOBTYPE_INT4;
    return -1;
}

static const char *blobtype_name(sn_blobtype t) {
    return t == SN_BLOBTYPE_FP32 ? "fp32" : t == SN_BLOBTYPE_FP16 ? "fp16" : "int4";
}

static int ends_with(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && memcmp(s + a - b, suf, b) == 0;
}

/* The blob dtype of one source tensor. The family's F32 kinds (arch.h keep_f32 / no_quantize, e.g.
 * Mamba-2's conv1d) stay fp32 like the norms. */
static sn_blob_dtype pick(const sn_arch *a, const sn_gguf_tensor *t, const char *name, const sn_blob_convert_opts *o) {
    int matrix = t->n_dims == 2 && ends_with(name, ".weight") && strcmp(name, "token_embd.weight") != 0 &&
                 !ends_with(name, "_norm.weight") &&
                 !(a && (sn_arch_name_in(name, a->keep_f32) || sn_arch_name_in(name, a->no_quantize)));
    if (!matrix || o->dtype == SN_BLOBTYPE_FP32) return SN_BLOB_FP32;
    if (o->dtype == SN_BLOBTYPE_FP16) return SN_BLOB_FP16;
    if (!strcmp(name, "output.weight") && o->head_fp16) return SN_BLOB_FP16;
    return t->ne[0] % SN_BLOB_INT4_GROUP == 0 ? SN_BLOB_INT4G64 : SN_BLOB_FP16;
}

static int can_read(int type) {
    switch (type) {
    case SN_GGML_F32: case SN_GGML_F16: case SN_GGML_BF16: case SN_GGML_Q8_0: case SN_GGML_Q4_0:
    case SN_GGML_Q4_K: case SN_GGML_Q6_K: return 1;
    default: return 0;
    }
}

typedef struct { const sn_gguf_tensor *src; char name[64]; sn_blob_dtype dt; } job;

static sn_status write_tensor(sn_blob_writer *w, const job *j, double *max_rel, sn_err *err) {
    const sn_gguf_tensor *t = j->src;
    uint64_t cols = t->ne[0], rows = t->ne[1] * t->ne[2] * t->ne[3];
    uint64_t src_row = sn_ggml_row_size(t->type, cols);
    float *f = malloc(cols * sizeof(float));
    void *out = NULL;
    sn_status st = SN_OK;
    if (!f) return sn_err_set(err, SN_ENOMEM, "out of memory");
    if (j->dt == SN_BLOB_INT4G64) {
        uint64_t rb = sn_blob_int4_row_bytes(cols), nb = rb * rows;
        uint8_t *buf = malloc(nb);
        float *deq = malloc(cols * sizeof(float));
        if (!buf || !deq) { free(buf); free(deq); free(f); return sn_err_set(err, SN_ENOMEM, "out of memory (%s)", j->name); }
        memset(buf, 0, nb);
        for (uint64_t r = 0; r < rows; r++) {
            if (sn_dequantize_row(t->type, (const uint8_t *)t->data + r * src_row, f, (int64_t)cols)) {
                st = sn_err_set(err, SN_EUNSUPPORTED, "tensor '%s': cannot read GGUF type %s", j->name, sn_ggml_type_name(t->type));
                break;
            }
            uint8_t *q = buf + r * rb;
            sn_blob_quantize_int4_row(f, cols, q);
            sn_blob_dequantize_int4_row(q, cols, deq);
            float amax = 0, emax = 0;
            for (uint64_t c = 0; c < cols; c++) {
                amax = fmaxf(amax, fabsf(f[c]));
                emax = fmaxf(emax, fabsf(f[c] - deq[c]));
            }
            if (amax > 0 && emax / amax > *max_rel) *max_rel = emax / amax;
        }
        if (!st) st = sn_blob_writer_write(w, buf, nb, err);
        free(buf);
        free(deq);
    } else {
        size_t esz = j->dt == SN_BLOB_FP32 ? 4 : 2;
        out = malloc(cols * esz);
        if (!out) { free(f); return sn_err_set(err, SN_ENOMEM, "out of memory"); }
        for (uint64_t r = 0; r < rows && !st; r++) {
            if (sn_dequantize_row(t->type, (const uint8_t *)t->data + r * src_row, f, (int64_t)cols)) {
                st = sn_err_set(err, SN_EUNSUPPORTED, "tensor '%s': cannot read GGUF type %s", j->name, sn_ggml_type_name(t->type));
                break;
            }
            if (esz == 4) memcpy(out, f, cols * 4);
            else sn_fp32_to_fp16_row(f, out, cols);
            st = sn_blob_writer_write(w, out, cols * esz, err);
        }
        free(out);
    }
    free(f);
    if (!st) st = sn_blob_writer_end_tensor(w, err);
    return st;
}

static sn_status from_gguf(const char *gguf_path, const sn_blob_convert_opts *o, const char *tmp,
                           sn_blob_convert_result *res, sn_err *err) {
    sn_gguf *g = NULL;
    sn_status st = sn_gguf_open(gguf_path, 0, &g, err);
    if (st) return st;
    sn_blob_writer *w = sn_blob_writer_new();
    int64_t nt = sn_gguf_n_tensors(g);
    job *jobs = calloc((size_t)nt + 1, sizeof *jobs);
    if (!w || !jobs) { st = sn_err_set(err, SN_ENOMEM, "out of memory"); goto done; }
    sn_gguf_writer *m = sn_blob_writer_meta(w);
    for (int64_t i = 0; i < sn_gguf_n_kv(g) && !st; i++) {
        const char *k = sn_gguf_key(g, i);
        if (!strncmp(k, "sunny.blob.", 11)) continue;
        st = sn_gguf_writer_copy_kv(m, g, i);
    }
    const char *base = strrchr(gguf_path, '/');
    base = base ? base + 1 : gguf_path;
    if (!st) st = sn_gguf_writer_set_str(m, "sunny.blob.dtype", blobtype_name(o->dtype));
    if (!st) st = sn_gguf_writer_set_str(m, "sunny.blob.source", base);
    if (st) { st = sn_err_set(err, st, "%s: copying metadata failed", gguf_path); goto done; }
    int64_t nj = 0, emb = -1;
    char arch_name[64] = "";
    int64_t ka = sn_gguf_find_key(g, "general.architecture");
    if (ka >= 0 && sn_gguf_kv_type(g, ka) == SN_GGUF_STR) {
        sn_gguf_str as = sn_gguf_get_str(g, ka);
        snprintf(arch_name, sizeof arch_name, "%.*s", (int)(as.len < 63 ? as.len : 63), as.ptr);
    }
    const sn_arch *arch = sn_arch_find_gguf(arch_name);
    int has_output = sn_gguf_find_tensor(g, "output.weight") >= 0;
    for (int64_t i = 0; i < nt; i++) {
        const sn_gguf_tensor *t = sn_gguf_tensor_at(g, i);
        if (!can_read(t->type)) {
            st = sn_err_set(err, SN_EUNSUPPORTED, "%s: tensor '%s' has type %s, which the blob converter cannot read", gguf_path, t->name, sn_ggml_type_name(t->type) ? sn_ggml_type_name(t->type) : "?");
            goto done;
        }
        jobs[nj].src = t;
        snprintf(jobs[nj].name, sizeof jobs[nj].name, "%s", t->name);
        jobs[nj].dt = pick(arch, t, t->name, o);
        if (!strcmp(t->name, "token_embd.weight")) emb = nj;
        nj++;
    }
    if (!has_output && emb >= 0) { /* tied head: an explicit matrix for the blob's kernels */
        jobs[nj].src = jobs[emb].src;
        snprintf(jobs[nj].name, sizeof jobs[nj].name, "output.weight");
        jobs[nj].dt = pick(arch, jobs[emb].src, "output.weight", o);
        nj++;
    }
    for (int64_t i = 0; i < nj && !st; i++) {
        const sn_gguf_tensor *t = jobs[i].src;
        st = sn_blob_writer_add_tensor(w, jobs[i].name, jobs[i].dt,
                                       jobs[i].dt == SN_BLOB_INT4G64 ? SN_BLOB_INT4_ROWS : SN_BLOB_ROWMAJOR,
                                       t->n_dims, t->ne, err);
        if (st > 0) st = SN_OK;
        res->n_int4 += jobs[i].dt == SN_BLOB_INT4G64;
        res->n_fp16 += jobs[i].dt == SN_BLOB_FP16;
        res->n_fp32 += jobs[i].dt == SN_BLOB_FP32;
    }
    if (st < 0) goto done;
    st = SN_OK;
    sn_blob_writer_set_flags(w, o->dtype == SN_BLOBTYPE_INT4 && !o->head_fp16 ? SN_BLOB_FLAG_INT4_HEAD : 0);
    if ((st = sn_blob_writer_begin(w, tmp, err))) goto done;
    for (int64_t i = 0; i < nj && !st; i++) st = write_tensor(w, &jobs[i], &res->verify_max_rel_err, err);
    if (!st) st = sn_blob_writer_finish(w, err);
    res->n_tensors = (uint64_t)nj;
done:
    free(jobs);
    sn_blob_writer_free(w);
    sn_gguf_close(g);
    return st;
}

sn_status sn_blob_convert(const sn_blob_convert_opts *o, sn_blob_convert_result *res, sn_err *err) {
    memset(res, 0, sizeof *res);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct stat sb;
    if (stat(o->in_path, &sb) != 0) return sn_err_set(err, SN_EIO, "%s: %s", o->in_path, strerror(errno));
    if (!o->force && access(o->out_path, F_OK) == 0)
        return sn_err_set(err, SN_EINVAL, "%s exists; pass --force to overwrite", o->out_path);
    size_t pl = strlen(o->out_path) + 32;
    char *tmp = malloc(pl), *src_tmp = malloc(pl);
    if (!tmp || !src_tmp) { free(tmp); free(src_tmp); return sn_err_set(err, SN_ENOMEM, "out of memory"); }
    snprintf(tmp, pl, "%s.tmp", o->out_path);
    snprintf(src_tmp, pl, "%s.src.gguf", o->out_path);
    const char *gguf_path = o->in_path;
    sn_status st = SN_OK;
    if (S_ISDIR(sb.st_mode)) { /* HF folder: a temporary GGUF first (f16 for an fp16 blob, else f32) */
        sn_convert_opts co;
        memset(&co, 0, sizeof co);
        co.model_dir = o->in_path;
        co.out_path = src_tmp;
        co.outtype = o->dtype == SN_BLOBTYPE_FP16 ? SN_OUTTYPE_F16 : SN_OUTTYPE_F32;
        co.n_threads = o->n_threads;
        co.force = 1;
        sn_convert_result cr;
        st = sn_convert(&co, &cr, err);
        gguf_path = src_tmp;
    }
    if (!st) st = from_gguf(gguf_path, o, tmp, res, err);
    if (!st && o->verify) {
        sn_blob *b = NULL;
        st = sn_blob_open(tmp, SN_BLOB_VERIFY, &b, err);
        sn_blob_close(b);
    }
    if (!st && rename(tmp, o->out_path) != 0) st = sn_err_set(err, SN_EIO, "rename %s -> %s: %s", tmp, o->out_path, strerror(errno));
    if (st) unlink(tmp);
    if (gguf_path == src_tmp) unlink(src_tmp);
    if (!st && stat(o->out_path, &sb) == 0) res->bytes = (uint64_t)sb.st_size;
    free(tmp);
    free(src_tmp);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    res->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    return st;
}
