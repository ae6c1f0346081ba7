/* int4.h - kernels for the blob's INT4G32 weights (docs/BLOB.md, blob version 3): symmetric groups
 * of 32 inputs, one fp16 scale each (4.5 bits/weight, as Q4_0). A weight row of n inputs
 * (n % 64 == 0) is n/2 code bytes then n/32 fp16 scales. Code byte j of 32-byte chunk c holds
 * element 64c + j (group 2c) in its low nibble and element 64c + 32 + j (group 2c + 1) in its high
 * nibble, each as u = q + 8 (0..15): one AND and one shift turn a chunk into two whole groups.
 *
 * Activations are quantized per group of 32 to int8 with scale amax/127; a group's dot is the exact
 * integer Σ u·a − 8·Σ a, scaled by w_scale · a_scale and accumulated in f32. Scalar reference +
 * AVX2 (maddubs) + AVX-512 VNNI (vpdpbusd), chosen at run time; each also has a 4-row × 4-token
 * tile for prompts that computes every output exactly as that ISA's dot does.
 *
 * The signatures match sn_quant_fn / sn_dot_fn and the gemm4x4 slot of kernels.h, so the INT4 type
 * plugs into the same matmul driver as the ggml types. */
#ifndef SN_KERNELS_INT4_H
#define SN_KERNELS_INT4_H
#include <stdint.h>

#define SN_INT4_GROUP 32 /* inputs per scale */
#define SN_INT4_COLS 64  /* row lengths are a multiple of this (two groups share a code chunk) */

/* Activation row for n inputs (n % 64 == 0): n int8 codes, then n/32 f32 scales, then n/32 int32
 * code sums: sn_int4_act_bytes(n) bytes. */
static inline uint64_t sn_int4_act_bytes(int64_t n) { return (uint64_t)n + (uint64_t)(n / SN_INT4_GROUP) * 8; }
static inline uint64_t sn_int4_w_row_bytes(int64_t n) { return (uint64_t)(n / 2) + (uint64_t)(n / SN_INT4_GROUP) * 2; }

/* The activation quantizers (bit-identical output); each kernel table holds its level's one as
 * quant[SN_KTYPE_INT4G32]. */
void sn_int4_quantize_act_scalar(const float *x, void *act, int64_t n);
void sn_int4_quantize_act_avx2(const float *x, void *act, int64_t n);
void sn_int4_quantize_act_avx512(const float *x, void *act, int64_t n);

float sn_int4_dot_scalar(int64_t n, const void *w_row, const void *act);
float sn_int4_dot_avx2(int64_t n, const void *w_row, const void *act);
float sn_int4_dot_avx512vnni(int64_t n, const void *w_row, const void *act);

/* Prompt tiles: y[t*ldy + r] = dot(row r, act t) for r < 4, t < 4, each output bit-identical to
 * the same ISA's dot (the unpacked weights are reused across the four tokens). */
void sn_int4_gemm4x4_scalar(int64_t n, const void *w, uint64_t w_row, const void *x, uint64_t x_row, float *y,
                            int64_t ldy);
void sn_int4_gemm4x4_avx2(int64_t n, const void *w, uint64_t w_row, const void *x, uint64_t x_row, float *y,
                          int64_t ldy);
void sn_int4_gemm4x4_avx512vnni(int64_t n, const void *w, uint64_t w_row, const void *x, uint64_t x_row, float *y,
                                int64_t ldy);

typedef float (*sn_int4_dot_fn)(int64_t n, const void *w_row, const void *act);

/* Exact integer sum Σ (u − 8)·a of group g (of 32) of one row (tests pin every variant to this). */
int64_t sn_int4_group_isum_ref(const uint8_t *w_row, const int8_t *aq, int64_t g);

/* ---- 8-row groups (blob layout INT4G32x8, the layout of every INT4 weight matrix) ----
 * Rows in groups of 8; group G (rows 8G..8G+7) is n/32 blocks of 144 bytes, block b (inputs
 * 32b..32b+31) at G·(n/32)·144 + b·144:
 *   bytes 0..127: 4 chunks of 32 bytes; byte 4r+i of chunk c is row r's code byte for elements
 *       4c+i (low nibble) and 16+4c+i (high nibble) of the block, each stored as q + 8;
 *   bytes 128..143: the fp16 scales of rows 0..7.
 * One sequential stream per group, and 8 rows in the 8 lanes: each block's integer sums come out
 * one per lane (no horizontal reductions), the scales multiply as one vector, and one broadcast
 * activation word meets 8 rows. A matrix whose row count is not a multiple of 8 is padded with
 * zero rows (scale 0) to the next group. Same 4.5 bits per weight as the row layout. */
enum { SN_INT4X8_ROWS = 8, SN_INT4X8_BLOCK_BYTES = 144 };
static inline uint64_t sn_int4x8_group_bytes(int64_t n) { return (uint64_t)(n / SN_INT4_GROUP) * SN_INT4X8_BLOCK_BYTES; }

/* y[t*ldy + r] = dot(row r, act t) for r < nrows (from the first row of the group at w), t < T;
 * x holds T activation rows (sn_int4_quantize_act_*) x_row bytes apart. Per output: for each block,
 * the exact integer Σ (u − 8)·a, then acc = fma(float(sum), fp16(w_scale) · a_scale, acc) in block
 * order: the scalar, AVX2 and AVX-512 VNNI versions are bit-identical. */
typedef void (*sn_int4x8_mm_fn)(int64_t n, const void *w, int64_t nrows, const void *x, uint64_t x_row, int64_t T,
                                float *y, int64_t ldy);
void sn_int4x8_mm_scalar(int64_t n, const void *w, int64_t nrows, const void *x, uint64_t x_row, int64_t T, float *y,
                         int64_t ldy);
void sn_int4x8_mm_avx2(int64_t n, const void *w, int64_t nrows, const void *x, uint64_t x_row, int64_t T, float *y,
                       int64_t ldy);
void sn_int4x8_mm_avx512vnni(int64_t n, const void *w, int64_t nrows, const void *x, uint64_t x_row, int64_t T,
                             float *y, int64_t ldy);
/* the same with four far streams in decode (tuning.far_streams: the quads of int4.c) */
void sn_int4x8_mm_avx512vnni_far(int64_t n, const void *w, int64_t nrows, const void *x, uint64_t x_row, int64_t T,
                             float *y, int64_t ldy);
/* Rewrites nrows (<= 8) rows of the row layout (row_bytes(n) each, back to back) as one 8-row group
 * (sn_int4x8_group_bytes(n) bytes; rows nrows..7 zero). */
void sn_int4x8_pack(const uint8_t *rows, int nrows, int64_t n, uint8_t *group);

#endif
