/* convert.c - the sunny-convert driver: plan everything, write the header, stream the tensors.
 *
 * Order of work (each step can fail before anything is written):
 *   1. config.json, tokenizer presence, architecture lookup, safetensors headers;
 *   2. the plan: every tensor mapped to its GGUF name, shape checked against the config, output type
 *      chosen (llama.cpp's rules, see choose_type), byte sizes known;
 *   3. the GGUF header: general.*, {arch}.*, tokenizer.* and all tensor infos;
 *   4. tensor data, one tensor at a time, in chunks of rows converted by n threads into one buffer,
 *      written, and the source pages released so RSS stays flat whatever the model size.
 * Output goes to OUT.tmp, fsynced and renamed; any failure or cancellation unlinks the tmp. */
#include "path.h"
#include "convert.h"

#include "arch.h"
#include "ggml_types.h"
#include "safetensors.h"
#include "transform.h"
#include "vocab.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHUNK_BYTES (8u << 20) /* output bytes per threaded chunk */
#define MAX_THREADS 64
#define WRITE_PIECE (1u << 20) /* bytes per write() call */

/* ---- outtypes ---- */

static const char *const k_outtype_names[] = {"auto", "f32", "f16", "bf16", "q8_0", "q4_0"};

int sn_outtype_parse(const char *s) {
    for (int i = 0; i < (int)(sizeof(k_outtype_names) / sizeof(k_outtype_names[0])); i++)
        if (strcmp(s, k_outtype_names[i]) == 0) return i;
    return -1;
}

const char *sn_outtype_name(sn_outtype t) {
    return (unsigned)t < sizeof(k_outtype_names) / sizeof(k_outtype_names[0]) ? k_outtype_names[t] : "?";
}

/* ---- the plan ---- */

typedef struct {
    char hf_name[256];
    char gguf_name[SN_GGUF_MAX_NAME];
    const sn_st_tensor *src;      /* the first (usually only) source; NULL for generated tensors */
    float *gen;                   /* generated data (F32), owned */
    sn_tsrc ts;                   /* where the rows come from (sources, transforms) */
    uint32_t n_dims;
    uint64_t ne[SN_GGUF_MAX_DIMS];
    uint64_t n_elems;
    uint64_t permute_heads;
    int type;
    uint64_t bytes;
} plan_t;

typedef struct {
    plan_t *t;
    size_t n, cap;
} plan_list;

static void plan_free(plan_list *pl) {
    for (size_t i = 0; i < pl->n; i++) free(pl->t[i].gen);
    free(pl->t);
    memset(pl, 0, sizeof(*pl));
}

static plan_t *plan_push(plan_list *pl) {
    if (pl->n == pl->cap) {
        size_t nc = pl->cap ? pl->cap * 2 : 64;
        plan_t *nt = realloc(pl->t, nc * sizeof(*nt));
        if (!nt) return NULL;
        pl->t = nt;
        pl->cap = nc;
    }
    plan_t *p = &pl->t[pl->n++];
    memset(p, 0, sizeof(*p));
    return p;
}

