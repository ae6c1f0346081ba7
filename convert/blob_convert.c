/* blob_convert.c - writes sunny runtime blobs from GGUFs (see blob_convert.h and docs/BLOB.md). */
#include "blob_convert.h"
#include "arch.h"
#include "blob.h"
#include "convert.h"
#include "ggml_types.h"
#include "gguf.h"
#include "hf_config.h"
#include "int4.h"
#include "model.h"
#include "outfile.h"
#include "path.h"
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

/* Compact rows for the embedding (and the head unless --head says otherwise), as llama-quantize's
 * Q4_0 recipe stores the output tensor: Q6_K, Q8_0 when a row is not a multiple of 256, fp16 when
 * not of 32. The lookup dequantizes one row per token; as a matrix it runs the GGUF kernels. */
static sn_blob_dtype compact(uint64_t ne0) {
    return ne0 % 256 == 0 ? SN_BLOB_Q6_K : ne0 % 32 == 0 ? SN_BLOB_Q8_0 : SN_BLOB_FP16;
}

/* The blob dtype of one tensor (n_dims, ne0 of the source; name as written to the blob). The
 * family's F32 kinds (arch.h keep_f32, e.g. Mamba-2's conv1d, RWKV-7's decay LoRA) stay fp32 like
 * the norms; its other small matrices that llama-quantize leaves unquantized (sn_quant_never, e.g.
 * RWKV-7's other LoRA matrices) are FP16 in fp16 and int4 blobs, as llama.cpp's converter writes
 * them into the F16 GGUF that llama-quantize starts from (so an fp16 blob holds the F16 GGUF's
 * values, and an int4 blob reads those matrices in half the bytes, as a Q4_0 file does). */
/* The blob's writer and loader know no 3-D expert stacks yet: mixture-of-experts models stay GGUF. */
static sn_status refuse_experts(const char *src, const char *tensor, sn_err *err) {
    if (!strstr(tensor, "_exps.")) return SN_OK;
    return sn_err_set(err, SN_EUNSUPPORTED, "%s: tensor %s: mixture-of-experts models have no blob format yet; "
                      "convert to GGUF (without --blob), which sunny-run and llama.cpp run",
                      src, tensor);
}

static sn_blob_dtype pick(const sn_arch *a, uint32_t n_dims, uint64_t ne0, const char *name, const sn_blob_convert_opts *o,
                          int untied) {
    if (o->dtype == SN_BLOBTYPE_FP32) return SN_BLOB_FP32;
    if (n_dims == 2 && !strcmp(name, "token_embd.weight")) {
        if (o->dtype == SN_BLOBTYPE_FP16) return SN_BLOB_FP16;
        /* tied: the rows are the head too, in the head's type; untied: INT4 rows, as Q4_0 has them */
        if (!untied) return pick(a, n_dims, ne0, "output.weight", o, 0);
        return ne0 % SN_BLOB_INT4_COLS == 0 ? SN_BLOB_INT4G32 : compact(ne0);
    }
    const int matrix = n_dims == 2 && ends_with(name, ".weight") && !ends_with(name, "_norm.weight") &&
                       !(a && sn_arch_name_in(name, a->keep_f32));
    if (!matrix) return SN_BLOB_FP32;
    if (o->dtype == SN_BLOBTYPE_FP16 || sn_quant_never(name)) return SN_BLOB_FP16;
    if (!strcmp(name, "output.weight")) {
        if (o->head_fp16) return SN_BLOB_FP16;
        if (!o->head_int4) return compact(ne0);
    }
    return ne0 % SN_BLOB_INT4_COLS == 0 ? SN_BLOB_INT4G32 : SN_BLOB_FP16;
}

/* INT4 matrices are stored in 8-row groups for the kernels; the embedding keeps one row per token
 * for the lookup (a tied --head int4 model multiplies by those rows with the row kernels). */
static sn_blob_layout layout_of(sn_blob_dtype dt, const char *name) {
    if (dt != SN_BLOB_INT4G32) return SN_BLOB_ROWMAJOR;
    return strcmp(name, "token_embd.weight") ? SN_BLOB_INT4_X8 : SN_BLOB_INT4_ROWS;
}

/* Encoded rows on their way to the writer: as they are, or gathered 8 at a time and packed into an
 * 8-row group (the last group padded with zero rows, as the blob size rule expects). */
typedef struct { sn_blob_layout lay; uint64_t cols, rb; int n; uint8_t *rows, *grp; } rowbuf;

