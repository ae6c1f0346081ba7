/* transform.c - output rows through the declared tensor transforms (see transform.h). */
#include "transform.h"

#include "ggml_types.h"

#include <math.h>
#include <string.h>

int sn_tsrc_is_plain(const sn_tsrc *s) {
    return s->n_parts == 1 && s->part[0]->contiguous && !s->slice_group && !s->transpose && s->ew == SN_ARCH_EW_NONE &&
           !s->vr.n_k && !s->mx_scales;
}

/* The source row of output row r under a row slice: the run of `take` rows from `off` in each group,
 * or with pieces, piece i of every group after all of the earlier pieces. */
static uint64_t slice_src(const sn_tsrc *s, uint64_t r) {
    uint64_t off = s->slice_off, take = s->slice_take, groups = s->n_rows / s->slice_take;
    for (int i = 0; i < 4 && s->slice_piece[i]; i++) {
        take = s->slice_piece[i];
        if (r < groups * take) break;
        r -= groups * take;
        off += take;
    }
    return r / take * s->slice_group + off + r % take;
}

const sn_st_tensor *sn_tsrc_src_row(const sn_tsrc *s, uint64_t r, uint64_t *src_row) {
    if (s->n_parts <= 1) {
        if (s->slice_group) *src_row = slice_src(s, r);
        else if (s->vr.n_k && !s->vr.cols) *src_row = sn_arch_vreorder_src(&s->vr, r);
        else *src_row = s->permute_heads ? sn_arch_permute_src(r, s->n_rows, s->permute_heads) : r;
        return s->n_parts ? s->part[0] : NULL;
    }
    uint64_t per = s->n_rows / s->n_parts;
    *src_row = r % per;
    return s->part[r / per];
}

static float elem_f32(const sn_st_tensor *t, uint64_t i) {
    if (!t->contiguous) return sn_st_elem_f32(t, i); /* a checkpoint view: through its strides */
    const uint8_t *p = t->data + i * sn_st_dtype_size(t->dtype);
    uint16_t h;
    float f;
    switch (t->dtype) {
    case SN_ST_F32: memcpy(&f, p, 4); return f;
    case SN_ST_F16: memcpy(&h, p, 2); return sn_fp16_to_fp32(h);
    case SN_ST_BF16: memcpy(&h, p, 2); return sn_bf16_to_fp32(h);
    case SN_ST_U8: return *p;
    }
    return 0;
}

