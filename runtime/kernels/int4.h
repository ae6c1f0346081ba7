/* int4.h - kernels for the blob's INT4G64 weights (docs/BLOB.md): each weight row is n/2 code bytes
 * (groups of 64 inputs; low nibble = element j, high = element j + 32 of a group; u = q + 8) then
 * n/64 fp32 scales. Activations are quantized per group of 64 to int8 with scale amax/127; the
 * group dot is the exact integer Σ u·a − 8·Σ a, scaled by w_scale · a_scale, accumulated in f32.
 * Scalar reference + AVX2 (maddubs) + AVX-512 VNNI (vpdpbusd), chosen at run time.
 *
 * The signatures match sn_quant_fn / sn_dot_fn in kernels.h so the INT4 type plugs into the same
 * matmul driver as the ggml types. */
#ifndef SN_KERNELS_INT4_H
#define SN_KERNELS_INT4_H
#include <stdint.h>

#define SN_INT4_GROUP 64

/* Activation row for n inputs (n % 64 == 0): n int8 codes, then n/64 f32 scales, then n/64 int32
 * code sums: sn_int4_act_bytes(n) bytes. */
static inline uint64_t sn_int4_act_bytes(int64_t n) { return (uint64_t)n + (uint64_t)(n / SN_INT4_GROUP) * 8; }
static inline uint64_t sn_int4_w_row_bytes(int64_t n) { return (uint64_t)(n / 2) + (uint64_t)(n / SN_INT4_GROUP) * 4; }

/* Best available (AVX-512 or scalar; bit-identical output). */
void sn_int4_quantize_act(const float *x, void *act, int64_t n);
void sn_int4_quantize_act_scalar(const float *x, void *act, int64_t n);
void sn_int4_quantize_act_avx512(const float *x, void *act, int64_t n);

float sn_int4_dot_scalar(int64_t n, const void *w_row, const void *act);
float sn_int4_dot_avx2(int64_t n, const void *w_row, const void *act);
float sn_int4_dot_avx512vnni(int64_t n, const void *w_row, const void *act);

typedef float (*sn_int4_dot_fn)(int64_t n, const void *w_row, const void *act);
/* Best available for this process (respects SN_CPU, see cpu.h). */
sn_int4_dot_fn sn_int4_dot_best(void);
const char *sn_int4_dot_name(sn_int4_dot_fn f);

/* Exact integer sum of group g of one row (tests pin every variant to this). */
int64_t sn_int4_group_isum_ref(const uint8_t *w_row, const int8_t *aq, int64_t g);

#endif