static sn_status rowbuf_init(rowbuf *b, sn_blob_layout lay, uint64_t cols, uint64_t rb, sn_err *err) {
    memset(b, 0, sizeof *b);
    b->lay = lay; b->cols = cols; b->rb = rb;
    if (lay != SN_BLOB_INT4_X8) return SN_OK;
    b->rows = malloc(8 * rb);
    b->grp = malloc(8 * rb);
    return b->rows && b->grp ? SN_OK : sn_err_set(err, SN_ENOMEM, "out of memory");
}

static void rowbuf_free(rowbuf *b) { free(b->rows); free(b->grp); b->rows = b->grp = NULL; }

static sn_status rowbuf_flush(sn_blob_writer *w, rowbuf *b, sn_err *err) {
    if (b->lay != SN_BLOB_INT4_X8 || b->n == 0) return SN_OK;
    sn_int4x8_pack(b->rows, b->n, (int64_t)b->cols, b->grp);
    b->n = 0;
    return sn_blob_writer_write(w, b->grp, 8 * b->rb, err);
}

static sn_status rowbuf_put(sn_blob_writer *w, rowbuf *b, const uint8_t *row, sn_err *err) {
    if (b->lay != SN_BLOB_INT4_X8) return sn_blob_writer_write(w, row, b->rb, err);
    memcpy(b->rows + (uint64_t)b->n * b->rb, row, b->rb);
    return ++b->n == 8 ? rowbuf_flush(w, b, err) : SN_OK;
}

/* Bytes of one blob row of `cols` values. */
static uint64_t row_bytes(sn_blob_dtype dt, uint64_t cols) {
    switch (dt) {
    case SN_BLOB_INT4G32: return sn_blob_int4_row_bytes(cols);
    case SN_BLOB_FP16: return cols * 2;
    case SN_BLOB_Q6_K: return sn_ggml_row_size(SN_GGML_Q6_K, cols);
    case SN_BLOB_Q8_0: return sn_ggml_row_size(SN_GGML_Q8_0, cols);
    default: return cols * 4;
    }
}

/* One f32 row -> its blob encoding in out (row_bytes(dt, cols)); INT4 also updates *max_rel with
 * max|w - deq(w)| / max|w| (deq: scratch of cols floats). */
static void encode_row(sn_blob_dtype dt, const float *f, uint64_t cols, uint8_t *out, float *deq, double *max_rel) {
    if (dt == SN_BLOB_FP32) { memcpy(out, f, cols * 4); return; }
    if (dt == SN_BLOB_FP16) { sn_fp32_to_fp16_row(f, (uint16_t *)(void *)out, cols); return; }
    if (dt == SN_BLOB_Q6_K || dt == SN_BLOB_Q8_0) {
        sn_ggml_from_f32(dt == SN_BLOB_Q6_K ? SN_GGML_Q6_K : SN_GGML_Q8_0, f, out, (int64_t)cols);
        return;
    }
    sn_blob_quantize_int4_row(f, cols, out);
    sn_blob_dequantize_int4_row(out, cols, deq);
    float amax = 0, emax = 0;
    for (uint64_t c = 0; c < cols; c++) {
        amax = fmaxf(amax, fabsf(f[c]));
        emax = fmaxf(emax, fabsf(f[c] - deq[c]));
    }
    if (amax > 0 && emax / amax > *max_rel) *max_rel = emax / amax;
}

static int cancelled(const sn_blob_convert_opts *o) { return o->cancel && *o->cancel; }

static int can_read(int type) {
    switch (type) {
    case SN_GGML_F32: case SN_GGML_F16: case SN_GGML_BF16: case SN_GGML_Q8_0: case SN_GGML_Q4_0:
    case SN_GGML_Q4_K: case SN_GGML_Q6_K: return 1;
    default: return 0;
    }
}

static sn_status set_blob_keys(sn_gguf_writer *m, const sn_blob_convert_opts *o, const char *src_path, sn_err *err) {
    const char *base = strrchr(src_path, '/');
    base = base && base[1] ? base + 1 : src_path;
    sn_status st = sn_gguf_writer_set_str(m, "sunny.blob.dtype", blobtype_name(o->dtype));
    if (!st) st = sn_gguf_writer_set_str(m, "sunny.blob.source", base);
    return st ? sn_err_set(err, st, "%s: setting the blob metadata failed", src_path) : SN_OK;
}