static int ends_with(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static int find_plan(const plan_list *pl, const char *gguf_name) {
    for (size_t i = 0; i < pl->n; i++)
        if (strcmp(pl->t[i].gguf_name, gguf_name) == 0) return (int)i;
    return -1;
}

/* llama.cpp's type rules. The converter (f32/f16/bf16/q8_0): F32 for rank <= 1, *_norm.weight,
 * names not ending in .weight and the family's keep_f32 kinds; the outtype otherwise; F16 when a row is not a multiple of the
 * quant block. q4_0 follows llama-quantize MOSTLY_Q4_0 run on the f32 conversion (which leaves the
 * family's no_quantize kinds F32): the output
 * tensor (token_embd when there is no output.weight) -> Q6_K, Q8_0 if ne0 % 256, F16 if ne0 % 32;
 * every other quantizable matrix -> Q4_0, F16 if ne0 % 32. */
static int choose_type(const sn_arch *a, sn_outtype ot, const plan_t *p, int has_output) {
    if (p->n_dims <= 1 || ends_with(p->gguf_name, "_norm.weight") || !ends_with(p->gguf_name, ".weight"))
        return SN_GGML_F32;
    /* the family's F32 kinds: the converter's for f32..q8_0, llama-quantize's exclusions for q4_0 */
    if (sn_arch_name_in(p->gguf_name, ot == SN_OUTTYPE_Q4_0 ? a->no_quantize : a->keep_f32)) return SN_GGML_F32;
    uint64_t ne0 = p->ne[0];
    switch (ot) {
    case SN_OUTTYPE_F32: return SN_GGML_F32;
    case SN_OUTTYPE_F16: return SN_GGML_F16;
    case SN_OUTTYPE_BF16: return SN_GGML_BF16;
    case SN_OUTTYPE_Q8_0: return ne0 % 32 ? SN_GGML_F16 : SN_GGML_Q8_0;
    case SN_OUTTYPE_Q4_0: {
        int is_out = strcmp(p->gguf_name, "output.weight") == 0 ||
                     (!has_output && strcmp(p->gguf_name, "token_embd.weight") == 0);
        if (ne0 % 32) return SN_GGML_F16;
        if (is_out) return ne0 % 256 ? SN_GGML_Q8_0 : SN_GGML_Q6_K;
        return SN_GGML_Q4_0;
    }
    default: return SN_GGML_F16;
    }
}

/* llama-quantize writes tensors in its loader's map order: layer number ("blk.N.", -1 for the
 * rest) first, then name. A q4_0 file follows it so it equals llama-quantize's byte for byte. */
static int layer_of(const char *name) {
    int l = -1;
    if (sscanf(name, "blk.%d.", &l) != 1) l = -1;
    return l;
}

static int cmp_quantize_order(const void *a, const void *b) {
    const plan_t *x = a, *y = b;
    int lx = layer_of(x->gguf_name), ly = layer_of(y->gguf_name);
    if (lx != ly) return lx < ly ? -1 : 1;
    return strcmp(x->gguf_name, y->gguf_name);
}

static uint32_t file_type_of(sn_outtype ot) {
    switch (ot) {
    case SN_OUTTYPE_F32: return SN_FTYPE_ALL_F32;
    case SN_OUTTYPE_BF16: return SN_FTYPE_MOSTLY_BF16;
    case SN_OUTTYPE_Q8_0: return SN_FTYPE_MOSTLY_Q8_0;
    case SN_OUTTYPE_Q4_0: return SN_FTYPE_MOSTLY_Q4_0;
    default: return SN_FTYPE_MOSTLY_F16;
    }
}

static const char *ftype_label(sn_outtype ot) {
    switch (ot) {
    case SN_OUTTYPE_F32: return "F32";
    case SN_OUTTYPE_BF16: return "BF16";
    case SN_OUTTYPE_Q8_0: return "Q8_0";
    case SN_OUTTYPE_Q4_0: return "Q4_0";
    default: return "F16";
    }
}


static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void shape_str(const uint64_t *ne, uint32_t n_dims, int reversed, char *buf, size_t n) {
    size_t k = 0;
    k += (size_t)snprintf(buf + k, n - k, "[");
    for (uint32_t i = 0; i < n_dims && k < n; i++) {
        uint64_t v = reversed ? ne[n_dims - 1 - i] : ne[i];
        k += (size_t)snprintf(buf + k, n - k, "%s%llu", i ? ", " : "", (unsigned long long)v);
    }
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* Rows as the writer streams them: 1-D permuted tensors (llama q/k biases) are permuted
 * element-wise, i.e. rows of length 1. */
static void plan_rows(plan_t *p) {
    p->ts.row_len = p->n_dims >= 2 || !p->permute_heads ? p->ne[0] : 1;
    p->ts.n_rows = p->ts.row_len ? p->n_elems / p->ts.row_len : 0;
}

static uint64_t elems_of(const uint64_t *ne, uint32_t n_dims) {
    uint64_t n = 1;
    for (uint32_t d = 0; d < n_dims; d++) n *= ne[d];
    return n;
}

/* Adds source t under the mapping at (one part of a fused tensor, or all of one). */
static sn_status plan_add_source(plan_list *pl, const sn_st_tensor *t, const sn_arch_tensor *at,
                                 const char *gguf_name, sn_err *err) {
    /* the source shape: as declared, else the output shape (HF shape reversed) */
    const uint64_t *want = at->src_n_dims ? at->src_ne : at->ne;
    uint32_t want_dims = at->src_n_dims ? at->src_n_dims : at->n_dims;
    uint32_t n_parts = at->n_parts > 1 ? at->n_parts : 1;
    int same = t->n_dims == want_dims;
    for (uint32_t d = 0; same && d < t->n_dims; d++)
        if (t->shape[t->n_dims - 1 - d] != want[d]) same = 0;
    if (!same) {
        char got[96], exp[96];
        shape_str(t->shape, t->n_dims, 0, got, sizeof got);
        shape_str(want, want_dims, 1, exp, sizeof exp);
        return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s' has shape %s but config.json implies %s",
                          t->file, t->name, got, exp);
    }
    uint64_t out_elems = elems_of(at->ne, at->n_dims);
    if (t->n_elems * n_parts != out_elems || at->part >= n_parts || n_parts > SN_ARCH_MAX_PARTS ||
        (n_parts > 1 && at->permute_heads) || (at->transpose && want_dims != 2))
        return sn_err_set(err, SN_EINVAL, "%s: tensor '%s': the %s mapping to %s is inconsistent", t->file,
                          t->name, n_parts > 1 ? "fused" : "reshaped", gguf_name);
    if (at->permute_heads && (t->shape[0] % (2 * at->permute_heads) != 0))
        return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s': %llu rows cannot be split into %llu heads",
                          t->file, t->name, (unsigned long long)t->shape[0],
                          (unsigned long long)at->permute_heads);
    int k = n_parts > 1 ? find_plan(pl, gguf_name) : -1;
    plan_t *p;
    if (k >= 0) {
        p = &pl->t[k];
        if (p->ts.n_parts != n_parts || p->ts.part[at->part] || memcmp(p->ne, at->ne, sizeof p->ne) != 0)
            return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s' maps to part %u of %s a second time", t->file,
                              t->name, at->part, gguf_name);
    } else {
        if (find_plan(pl, gguf_name) >= 0)
            return sn_err_set(err, SN_EFORMAT, "%s: tensor '%s' maps to %s, which another tensor already "
                              "maps to", t->file, t->name, gguf_name);
        if (!(p = plan_push(pl))) return sn_err_set(err, SN_ENOMEM, "out of memory");
        snprintf(p->hf_name, sizeof p->hf_name, "%s", t->name);
        snprintf(p->gguf_name, sizeof p->gguf_name, "%s", gguf_name);
        p->n_dims = at->n_dims;
        memcpy(p->ne, at->ne, sizeof p->ne);
        p->n_elems = out_elems;
        p->permute_heads = at->permute_heads;
        p->ts.n_parts = n_parts;
        p->ts.permute_heads = at->permute_heads;
        p->ts.transpose = at->transpose;
        p->ts.ew = at->ew;
        plan_rows(p);
    }
    p->ts.part[at->part] = t;
    if (at->part == 0) p->src = t;
    if (n_parts > 1) {
        uint32_t have = 0;
        for (uint32_t i = 0; i < n_parts; i++) have += p->ts.part[i] != NULL;
        if (have == n_parts) { /* the reference yields a fused tensor when its last part arrives */
            plan_t done = *p;
            memmove(p, p + 1, (size_t)(pl->t + pl->n - 1 - p) * sizeof *p);
            pl->t[pl->n - 1] = done;
        }
    }
    return SN_OK;
}

