/* ggml_types.h - ggml tensor type ids, block geometry, and bit-exact float conversions/quantizers.
 *
 * Ids and block sizes are ggml's (ggml.h enum ggml_type). Conversions follow ggml's reference CPU
 * code exactly so that bytes we write equal what llama.cpp's converter and llama-quantize write:
 *   F32->F16  IEEE round-to-nearest-even, overflow -> inf
 *   F32->BF16 (u + 0x7fff + ((u>>16)&1)) >> 16, NaN -> quiet NaN ((u>>16)|64)
 *   Q8_0/Q4_0/Q4_K/Q6_K = quantize_row_*_ref (no imatrix). */
#ifndef SN_GGML_TYPES_H
#define SN_GGML_TYPES_H
#include <stddef.h>
#include <stdint.h>

typedef enum sn_ggml_type {
    SN_GGML_F32 = 0, SN_GGML_F16 = 1, SN_GGML_Q4_0 = 2, SN_GGML_Q4_1 = 3,
    SN_GGML_Q5_0 = 6, SN_GGML_Q5_1 = 7, SN_GGML_Q8_0 = 8, SN_GGML_Q8_1 = 9,
    SN_GGML_Q2_K = 10, SN_GGML_Q3_K = 11, SN_GGML_Q4_K = 12, SN_GGML_Q5_K = 13,
    SN_GGML_Q6_K = 14, SN_GGML_Q8_K = 15, SN_GGML_IQ4_NL = 20, SN_GGML_IQ4_XS = 23,
    SN_GGML_I8 = 24, SN_GGML_I16 = 25, SN_GGML_I32 = 26, SN_GGML_I64 = 27, SN_GGML_F64 = 28,
    SN_GGML_BF16 = 30, SN_GGML_MXFP4 = 39,
    SN_GGML_TYPE_COUNT = 43
} sn_ggml_type;
/* Types beyond ggml's ids, rows of the same type table: the runtime blob's INT4G32 (docs/BLOB.md,
 * kernels/int4.h; 36 bytes per 64 values: a row's 4-bit codes, then its f16 scale per 32). Never a
 * GGUF tensor type (the GGUF reader refuses ids from SN_GGML_TYPE_COUNT on). */
enum { SN_KTYPE_INT4G32 = SN_GGML_TYPE_COUNT, SN_KTYPE_COUNT };

/* llama_ftype values written to general.file_type */
enum {
    SN_FTYPE_ALL_F32 = 0, SN_FTYPE_MOSTLY_F16 = 1, SN_FTYPE_MOSTLY_Q4_0 = 2, SN_FTYPE_MOSTLY_Q8_0 = 7,
    SN_FTYPE_MOSTLY_Q4_K_M = 15, SN_FTYPE_MOSTLY_Q6_K = 18, SN_FTYPE_MOSTLY_BF16 = 32
};

#define SN_QK8_0 32
#define SN_QK4_0 32
#define SN_QK_K 256

typedef struct { uint16_t d; int8_t qs[32]; } sn_block_q8_0;          /* 34 bytes */
typedef struct { uint16_t d; uint8_t qs[16]; } sn_block_q4_0;          /* 18 bytes */
typedef struct { uint16_t d, dmin; uint8_t scales[12]; uint8_t qs[128]; } sn_block_q4_K; /* 144 */
typedef struct { uint8_t ql[128]; uint8_t qh[64]; int8_t scales[16]; uint16_t d; } sn_block_q6_K; /* 210 */
typedef struct { float d; int8_t qs[256]; int16_t bsums[16]; } sn_block_q8_K; /* 292 */

/* Geometry. A type we know nothing about (retired ids, > COUNT) has blck_size 0. */
const char *sn_ggml_type_name(int type);          /* "F32", "Q4_K", ... or NULL */
int sn_ggml_type_from_name(const char *name);     /* case-insensitive; -1 if unknown */
uint32_t sn_ggml_blck_size(int type);
size_t sn_ggml_type_size(int type);               /* bytes per block */
/* bytes of a row of ne0 elements; 0 if ne0 is not a multiple of the block size or type unknown */
uint64_t sn_ggml_row_size(int type, uint64_t ne0);

/* Scalar conversions (exact). */
uint16_t sn_fp32_to_fp16(float f);
float sn_fp16_to_fp32(uint16_t h); /* = sn_fp16_decode, out of line */

/* The one fp16 decoder, inline for kernels. ggml's rule: subnormals exact, infinities kept, a NaN
 * keeps its payload and comes out quiet (what F16C's vcvtph2ps and ggml's scalar path both give). */
static inline float sn_fp16_decode(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    union { uint32_t u; float f; } v;
    if (e == 0) {
        v.f = (float)m * 0x1p-24f; /* exact: m < 2^10 */
        v.u |= sign;
    } else if (e == 31) {
        v.u = sign | 0x7f800000u | (m ? 0x400000u | (m << 13) : 0u);
    } else {
        v.u = sign | ((e + 112u) << 23) | (m << 13);
    }
    return v.f;
}
uint16_t sn_fp32_to_bf16(float f);
float sn_bf16_to_fp32(uint16_t h);

/* Row conversions: n elements. */
void sn_fp32_to_fp16_row(const float *x, uint16_t *y, size_t n);
void sn_fp16_to_fp32_row(const uint16_t *x, float *y, size_t n);
void sn_fp32_to_bf16_row(const float *x, uint16_t *y, size_t n);
void sn_bf16_to_fp32_row(const uint16_t *x, float *y, size_t n);
/* bf16 -> f16 in one pass, equal to sn_bf16_to_fp32_row then sn_fp32_to_fp16_row (the
 * converter's most common path; skips the f32 round trip through memory). */
void sn_bf16_to_fp16_row(const uint16_t *x, uint16_t *y, size_t n);

/* Reference quantizers (k a multiple of the block size), bit-exact with ggml's *_ref. */
void sn_quantize_row_q8_0(const float *x, void *y, int64_t k);
void sn_quantize_row_q4_0(const float *x, void *y, int64_t k);
void sn_quantize_row_q4_K(const float *x, void *y, int64_t k);
void sn_quantize_row_q6_K(const float *x, void *y, int64_t k);
void sn_quantize_row_q8_K(const float *x, void *y, int64_t k);
/* n f32 values (n a multiple of the type's block size) to type: F32 copies, F16/BF16 round, the
 * quantized types use the functions above. Returns 0, or -1 for a type with no f32 writer here. */
int sn_ggml_from_f32(int type, const float *x, void *y, int64_t n);
/* The same at a given SIMD level of this call: 0 scalar only, 1 up to AVX2/F16C, 2 also AVX-512
 * (clamped to what the CPU runs). Results are identical at every level; the functions above run at
 * the best one. For tests and benchmarks. */
int sn_ggml_from_f32_at(int type, const float *x, void *y, int64_t n, int level);
void sn_fp32_to_fp16_row_at(const float *x, uint16_t *y, size_t n, int level);
void sn_fp16_to_fp32_row_at(const uint16_t *x, float *y, size_t n, int level);
void sn_fp32_to_bf16_row_at(const float *x, uint16_t *y, size_t n, int level);
void sn_bf16_to_fp16_row_at(const uint16_t *x, uint16_t *y, size_t n, int level);

/* Dequantize any supported type (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K,
 * Q5_K, Q6_K, IQ4_NL, IQ4_XS, MXFP4; the blocks new to the list are described in quants/quants.h) to f32.
 * Returns 0, or -1 for a type without a dequantizer. */
int sn_dequantize_row(int type, const void *x, float *y, int64_t k);

#endif