static void count_dtype(sn_blob_convert_result *res, sn_blob_dtype dt) {
    res->n_int4 += dt == SN_BLOB_INT4G32;
    res->n_fp16 += dt == SN_BLOB_FP16;
    res->n_fp32 += dt == SN_BLOB_FP32;
    res->n_tensors++;
}

static uint32_t blob_flags(const sn_blob_convert_opts *o) {
    return o->dtype == SN_BLOBTYPE_INT4 && o->head_int4 ? SN_BLOB_FLAG_INT4_HEAD : 0;
}

/* ---- GGUF -> blob ---- */

typedef struct { const sn_gguf_tensor *src; char name[64]; sn_blob_dtype dt; } job;

static sn_status write_tensor(sn_blob_writer *w, const job *j, const sn_blob_convert_opts *o, double *max_rel,
                              sn_err *err) {
    const sn_gguf_tensor *t = j->src;
    uint64_t cols = t->ne[0], rows = t->ne[1] * t->ne[2] * t->ne[3];
    uint64_t src_row = sn_ggml_row_size(t->type, cols), rb = row_bytes(j->dt, cols);
    float *f = malloc(cols * sizeof(float)), *deq = malloc(cols * sizeof(float));
    uint8_t *out = malloc(rb);
    rowbuf rbuf;
    sn_status st = rowbuf_init(&rbuf, layout_of(j->dt, j->name), cols, rb, err);
    if (!st && (!f || !deq || !out)) st = sn_err_set(err, SN_ENOMEM, "out of memory (%s)", j->name);
    for (uint64_t r = 0; r < rows && !st; r++) {
        if ((r & 255) == 0 && cancelled(o)) { st = sn_err_set(err, SN_EIO, "interrupted"); break; }
        if (sn_dequantize_row(t->type, (const uint8_t *)t->data + r * src_row, f, (int64_t)cols)) {
            st = sn_err_set(err, SN_EUNSUPPORTED, "tensor '%s': cannot read GGUF type %s", j->name, sn_ggml_type_name(t->type));
            break;
        }
        encode_row(j->dt, f, cols, out, deq, max_rel);
        st = rowbuf_put(w, &rbuf, out, err);
    }
    if (!st) st = rowbuf_flush(w, &rbuf, err);
    rowbuf_free(&rbuf);
    free(f);
    free(deq);
    free(out);
    if (!st) st = sn_blob_writer_end_tensor(w, err);
    return st;
}

static sn_status from_gguf(const char *gguf_path, const sn_blob_convert_opts *o, int *fd, const char *tmp,
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
        if (!strncmp(k, "split.", 6)) continue; /* a split model's parts become one blob */
        st = sn_gguf_writer_copy_kv(m, g, i);
    }
    if (st) { st = sn_err_set(err, st, "%s: copying metadata failed", gguf_path); goto done; }
    if ((st = set_blob_keys(m, o, gguf_path, err))) goto done;
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
        if ((st = refuse_experts(gguf_path, t->name, err))) goto done;
        if (!can_read(t->type)) {
            st = sn_err_set(err, SN_EUNSUPPORTED, "%s: tensor '%s' has type %s, which the blob converter cannot read", gguf_path, t->name, sn_ggml_type_name(t->type) ? sn_ggml_type_name(t->type) : "?");
            goto done;
        }
        jobs[nj].src = t;
        snprintf(jobs[nj].name, sizeof jobs[nj].name, "%s", t->name);
        jobs[nj].dt = pick(arch, t->n_dims, t->ne[0], t->name, o, has_output);
        if (!strcmp(t->name, "token_embd.weight")) emb = nj;
        nj++;
    }
    if (!has_output && emb >= 0 && pick(arch, jobs[emb].src->n_dims, jobs[emb].src->ne[0], "output.weight", o, 0) != jobs[emb].dt) {
        /* tied head of another type than the embedding (--head): its own matrix */
        jobs[nj].src = jobs[emb].src;
        snprintf(jobs[nj].name, sizeof jobs[nj].name, "output.weight");
        jobs[nj].dt = pick(arch, jobs[emb].src->n_dims, jobs[emb].src->ne[0], "output.weight", o, 0);
        nj++;
    }
    for (int64_t i = 0; i < nj && !st; i++) {
        const sn_gguf_tensor *t = jobs[i].src;
        st = sn_blob_writer_add_tensor(w, jobs[i].name, jobs[i].dt, layout_of(jobs[i].dt, jobs[i].name), t->n_dims, t->ne, err);
        if (st > 0) st = SN_OK;
        count_dtype(res, jobs[i].dt);
    }
    if (st < 0) goto done;
    st = SN_OK;
    sn_blob_writer_set_flags(w, blob_flags(o));
    int f = *fd;
    *fd = -1; /* the writer owns it now */
    if ((st = sn_blob_writer_begin_fd(w, f, tmp, err))) goto done;
    for (int64_t i = 0; i < nj && !st; i++) st = write_tensor(w, &jobs[i], o, &res->verify_max_rel_err, err);
    if (!st && cancelled(o)) st = sn_err_set(err, SN_EIO, "interrupted");
    if (!st) st = sn_blob_writer_finish(w, err);
