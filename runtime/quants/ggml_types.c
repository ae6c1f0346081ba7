/* ggml_types.c - ggml's tensor type table, and the by-type entry points of its codecs.
 *
 * Everything here must produce the same bits as ggml's reference CPU code (ggml-impl.h conversions,
 * ggml-quants.c quantize_row_*_ref), because the converter's output is compared byte for byte with
 * llama.cpp's. That is why the float expressions below keep ggml's evaluation order, why
 * float->int8 casts are emulated the way x86 performs them, and why nearest_int is the
 * "add 1.5*2^23" trick rather than lrintf. The SIMD versions (row converters; Q8_0/Q4_0 blocks;
 * Q4_K/Q6_K sub-blocks run side by side in lanes) repeat the scalar operations exactly and are
 * checked against the scalar twins and against llama.cpp's libggml in tests/unit/test_ggml_types.c.
 *
 * This file: the type table, sn_ggml_from_f32 (to any type it writes). The conversions
 * and dequantizers are ggml_codecs.c, the quantizers ggml_quant.c (Q8_0, Q4_0, Q8_K) and
 * ggml_quant_k.c (Q4_K, Q6_K); ggml_types_internal.h holds what they share. */
#include "ggml_types_internal.h"

#include "quants.h"

#include <strings.h>

/* ------------------------------------------------------------------------------------------------
 * Type table. Retired ids (4, 5, 31-33, 36-38) have no entry: name NULL, blck_size 0. */

/* F32 / F16 / BF16 rows as the table's codecs */
static void f32_to_f32(const void *x, float *y, int64_t k) { memcpy(y, x, (size_t)k * sizeof(float)); }
static void f32_from_f32(const float *x, void *y, int64_t k) { memcpy(y, x, (size_t)k * sizeof(float)); }
static void f16_to_f32(const void *x, float *y, int64_t k) { sn_fp16_to_fp32_row(x, y, (size_t)k); }
static void f16_from_f32(const float *x, void *y, int64_t k) { sn_fp32_to_fp16_row(x, y, (size_t)k); }
static void f16_from_f32_at(const float *x, void *y, int64_t k, int l) { sn_fp32_to_fp16_row_at(x, y, (size_t)k, l); }
static void bf16_to_f32(const void *x, float *y, int64_t k) { sn_bf16_to_fp32_row(x, y, (size_t)k); }
static void bf16_from_f32(const float *x, void *y, int64_t k) { sn_fp32_to_bf16_row(x, y, (size_t)k); }
static void bf16_from_f32_at(const float *x, void *y, int64_t k, int l) { sn_fp32_to_bf16_row_at(x, y, (size_t)k, l); }

