/* model_mamba2.h - the Mamba-2 mixer of model_mamba2.c, exported for the hybrid families that run it
 * between their own layers (model_granitehybrid.c): the ssm.* sizes, one layer's ssm_* tensors, the
 * activation rows it needs from the family's sn_ops, and the mixer itself (in_proj, the causal conv
 * over the saved window, the scan, the gated norm, out_proj), as llama.cpp's build_mamba2_layer. */
#ifndef SN_MODEL_MAMBA2_H
#define SN_MODEL_MAMBA2_H
#include "ops.h"

typedef struct {
    int64_t n_embd, d_conv, d_inner, d_state, n_head, head_dim, n_group, conv_ch, d_in_proj;
    float eps;
} sn_mamba2_hparams;

typedef struct {
    const float *conv_w, *conv_b, *dt_b, *A, *D, *norm;
    float *conv_wt; /* conv_w transposed, [d_conv][conv_ch] (the conv kernel's layout) */
    sn_matrix in, out;
} sn_mamba2_layer;

/* The mixer's scratch: zxbc has d_conv-1 rows of conv window (from the state) before the T rows of
 * in_proj's output (zxbcdt); rows come from the family's sn_ops (sn_mamba2_bufs). */
typedef struct {
    sn_mamba2_hparams hp;
    sn_ops *ops;
    float *zxbc, *zxbcdt, *xbc, *dt, *dA, *y, *ones;
} sn_mamba2;

enum { SN_MAMBA2_BUFS = 5 };

/* ssm.conv_kernel / inner_size / state_size / time_step_rank / group_count and the rms eps, checked
 * to divide; n_embd from the model. */
sn_status sn_mamba2_read_hparams(const sn_model *m, sn_mamba2_hparams *hp, sn_err *err);
/* The SN_MAMBA2_BUFS activation rows of mx (hp set) for the family's sn_ops_init. */
void sn_mamba2_bufs(sn_mamba2 *mx, sn_ops_buf *out);
/* After sn_ops_init: binds the family's ops. */
sn_status sn_mamba2_init(sn_mamba2 *mx, sn_ops *ops, sn_err *err);
void sn_mamba2_free(sn_mamba2 *mx);
/* Declares layer il's ssm_in / conv1d (+ bias) / dt bias / A / D / norm / ssm_out. */
sn_status sn_mamba2_load_layer(sn_model *m, int il, const sn_mamba2_hparams *hp, sn_mamba2_layer *L, sn_err *err);
void sn_mamba2_free_layer(sn_mamba2_layer *L);
/* Floats of one layer's conv window ((d_conv-1) x conv_ch) and SSM state (n_head x head_dim x d_state). */
uint64_t sn_mamba2_conv_floats(const sn_mamba2_hparams *hp);
uint64_t sn_mamba2_ssm_floats(const sn_mamba2_hparams *hp);
/* out = the mixer of the T normed rows h (n_embd each) at the layer's conv window and SSM state,
 * which it advances. */
sn_status sn_mamba2_mixer(sn_model *m, sn_mamba2 *mx, const sn_mamba2_layer *L, const float *h, int64_t T,
                          float *conv_state, float *ssm_state, float *out, sn_err *err);

#endif