static float pow2i(int q) {
    uint32_t u = (uint32_t)(q + 0x7f) << 23;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* exp as the reference converter's torch computes it on the CPU for float32 tensors: SLEEF's
 * expf_u10 (the FMA variant torch's AVX2/AVX-512 kernels call; 1-ulp accurate, so it differs from
 * libm's expf in the last bit for some inputs). Checked bit for bit against torch.exp on 500k
 * values. Range reduction by ln 2 in two parts, a degree-6 polynomial, scaling by 2^q in two steps. */
float sn_tsrc_torch_expf(float d) {
    if (d != d) return d;
    if (d < -104.0f) return 0.0f;
    if (d > 100.0f) return INFINITY;
    int q = (int)rintf(d * 1.442695040888963407359924681001892137426645954152985934135449406931f);
    float s = fmaf((float)q, -0.693145751953125f, d);
    s = fmaf((float)q, -1.428606765330187045e-06f, s);
    float u = 0.000198527617612853646278381f;
    u = fmaf(u, s, 0.00139304355252534151077271f);
    u = fmaf(u, s, 0.00833336077630519866943359f);
    u = fmaf(u, s, 0.0416664853692054748535156f);
    u = fmaf(u, s, 0.166666671633720397949219f);
    u = fmaf(u, s, 0.5f);
    u = 1.0f + fmaf(s * s, u, s);
    return u * pow2i(q >> 1) * pow2i(q - (q >> 1));
}

void sn_tsrc_apply_ew(sn_arch_ew ew, float *x, uint64_t n) {
    switch (ew) {
    case SN_ARCH_EW_NEG_EXP:
        for (uint64_t i = 0; i < n; i++) x[i] = -sn_tsrc_torch_expf(x[i]);
        break;
    case SN_ARCH_EW_ADD_ONE:
        for (uint64_t i = 0; i < n; i++) x[i] += 1.0f;
        break;
    case SN_ARCH_EW_NONE: break;
    }
}

/* E2M1 code i of a row of OpenAI MXFP4 blocks (element 2k in the low nibble of byte k). */
static unsigned mx_code(const uint8_t *q, uint64_t i) { return (q[i >> 1] >> ((i & 1) * 4)) & 15u; }

void sn_tsrc_mxfp4_row(const sn_tsrc *s, uint64_t r, uint8_t *dst) {
    uint64_t sr, nb = s->row_len / 32;
    const sn_st_tensor *t = sn_tsrc_src_row(s, r, &sr);
    const uint8_t *q = t->data + sr * nb * 16, *e = s->mx_scales->data + sr * nb;
    for (uint64_t b = 0; b < nb; b++, q += 16, dst += 17) {
        dst[0] = e[b];
        for (unsigned j = 0; j < 16; j++) dst[1 + j] = (uint8_t)(mx_code(q, j) | mx_code(q, j + 16) << 4);
    }
}

/* The values of an MXFP4 source row: ggml's doubled E2M1 levels times 2^(e - 128). */
static void mxfp4_values(const sn_tsrc *s, uint64_t r, float *y) {
    static const float lv[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
    uint64_t sr, nb = s->row_len / 32;
    const sn_st_tensor *t = sn_tsrc_src_row(s, r, &sr);
    const uint8_t *q = t->data + sr * nb * 16, *e = s->mx_scales->data + sr * nb;
    for (uint64_t b = 0; b < nb; b++, q += 16)
        for (unsigned i = 0; i < 32; i++) y[b * 32 + i] = lv[mx_code(q, i)] * ldexpf(1.0f, (int)e[b] - 128);
}

const float *sn_tsrc_row(const sn_tsrc *s, uint64_t r, float *scratch) {
    uint64_t n = s->row_len, sr;
    if (s->gen) return s->gen + r * n;
    if (s->mx_scales) {
        mxfp4_values(s, r, scratch);
        return scratch;
    }
    const sn_st_tensor *t = sn_tsrc_src_row(s, r, &sr);
    const float *x;
    if (s->vr.n_k && s->vr.cols) { /* output column e is source column vreorder_src(e) */
        for (uint64_t e = 0; e < n; e++) scratch[e] = elem_f32(t, sr * n + sn_arch_vreorder_src(&s->vr, e));
        x = scratch;
    } else if (s->transpose) {
        /* each matrix of the part is [n][cols] in HF order; output row sr is column sr % cols of
         * matrix sr / cols */
        uint64_t cols = t->n_dims ? t->shape[t->n_dims - 1] : 1, m = sr / cols * n * cols;
        for (uint64_t i = 0; i < n; i++) scratch[i] = elem_f32(t, m + i * cols + sr % cols);
        x = scratch;
    } else if (!t->contiguous) { /* a checkpoint view (e.g. a transposed matrix): gather via the strides */
        if (t->n_dims && n == t->shape[t->n_dims - 1]) sn_st_row_f32(t, sr, scratch);
        else
            for (uint64_t e = 0; e < n; e++) scratch[e] = sn_st_elem_f32(t, sr * n + e);
        x = scratch;
    } else if (t->ggml_type) {
        sn_dequantize_row(t->ggml_type, t->data + sr * sn_ggml_row_size(t->ggml_type, n), scratch, (int64_t)n);
        x = scratch;
    } else {
        const uint8_t *p = t->data + sr * n * sn_st_dtype_size(t->dtype);
        /* safetensors data may start at any byte offset (the header length is free): an element
         * not aligned for its type is read with memcpy, never through a misaligned pointer */
        if ((uintptr_t)p % sn_st_dtype_size(t->dtype) != 0) {
            if (t->dtype == SN_ST_F32) memcpy(scratch, p, n * sizeof(float));
            else
                for (uint64_t e = 0; e < n; e++) {
                    uint16_t h;
                    memcpy(&h, p + 2 * e, 2);
                    scratch[e] = t->dtype == SN_ST_F16 ? sn_fp16_to_fp32(h) : sn_bf16_to_fp32(h);
                }
            x = scratch;
        } else switch (t->dtype) {
        case SN_ST_F32:
            x = (const float *)(const void *)p;
            break;
        case SN_ST_F16:
            sn_fp16_to_fp32_row((const uint16_t *)(const void *)p, scratch, n);
            x = scratch;
            break;
        default:
            sn_bf16_to_fp32_row((const uint16_t *)(const void *)p, scratch, n);
            x = scratch;
            break;
        }
    }
    if (s->ew != SN_ARCH_EW_NONE) {
        if (x != scratch) memcpy(scratch, x, n * sizeof(float));
        sn_tsrc_apply_ew(s->ew, scratch, n);
        /* the reference computes the map in the tensor's own dtype when it is f16 (bf16 is widened
         * to f32 first), so the result is rounded back */
        if (t->dtype == SN_ST_F16)
            for (uint64_t i = 0; i < n; i++) scratch[i] = sn_fp16_to_fp32(sn_fp32_to_fp16(scratch[i]));
        x = scratch;
    }
    return x;
}
