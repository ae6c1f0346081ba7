/* mm_rearrange.h - the driver of the batch kernels that rearrange weight rows once per call
 * (kquants_mm_avx512.c, kquants_mm_avx2.c, q8_0_mm_avx512.c).
 *
 * Before including this, a file defines (as enum constants) ROWS, the rows of one group (16 on
 * AVX-512, 8 on AVX2); CHUNK, the blocks rearranged at a time; TILE_T, the tokens of one tile;
 * BLOCK_BYTES, the bytes of one rearranged block; PARK_FLOATS, the floats one token parks per row
 * group between chunks; and the functions
 *   rearrange(w, idx, b0, nblk, dst)   blocks [b0, b0 + nblk) of the group's rows at w + idx[r];
 *   tile(TT, pk, nblk, xa, first, last, y, ldy, park, nr)   TT <= TILE_T tokens x the group's nr
 *       rows of the rearranged chunk pk (xa[t]: token t's first activation block of the chunk);
 *       sums start at 0 (first) or from what the previous chunk parked, the last chunk stores them.
 * MM_REARRANGED_TILES makes tile from an always_inline body; MM_REARRANGED_ENTRY then defines the
 * kernels.h `mm` entry: row groups of ROWS (a partial last group reads its last real row in place
 * of the missing ones and never stores them), each chunk rearranged once and met by every token
 * tile of the batch. It declines (returns 0) batches under MIN_T tokens, which do not pay for the
 * rearranging. */
#ifndef SN_MM_REARRANGE_H
#define SN_MM_REARRANGE_H
#include <stdint.h>
#include <stdlib.h>

#define MM_REARRANGED_ENTRY(NAME, QK, ACT_BLOCK, IDX_T, IDX_LOAD, MIN_T)                                             \
    static int NAME(int64_t n, const void *w, uint64_t w_row, int64_t R, const void *x, uint64_t x_row, int64_t T,   \
                    float *y, int64_t ldy) {                                                                       \
        const int64_t nb = n / (QK);                                                                               \
        if (T < (MIN_T) || nb < 1 || w_row * (ROWS - 1) > INT32_MAX) return 0;                                     \
        _Alignas(64) uint8_t pk[CHUNK * BLOCK_BYTES];                                                              \
        float *park = NULL;                                                                                        \
        /* aligned_alloc wants a multiple of the alignment (ASan holds to that; 8 floats a token do not) */        \
        const size_t park_bytes = ((size_t)T * PARK_FLOATS * sizeof(float) + 63) & ~(size_t)63;                    \
        if (nb > CHUNK && !(park = aligned_alloc(64, park_bytes))) return 0;                                       \
        for (int64_t r0 = 0; r0 < R; r0 += ROWS) {                                                                 \
            const int nr = R - r0 < ROWS ? (int)(R - r0) : ROWS;                                                   \
            int32_t off[ROWS];                                                                                     \
            for (int r = 0; r < ROWS; r++) off[r] = (int32_t)((uint64_t)(r < nr ? r : nr - 1) * w_row);           \
            const IDX_T idx = IDX_LOAD(off);                                                                       \
            const uint8_t *wg = (const uint8_t *)w + (uint64_t)r0 * w_row;                                         \
            for (int64_t kc = 0; kc < nb; kc += CHUNK) {                                                           \
                const int nblk = nb - kc < CHUNK ? (int)(nb - kc) : CHUNK;                                         \
                rearrange(wg, idx, kc, nblk, pk);                                                                  \
                for (int64_t t = 0; t < T; t += TILE_T) {                                                          \
                    const int tt = T - t < TILE_T ? (int)(T - t) : TILE_T;                                         \
                    const ACT_BLOCK *xa[TILE_T];                                                                   \
                    for (int i = 0; i < TILE_T; i++)                                                               \
                        xa[i] = (const ACT_BLOCK *)((const char *)x + (uint64_t)(t + (i < tt ? i : 0)) * x_row) + kc; \
                    tile(tt, pk, nblk, xa, kc == 0, kc + nblk == nb, y + t * ldy + r0, ldy,                        \
                         park ? park + t * PARK_FLOATS : NULL, nr);                                                \
                }                                                                                                  \
            }                                                                                                      \
        }                                                                                                          \
        free(park);                                                                                                \
        return 1;                                                                                                  \
    }

/* tile(TT, ...) over an always_inline BODY(TT, ...) whose TT is a compile-time constant 1..TILE_T
 * (TILE_T <= 4), so each token count gets its own unrolled, register-resident copy. */
#define MM_REARRANGED_TILES(NAME, BODY, ACT_BLOCK)                                                                 \
    _Static_assert(TILE_T >= 1 && TILE_T <= 4, "mm_rearrange.h: tiles of 1..4 tokens");                           \
    static void NAME(int TT, const uint8_t *pk, int nblk, const ACT_BLOCK *const *xa, int first, int last, float *y, \
                     int64_t ldy, float *park, int nr) {                                                           \
        switch (TT) {                                                                                              \
        case 1: BODY(1, pk, nblk, xa, first, last, y, ldy, park, nr); break;                                       \
        case 2: BODY(TILE_T >= 2 ? 2 : 1, pk, nblk, xa, first, last, y, ldy, park, nr); break;                     \
        case 3: BODY(TILE_T >= 3 ? 3 : 1, pk, nblk, xa, first, last, y, ldy, park, nr); break;                     \
        default: BODY(TILE_T, pk, nblk, xa, first, last, y, ldy, park, nr); break;                                 \
        }                                                                                                          \
    }

/* 4 consecutive int8 activations as one int32 (the word a vpdpbusd / vpmaddubsw step broadcasts) */
static inline int32_t sn_mm_ld32(const int8_t *p) {
    int32_t v;
    __builtin_memcpy(&v, p, 4);
    return v;
}
#endif
