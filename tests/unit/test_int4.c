/* test_int4.c - INT4G32 kernels (blob version 3): the scalar dot against exact integer arithmetic,
 * every SIMD dot against the scalar one on random data (group sums are exact integers; only the f32
 * accumulation order differs, so the tolerance is a few ulps of the row's magnitude), and every
 * prompt tile (4 rows × 4 tokens) bit-identical to its own ISA's dot. */
#include "blob.h"
#include "cpu.h"
#include "ggml_types.h"
#include "kernels/int4.h"
#include "kernels/kernels.h"
#include "sn_test.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The activation quantizer of this process's kernel table. */
static void quant_act(const float *x, void *act, int64_t n) { sn_test_kernels(-1)->quant[SN_KTYPE_INT4G32](x, act, n); }

static float frand(unsigned *s) { *s = *s * 1664525u + 1013904223u; return ((int)(*s >> 9) - (1 << 22)) / (float)(1 << 22); }

enum { ROWS = 37, COLS = 512 };

static void make(uint8_t **w, void **act) {
    unsigned s = 42;
    uint64_t rb = sn_int4_w_row_bytes(COLS);
    *w = malloc(ROWS * rb);
    float row[COLS], x[COLS];
    for (int r = 0; r < ROWS; r++) {
        for (int j = 0; j < COLS; j++) row[j] = frand(&s) * (r % 5 == 0 ? 100.0f : 1.0f) * (j % 96 < 32 ? 8.0f : 1.0f);
        sn_blob_quantize_int4_row(row, COLS, *w + r * rb);
    }
    for (int j = 0; j < COLS; j++) x[j] = frand(&s) * 3.0f * (j % 160 < 32 ? 0.01f : 1.0f);
    x[5] = 0.0f;
    *act = malloc(sn_int4_act_bytes(COLS));
    quant_act(x, *act, COLS);
}

/* Σ_g exact isum(g) · fp16(w_scale) · a_scale in double: the value every kernel approximates. */
static double exact_dot(int64_t n, const uint8_t *wr, const void *act) {
    const uint16_t *ws = (const uint16_t *)(const void *)(wr + n / 2);
    const float *as = (const float *)(const void *)((const uint8_t *)act + n);
    double ref = 0.0;
    for (int64_t g = 0; g < n / 32; g++)
        ref += (double)sn_int4_group_isum_ref(wr, act, g) * (double)(sn_fp16_to_fp32(ws[g]) * as[g]);
    return ref;
}

static void test_scalar_exact(void) {
    uint8_t *w; void *act;
    make(&w, &act);
    CU_ASSERT_EQUAL(sn_int4_w_row_bytes(COLS), sn_blob_int4_row_bytes(COLS));
    CU_ASSERT_EQUAL(sn_int4_w_row_bytes(COLS), COLS / 2 + COLS / 32 * 2); /* 4.5 bits per weight */
    const int8_t *aq = act;
    const int32_t *asum = (const int32_t *)(const void *)((uint8_t *)act + COLS + COLS / 32 * 4);
    uint64_t rb = sn_int4_w_row_bytes(COLS);
    for (int r = 0; r < ROWS; r++) {
        const double ref = exact_dot(COLS, w + r * rb, act);
        float y = sn_int4_dot_scalar(COLS, w + r * rb, act);
        CU_ASSERT(fabs(y - ref) <= 1e-4 * (fabs(ref) + 1.0));
    }
    for (int g = 0; g < COLS / 32; g++) {
        int32_t s = 0;
        for (int j = 0; j < 32; j++) {
            s += aq[g * 32 + j];
            CU_ASSERT(aq[g * 32 + j] >= -127 && aq[g * 32 + j] <= 127);
        }
        CU_ASSERT_EQUAL(s, asum[g]);
    }
    /* the reference isum reads group 2c from the low and 2c + 1 from the high nibbles of chunk c */
    uint8_t wrow[36] = {0};
    int8_t a64[64] = {0};
    wrow[0] = 0x9a; /* element 0 (group 0): 10 - 8 = 2; element 32 (group 1): 9 - 8 = 1 */
    for (int j = 1; j < 32; j++) wrow[j] = 0x88;
    a64[0] = 5; a64[32] = 7;
    CU_ASSERT_EQUAL(sn_int4_group_isum_ref(wrow, a64, 0), 10);
    CU_ASSERT_EQUAL(sn_int4_group_isum_ref(wrow, a64, 1), 7);
    free(w); free(act);
}

