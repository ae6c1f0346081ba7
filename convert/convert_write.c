/* convert_write.c - streaming the tensor data of a conversion.
 *
 * One tensor at a time: chunks of rows are converted (cast, permuted, fused, quantized) by n
 * threads into one of two output buffers while a writer thread drains a FIFO of writes into the
 * GGUF writer (or a sink, for blobs) and releases the source pages behind it, so RSS stays flat
 * whatever the model size. Tensors whose source bytes are already the output go out straight
 * from the mapping. */
#include "convert_internal.h"

#include "ggml_types.h"
#include "model.h"
#include "outfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK_BYTES (8u << 20) /* output bytes per threaded chunk */
#define WRITE_PIECE (1u << 20) /* bytes per write() call */

typedef struct {
    const plan_t *p;
    uint64_t row_len, n_rows;   /* elements per output row, rows in the tensor */
    uint64_t row0, nrows;       /* this chunk */
    uint64_t out_row_bytes;
    uint8_t *out;
    float *scratch[MAX_THREADS];
    int nth;
} chunk_job;

typedef struct { chunk_job *job; int ith; } chunk_arg;

/* A source whose rows are the output rows' bytes in another (or the same) float type. */
static int plain_src(const plan_t *p) { return p->src && p->src->contiguous && sn_tsrc_is_plain(&p->ts); }

static int same_dtype(const plan_t *p) {
    if (plain_src(p) && p->src->ggml_type) return p->src->ggml_type == p->type;
    return plain_src(p) && ((p->src->dtype == SN_ST_F32 && p->type == SN_GGML_F32) ||
                            (p->src->dtype == SN_ST_F16 && p->type == SN_GGML_F16) ||
                            (p->src->dtype == SN_ST_BF16 && p->type == SN_GGML_BF16));
}

static void convert_rows(const chunk_job *j, uint64_t r0, uint64_t r1, float *scratch) {
    const plan_t *p = j->p;
    int same = same_dtype(p),
        bf16_to_f16 = plain_src(p) && !p->src->ggml_type && p->src->dtype == SN_ST_BF16 && p->type == SN_GGML_F16;
    for (uint64_t r = r0; r < r1; r++) {
        uint8_t *dst = j->out + (r - j->row0) * j->out_row_bytes;
        if (same || bf16_to_f16) {
            uint64_t src_row;
            sn_tsrc_src_row(&p->ts, r, &src_row);
            const uint8_t *src = p->src->data + src_row * (same ? j->out_row_bytes : j->row_len * 2);
            if (same) memcpy(dst, src, j->out_row_bytes);
            else if ((uintptr_t)src % 2 == 0)
                sn_bf16_to_fp16_row((const uint16_t *)(const void *)src, (uint16_t *)(void *)dst, j->row_len);
            else /* data at an odd offset (the safetensors header length is free): no misaligned loads */
                for (uint64_t e = 0; e < j->row_len; e++) {
                    uint16_t h;
                    memcpy(&h, src + 2 * e, 2);
                    h = sn_fp32_to_fp16(sn_bf16_to_fp32(h));
                    memcpy(dst + 2 * e, &h, 2);
                }
            continue;
        }
        if (p->type == SN_CONV_MXFP4) { /* MXFP4 blocks: bits moved, never through floats */
            sn_tsrc_mxfp4_row(&p->ts, r, dst);
            continue;
        }
        const float *x = sn_tsrc_row(&p->ts, r, scratch);
        sn_ggml_from_f32(p->type, x, dst, (int64_t)j->row_len); /* the plan only picks types it can write */
    }
}

static void *chunk_worker(void *v) {
    chunk_arg *a = v;
    chunk_job *j = a->job;
    uint64_t per = j->nrows / (uint64_t)j->nth, rem = j->nrows % (uint64_t)j->nth;
    uint64_t i = (uint64_t)a->ith;
    uint64_t r0 = j->row0 + i * per + (i < rem ? i : rem);
    uint64_t r1 = r0 + per + (i < rem ? 1 : 0);
    convert_rows(j, r0, r1, j->scratch[a->ith]);
    return NULL;
}

static int cancelled(const writer_ctx *c) { return c->o->cancel && *c->o->cancel; }