/* Builds the plan: generated tensors first, then safetensors order (llama.cpp's). */
static sn_status build_plan(const sn_arch *a, const sn_hf_config *cfg, const sn_st_model *m, plan_list *pl,
                            sn_err *err) {
    sn_arch_extra ex[4];
    size_t n_ex = 0;
    memset(ex, 0, sizeof ex);
    sn_status st = a->extra_tensors(a, cfg, ex, 4, &n_ex, err);
    if (st != SN_OK) return st;
    for (size_t i = 0; i < n_ex; i++) {
        plan_t *p = plan_push(pl);
        if (!p) {
            for (size_t j = i; j < n_ex; j++) free(ex[j].data);
            return sn_err_set(err, SN_ENOMEM, "out of memory");
        }
        snprintf(p->hf_name, sizeof p->hf_name, "(generated)");
        memcpy(p->gguf_name, ex[i].gguf_name, sizeof p->gguf_name);
        p->gguf_name[sizeof p->gguf_name - 1] = 0;
        p->gen = ex[i].data;
        p->ts.gen = ex[i].data;
        p->n_dims = 1;
        for (int d = 0; d < SN_GGUF_MAX_DIMS; d++) p->ne[d] = 1;
        p->ne[0] = ex[i].n;
        p->n_elems = ex[i].n;
        plan_rows(p);
    }
    for (size_t i = 0; i < sn_st_model_n_tensors(m); i++) {
        const sn_st_tensor *t = sn_st_model_tensor(m, i);
        sn_arch_tensor at;
        memset(&at, 0, sizeof at);
        int r = a->map_tensor(a, cfg, t->name, &at, err);
        if (r < 0) return sn_err_prefix(err, "%s", t->file);
        if (r == SN_ARCH_MAP_SKIP) continue;
        if (t->unsupported)
            return sn_err_set(err, SN_EUNSUPPORTED, "%s: tensor '%s' has %s, which the converter cannot read "
                              "(supported: float32, float16, bfloat16 with at most %d dimensions)", t->file, t->name,
                              t->unsupported, SN_ST_MAX_DIMS);
        if ((st = plan_add_source(pl, t, &at, at.gguf_name, err)) != SN_OK) return st;
        if (at.also_name[0] && (st = plan_add_source(pl, t, &at, at.also_name, err)) != SN_OK) return st;
    }
    for (size_t i = 0; i < pl->n; i++)
        for (uint32_t k = 0; k < pl->t[i].ts.n_parts; k++)
            if (!pl->t[i].ts.part[k])
                return sn_err_set(err, SN_EFORMAT, "%s: %s is fused from %u tensors but part %u is missing (from '%s')",
                                  sn_st_model_file(m, 0), pl->t[i].gguf_name, pl->t[i].ts.n_parts, k,
                                  pl->t[i].hf_name);
    /* completeness: a model missing a layer tensor would only fail later, inside llama.cpp */
    for (const char *const *q = a->required; q && *q; q++)
        if (find_plan(pl, *q) < 0)
            return sn_err_set(err, SN_EFORMAT, "%s: no tensor maps to %s (is a weight file missing?)",
                              sn_st_model_file(m, 0), *q);
    for (int64_t l = 0; l < cfg->n_layers; l++)
        for (const char *const *q = a->required_per_layer; q && *q; q++) {
            char nm[SN_GGUF_MAX_NAME + 16];
            snprintf(nm, sizeof nm, "blk.%lld.%s", (long long)l, *q);
            if (find_plan(pl, nm) < 0)
                return sn_err_set(err, SN_EFORMAT, "%s: no tensor maps to %s (layer %lld of %lld is incomplete)",
                                  sn_st_model_file(m, 0), nm, (long long)l, (long long)cfg->n_layers);
        }
    return SN_OK;
}