static const sn_ggml_traits k_types[SN_KTYPE_COUNT] = {
    [0] = {"F32", 1, 4, f32_to_f32, f32_from_f32},
    [1] = {"F16", 1, 2, f16_to_f32, f16_from_f32, f16_from_f32_at},
    [2] = {"Q4_0", 32, 18, sn_dequantize_row_q4_0, sn_quantize_row_q4_0, sn_quantize_row_q4_0_at},
    [3] = {"Q4_1", 32, 20, sn_dequantize_row_q4_1, sn_quantize_row_q4_1},
    [6] = {"Q5_0", 32, 22, sn_dequantize_row_q5_0, sn_quantize_row_q5_0},
    [7] = {"Q5_1", 32, 24, sn_dequantize_row_q5_1, sn_quantize_row_q5_1},
    [8] = {"Q8_0", 32, 34, sn_dequantize_row_q8_0, sn_quantize_row_q8_0, sn_quantize_row_q8_0_at},
    [9] = {"Q8_1", 32, 36, NULL, NULL},
    [10] = {"Q2_K", 256, 84, sn_dequantize_row_q2_K, sn_quantize_row_q2_K, sn_quantize_row_q2_K_at},
    [11] = {"Q3_K", 256, 110, sn_dequantize_row_q3_K, sn_quantize_row_q3_K, sn_quantize_row_q3_K_at},
    [12] = {"Q4_K", 256, 144, sn_dequantize_row_q4_K, sn_quantize_row_q4_K, sn_quantize_row_q4_K_at},
    [13] = {"Q5_K", 256, 176, sn_dequantize_row_q5_K, sn_quantize_row_q5_K, sn_quantize_row_q5_K_at},
    [14] = {"Q6_K", 256, 210, sn_dequantize_row_q6_K, sn_quantize_row_q6_K, sn_quantize_row_q6_K_at},
    [15] = {"Q8_K", 256, 292, NULL, sn_quantize_row_q8_K},
    [20] = {"IQ4_NL", 32, 18, sn_dequantize_row_iq4_nl, sn_quantize_row_iq4_nl, sn_quantize_row_iq4_nl_at},
    [23] = {"IQ4_XS", 256, 136, sn_dequantize_row_iq4_xs, sn_quantize_row_iq4_xs, sn_quantize_row_iq4_xs_at},
    [30] = {"BF16", 1, 2, bf16_to_f32, bf16_from_f32, bf16_from_f32_at},
    [39] = {"MXFP4", 32, 17, sn_dequantize_row_mxfp4, NULL}, /* read only: converters copy its blocks */
    [SN_KTYPE_INT4G32] = {"INT4G32", 64, 36, sn_dequantize_row_int4g32, NULL}, /* sunny-convert --blob writes it */
    /* types sunny neither reads nor writes: name and sizes only */
    [16] = {"IQ2_XXS", 256, 66, NULL, NULL},   [17] = {"IQ2_XS", 256, 74, NULL, NULL},
    [18] = {"IQ3_XXS", 256, 98, NULL, NULL},   [19] = {"IQ1_S", 256, 50, NULL, NULL},
    [21] = {"IQ3_S", 256, 110, NULL, NULL},    [22] = {"IQ2_S", 256, 82, NULL, NULL},
    [24] = {"I8", 1, 1, NULL, NULL},           [25] = {"I16", 1, 2, NULL, NULL},
    [26] = {"I32", 1, 4, NULL, NULL},          [27] = {"I64", 1, 8, NULL, NULL},
    [28] = {"F64", 1, 8, NULL, NULL},          [29] = {"IQ1_M", 256, 56, NULL, NULL},
    [34] = {"TQ1_0", 256, 54, NULL, NULL},     [35] = {"TQ2_0", 256, 66, NULL, NULL},
    [40] = {"NVFP4", 64, 36, NULL, NULL},
    [41] = {"Q1_0", 128, 18, NULL, NULL},      [42] = {"Q2_0", 64, 18, NULL, NULL},
};

_Static_assert(sizeof(sn_block_q8_0) == 34, "q8_0 block");
_Static_assert(sizeof(sn_block_q4_0) == 18, "q4_0 block");
_Static_assert(sizeof(sn_block_q4_K) == 144, "q4_K block");
_Static_assert(sizeof(sn_block_q6_K) == 210, "q6_K block");
_Static_assert(sizeof(sn_block_q8_K) == 292, "q8_K block");

static const sn_ggml_traits *info(int type) {
    if (type < 0 || type >= SN_KTYPE_COUNT || k_types[type].name == NULL) return NULL;
    return &k_types[type];
}

const sn_ggml_traits *sn_ggml_traits_of(int type) { return info(type); }

const char *sn_ggml_type_name(int type) {
    const sn_ggml_traits *t = info(type);
    return t ? t->name : NULL;
}

int sn_ggml_type_from_name(const char *name) {
    if (!name) return -1;
    for (int i = 0; i < SN_KTYPE_COUNT; i++)
        if (k_types[i].name && strcasecmp(k_types[i].name, name) == 0) return i;
    return -1;
}

uint32_t sn_ggml_blck_size(int type) {
    const sn_ggml_traits *t = info(type);
    return t ? t->blck : 0;
}

size_t sn_ggml_type_size(int type) {
    const sn_ggml_traits *t = info(type);
    return t ? t->size : 0;
}

uint64_t sn_ggml_row_size(int type, uint64_t ne0) {
    const sn_ggml_traits *t = info(type);
    if (!t || ne0 % t->blck != 0) return 0;
    uint64_t blocks = ne0 / t->blck;
    if (blocks > UINT64_MAX / t->size) return 0;
    return blocks * t->size;
}


int sn_ggml_from_f32(int type, const float *x, void *y, int64_t n) {
    const sn_ggml_traits *t = info(type);
    if (!t || !t->from_f32) return -1;
    t->from_f32(x, y, n);
    return 0;
}

int sn_ggml_from_f32_at(int type, const float *x, void *y, int64_t n, int level) {
    const sn_ggml_traits *t = info(type);
    if (!t || !t->from_f32) return -1;
    if (t->from_f32_at) t->from_f32_at(x, y, n, level);
    else t->from_f32(x, y, n); /* no SIMD variants: the same at every level */
    return 0;
}