static void *writer_main(void *v) {
    writer_ctx *c = v;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (c->qn == 0) pthread_cond_wait(&c->cv, &c->mu);
        wop op = c->q[c->qh];
        sn_status failed = c->wst;
        pthread_mutex_unlock(&c->mu);
        if (op.kind == OP_STOP) return NULL;
        sn_status st = SN_OK;
        if (failed == SN_OK) {
            if (op.kind == OP_WRITE) {
                /* 1 MiB write() calls: the kernel copies them into the page cache much faster than
                 * 8 MiB ones (docs/PERFORMANCE.md, Conversion: "Page-cache writes") */
                for (uint64_t off = 0; st == SN_OK && off < op.n; off += WRITE_PIECE)
                    st = c->o->sink ? c->o->sink->write(c->o->sink->ud, op.data + off,
                                                        op.n - off < WRITE_PIECE ? op.n - off : WRITE_PIECE, &c->werr)
                                    : sn_gguf_writer_write(c->w, op.data + off,
                                              op.n - off < WRITE_PIECE ? op.n - off : WRITE_PIECE, &c->werr);
                if (op.rel) sn_st_release(op.rel, op.roff, op.rlen);
            } else
                st = c->o->sink ? c->o->sink->end_tensor(c->o->sink->ud, &c->werr)
                                : sn_gguf_writer_end_tensor(c->w, &c->werr);
        }
        pthread_mutex_lock(&c->mu);
        if (op.kind == OP_WRITE && st == SN_OK && failed == SN_OK) c->done += op.n;
        uint64_t done = c->done;
        c->qh = (c->qh + 1) % QCAP;
        c->qn--;
        if (op.buf >= 0) c->buf_busy[op.buf] = 0;
        if (st != SN_OK && c->wst == SN_OK) c->wst = st;
        pthread_cond_broadcast(&c->cv);
        if (op.kind == OP_WRITE && c->o->on_progress && st == SN_OK) {
            pthread_mutex_unlock(&c->mu);
            sn_convert_progress pr = {op.i_tensor, c->n_tensors, op.name, done, c->total, sn_conv_now() - c->t0};
            c->o->on_progress(c->o->ud, &pr);
            pthread_mutex_lock(&c->mu);
        }
    }
}

static sn_status writer_failed(writer_ctx *c, sn_err *err) {
    if (err) *err = c->werr;
    return c->wst;
}

static sn_status enqueue(writer_ctx *c, wop op, sn_err *err) {
    pthread_mutex_lock(&c->mu);
    while (c->qn == QCAP && c->wst == SN_OK) pthread_cond_wait(&c->cv, &c->mu);
    if (c->wst != SN_OK) {
        sn_status st = writer_failed(c, err);
        pthread_mutex_unlock(&c->mu);
        return st;
    }
    c->q[(c->qh + c->qn) % QCAP] = op;
    c->qn++;
    if (op.buf >= 0) c->buf_busy[op.buf] = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return SN_OK;
}

/* Waits until output buffer b is free (its last write done). */
static sn_status acquire_buf(writer_ctx *c, int b, sn_err *err) {
    pthread_mutex_lock(&c->mu);
    while (c->buf_busy[b] && c->wst == SN_OK) pthread_cond_wait(&c->cv, &c->mu);
    sn_status st = c->wst != SN_OK ? writer_failed(c, err) : SN_OK;
    pthread_mutex_unlock(&c->mu);
    return st;
}

sn_status sn_conv_writer_start(writer_ctx *c, sn_err *err) {
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    if (pthread_create(&c->th, NULL, writer_main, c) != 0) {
        pthread_cond_destroy(&c->cv);
        pthread_mutex_destroy(&c->mu);
        return sn_err_set(err, SN_ENOMEM, "cannot start the writer thread");
    }
    c->th_started = 1;
    return SN_OK;
}

/* Drains the queue and joins the writer; returns its status. Safe after errors. */
sn_status sn_conv_writer_stop(writer_ctx *c, sn_err *err) {
    if (!c->th_started) return SN_OK;
    pthread_mutex_lock(&c->mu);
    while (c->qn == QCAP) pthread_cond_wait(&c->cv, &c->mu);
    wop stop = {.kind = OP_STOP, .buf = -1};
    c->q[(c->qh + c->qn) % QCAP] = stop;
    c->qn++;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->th, NULL);
    c->th_started = 0;
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    return c->wst != SN_OK ? writer_failed(c, err) : SN_OK;
}

