/* kquants_x86.h - the Q4_K / Q5_K scale and min unpacking both x86 K-quant files use, written once.
 * Static inline without a target attribute, like simd_avx2.h: include it after the file's
 * `#pragma GCC target(...)` (at least SSSE3/SSE4.1) and it compiles for that instruction set. */
#ifndef SN_KQUANTS_X86_H
#define SN_KQUANTS_X86_H
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

/* The 8 6-bit scales and the 8 mins of a Q4_K / Q5_K block (the packing of sn_k_q4k_scale_min) as
 * bytes 0-7 of two registers. They are built in general registers and moved over whole: stored as
 * bytes and reloaded 8 at a time, every block paid a failed store-to-load forward (two 4-byte
 * stores feeding one 8-byte load), which cost the Q4_K dots more than their arithmetic. */
static inline void sn_kq_q4k_scales(const uint8_t *q, __m128i *sc, __m128i *mn) {
    uint32_t u0, u1, u2;
    memcpy(&u0, q, 4);
    memcpy(&u1, q + 4, 4);
    memcpy(&u2, q + 8, 4);
    const uint64_t s_lo = u0 & 0x3f3f3f3fu, m_lo = u1 & 0x3f3f3f3fu;
    const uint64_t s_hi = (u2 & 0x0f0f0f0fu) | ((u0 >> 2) & 0x30303030u);
    const uint64_t m_hi = ((u2 >> 4) & 0x0f0f0f0fu) | ((u1 >> 2) & 0x30303030u);
    *sc = _mm_cvtsi64_si128((long long)(s_lo | s_hi << 32));
    *mn = _mm_cvtsi64_si128((long long)(m_lo | m_hi << 32));
}

/* The 4 sub-block pairs' min terms m0 * (bsums of the first 32) + m1 * (of the second 32), lanes j
 * (exact: |bsums pair| <= 2 * 16 * 128, mins <= 63). */
static inline __m128i sn_kq_q4k_mins(__m128i mn, const int16_t *bsums) {
    const __m128i b0 = _mm_loadu_si128((const __m128i *)bsums), b1 = _mm_loadu_si128((const __m128i *)(bsums + 8));
    return _mm_madd_epi16(_mm_cvtepu8_epi16(mn), _mm_hadd_epi16(b0, b1));
}
#endif
