/* convert_internal.h - what the parts of the GGUF conversion share (internal to convert/, not an API).
 *
 * convert.c is the driver (sn_convert: inputs, config, header, the order of the steps);
 * convert_plan.c maps every source tensor to its GGUF tensor and picks its type (llama.cpp's
 * rules); convert_write.c converts rows on n threads and streams them through a writer thread;
 * convert_verify.c re-reads the written file for --verify. */
#ifndef SN_CONVERT_INTERNAL_H
#define SN_CONVERT_INTERNAL_H
#include "convert.h"

#include "arch.h"
#include "safetensors.h"
#include "transform.h"

#include <pthread.h>
#include <time.h>

#define MAX_THREADS 64
#define SN_CONV_MXFP4 39          /* ggml's GGML_TYPE_MXFP4: blocks of 32, 17 bytes (transform.h) */

static inline double sn_conv_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- the plan (convert_plan.c) ---- */

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
    char group[SN_GGUF_MAX_NAME]; /* emitted with the rest of its group (arch.h) */
    uint32_t group_rank, group_size;
    int early;                    /* emitted before the other source tensors (arch.h) */
} plan_t;

typedef struct {
    plan_t *t;
    size_t n, cap;
    size_t n_skipped;             /* multimodal source tensors dropped (sn_arch_is_multimodal) */
} plan_list;

void sn_conv_plan_free(plan_list *pl);
/* Index of the planned tensor named gguf_name, -1 if none. */
int sn_conv_find_plan(const plan_list *pl, const char *gguf_name);
/* Builds the plan: generated tensors first, then the source order (llama.cpp's), every mapped
 * tensor's shape checked, fused tensors complete, the family's required tensors present. */
sn_status sn_conv_build_plan(const sn_arch *a, const sn_hf_config *cfg, const sn_st_model *m, plan_list *pl,
                             sn_err *err);
/* ---- llama-quantize's per-tensor rules (quant_rules.c) ---- */

/* The walk state of one quantized file: the file type, the model's shape, the running counters. */
typedef struct {
    int ftype, default_type;
    int n_layer, n_gqa, n_expert, is_70b, tied;
    int n_attn_v, i_attn_v, i_ffn_down, i_ffn_gate, i_ffn_up;
} sn_quant_state;

void sn_quant_state_init(sn_quant_state *qs, sn_outtype ot, const sn_arch *a, int64_t n_layer, int64_t n_head,
                         int64_t n_head_kv, int64_t n_expert);
/* Call for every tensor name of the file before the walk (counts attn_v, sees output.weight). */
void sn_quant_state_count(sn_quant_state *qs, const char *name);
/* The type of the next tensor of the walk (cur_type: its type in the input, kept when it may not
 * be quantized); -1 if an expert tensor's name has no valid layer. */
int sn_quant_tensor_type(sn_quant_state *qs, const char *name, uint32_t n_dims, const uint64_t *ne, int cur_type);

/* The GGUF type of p for a converter outtype ot (llama.cpp's converter rules). */
int sn_conv_choose_type(const sn_arch *a, sn_outtype ot, const plan_t *p);
/* qsort order of llama-quantize's output: layer number, then name. */
int sn_conv_cmp_quantize_order(const void *a, const void *b);

/* ---- streaming the tensor data (convert_write.c) ---- */

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

sn_status sn_conv_writer_start(writer_ctx *c, sn_err *err);
/* Drains the queue and joins the writer; returns its status. Safe after errors and when not started. */
sn_status sn_conv_writer_stop(writer_ctx *c, sn_err *err);
/* Frees the output buffers and per-thread scratch (after sn_conv_writer_stop). */
void sn_conv_writer_free(writer_ctx *c);
/* Converts and queues tensor i_tensor (rows on c->nth threads), then its end. */
sn_status sn_conv_write_tensor(writer_ctx *c, size_t i_tensor, const plan_t *p, sn_err *err);
/* The whole data phase: w's header and every planned tensor into a temp file of our own under
 * OUT's lock (or o->sink), on o->n_threads threads, fsynced, checked with sunny-run's own load
 * (sn_model_validate with validate_flags) and renamed to OUT; the temp file is removed on any failure or cancellation.
 * Fills res->seconds, data_seconds, sync_seconds. */
sn_status sn_conv_write_data(const sn_convert_opts *o, sn_gguf_writer *w, const plan_list *pl, int validate_flags,
                             double t0, sn_convert_result *res, sn_err *err);
/* general.quantization_version / general.file_type as llama-quantize leaves them: set again at the
 * end of the KV list (its gguf_set_val removes and appends). */
sn_status sn_conv_move_to_end_u32(sn_gguf_writer *w, const char *key, uint32_t v, sn_err *err);

/* ---- a GGUF as input (requantize.c) ---- */

/* 1 if path is a file starting with the GGUF magic. */
int sn_conv_is_gguf(const char *path);
/* sn_convert for a GGUF input: llama-quantize's output for o->outtype (see requantize.c). */
sn_status sn_conv_requantize(const sn_convert_opts *o, sn_convert_result *res, sn_err *err);

/* ---- --verify (convert_verify.c) ---- */

/* Every planned tensor of the written file against its source rows (exact for float types, within
 * the quantization bound for quantized ones). */
sn_status sn_conv_verify_file(const sn_convert_opts *o, const plan_list *pl, sn_convert_result *res, sn_err *err);
/* Tokenizer keys: the vocabulary is written again, alone, into a header-only GGUF next to OUT, and
 * every KV it holds must be present in OUT with identical bytes (type and value). */
sn_status sn_conv_verify_tokenizer(const sn_convert_opts *o, const char *meta_dir, const sn_hf_config *cfg,
                                   sn_convert_result *res, sn_err *err);

/* split.c: gguf-py's shard rule over tensor byte sizes (first_of[s] gets shard s's first tensor when
 * not NULL; it needs room for n entries); 1 when nothing is split. */
size_t sn_conv_split_count(const uint64_t *sizes, size_t n, int64_t max_tensors, uint64_t max_bytes, size_t *first_of);
/* "<OUT without its suffix>-%05d-of-%05d.gguf" for shard i (0-based) of n; -1 when too long. */
int sn_conv_shard_name(const char *out_path, size_t i, size_t n, char *buf, size_t cap);
/* Cuts the finished GGUF src into shards beside out_path (see split.c); *n_shards 1: nothing
 * written (the caller publishes src as out_path). */
sn_status sn_conv_split_file(const char *src, const char *out_path, int64_t max_tensors, uint64_t max_bytes,
                             int force, size_t *n_shards, sn_err *err);

#endif