static void run_chunk(chunk_job *j) {
    chunk_arg args[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    int started = 0;
    for (int t = 1; t < j->nth; t++) {
        args[t].job = j;
        args[t].ith = t;
        if (pthread_create(&th[t], NULL, chunk_worker, &args[t]) != 0) break;
        started = t;
    }
    /* the caller is worker 0, and does the share of any thread that failed to start */
    args[0].job = j;
    args[0].ith = 0;
    chunk_worker(&args[0]);
    for (int t = started + 1; t < j->nth; t++) {
        args[t].job = j;
        args[t].ith = t;
        chunk_worker(&args[t]);
    }
    for (int t = 1; t <= started; t++) pthread_join(th[t], NULL);
}

sn_status sn_conv_write_tensor(writer_ctx *c, size_t i_tensor, const plan_t *p, sn_err *err) {
    /* rows: 1-D permuted tensors (llama q/k biases) are permuted element-wise = rows of length 1 */
    uint64_t row_len = p->ts.row_len, n_rows = p->ts.n_rows;
    uint64_t out_row = sn_ggml_row_size(p->type, row_len);
    sn_status st;
    if (n_rows && !out_row) return sn_err_set(err, SN_EINVAL, "tensor %s: bad row size", p->gguf_name);
    wop end = {.kind = OP_END_TENSOR, .buf = -1, .name = p->gguf_name, .i_tensor = i_tensor};
    int direct = same_dtype(p) && !p->permute_heads;
    if (direct) { /* no conversion: the writer streams straight from the mapping */
        for (uint64_t off = 0; off < p->src->nbytes; off += CHUNK_BYTES) {
            if (cancelled(c)) return sn_err_set(err, SN_EIO, "interrupted");
            uint64_t n = p->src->nbytes - off < CHUNK_BYTES ? p->src->nbytes - off : CHUNK_BYTES;
            wop op = {.kind = OP_WRITE, .data = p->src->data + off, .n = n, .buf = -1, .rel = p->src,
                      .roff = off, .rlen = n, .name = p->gguf_name, .i_tensor = i_tensor};
            if ((st = enqueue(c, op, err)) != SN_OK) return st;
        }
        return enqueue(c, end, err);
    }
    uint64_t rows_per_chunk = out_row ? CHUNK_BYTES / out_row : 1;
    if (rows_per_chunk == 0) rows_per_chunk = 1;
    for (int t = 0; t < c->nth; t++) {
        if (!c->scratch[t] || row_len > ((uint64_t *)(void *)c->scratch[t])[-1]) {
            /* scratch carries its capacity in a header word */
            uint64_t *raw = c->scratch[t] ? ((uint64_t *)(void *)c->scratch[t]) - 1 : NULL;
            uint64_t *nr = realloc(raw, sizeof(uint64_t) + row_len * sizeof(float) + 64);
            if (!nr) return sn_err_set(err, SN_ENOMEM, "out of memory");
            nr[0] = row_len;
            c->scratch[t] = (float *)(void *)(nr + 1);
        }
    }
    uint64_t src_row_bytes = !plain_src(p)       ? 0
                             : p->src->ggml_type ? sn_ggml_row_size(p->src->ggml_type, row_len)
                                                 : row_len * sn_st_dtype_size(p->src->dtype);
    for (uint64_t r = 0; r < n_rows; r += rows_per_chunk) {
        if (cancelled(c)) return sn_err_set(err, SN_EIO, "interrupted");
        int b = c->cur;
        if ((st = acquire_buf(c, b, err)) != SN_OK) return st;
        uint64_t nrows = n_rows - r < rows_per_chunk ? n_rows - r : rows_per_chunk;
        uint64_t nbytes = nrows * out_row;
        if (nbytes > c->buf_size[b]) { /* first use, or a single row larger than a chunk */
            uint8_t *nb = realloc(c->buf[b], nbytes);
            if (!nb) return sn_err_set(err, SN_ENOMEM, "out of memory for %llu bytes", (unsigned long long)nbytes);
            c->buf[b] = nb;
            c->buf_size[b] = nbytes;
        }
        chunk_job j;
        memset(&j, 0, sizeof j);
        j.p = p;
        j.row_len = row_len;
        j.n_rows = n_rows;
        j.row0 = r;
        j.nrows = nrows;
        j.out_row_bytes = out_row;
        j.out = c->buf[b];
        j.nth = (uint64_t)c->nth > j.nrows ? (int)j.nrows : c->nth;
        if (j.nth < 1) j.nth = 1;
        for (int t = 0; t < j.nth; t++) j.scratch[t] = c->scratch[t];
        run_chunk(&j);
        /* the converted rows are in our buffer now: the source pages can go (a stack's parts, such as
         * a layer's experts, one by one as the rows pass them) */
        if (plain_src(p) && !p->permute_heads) sn_st_release(p->src, r * src_row_bytes, nrows * src_row_bytes);
        else if (p->ts.n_parts > 1 && n_rows >= p->ts.n_parts)
            for (uint64_t per = n_rows / p->ts.n_parts, k = r / per; k < (r + nrows) / per; k++)
                sn_st_release(p->ts.part[k], 0, p->ts.part[k]->nbytes);
        wop op = {.kind = OP_WRITE, .data = c->buf[b], .n = nbytes, .buf = b, .name = p->gguf_name,
                  .i_tensor = i_tensor};
        if ((st = enqueue(c, op, err)) != SN_OK) return st;
        c->cur ^= 1;
    }
    if (!plain_src(p) || p->permute_heads)
        for (uint32_t k = 0; k < p->ts.n_parts; k++) sn_st_release(p->ts.part[k], 0, p->ts.part[k]->nbytes);
    return enqueue(c, end, err);
}

void sn_conv_writer_free(writer_ctx *c) {
    free(c->buf[0]);
    free(c->buf[1]);
    for (int t = 0; t < MAX_THREADS; t++)
        if (c->scratch[t]) free(((uint64_t *)(void *)c->scratch[t]) - 1);
}

sn_status sn_conv_write_data(const sn_convert_opts *o, sn_gguf_writer *w, const plan_list *pl, int validate_flags,
                             double t0, sn_convert_result *res, sn_err *err) {
    writer_ctx wc;
    memset(&wc, 0, sizeof wc);
    sn_status st = SN_OK;
    char *tmp = NULL;
    int tmp_created = 0;
    sn_out_lock lock = {-1, NULL};
    /* a temp file of our own, under the output's lock (a sink owns its file and lock) */
    if (!o->sink) {
        if ((st = sn_out_lock_take(o->out_path, &lock, err)) != SN_OK) goto done;
        if (!o->force && access(o->out_path, F_OK) == 0) {
            st = sn_err_set(err, SN_EINVAL, "%s: already exists (use --force to overwrite)", o->out_path);
            goto done;
        }
        int fd = sn_tmp_create(o->out_path, "", &tmp, err);
        if (fd < 0) { st = SN_EIO; goto done; }
        tmp_created = 1;
        if ((st = sn_gguf_writer_begin_fd(w, fd, tmp, err)) != SN_OK) goto done;
    }
    double t_data = sn_conv_now();
    if (o->sink && (st = o->sink->begin(o->sink->ud, w, err)) != SN_OK) goto done;
    wc.o = o;
    wc.w = w;
    wc.nth = o->n_threads > 0 ? o->n_threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (wc.nth < 1) wc.nth = 1;
    if (wc.nth > MAX_THREADS) wc.nth = MAX_THREADS;
    wc.n_tensors = pl->n;
    for (size_t i = 0; i < pl->n; i++) wc.total += pl->t[i].bytes;
    wc.t0 = t0;
    if ((st = sn_conv_writer_start(&wc, err)) != SN_OK) goto done;
    for (size_t i = 0; i < pl->n; i++) {
        if ((st = sn_conv_write_tensor(&wc, i, &pl->t[i], err)) != SN_OK) {
            sn_err_prefix(err, "%s: tensor %s", o->sink ? o->out_path : tmp, pl->t[i].gguf_name);
            goto done;
        }
    }
    if ((st = sn_conv_writer_stop(&wc, err)) != SN_OK) goto done;
    double t_sync = sn_conv_now();
    res->data_seconds = t_sync - t_data;
    if (cancelled(&wc)) { st = sn_err_set(err, SN_EIO, "interrupted"); goto done; }
    if ((st = o->sink ? o->sink->finish(o->sink->ud, err) : sn_gguf_writer_finish(w, err)) != SN_OK) goto done;
    res->sync_seconds = sn_conv_now() - t_sync;
    if (cancelled(&wc)) { st = sn_err_set(err, SN_EIO, "interrupted"); goto done; }
    if (!o->sink) {
        /* publish only what sunny-run would load: the runtime's own checks, without its weights */
        if ((st = sn_model_validate(tmp, validate_flags, err)) != SN_OK) {
            sn_err_prefix(err, "%s: not written: sunny-run would refuse the result", o->out_path);
            goto done;
        }
        res->n_shards = 1;
        if ((o->split_max_tensors > 0 || o->split_max_bytes > 0) &&
            (st = sn_conv_split_file(tmp, o->out_path, o->split_max_tensors, o->split_max_bytes, o->force,
                                     &res->n_shards, err)) != SN_OK)
            goto done;
        if (res->n_shards > 1) { /* the shards are published; the whole file was only their source */
            char first[sizeof res->out_path];
            sn_conv_shard_name(o->out_path, 0, res->n_shards, first, sizeof first);
            memcpy(res->out_path, first, sizeof first); /* o->out_path may be res->out_path: not used after */
        } else if (rename(tmp, o->out_path) != 0) {
            st = sn_err_set(err, SN_EIO, "%s: cannot rename to %s: %s", tmp, o->out_path, strerror(errno));
            goto done;
        } else tmp_created = 0;
    }
    res->seconds = sn_conv_now() - t0;
done:
    sn_conv_writer_stop(&wc, NULL);
    if (tmp_created && tmp) unlink(tmp);
    sn_out_lock_drop(&lock);
    free(tmp);
    sn_conv_writer_free(&wc);
    return st;
}
