/* transform.h - where the f32 rows of one output tensor come from: the declared transforms of
 * arch.h (fusion of several sources, transpose, llama's q/k row permutation, an elementwise map)
 * applied to safetensors sources or to generated data, one row at a time.
 *
 * The converter and its --verify pass both read rows through sn_tsrc_row, so what is checked is
 * what was meant to be written. */
#ifndef SN_TRANSFORM_H
#define SN_TRANSFORM_H
#include "arch.h"
#include "safetensors.h"

#include <stdint.h>

typedef struct sn_tsrc {
    const sn_st_tensor **part;                   /* n_parts sources (malloc'd), part[0] only unless fused */
    uint32_t n_parts;                            /* 1 unless fused; 0 for generated data */
    uint64_t slice_group, slice_off, slice_take; /* row slice of one source (arch.h), 0 = none */
    uint64_t slice_piece[4];                     /* the slice gathered piece by piece (arch.h), 0 = none */
    const float *gen;                            /* generated F32 data (no sources) */
    uint64_t row_len, n_rows;                    /* of the output tensor */
    uint64_t permute_heads;                      /* llama rope row interleave */
    int transpose;                               /* each part (each matrix of a 3-D part) is transposed */
    const sn_st_tensor *mx_scales;               /* non-NULL: part[0] holds MXFP4 blocks, these their scales */
    sn_arch_ew ew;                               /* elementwise map */
    sn_arch_vreorder vr;                         /* value-head reordering (arch.h) */
} sn_tsrc;

/* 1 when output row r is exactly source bytes (one part, no slice, no transpose, no map): the row may be
 * copied or converted straight from the mapping. */
int sn_tsrc_is_plain(const sn_tsrc *s);
/* Output row r as f32: a pointer into the mapping (plain F32 sources) or into scratch (row_len
 * floats). */
const float *sn_tsrc_row(const sn_tsrc *s, uint64_t r, float *scratch);
/* The source part and its row holding output row r (for plain tensors: permutation applied). */
const sn_st_tensor *sn_tsrc_src_row(const sn_tsrc *s, uint64_t r, uint64_t *src_row);
/* Output row r of an MXFP4 source as GGML block_mxfp4 bytes (row_len / 32 blocks of 17 bytes: the
 * E8M0 scale, then 16 bytes holding element j in the low nibble and j + 16 in the high one). */
void sn_tsrc_mxfp4_row(const sn_tsrc *s, uint64_t r, uint8_t *dst);
/* torch's float32 CPU exp (SLEEF expf_u10), which the reference converter's maps use. */
float sn_tsrc_torch_expf(float x);
/* y = f(x) for the map kinds of arch.h. */
void sn_tsrc_apply_ew(sn_arch_ew ew, float *x, uint64_t n);

#endif