static void check_simd(sn_int4_dot_fn f, uint32_t need) {
    if ((sn_cpu_features() & need) != need) { printf("(skipped: CPU lacks the ISA) "); return; }
    uint8_t *w; void *act;
    make(&w, &act);
    uint64_t rb = sn_int4_w_row_bytes(COLS);
    for (int r = 0; r < ROWS; r++) {
        float y0 = sn_int4_dot_scalar(COLS, w + r * rb, act), y1 = f(COLS, w + r * rb, act);
        CU_ASSERT(fabsf(y0 - y1) <= 1e-5f * (fabsf(y0) + 1.0f) * 8);
    }
    /* a one-chunk row (two groups) exercises the loop bounds; its activation row is quantized for
     * 64 inputs */
    void *act64 = malloc(sn_int4_act_bytes(64));
    float x64[64];
    for (int j = 0; j < 64; j++) x64[j] = (float)(j % 13) - 6.0f;
    quant_act(x64, act64, 64);
    const float z0 = sn_int4_dot_scalar(64, w, act64), z1 = f(64, w, act64);
    CU_ASSERT(fabsf(z0 - z1) <= 1e-5f * (fabsf(z0) + 1.0f));
    if (!(fabsf(z0 - z1) <= 1e-5f * (fabsf(z0) + 1.0f))) printf("one chunk: scalar %g simd %g ", z0, z1);
    free(act64);
    free(w); free(act);
}

static void test_avx2(void) { check_simd(sn_int4_dot_avx2, SN_CPU_AVX2); }
static void test_avx512vnni(void) { check_simd(sn_int4_dot_avx512vnni, SN_CPU_AVX512 | SN_CPU_AVX512VNNI); }

/* Row lengths that hit every loop shape of the SIMD kernels: AVX2 blocks of 8 groups with tails of
 * 2, 4, 6 groups; AVX-512 blocks of 16 with 2-chunk steps and an odd last chunk. */
static const int64_t lengths[] = {64, 128, 192, 256, 320, 448, 512, 576, 1024, 1088, 2816, 3008};

static void test_lengths(void) {
    const uint32_t f = sn_cpu_features();
    uint32_t s = 99;
    for (size_t k = 0; k < sizeof(lengths) / sizeof(lengths[0]); k++) {
        const int64_t n = lengths[k];
        const uint64_t rb = sn_int4_w_row_bytes(n);
        float *x = malloc((size_t)n * sizeof(float));
        uint8_t *w = malloc(rb);
        void *act = malloc(sn_int4_act_bytes(n));
        for (int64_t j = 0; j < n; j++) x[j] = frand(&s) * (j % 97 == 0 ? 20.0f : 1.0f);
        sn_blob_quantize_int4_row(x, (uint64_t)n, w);
        for (int64_t j = 0; j < n; j++) x[j] = frand(&s) * 2.0f;
        quant_act(x, act, n);
        const float y0 = sn_int4_dot_scalar(n, w, act);
        const double isum = exact_dot(n, w, act);
        CU_ASSERT(fabs(y0 - isum) <= 1e-4 * (fabs(isum) + 1.0));
        if (f & SN_CPU_AVX2) {
            const float y1 = sn_int4_dot_avx2(n, w, act);
            CU_ASSERT(fabsf(y1 - y0) <= 1e-4f * (fabsf(y0) + 1.0f));
            if (!(fabsf(y1 - y0) <= 1e-4f * (fabsf(y0) + 1.0f))) printf("n=%lld: scalar %g avx2 %g ", (long long)n, y0, y1);
        }
        if ((f & SN_CPU_AVX512) && (f & SN_CPU_AVX512VNNI))
            CU_ASSERT(fabsf(sn_int4_dot_avx512vnni(n, w, act) - y0) <= 1e-4f * (fabsf(y0) + 1.0f));
        free(x); free(w); free(act);
    }
}

typedef void (*gemm_fn)(int64_t, const void *, uint64_t, const void *, uint64_t, float *, int64_t);

/* A 4x4 prompt tile equals its ISA's dot bit for bit, for every row length (outputs in a wider
 * matrix: ldy 7, untouched cells stay as they were). */