done:
    free(jobs);
    sn_blob_writer_free(w);
    sn_gguf_close(g);
    return st;
}

/* ---- HF folder -> blob, streamed: sn_convert hands every tensor over as F32 rows (convert.h's
 * sink) and each row is encoded and written as it arrives. No intermediate GGUF; the memory is one
 * row, plus the encoded head of a tied model (written right after token_embd). */
typedef struct { char name[64]; uint32_t n_dims; uint64_t ne[4]; int type; sn_blob_dtype dt; } hf_tensor;

typedef struct {
    const sn_blob_convert_opts *o;
    const sn_arch *arch;
    const char *tmp;
    int *fd; /* the temp file, consumed by begin */
    sn_blob_convert_result *res;
    sn_blob_writer *w;
    hf_tensor *t;          /* the plan, in stream order */
    size_t n, cap, cur;
    int plan_oom;
    float *row, *deq;      /* the row being filled, a dequantization scratch */
    uint64_t fill, rows_done;
    uint8_t *enc, *head;   /* one encoded row; the tied head's encoded rows */
    uint64_t head_rb;
    sn_blob_dtype head_dt;
    rowbuf rbuf;           /* rows of the current tensor on their way out (8-row groups) */
    size_t rbuf_for;       /* 1 + index of the tensor rbuf is set up for, 0 = none */
} hf_sink;

static void hf_on_plan(void *ud, const sn_convert_plan_entry *e) {
    hf_sink *k = ud;
    if (k->plan_oom) return;
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 64;
        hf_tensor *nt = realloc(k->t, cap * sizeof *nt);
        if (!nt) { k->plan_oom = 1; return; }
        k->t = nt;
        k->cap = cap;
    }
    hf_tensor *t = &k->t[k->n++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", e->gguf_name);
    t->n_dims = e->n_dims;
    for (uint32_t d = 0; d < 4; d++) t->ne[d] = d < e->n_dims ? e->ne[d] : 1;
    t->type = e->type;
}


/* The converter's progress, passed on with the caller's own ud (the converter's ud is this context). */
static void hf_on_progress(void *ud, const sn_convert_progress *p) {
    const hf_sink *k = ud;
    k->o->on_progress(k->o->ud, p);
}

