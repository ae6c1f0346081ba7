/* lane_ops.h - the vector operations of the lane-parallel quantizer bodies (qkx2_lanes.h, q3_lanes.h),
 * for one width at a time. Included with LANE_OPS defined as 8 (AVX2: VF __m256, VM a float mask) or
 * 16 (AVX-512: VF __m512, VM a __mmask16) it defines them, with LANE_OPS 0 it undefines them; the
 * file is not a header of its own (no guard). The includer defines QK_LANES and QK_TARGET with it. */
#if LANE_OPS == 8
#define QK_LANES 8
#define QK_TARGET __attribute__((target("avx2")))
#define VF __m256
#define VI __m256i
#define VM __m256
#define LOADF(p) _mm256_loadu_ps(p)
#define STOREF(p, v) _mm256_storeu_ps(p, v)
#define LOADI(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define STOREI(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), v)
#define SET1F(f) _mm256_set1_ps(f)
#define SET1I(i) _mm256_set1_epi32(i)
#define ABSMASK() _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff))
#define ADD _mm256_add_ps
#define SUB _mm256_sub_ps
#define MUL _mm256_mul_ps
#define DIV _mm256_div_ps
#define SQRT _mm256_sqrt_ps
#define MINF _mm256_min_ps
#define MAXF _mm256_max_ps
#define ANDF _mm256_and_ps
#define XORF _mm256_xor_ps
#define CVT _mm256_cvtepi32_ps
#define ADDI _mm256_add_epi32
#define IMAX _mm256_max_epi32
#define IMIN _mm256_min_epi32
#define NEAREST nearest_int8 /* ggml_types_internal.h */
#define CMPF(a, b, op) _mm256_cmp_ps(a, b, op)
#define ICMPEQ(a, b) _mm256_castsi256_ps(_mm256_cmpeq_epi32(a, b))
#define SELF(m, yes, no) _mm256_blendv_ps(no, yes, m)
#define SELI(m, yes, no) _mm256_blendv_epi8(no, yes, _mm256_castps_si256(m))
#define MNONE() _mm256_setzero_ps()
#define MAND _mm256_and_ps
#define MOR _mm256_or_ps
#define MANDNOT _mm256_andnot_ps /* ~a & b */
#define MANY(m) _mm256_movemask_ps(m)
#elif LANE_OPS == 16
#define QK_LANES 16
#define QK_TARGET __attribute__((target("avx512f")))
#define VF __m512
#define VI __m512i
#define VM __mmask16
#define LOADF(p) _mm512_loadu_ps(p)
#define STOREF(p, v) _mm512_storeu_ps(p, v)
#define LOADI(p) _mm512_loadu_si512((const void *)(p))
#define STOREI(p, v) _mm512_storeu_si512((void *)(p), v)
#define SET1F(f) _mm512_set1_ps(f)
#define SET1I(i) _mm512_set1_epi32(i)
#define ABSMASK() _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff))
#define ADD _mm512_add_ps
#define SUB _mm512_sub_ps
#define MUL _mm512_mul_ps
#define DIV _mm512_div_ps
#define SQRT _mm512_sqrt_ps
#define MINF _mm512_min_ps
#define MAXF _mm512_max_ps
#define ANDF(a, b) _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)))
#define XORF(a, b) _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)))
#define CVT _mm512_cvtepi32_ps
#define ADDI _mm512_add_epi32
#define IMAX _mm512_max_epi32
#define IMIN _mm512_min_epi32
#define NEAREST nearest_int16
#define CMPF(a, b, op) _mm512_cmp_ps_mask(a, b, op)
#define ICMPEQ(a, b) _mm512_cmpeq_epi32_mask(a, b)
#define SELF(m, yes, no) _mm512_mask_blend_ps(m, no, yes)
#define SELI(m, yes, no) _mm512_mask_blend_epi32(m, no, yes)
#define MNONE() ((__mmask16)0)
#define MAND(a, b) ((__mmask16)((a) & (b)))
#define MOR(a, b) ((__mmask16)((a) | (b)))
#define MANDNOT(a, b) ((__mmask16)(~(a) & (b)))
#define MANY(m) ((m) != 0)
#else
#undef QK_LANES
#undef QK_TARGET
#undef VF
#undef VI
#undef VM
#undef LOADF
#undef STOREF
#undef LOADI
#undef STOREI
#undef SET1F
#undef SET1I
#undef ABSMASK
#undef ADD
#undef SUB
#undef MUL
#undef DIV
#undef SQRT
#undef MINF
#undef MAXF
#undef ANDF
#undef XORF
#undef CVT
#undef ADDI
#undef IMAX
#undef IMIN
#undef NEAREST
#undef CMPF
#undef ICMPEQ
#undef SELF
#undef SELI
#undef MNONE
#undef MAND
#undef MOR
#undef MANDNOT
#undef MANY
#endif
#undef LANE_OPS