static void check_gemm(gemm_fn gm, sn_int4_dot_fn dot, uint32_t need) {
    if ((sn_cpu_features() & need) != need) { printf("(skipped: CPU lacks the ISA) "); return; }
    uint32_t s = 5;
    for (size_t k = 0; k < sizeof(lengths) / sizeof(lengths[0]); k++) {
        const int64_t n = lengths[k];
        const uint64_t rb = sn_int4_w_row_bytes(n) + 64, xr = sn_int4_act_bytes(n) + 32; /* padded strides */
        uint8_t *w = calloc(4, rb), *x = calloc(4, xr);
        float *v = malloc((size_t)n * sizeof(float));
        for (int r = 0; r < 4; r++) {
            for (int64_t j = 0; j < n; j++) v[j] = frand(&s) * (float)(r + 1);
            sn_blob_quantize_int4_row(v, (uint64_t)n, w + r * rb);
            for (int64_t j = 0; j < n; j++) v[j] = frand(&s) * (j % 7 == 0 ? 10.0f : 1.0f);
            quant_act(v, x + r * xr, n);
        }
        float y[4 * 7];
        for (int i = 0; i < 28; i++) y[i] = -1234.5f;
        gm(n, w, rb, x, xr, y, 7);
        int bad = 0;
        for (int t = 0; t < 4; t++) {
            for (int r = 0; r < 4; r++) {
                const float want = dot(n, w + r * rb, x + t * xr);
                if (memcmp(&want, &y[t * 7 + r], 4) != 0) bad++;
            }
            for (int r = 4; r < 7; r++) bad += y[t * 7 + r] != -1234.5f;
        }
        if (bad) printf("n=%lld: %d outputs differ ", (long long)n, bad);
        CU_ASSERT_EQUAL(bad, 0);
        free(w); free(x); free(v);
    }
}

static void test_gemm_scalar(void) { check_gemm(sn_int4_gemm4x4_scalar, sn_int4_dot_scalar, 0); }
static void test_gemm_avx2(void) { check_gemm(sn_int4_gemm4x4_avx2, sn_int4_dot_avx2, SN_CPU_AVX2); }
static void test_gemm_avx512vnni(void) {
    check_gemm(sn_int4_gemm4x4_avx512vnni, sn_int4_dot_avx512vnni, SN_CPU_AVX512 | SN_CPU_AVX512VNNI);
}

/* The AVX-512 activation quantizer writes the same bytes as the scalar one, including ties at .5,
 * values that round past 127, zeros and all-zero groups. */
static void check_quant_act(void (*fn)(const float *, void *, int64_t), uint32_t need) {
    if (!(sn_cpu_features() & need)) { printf("(skipped: CPU lacks the ISA) "); return; }
    enum { N = 64 * 40 };
    float *x = malloc(N * sizeof(float));
    uint8_t *a = malloc(sn_int4_act_bytes(N)), *b = malloc(sn_int4_act_bytes(N));
    unsigned s = 7;
    for (int j = 0; j < N; j++) x[j] = frand(&s) * (j % 5 == 0 ? 100.0f : 1.0f);
    for (int j = 64; j < 96; j++) x[j] = 0.0f;                         /* an all-zero group */
    for (int j = 128; j < 160; j++) x[j] = (float)(j - 144) + 0.5f;   /* amax 127 -> id 1: exact ties */
    x[128] = 127.0f;
    for (int j = 192; j < 256; j++) x[j] = j % 2 ? -1e-30f : 3e38f / 64; /* huge and tiny */
    sn_int4_quantize_act_scalar(x, a, N);
    fn(x, b, N);
    CU_ASSERT(memcmp(a, b, sn_int4_act_bytes(N)) == 0);
    free(x); free(a); free(b);
}
static void test_quant_act(void) { check_quant_act(sn_int4_quantize_act_avx512, SN_CPU_AVX512); }
static void test_quant_act_avx2(void) { check_quant_act(sn_int4_quantize_act_avx2, SN_CPU_AVX2); }

/* 8-row groups: packing the row layout and multiplying gives the row layout's dot (same exact
 * integer sums; fused vs unfused accumulation), and the SIMD versions equal the scalar one bit for
 * bit, for partial last groups (nrows % 8) and token counts around the tile of four. */
