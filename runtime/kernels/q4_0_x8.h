/* q4_0_x8.h - Q4_0 weights repacked at load into groups of 8 interleaved rows, and their matmul.
 *
 * Why: a Q4_0 row dot is one fma per 32-weight block, chained in block order (the order llama.cpp's
 * repacked q4_0 kernels use, which greedy parity depends on), so a row-at-a-time kernel waits on
 * that chain. With 8 rows interleaved, one 8-lane vector carries the 8 chains and one weight stream
 * feeds them; each output keeps exactly dot_q4_0's order, so results are bit-identical.
 *
 * Layout of a repacked matrix (nb = n_in / 32 blocks per row): the floor(n_out / 8) full groups of
 * 8 rows (the last n_out % 8 rows, if any, stay in the Q4_0 row layout), group G (rows 8G..8G+7) at byte offset G * nb * 144, its block b at + b * 144:
 *   bytes 0..127: 4 chunks of 32 bytes; chunk c holds, for row r = 0..7, bytes 4c..4c+3 of that
 *       row's Q4_0 qs (byte 4r+i of chunk c is row r's qs[4c+i]: its low nibble is element 4c+i
 *       and its high nibble element 16+4c+i of the block);
 *   bytes 128..143: the fp16 scales d of rows 0..7.
 * Same size as the Q4_0 rows (18 bytes per row-block), and one sequential stream: a layout with the
 * scales in a separate array streamed at half the speed from DRAM (the hardware prefetcher tracks
 * one stream per group far better than two). A chunk's low (high) nibbles are one 8-lane operand of
 * 4-element dot products against one broadcast 4-byte word of the activation. */
#ifndef SN_Q4_0_X8_H
#define SN_Q4_0_X8_H
#include <stddef.h>
#include <stdint.h>

enum { SN_Q4_0X8_ROWS = 8, SN_Q4_0X8_BLOCK_BYTES = 144 };

/* Bytes of the repacked form of the first n_out / 8 * 8 rows of an n_out x n_in Q4_0 matrix
 * (0 if n_out < 8 or n_in % 32). */
uint64_t sn_q4_0x8_size(int64_t n_in, int64_t n_out);
/* Repacks row groups [g0, g1) of a Q4_0 matrix (rows src_row_bytes apart) into dst, which holds the
 * whole repacked matrix (group G is written at G * nb * 144). Chunks may be done in any order. */
void sn_q4_0x8_repack(const void *src, uint64_t src_row_bytes, int64_t n_in, int64_t g0, int64_t g1, void *dst);

/* y[t*ldy + 8g + r] = dot_q4_0(row 8g + r, x_t) for g < n_groups, r < 8, t < T, where w points at
 * the first group and x holds T Q8_0 activation rows x_row bytes apart. Bit-identical to the
 * scalar dot_q4_0 (= dot_mm) for every output. */
typedef void (*sn_q4_0x8_mm_fn)(int64_t n, const void *w, int64_t n_groups, const void *x, uint64_t x_row,
                                int64_t T, float *y, int64_t ldy);
void sn_q4_0x8_mm_scalar(int64_t n, const void *w, int64_t n_groups, const void *x, uint64_t x_row, int64_t T,
                         float *y, int64_t ldy);
#if defined(__x86_64__) || defined(__i386__)
void sn_q4_0x8_mm_avx2(int64_t n, const void *w, int64_t n_groups, const void *x, uint64_t x_row, int64_t T,
                       float *y, int64_t ldy);
/* AVX-512 VL + VNNI (256-bit VPDPBUSD with broadcast activation words). */
void sn_q4_0x8_mm_avx512vnni(int64_t n, const void *w, int64_t n_groups, const void *x, uint64_t x_row,
                             int64_t T, float *y, int64_t ldy);
/* the same reading four far streams in decode (tuning.far_streams; drive in q4_0_x8.c) */
void sn_q4_0x8_mm_avx512vnni_far(int64_t n, const void *w, int64_t n_groups, const void *x, uint64_t x_row,
                             int64_t T, float *y, int64_t ldy);
#endif

/* MXFP4 in the same layout with 136-byte blocks: bytes 0..127 the chunks of the rows' 16 nibble
 * bytes as above, bytes 128..135 the E8M0 exponents of rows 0..7. The kernels compute each output as
 * dot_mxfp4 (iq4_scalar.c) does, so bit for bit the same; sizes and repack as the Q4_0 functions. */
enum { SN_MXFP4X8_BLOCK_BYTES = 136 };
uint64_t sn_mxfp4x8_size(int64_t n_in, int64_t n_out);
void sn_mxfp4x8_repack(const void *src, uint64_t src_row_bytes, int64_t n_in, int64_t g0, int64_t g1, void *dst);
/* the kernels' type (sn_q4_0x8_mm_fn without the pointer): scalar, AVX2, AVX-512 VL + VNNI */
typedef void sn_x8_mm(int64_t n, const void *w, int64_t n_groups, const void *x, uint64_t x_row, int64_t T, float *y,
                      int64_t ldy);
sn_x8_mm sn_mxfp4x8_mm_scalar;
#if defined(__x86_64__) || defined(__i386__)
sn_x8_mm sn_mxfp4x8_mm_avx2, sn_mxfp4x8_mm_avx512vnni;
#endif

#endif
