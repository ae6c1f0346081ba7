/* ops.h - the llama.cpp-exact building blocks every family's forward pass shares.
 *
 * sn_ops_project multiplies a batch of activation rows by up to three weight matrices the way
 * ggml's CPU backend does: the f32 activations are first converted to the weight type's
 * activation type (Q8_0 / Q8_K / f16 / bf16 rows, kernels.h), tokens that llama.cpp multiplies in
 * its batched order go together and the rest one at a time, and the output rows are split over
 * the thread pool in claimed ranges. sn_ops holds only scratch (converted activations); weights and
 * the model's cache or recurrent state live elsewhere. Norms are here because their rounding
 * (ggml_compute_forward_rms_norm's sum in double) is shared by every family too. */
#ifndef SN_OPS_H
#define SN_OPS_H
#include "family.h"
#include "recurrent.h"

/* A family's activation buffer: (T + extra_rows) rows of `width` floats at *p for a batch of T. */
typedef struct sn_ops_buf {
    float **p;
    int64_t width, extra_rows;
} sn_ops_buf;

enum { SN_OPS_MAX_BUFS = 24 };

typedef struct sn_ops {
    const sn_kernels *k;
    const sn_recurrent_kernels *rk; /* the recurrent families' conv, scan and wkv7 twins (recurrent.h) */
    sn_pool *pool;
    /* The vector width of the reductions in ggml's build that llama.cpp loads on this CPU
     * (the kernel object's tuning.lanes: 16 with AVX-512, else 8), whichever level SN_CPU picks: every table
     * computes the norms and recurrences in that order, as it does the float dots. */
    int lanes;
    int64_t widest;             /* elements of the widest matmul input row */
    int64_t cap_T;              /* rows the activation scratch holds */
    uint64_t act_cap;           /* bytes of one converted row of the widest input */
    void *act[SN_KTYPE_COUNT];  /* converted activations by activation type, allocated on use */
    sn_ops_buf bufs[SN_OPS_MAX_BUFS]; /* the family's activation buffers (sn_ops_init) */
    int n_bufs;
    int64_t bufs_T;             /* rows they were allocated for */
} sn_ops;

/* Binds the kernels and pool of m (and the recurrent kernels this CPU may run), the family's n
 * activation buffers (their pointers must stay where they are, in the family's record) and the
 * widest row its matmuls read, and registers o as m->ops; no allocation yet (model.c's
 * sn_ops_prepare allocates at the end of the load, sn_ops_begin grows for larger batches,
 * sn_ops_free frees, also after a failed init). */
sn_status sn_ops_init(sn_ops *o, sn_model *m, const sn_ops_buf *bufs, int n, int64_t widest, sn_err *err);
/* Allocates and faults in the scratch for batches of up to T rows: the family's buffers and the
 * converted activations of every type in act_types (bit per sn_kernel_act_type). model.c calls it
 * once the family's matrices are loaded (sn_model.ops, set by sn_ops_init). */
sn_status sn_ops_prepare(sn_ops *o, int64_t T, uint64_t act_types, sn_err *err);
void sn_ops_free(sn_ops *o);

/* y_i[t * w_i->n_out + r] = row r of w_i . x[t], i < nw <= 3, t < T, all w_i reading the same
 * x [T x w_i->n_in] (T <= the reserved rows). */
sn_status sn_ops_project(sn_ops *o, const float *x, int64_t T, int nw, const sn_matrix *const *w, float *const *y,
                         sn_err *err);

/* sn_ops_project with one matrix. */
sn_status sn_ops_project1(sn_ops *o, const float *x, int64_t T, const sn_matrix *w, float *y, sn_err *err);

/* ggml_get_rows: rows tokens[0..T) of the embedding matrix, as f32, into x [T x emb->n_in]. */
sn_status sn_ops_embed(const sn_matrix *emb, const int32_t *tokens, int64_t T, float *x, sn_err *err);

/* The start of every forward pass: room for T rows in the converted-activation scratch and in
 * every activation buffer (reallocated, contents lost, when T is more than they hold), then *x
 * (one of those buffers, read after they are made) = the tokens' embeddings. */
sn_status sn_ops_begin(sn_ops *o, int64_t T, const sn_matrix *emb, const int32_t *tokens, float *const *x, sn_err *err);

/* Runs fn(arg, t0, t1) over [0, T) cut into token ranges on the pool (a few per thread, claimed as
 * threads arrive), or inline for one token or one thread: the families' elementwise passes, which
 * ggml splits over rows the same way. */
typedef void (*sn_rows_fn)(const void *arg, int64_t t0, int64_t t1);
void sn_ops_rows(sn_pool *pool, int64_t T, sn_rows_fn fn, const void *arg);

/* ggml_rms_norm then the elementwise weight: y = x / sqrt(mean(x^2) + eps) * w. */
void sn_ops_rmsnorm(float *y, const float *x, const float *w, int64_t n, float eps);

/* sum_{i<n} x[i] as ggml's mean takes it: a double accumulated in index order (the same bits). */
double sn_ops_sum_f64(const float *x, int64_t n);
/* ggml_norm over n floats then weight and bias (either may be NULL): the mean from a double sum,
 * the variance as ggml_vec_cvar_f32 (blocks of `lanes` (sn_ops.lanes) squares summed in float,
 * added in double, the tail one by one). y may be x. */
void sn_ops_layernorm(float *y, const float *x, const float *w, const float *b, int64_t n, float eps, int lanes);

/* The residual add and the norm in front of every block, over token rows of n floats:
 * x[t] += add[t] (add may be NULL), then h[t] = norm(x[t]) with weight w (and bias b): RMSNorm
 * when lanes is 0, else LayerNorm with reductions of that width. h may be x. */
typedef struct sn_resid_norm {
    float *x, *h;
    const float *add;
    const float *w, *b;
    int64_t n;
    float eps;
    int lanes;
} sn_resid_norm;

/* An sn_rows_fn over an sn_resid_norm: rows [t0, t1) (sn_ops_rows, or called for one row). */
void sn_ops_resid_norm(const void *arg, int64_t t0, int64_t t1);

#endif