static sn_status hf_begin(void *ud, const sn_gguf_writer *kv, sn_err *err) {
    hf_sink *k = ud;
    if (k->plan_oom) return sn_err_set(err, SN_ENOMEM, "out of memory");
    for (size_t i = 0; i < k->n; i++) {
        sn_status st = refuse_experts(k->o->in_path, k->t[i].name, err);
        if (st) return st;
    }
    k->w = sn_blob_writer_new();
    if (!k->w) return sn_err_set(err, SN_ENOMEM, "out of memory");
    sn_gguf_writer *m = sn_blob_writer_meta(k->w);
    sn_status st = sn_gguf_writer_copy_kvs(m, kv);
    if (st) return sn_err_set(err, st, "%s: copying metadata failed", k->o->in_path);
    if ((st = set_blob_keys(m, k->o, k->o->in_path, err))) return st;
    int tied = 1;
    uint64_t max_cols = 1;
    for (size_t i = 0; i < k->n; i++) {
        if (!strcmp(k->t[i].name, "output.weight")) tied = 0;
        if (k->t[i].ne[0] > max_cols) max_cols = k->t[i].ne[0];
    }
    for (size_t i = 0; i < k->n && !st; i++) {
        hf_tensor *t = &k->t[i];
        if (t->type != SN_GGML_F32) return sn_err_set(err, SN_EINVAL, "tensor %s: the stream is not F32", t->name);
        const sn_blob_dtype dt = k->t[i].dt = pick(k->arch, t->n_dims, t->ne[0], t->name, k->o, !tied);
        st = sn_blob_writer_add_tensor(k->w, t->name, dt, layout_of(dt, t->name), t->n_dims, t->ne, err);
        if (st > 0) st = SN_OK;
        count_dtype(k->res, dt);
        const sn_blob_dtype hd = pick(k->arch, t->n_dims, t->ne[0], "output.weight", k->o, 0);
        if (!st && tied && !strcmp(t->name, "token_embd.weight") && hd != dt) {
            k->head_dt = hd;
            /* a tied head of another type than the embedding (--head): its own matrix, right after it */
            st = sn_blob_writer_add_tensor(k->w, "output.weight", k->head_dt, layout_of(k->head_dt, "output.weight"), t->n_dims, t->ne, err);
            if (st > 0) st = SN_OK;
            count_dtype(k->res, k->head_dt);
            k->head_rb = row_bytes(k->head_dt, t->ne[0]);
            const uint64_t rows = t->ne[1] * t->ne[2] * t->ne[3];
            if (!st && !(k->head = malloc(k->head_rb * rows)))
                st = sn_err_set(err, SN_ENOMEM, "out of memory for the tied output head (%llu MB)",
                                (unsigned long long)(k->head_rb * rows >> 20));
        }
    }
    if (st < 0) return st;
    k->row = malloc(max_cols * sizeof(float));
    k->deq = malloc(max_cols * sizeof(float));
    k->enc = malloc(max_cols * 4);
    if (!k->row || !k->deq || !k->enc) return sn_err_set(err, SN_ENOMEM, "out of memory");
    sn_blob_writer_set_flags(k->w, blob_flags(k->o));
    int f = *k->fd;
    *k->fd = -1;
    return sn_blob_writer_begin_fd(k->w, f, k->tmp, err);
}

static sn_status hf_write(void *ud, const void *data, uint64_t n, sn_err *err) {
    hf_sink *k = ud;
    if (k->cur >= k->n) return sn_err_set(err, SN_EINVAL, "blob stream: more tensors than planned");
    const hf_tensor *t = &k->t[k->cur];
    const sn_blob_dtype dt = t->dt;
    const int to_head = k->head && !strcmp(t->name, "token_embd.weight");
    const uint64_t cols = t->ne[0], row_b = cols * 4, rb = row_bytes(dt, cols);
    const uint8_t *p = data;
    while (n) {
        const uint64_t take = row_b - k->fill < n ? row_b - k->fill : n;
        memcpy((uint8_t *)k->row + k->fill, p, take);
        k->fill += take;
        p += take;
        n -= take;
        if (k->fill < row_b) break;
        sn_status st = SN_OK;
        if (k->rbuf_for != k->cur + 1) {
            rowbuf_free(&k->rbuf);
            k->rbuf_for = k->cur + 1;
            if ((st = rowbuf_init(&k->rbuf, layout_of(dt, t->name), cols, rb, err))) return st;
        }
        encode_row(dt, k->row, cols, k->enc, k->deq, &k->res->verify_max_rel_err);
        if ((st = rowbuf_put(k->w, &k->rbuf, k->enc, err))) return st;
        if (to_head)
            encode_row(k->head_dt, k->row, cols, k->head + k->rows_done * k->head_rb, k->deq, &k->res->verify_max_rel_err);
        k->rows_done++;
        k->fill = 0;
    }
    return SN_OK;
}

static sn_status hf_end_tensor(void *ud, sn_err *err) {
    hf_sink *k = ud;
    if (k->cur >= k->n) return sn_err_set(err, SN_EINVAL, "blob stream: more tensors than planned");
    const hf_tensor *t = &k->t[k->cur];
    if (k->fill) return sn_err_set(err, SN_EINVAL, "tensor %s: the stream ended inside a row", t->name);
    sn_status st = k->rbuf_for == k->cur + 1 ? rowbuf_flush(k->w, &k->rbuf, err) : SN_OK;
    if (!st) st = sn_blob_writer_end_tensor(k->w, err);
    if (!st && k->head && !strcmp(t->name, "token_embd.weight")) {
        rowbuf hb;
        st = rowbuf_init(&hb, layout_of(k->head_dt, "output.weight"), t->ne[0], k->head_rb, err);
        for (uint64_t r = 0; r < k->rows_done && !st; r++) st = rowbuf_put(k->w, &hb, k->head + r * k->head_rb, err);
        if (!st) st = rowbuf_flush(k->w, &hb, err);
        rowbuf_free(&hb);
        if (!st) st = sn_blob_writer_end_tensor(k->w, err);
        free(k->head);
        k->head = NULL;
    }
    k->cur++;
    k->rows_done = 0;
    return st;
}