static void test_x8(void) {
    static const int64_t ns[] = {64, 128, 192, 1024, 1088};
    /* AVX-512: lone groups, pairs, a partial pair; one token with SN_MV_QUARTERS=1 (CMakeLists.txt):
     * quads alone (64), with a partial last quad group (93), then two groups (77) or one (129) */
    static const int64_t rowsv[] = {1, 7, 8, 13, 16, 24, 37, 64, 77, 93, 129};
    const uint32_t f = sn_cpu_features();
    uint32_t s = 11;
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
        for (size_t m = 0; m < sizeof rowsv / sizeof rowsv[0]; m++) {
            const int64_t n = ns[k], rows = rowsv[m], ng = (rows + 7) / 8, T = 6;
            const uint64_t rb = sn_int4_w_row_bytes(n), xr = sn_int4_act_bytes(n);
            CU_ASSERT_EQUAL(sn_int4x8_group_bytes(n), 8 * rb);
            uint8_t *w = calloc((size_t)ng * 8, rb), *w8 = malloc((size_t)ng * 8 * rb), *x = malloc(T * xr);
            float *v = malloc((size_t)n * sizeof(float));
            for (int64_t r = 0; r < rows; r++) {
                for (int64_t j = 0; j < n; j++) v[j] = frand(&s) * (float)(1 + r % 3) * (j % 50 == 0 ? 9.0f : 1.0f);
                sn_blob_quantize_int4_row(v, (uint64_t)n, w + r * rb);
            }
            for (int64_t g = 0; g < ng; g++)
                sn_int4x8_pack(w + g * 8 * rb, rows - 8 * g < 8 ? (int)(rows - 8 * g) : 8, n, w8 + g * 8 * rb);
            for (int64_t t = 0; t < T; t++) {
                for (int64_t j = 0; j < n; j++) v[j] = frand(&s) * 2.0f;
                quant_act(v, x + t * xr, n);
            }
            const int64_t ldy = rows + 3;
            float *y0 = malloc(T * ldy * sizeof(float)), *y1 = malloc(T * ldy * sizeof(float));
            for (int64_t T1 = 1; T1 <= T; T1++) {
                for (int64_t i = 0; i < T * ldy; i++) y0[i] = y1[i] = -7.0f;
                sn_int4x8_mm_scalar(n, w8, rows, x, xr, T1, y0, ldy);
                int bad = 0;
                for (int64_t t = 0; t < T; t++)
                    for (int64_t r = 0; r < ldy; r++) {
                        const float got = y0[t * ldy + r];
                        if (t >= T1 || r >= rows) { bad += got != -7.0f; continue; }
                        const float want = sn_int4_dot_scalar(n, w + r * rb, x + t * xr);
                        bad += !(fabsf(got - want) <= 1e-5f * (fabsf(want) + 1.0f) * 4);
                    }
                if (f & SN_CPU_AVX2) {
                    sn_int4x8_mm_avx2(n, w8, rows, x, xr, T1, y1, ldy);
                    bad += memcmp(y0, y1, T * ldy * sizeof(float)) != 0;
                }
                if ((f & SN_CPU_AVX512) && (f & SN_CPU_AVX512VNNI)) {
                    for (int64_t i = 0; i < T * ldy; i++) y1[i] = -7.0f;
                    sn_int4x8_mm_avx512vnni(n, w8, rows, x, xr, T1, y1, ldy);
                    bad += memcmp(y0, y1, T * ldy * sizeof(float)) != 0;
                    for (int64_t i = 0; i < T * ldy; i++) y1[i] = -7.0f;
                    sn_int4x8_mm_avx512vnni_far(n, w8, rows, x, xr, T1, y1, ldy); /* the four-stream decode */
                    bad += memcmp(y0, y1, T * ldy * sizeof(float)) != 0;
                }
                if (bad) printf("n=%lld rows=%lld T=%lld: %d bad ", (long long)n, (long long)rows, (long long)T1, bad);
                CU_ASSERT_EQUAL(bad, 0);
            }
            free(w); free(w8); free(x); free(v); free(y0); free(y1);
        }
}

static const sn_test_case cases[] = {
    {"avx512 activation quantizer = scalar, byte for byte", test_quant_act},
    {"avx2 activation quantizer = scalar, byte for byte", test_quant_act_avx2},
    {"every SIMD dot = scalar = exact sums for 2..94 groups", test_lengths},
    {"scalar dot = exact integer sums", test_scalar_exact},
    {"avx2 dot = scalar", test_avx2},
    {"avx512 vnni dot = scalar", test_avx512vnni},
    {"scalar 4x4 prompt tile = scalar dot, bit for bit", test_gemm_scalar},
    {"avx2 4x4 prompt tile = avx2 dot, bit for bit", test_gemm_avx2},
    {"avx512 vnni 4x4 prompt tile = its dot, bit for bit", test_gemm_avx512vnni},
    {"8-row groups: pack + mm = row dot; avx2 / avx512 = scalar bit for bit", test_x8},
};
SN_TEST_MAIN("int4", cases)
