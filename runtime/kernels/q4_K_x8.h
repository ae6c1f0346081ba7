/* q4_K_x8.h - Q4_K weights repacked at load into groups of 8 interleaved rows, for the
 * single-token matmul.
 *
 * Why: one Q4_K row's dot spends most of its instructions on the block's own bookkeeping - the
 * 6-bit scales unpacked, picked into place for every 64 weights, lanes reduced - so it runs slower
 * than one core reads memory (docs/PERFORMANCE.md). With 8 rows
 * interleaved, one 64-byte vector holds 8 bytes of each of 8 rows, one vpdpbusd meets it with one
 * broadcast 8-byte activation word, and the scales of the 8 rows are unpacked together once per
 * block. llama.cpp repacks Q4_K the same way on AVX2+ CPUs (q4_K_8x8); the order of the float steps
 * is dot_q4_K's (kquant_dots.h, per_pair = 0), so each output is bit-identical to the row kernels.
 *
 * Layout of a repacked matrix (nb = n_in / 256 blocks per row): the floor(n_out / 8) full groups of
 * 8 rows (the last n_out % 8 rows, if any, stay in the Q4_K row layout), group G (rows 8G..8G+7)
 * at byte offset G * nb * 1152, its block b at + b * 1152:
 *   bytes 0..1023: 16 chunks of 64 bytes; byte 8r + i of chunk c is row r's qs[8c + i] (its low
 *       nibble is element 8(c % 4) + i of sub-block 2(c / 4), its high nibble the same element of
 *       sub-block 2(c / 4) + 1);
 *   bytes 1024..1119: the 12 scale bytes of the 8 rows as three 32-byte words: byte 32k + 4r + i
 *       is row r's scales[4k + i] (k = 0, 1, 2), so the 6-bit unpacking is 8 rows wide;
 *   bytes 1120..1135: the fp16 d of rows 0..7; bytes 1136..1151: their dmin.
 * Same size as the Q4_K rows (144 bytes per row-block) and one sequential stream per group. */
#ifndef SN_Q4_K_X8_H
#define SN_Q4_K_X8_H
#include <stddef.h>
#include <stdint.h>

enum { SN_Q4_KX8_ROWS = 8, SN_Q4_KX8_BLOCK_BYTES = 8 * 144 };

/* Bytes of the repacked form of the first n_out / 8 * 8 rows of an n_out x n_in Q4_K matrix
 * (0 if n_out < 8 or n_in % 256). */
uint64_t sn_q4_Kx8_size(int64_t n_in, int64_t n_out);
/* Repacks row groups [g0, g1) of a Q4_K matrix (rows src_row_bytes apart) into dst, which holds the
 * whole repacked matrix (group G is written at G * nb * 1152). Chunks may be done in any order. */
void sn_q4_Kx8_repack(const void *src, uint64_t src_row_bytes, int64_t n_in, int64_t g0, int64_t g1, void *dst);
/* The inverse for n_groups groups starting at w: row 8g + r back in the Q4_K row layout at
 * dst + (8g + r) * n_in / 256 * 144 (batches run the row kernels on such a copy). */
void sn_q4_Kx8_unpack(const void *w, int64_t n_in, int64_t n_groups, void *dst);

/* One token: y[8g + r] = dot_q4_K(row 8g + r, x) for g < n_groups, r < 8, where w points at the
 * first group and x is one Q8_K activation row. Bit-identical to the scalar dot_q4_K. */
typedef void (*sn_q4_Kx8_mv_fn)(int64_t n, const void *w, int64_t n_groups, const void *x, float *y);
#if defined(__x86_64__) || defined(__i386__)
/* AVX-512 BW + VBMI + VNNI. */
void sn_q4_Kx8_mv_avx512vnni(int64_t n, const void *w, int64_t n_groups, const void *x, float *y);
#endif

#endif