static sn_status hf_finish(void *ud, sn_err *err) {
    hf_sink *k = ud;
    if (k->cur != k->n) return sn_err_set(err, SN_EINVAL, "blob stream: %zu of %zu tensors", k->cur, k->n);
    return sn_blob_writer_finish(k->w, err);
}

static sn_status from_hf(const sn_blob_convert_opts *o, int *fd, const char *tmp, sn_blob_convert_result *res,
                         sn_err *err) {
    hf_sink k;
    memset(&k, 0, sizeof k);
    k.o = o;
    k.tmp = tmp;
    k.fd = fd;
    k.res = res;
    /* the family decides which tensors stay fp32 (pick); sn_convert itself reports a bad config */
    char *cfg_path = sn_path_join(o->in_path, "config.json");
    sn_hf_config cfg;
    memset(&cfg, 0, sizeof cfg);
    sn_err ignore = {0};
    if (cfg_path && sn_hf_config_load(cfg_path, &cfg, &ignore) == SN_OK) k.arch = sn_arch_find(cfg.architecture);
    sn_hf_config_free(&cfg);
    free(cfg_path);
    sn_convert_sink sink = {hf_begin, hf_write, hf_end_tensor, hf_finish, &k};
    sn_convert_opts co;
    memset(&co, 0, sizeof co);
    co.model_dir = o->in_path;
    co.out_path = o->out_path;
    co.outtype = SN_OUTTYPE_F32;
    co.n_threads = o->n_threads;
    co.tmp_dir = o->tmp_dir;
    co.force = 1;
    co.cancel = o->cancel;
    co.on_plan = hf_on_plan;
    co.on_progress = o->on_progress ? hf_on_progress : NULL;
    co.ud = &k;
    co.sink = &sink;
    sn_convert_result cr;
    sn_status st = sn_convert(&co, &cr, err);
    sn_blob_writer_free(k.w);
    free(k.t);
    free(k.row);
    free(k.deq);
    free(k.enc);
    free(k.head);
    rowbuf_free(&k.rbuf);
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
    if (sn_same_file(o->in_path, o->out_path))
        return sn_err_set(err, SN_EINVAL, "-o %s is the input itself; choose another output", o->out_path);
    /* a GGUF input sunny-run would refuse is refused before anything is written */
    if (!S_ISDIR(sb.st_mode)) {
        sn_status vs = sn_model_validate(o->in_path, 0, err);
        if (vs) return sn_err_prefix(err, "%s: sunny-run would refuse it", o->in_path), vs;
    }
    sn_out_lock lock;
    sn_status st = sn_out_lock_take(o->out_path, &lock, err);
    if (st) return st;
    if (!o->force && access(o->out_path, F_OK) == 0) { /* placed while we waited for the lock */
        sn_out_lock_drop(&lock);
        return sn_err_set(err, SN_EINVAL, "%s exists; pass --force to overwrite", o->out_path);
    }
    char *tmp = NULL;
    int fd = sn_tmp_create(o->out_path, "", &tmp, err);
    if (fd < 0) { sn_out_lock_drop(&lock); return SN_EIO; }
    st = S_ISDIR(sb.st_mode) ? from_hf(o, &fd, tmp, res, err) : from_gguf(o->in_path, o, &fd, tmp, res, err);
    if (fd >= 0) close(fd);
    if (!st && o->verify) {
        sn_blob *b = NULL;
        st = sn_blob_open(tmp, SN_BLOB_VERIFY, &b, err);
        sn_blob_close(b);
    }
    if (!st && (st = sn_model_validate(tmp, 0, err)))
        sn_err_prefix(err, "%s: not written: sunny-run would refuse the result", o->out_path);
    if (!st && cancelled(o)) st = sn_err_set(err, SN_EIO, "interrupted");
    if (!st && rename(tmp, o->out_path) != 0) st = sn_err_set(err, SN_EIO, "rename %s -> %s: %s", tmp, o->out_path, strerror(errno));
    if (st) unlink(tmp);
    sn_out_lock_drop(&lock);
    if (!st && stat(o->out_path, &sb) == 0) res->bytes = (uint64_t)sb.st_size;
    free(tmp);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    res->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    return st;
}
