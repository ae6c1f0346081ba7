/* int4.h - kernels for the blob's INT4G64 weights (docs/BLOB.md): groups of 64 inputs, one fp32
 * scale per group, codes u = q + 8 in nibbles (low nibble = element j, high = element j + 32 of a
 * group). Activations are quantized per group of 64 to int8 with scale amax/127; the group dot is
 * the exact integer sum Σ u·a − 8·Σ a, scaled by w_scale · a_scale and accumulated in f32.
 * Scalar reference + AVX2 (maddubs) + AVX-512 VNNI (vpdpbusd), chosen at run time. */
#ifndef SN_KERNELS_INT4_H
#define SN_KERNELS_INT4_H
#include <stdint.h>

#define SN_INT4_GROUP 64

/* Activation row for n inputs (n % 64 == 0): n int8 codes, n/64 scales and n/64 code sums. */
typedef struct sn_int4_act {
    int8_t *q;
    float *scale;
    int32_t *sum;
} sn_int4_act;

void sn_int4_quantize_act(const float *x, int64_t n, sn_int4_act *a);

typedef void (*sn_int4_gemv_fn)(const uint8_t *wq, const float *ws, int64_t n, int64_t r0, int64_t r1,
                                const sn_int4_act *a, float *y);
/* y[r] = Σ_g ws[r][g] · a.scale[g] · (Σ_j u[r][g][j]·a.q[g][j] − 8·a.sum[g]) for r in [r0, r1).
 * wq: the code plane (rows × n/2 bytes), ws: the scale plane (rows × n/64 floats). */
void sn_int4_gemv_scalar(const uint8_t *wq, const float *ws, int64_t n, int64_t r0, int64_t r1,
                         const sn_int4_act *a, float *y);
void sn_int4_gemv_avx2(const uint8_t *wq, const float *ws, int64_t n, int64_t r0, int64_t r1,
                       const sn_int4_act *a, float *y);
void sn_int4_gemv_avx512vnni(const uint8_t *wq, const float *ws, int64_t n, int64_t r0, int64_t r1,
                             const sn_int4_act *a, float *y);
/* Best available for this process (respects SN_CPU). */
sn_int4_gemv_fn sn_int4_gemv_best(void);
const char *sn_int4_gemv_name(sn_int4_gemv_fn f);

/* Exact integer group sum for one row (tests pin the SIMD versions to this). */
int64_t sn_int4_row_isum_ref(const uint8_t *wq_row, int64_t n, const int8_t *aq, int64_t group);

#endif