/* ---- tensor conversion ---- */

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
    return plain_src(p) && ((p->src->dtype == SN_ST_F32 && p->type == SN_GGML_F32) ||
                            (p->src->dtype == SN_ST_F16 && p->type == SN_GGML_F16) ||
                            (p->src->dtype == SN_ST_BF16 && p->type == SN_GGML_BF16));
}

static void convert_rows(const chunk_job *j, uint64_t r0, uint64_t r1, float *scratch) {
    const plan_t *p = j->p;
    int same = same_dtype(p), bf16_to_f16 = plain_src(p) && p->src->dtype == SN_ST_BF16 && p->type == SN_GGML_F16;
    for (uint64_t r = r0; r < r1; r++) {
        uint8_t *dst = j->out + (r - j->row0) * j->out_row_bytes;
        if (same || bf16_to_f16) {
            uint64_t src_row;
            sn_tsrc_src_row(&p->ts, r, &src_row);
            if (same) memcpy(dst, p->src->data + src_row * j->out_row_bytes, j->out_row_bytes);
            else sn_bf16_to_fp16_row((const uint16_t *)(const void *)(p->src->data + src_row * j->row_len * 2),
                                     (uint16_t *)(void *)dst, j->row_len);
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

/* Writing is pipelined: a writer thread drains a FIFO of operations so converting chunk k+1 (the
 * worker threads) overlaps writing chunk k (a kernel copy into the page cache that costs as much as
 * an f16 conversion). Two output buffers alternate; one is refilled only after the writer is done
 * with it. The first write error stops all later writes and is reported to the producer. */
enum { OP_WRITE, OP_END_TENSOR, OP_STOP };
typedef struct {
    int kind;
    const uint8_t *data;
    uint64_t n;
    int buf;                      /* output buffer to free after the write, -1 for mapped data */
    const sn_st_tensor *rel;      /* mapped source range to release after the write */
    uint64_t roff, rlen;
    const char *name;
    size_t i_tensor;
} wop;
#define QCAP 8

typedef struct {
    const sn_convert_opts *o;
    sn_gguf_writer *w;
    uint8_t *buf[2];
    size_t buf_size[2];
    int buf_busy[2];
    int cur;
    float *scratch[MAX_THREADS];
    int nth;
    uint64_t total, done;
    size_t n_tensors;
    double t0;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    wop q[QCAP];
    int qh, qn;
    pthread_t th;
    int th_started;
    sn_status wst;
    sn_err werr;
} writer_ctx;

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
                /* 1 MiB write() calls: the kernel copies these into the page cache 4-5x faster
                 * than 8 MiB ones on the benchmark machine (measured; the source stays cached) */
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
            sn_convert_progress pr = {op.i_tensor, c->n_tensors, op.name, done, c->total, now_s() - c->t0};
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

static sn_status writer_start(writer_ctx *c, sn_err *err) {
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
static sn_status writer_stop(writer_ctx *c, sn_err *err) {
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

static sn_status write_tensor(writer_ctx *c, size_t i_tensor, const plan_t *p, sn_err *err) {
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
    uint64_t src_row_bytes = plain_src(p) ? row_len * sn_st_dtype_size(p->src->dtype) : 0;
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
        /* the converted rows are in our buffer now: the source pages can go */
        if (plain_src(p) && !p->permute_heads) sn_st_release(p->src, r * src_row_bytes, nrows * src_row_bytes);
        wop op = {.kind = OP_WRITE, .data = c->buf[b], .n = nbytes, .buf = b, .name = p->gguf_name,
                  .i_tensor = i_tensor};
        if ((st = enqueue(c, op, err)) != SN_OK) return st;
        c->cur ^= 1;
    }
    if (!plain_src(p) || p->permute_heads)
        for (uint32_t k = 0; k < p->ts.n_parts; k++) sn_st_release(p->ts.part[k], 0, p->ts.part[k]->nbytes);
    return enqueue(c, end, err);
}

/* ---- verify ---- */

/* Largest error quantization may introduce on a block whose largest |x| is amax. */
static double quant_bound(int type, double amax) {
    switch (type) {
    case SN_GGML_Q8_0: return amax / 127.0 * 0.5 * 1.01 + amax * 1e-3;
    case SN_GGML_Q4_0: return amax / 8.0 * 1.01 + amax * 1e-3;
    case SN_GGML_Q6_K: return amax / 31.0 * 1.5 + amax * 4e-3;
    default: return 0;
    }
}

static sn_status verify_file(const sn_convert_opts *o, const plan_list *pl, sn_convert_result *res, sn_err *err) {
    sn_gguf *g = NULL;
    sn_status st = sn_gguf_open(o->out_path, 0, &g, err);
    if (st != SN_OK) return sn_err_prefix(err, "verify");
    float *a = NULL, *b = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < pl->n && st == SN_OK; i++) {
        const plan_t *p = &pl->t[i];
        int64_t k = sn_gguf_find_tensor(g, p->gguf_name);
        const sn_gguf_tensor *t = k >= 0 ? sn_gguf_tensor_at(g, k) : NULL;
        int ok = t && t->type == p->type && t->n_dims == p->n_dims;
        for (uint32_t d = 0; ok && d < p->n_dims; d++) ok = t->ne[d] == p->ne[d];
        double max_err = 0, bound_seen = 0;
        uint64_t row_len = p->ts.row_len, n_rows = p->ts.n_rows;
        if (ok && row_len > cap) {
            free(a);
            free(b);
            cap = row_len;
            a = malloc(cap * sizeof(float));
            b = malloc(cap * sizeof(float));
            if (!a || !b) { st = sn_err_set(err, SN_ENOMEM, "out of memory"); break; }
        }
        uint64_t out_row = ok ? sn_ggml_row_size(p->type, row_len) : 0;
        for (uint64_t r = 0; ok && r < n_rows; r++) {
            const float *x = sn_tsrc_row(&p->ts, r, a);
            if (sn_dequantize_row(p->type, (const uint8_t *)t->data + r * out_row, b, (int64_t)row_len) != 0) {
                ok = 0;
                break;
            }
            if (p->type == SN_GGML_F32 || p->type == SN_GGML_F16 || p->type == SN_GGML_BF16) {
                for (uint64_t e = 0; e < row_len; e++) {
                    float want = x[e];
                    if (p->type == SN_GGML_F16) want = sn_fp16_to_fp32(sn_fp32_to_fp16(want));
                    if (p->type == SN_GGML_BF16) want = sn_bf16_to_fp32(sn_fp32_to_bf16(want));
                    if (memcmp(&want, &b[e], 4) != 0 && !(isnan(want) && isnan(b[e]))) {
                        double d = fabs((double)want - (double)b[e]);
                        if (d > max_err || isnan(d)) max_err = isnan(d) ? INFINITY : d;
                        ok = 0;
                    }
                }
            } else {
                uint32_t blk = sn_ggml_blck_size(p->type);
                for (uint64_t s = 0; s < row_len; s += blk) {
                    double amax = 0, me = 0;
                    for (uint64_t e = s; e < s + blk; e++) {
                        if (fabs(x[e]) > amax) amax = fabs(x[e]);
                        double d = fabs((double)x[e] - (double)b[e]);
                        if (d > me || isnan(d)) me = isnan(d) ? INFINITY : d;
                    }
                    double bound = quant_bound(p->type, amax);
                    if (me > max_err) max_err = me;
                    if (bound > bound_seen) bound_seen = bound;
                    if (!(me <= bound)) ok = 0;
                }
            }
        }
        for (uint32_t k = 0; k < p->ts.n_parts; k++) sn_st_release(p->ts.part[k], 0, p->ts.part[k]->nbytes);
        res->verify_checked++;
        if (!ok) {
            if (!res->verify_failed)
                snprintf(res->verify_first_bad, sizeof res->verify_first_bad, "%s", p->gguf_name);
            res->verify_failed++;
        }
        if (o->on_verify) o->on_verify(o->ud, p->gguf_name, ok, max_err, bound_seen);
    }
    free(a);
    free(b);
    sn_gguf_close(g);
    return st;
}

/* Tokenizer keys: the vocabulary is written again, alone, into a header-only GGUF next to OUT, and
 * every KV it holds must be present in OUT with identical bytes (type and value). */
static sn_status verify_tokenizer(const sn_convert_opts *o, const char *meta_dir, const sn_hf_config *cfg,
                                  sn_convert_result *res, sn_err *err) {
    size_t L = strlen(o->out_path);
    char *ref = malloc(L + 16);
    if (!ref) return sn_err_set(err, SN_ENOMEM, "out of memory");
    snprintf(ref, L + 16, "%s.vocab.tmp", o->out_path);
    sn_gguf_writer *w = sn_gguf_writer_new();
    sn_gguf *a = NULL, *b = NULL;
    sn_vocab_opts vo = {o->pre_override};
    sn_vocab_report vr;
    sn_status st = w ? SN_OK : sn_err_set(err, SN_ENOMEM, "out of memory");
    if (st == SN_OK) st = sn_vocab_write_gguf(meta_dir, cfg, w, &vo, &vr, err);
    if (st == SN_OK) st = sn_gguf_writer_begin(w, ref, err);
    if (st == SN_OK) st = sn_gguf_writer_finish(w, err);
    if (st == SN_OK) st = sn_gguf_open(ref, SN_GGUF_NO_DATA, &a, err);
    if (st == SN_OK) st = sn_gguf_open(o->out_path, SN_GGUF_NO_DATA, &b, err);
    for (int64_t i = 0; st == SN_OK && i < sn_gguf_n_kv(a); i++) {
        const char *key = sn_gguf_key(a, i);
        int64_t j = sn_gguf_find_key(b, key);
        uint64_t la = 0, lb = 0;
        const void *ra = sn_gguf_kv_raw(a, i, &la);
        const void *rb = j >= 0 ? sn_gguf_kv_raw(b, j, &lb) : NULL;
        int ok = rb && la == lb && memcmp(ra, rb, la) == 0;
        res->verify_keys_checked++;
        if (!ok) {
            if (!res->verify_failed && !res->verify_keys_failed)
                snprintf(res->verify_first_bad, sizeof res->verify_first_bad, "%s", key);
            res->verify_keys_failed++;
        }
        if (o->on_verify) o->on_verify(o->ud, key, ok, 0, 0);
    }
    sn_gguf_close(a);
    sn_gguf_close(b);
    if (w) sn_gguf_writer_free(w);
    unlink(ref);
    free(ref);
    return st;
}

/* ---- the driver ---- */

/* The input is an HF folder or one weight file (a .safetensors or a PyTorch .bin/.pt/.pth). Finds
 * config.json (--config, else the folder's / the file's folder's) and the folder holding the
 * tokenizer and README (the config's folder). */
static sn_status resolve_inputs(const sn_convert_opts *o, char **cfg_path, char **meta_dir, sn_err *err) {
    struct stat sb;
    const char *in = o->model_dir;
    if (stat(in, &sb) != 0) return sn_err_set(err, SN_EIO, "%s: cannot open: %s", in, strerror(errno));
    int is_dir = S_ISDIR(sb.st_mode);
    if (!is_dir && !S_ISREG(sb.st_mode)) return sn_err_set(err, SN_EIO, "%s: not a directory or a file", in);
    if (o->config_path) {
        *cfg_path = strdup(o->config_path);
    } else if (is_dir) {
        *cfg_path = sn_path_join(in, "config.json");
    } else {
        const char *sl = strrchr(in, '/');
        char *dir = sl ? strndup(in, (size_t)(sl - in)) : strdup(".");
        *cfg_path = dir ? sn_path_join(dir[0] ? dir : "/", "config.json") : NULL;
        free(dir);
        if (*cfg_path && stat(*cfg_path, &sb) != 0) { /* none: derived from the tensors (sn_convert) */
            free(*cfg_path);
            *cfg_path = NULL;
            *meta_dir = sl ? strndup(in, (size_t)(sl - in)) : strdup(".");
            if (*meta_dir && !(*meta_dir)[0]) { free(*meta_dir); *meta_dir = strdup("/"); }
            return *meta_dir ? SN_OK : sn_err_set(err, SN_ENOMEM, "out of memory");
        }
    }
    if (!*cfg_path) return sn_err_set(err, SN_ENOMEM, "out of memory");
    if (stat(*cfg_path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return sn_err_set(err, SN_EIO, "%s: missing (%s)", *cfg_path,
                          o->config_path ? "--config names no file" : "an HF model folder needs config.json");
    const char *sl = strrchr(*cfg_path, '/');
    *meta_dir = sl ? strndup(*cfg_path, (size_t)(sl - *cfg_path)) : strdup(".");
    if (!*meta_dir) return sn_err_set(err, SN_ENOMEM, "out of memory");
    if (!(*meta_dir)[0]) {
        free(*meta_dir);
        *meta_dir = strdup("/");
        if (!*meta_dir) return sn_err_set(err, SN_ENOMEM, "out of memory");
    }
    return SN_OK; /* the tokenizer files the family needs: sn_arch_check_vocab_files */
}

/* general.quantization_version and general.file_type as llama-quantize leaves them: re-set at the
 * end of the KV list (gguf_set_val removes and appends). */
static sn_status move_to_end_u32(sn_gguf_writer *w, const char *key, uint32_t v, sn_err *err) {
    sn_gguf_writer_remove_key(w, key);
    sn_status st = sn_gguf_writer_set_u32(w, key, v);
    return st == SN_OK ? SN_OK : sn_err_set(err, st, "cannot set %s", key);
}

sn_status sn_convert(const sn_convert_opts *o, sn_convert_result *res, sn_err *err) {
    memset(res, 0, sizeof(*res));
    double t0 = now_s();
    sn_hf_config cfg;
    memset(&cfg, 0, sizeof cfg);
    sn_st_model *m = NULL;
    sn_gguf_writer *w = NULL;
    plan_list pl = {0};
    char *tmp = NULL, *cfg_path = NULL, *meta_dir = NULL;
    int tmp_created = 0;
    writer_ctx wc;
    memset(&wc, 0, sizeof wc);
    sn_status st;

    if (!o->model_dir || (!o->out_path && !o->dry_run))
        return sn_err_set(err, SN_EINVAL, "model directory and output path are required");
    if ((st = resolve_inputs(o, &cfg_path, &meta_dir, err)) != SN_OK) goto done;
    if (!o->dry_run && !o->force && access(o->out_path, F_OK) == 0) {
        st = sn_err_set(err, SN_EINVAL, "%s: already exists (use --force to overwrite)", o->out_path);
        goto done;
    }

    sn_st_open_opts so = {o->state_key};
    if (!cfg_path) { /* one weight file and no config.json: the family derives it from the shapes */
        char *json = NULL;
        const sn_arch *fa = NULL;
        if ((st = sn_st_model_open_path(o->model_dir, &so, &m, err)) != SN_OK) goto done;
        if ((st = sn_arch_config_from_tensors(m, &json, &fa, err)) != SN_OK) {
            sn_err_prefix(err, "%s", o->model_dir);
            goto done;
        }
        snprintf(res->derived_config, sizeof res->derived_config, "%s", json);
        st = sn_hf_config_parse(json, "config derived from the tensor shapes", &cfg, err);
        free(json);
        if (st != SN_OK) goto done;
    } else if ((st = sn_hf_config_load(cfg_path, &cfg, err)) != SN_OK) {
        goto done;
    }
    const sn_arch *a = sn_arch_find(cfg.architecture);
    if (!a) {
        st = sn_err_set(err, SN_EUNSUPPORTED, "%s: unsupported architecture '%s' (supported: %s)",
                        cfg_path ? cfg_path : o->model_dir,
                        cfg.architecture[0] ? cfg.architecture : "(none)", sn_arch_supported_list());
        goto done;
    }
    if ((st = sn_arch_check_vocab_files(a, meta_dir, err)) != SN_OK) goto done;
    if (a->prepare_config && (st = a->prepare_config(a, &cfg, err)) != SN_OK) {
        sn_err_prefix(err, "%s", o->model_dir);
        goto done;
    }
    if ((st = a->check_config(a, &cfg, err)) != SN_OK) { sn_err_prefix(err, "%s", o->model_dir); goto done; }
    if (!m && (st = sn_st_model_open_path(o->model_dir, &so, &m, err)) != SN_OK) goto done;
    if ((st = build_plan(a, &cfg, m, &pl, err)) != SN_OK) goto done;

    /* outtype auto: the first >= 2-D f16/bf16 source tensor decides, else f16 */
    sn_outtype ot = o->outtype;
    if (ot == SN_OUTTYPE_AUTO) {
        ot = SN_OUTTYPE_F16;
        for (size_t i = 0; i < sn_st_model_n_tensors(m); i++) {
            const sn_st_tensor *t = sn_st_model_tensor(m, i);
            if (t->n_dims >= 2 && (t->dtype == SN_ST_F16 || t->dtype == SN_ST_BF16)) {
                ot = t->dtype == SN_ST_BF16 ? SN_OUTTYPE_BF16 : SN_OUTTYPE_F16;
                break;
            }
        }
    }
    if (ot == SN_OUTTYPE_Q4_0) {
        qsort(pl.t, pl.n, sizeof(*pl.t), cmp_quantize_order);
        /* llama-quantize's writer records ggml_n_dims: trailing dimensions of size 1 are dropped
         * (Mamba-2's ssm_norm {d_inner, 1} with one group is 1-D there) */
        for (size_t i = 0; i < pl.n; i++)
            while (pl.t[i].n_dims > 1 && pl.t[i].ne[pl.t[i].n_dims - 1] == 1) pl.t[i].n_dims--;
    }
    int has_output = find_plan(&pl, "output.weight") >= 0;
    uint64_t n_params = 0, src_bytes = 0;
    for (size_t i = 0; i < pl.n; i++) {
        plan_t *p = &pl.t[i];
        p->type = o->sink ? SN_GGML_F32 : choose_type(a, ot, p, has_output);
        p->bytes = sn_ggml_row_size(p->type, p->ne[0]) * (p->n_elems / (p->ne[0] ? p->ne[0] : 1));
        n_params += p->n_elems;
        for (uint32_t k = 0; k < p->ts.n_parts; k++) src_bytes += p->ts.part[k]->nbytes;
    }
    uint32_t file_type = file_type_of(ot);

    /* header */
    w = sn_gguf_writer_new();
    if (!w) { st = sn_err_set(err, SN_ENOMEM, "out of memory"); goto done; }
#define SETK(call, key) do { if ((st = (call)) != SN_OK) { sn_err_set(err, st, "cannot set %s", key); goto done; } } while (0)
    SETK(sn_gguf_writer_set_str(w, "general.architecture", a->gguf_arch), "general.architecture");
    SETK(sn_gguf_writer_set_str(w, "general.type", "model"), "general.type");
    if ((st = sn_metadata_write(meta_dir, &cfg, o->name, n_params, w, err)) != SN_OK) goto done;
    if ((st = a->write_kv(a, &cfg, file_type, w, err)) != SN_OK) goto done;
    SETK(sn_gguf_writer_set_u32(w, "general.quantization_version", 2), "general.quantization_version");
    sn_vocab_opts vo = {o->pre_override};
    sn_vocab_report vr;
    memset(&vr, 0, sizeof vr);
    if ((st = sn_vocab_write_gguf(meta_dir, &cfg, w, &vo, &vr, err)) != SN_OK) goto done;
    snprintf(res->vocab_model, sizeof res->vocab_model, "%s", vr.model);
    snprintf(res->vocab_pre, sizeof res->vocab_pre, "%s", vr.pre);
    res->vocab_tokens = vr.n_tokens;
    if (ot == SN_OUTTYPE_Q4_0) {
        if ((st = move_to_end_u32(w, "general.quantization_version", 2, err)) != SN_OK) goto done;
        if ((st = move_to_end_u32(w, "general.file_type", file_type, err)) != SN_OK) goto done;
    }
    for (size_t i = 0; i < pl.n; i++) {
        plan_t *p = &pl.t[i];
        sn_status r = sn_gguf_writer_add_tensor(w, p->gguf_name, p->n_dims, p->ne, p->type, err);
        if (r < 0) { st = r; goto done; }
    }
    snprintf(res->arch, sizeof res->arch, "%s", a->gguf_arch);
    snprintf(res->ftype, sizeof res->ftype, "%s", ftype_label(ot));
    res->file_type = file_type;
    res->n_tensors = pl.n;
    res->src_bytes = src_bytes;
    res->n_params = n_params;
    res->bytes = sn_gguf_writer_total_size(w);
    if (o->on_plan)
        for (size_t i = 0; i < pl.n; i++) {
            const plan_t *p = &pl.t[i];
            sn_convert_plan_entry e = {p->hf_name, p->gguf_name, p->n_dims, {p->ne[0], p->ne[1], p->ne[2], p->ne[3]},
                                       p->type, p->src ? sn_st_dtype_name(p->src->dtype) : "F32", p->bytes};
            o->on_plan(o->ud, &e);
        }
    if (o->dry_run) { st = SN_OK; goto done; }

    /* data */
    size_t L = strlen(o->out_path);
    tmp = malloc(L + 5);
    if (!tmp) { st = sn_err_set(err, SN_ENOMEM, "out of memory"); goto done; }
    memcpy(tmp, o->out_path, L);
    memcpy(tmp + L, ".tmp", 5);
    tmp_created = !o->sink; /* begin may create it before failing */
    double t_data = now_s();
    if ((st = o->sink ? o->sink->begin(o->sink->ud, w, err) : sn_gguf_writer_begin(w, tmp, err)) != SN_OK) goto done;
    wc.o = o;
    wc.w = w;
    wc.nth = o->n_threads > 0 ? o->n_threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (wc.nth < 1) wc.nth = 1;
    if (wc.nth > MAX_THREADS) wc.nth = MAX_THREADS;
    wc.n_tensors = pl.n;
    for (size_t i = 0; i < pl.n; i++) wc.total += pl.t[i].bytes;
    wc.t0 = t0;
    if ((st = writer_start(&wc, err)) != SN_OK) goto done;
    for (size_t i = 0; i < pl.n; i++) {
        if ((st = write_tensor(&wc, i, &pl.t[i], err)) != SN_OK) {
            sn_err_prefix(err, "%s: tensor %s", o->sink ? o->out_path : tmp, pl.t[i].gguf_name);
            goto done;
        }
    }
    if ((st = writer_stop(&wc, err)) != SN_OK) goto done;
    double t_sync = now_s();
    res->data_seconds = t_sync - t_data;
    if (wc.o->cancel && *wc.o->cancel) { st = sn_err_set(err, SN_EIO, "interrupted"); goto done; }
    if ((st = o->sink ? o->sink->finish(o->sink->ud, err) : sn_gguf_writer_finish(w, err)) != SN_OK) goto done;
    res->sync_seconds = now_s() - t_sync;
    if (wc.o->cancel && *wc.o->cancel) { st = sn_err_set(err, SN_EIO, "interrupted"); goto done; }
    if (o->sink) { res->seconds = now_s() - t0; st = SN_OK; goto done; } /* the sink owns its file */
    if (rename(tmp, o->out_path) != 0) {
        st = sn_err_set(err, SN_EIO, "%s: cannot rename to %s: %s", tmp, o->out_path, strerror(errno));
        goto done;
    }
    tmp_created = 0;
    res->seconds = now_s() - t0;
    if (o->verify) {
        st = verify_file(o, &pl, res, err);
        if (st == SN_OK) st = verify_tokenizer(o, meta_dir, &cfg, res, err);
        if (st == SN_OK && (res->verify_failed || res->verify_keys_failed))
            st = sn_err_set(err, SN_EFORMAT, "%s: verify failed: %zu of %zu tensors and %zu of %zu tokenizer keys "
                            "differ from the source (first: %s)", o->out_path, res->verify_failed,
                            res->verify_checked, res->verify_keys_failed, res->verify_keys_checked,
                            res->verify_first_bad);
    }
done:
    writer_stop(&wc, NULL);
    if (!res->seconds) res->seconds = now_s() - t0;
    if (w) sn_gguf_writer_free(w);
    if (tmp_created && tmp) unlink(tmp);
    free(tmp);
    free(wc.buf[0]);
    free(wc.buf[1]);
    for (int t = 0; t < MAX_THREADS; t++)
        if (wc.scratch[t]) free(((uint64_t *)(void *)wc.scratch[t]) - 1);
    plan_free(&pl);
    sn_st_model_close(m);
    sn_hf_config_free(&cfg);
    free(cfg_path);
    free(meta_dir);
    return st;
}
