/* test_int4.c - INT4G64 kernels: the scalar dot against exact integer arithmetic, and every SIMD
 * dot against the scalar one on random data (group sums are exact integers; only the f32
 * accumulation order differs, so the tolerance is a few ulps of the row's magnitude). */
#include "blob.h"
#include "cpu.h"
#include "kernels/int4.h"
#include "sn_test.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static float frand(unsigned *s) { *s = *s * 1664525u + 1013904223u; return ((int)(*s >> 9) - (1 << 22)) / (float)(1 << 22); }

enum { ROWS = 37, COLS = 512 };

static void make(uint8_t **w, void **act) {
    unsigned s = 42;
    uint64_t rb = sn_int4_w_row_bytes(COLS);
    *w = malloc(ROWS * rb);
    float row[COLS], x[COLS];
    for (int r = 0; r < ROWS; r++) {
        for (int j = 0; j < COLS; j++) row[j] = frand(&s) * (r % 5 == 0 ? 100.0f : 1.0f);
        sn_blob_quantize_int4_row(row, COLS, *w + r * rb);
    }
    for (int j = 0; j < COLS; j++) x[j] = frand(&s) * 3.0f;
    x[5] = 0.0f;
    *act = malloc(sn_int4_act_bytes(COLS));
    sn_int4_quantize_act(x, *act, COLS);
}

static void test_scalar_exact(void) {
    uint8_t *w; void *act;
    make(&w, &act);
    CU_ASSERT_EQUAL(sn_int4_w_row_bytes(COLS), sn_blob_int4_row_bytes(COLS));
    const int8_t *aq = act;
    const float *as = (const float *)(const void *)((uint8_t *)act + COLS);
    const int32_t *asum = (const int32_t *)(const void *)((uint8_t *)act + COLS + COLS / 64 * 4);
    uint64_t rb = sn_int4_w_row_bytes(COLS);
    for (int r = 0; r < ROWS; r++) {
        const uint8_t *wr = w + r * rb;
        const float *ws = (const float *)(const void *)(wr + COLS / 2);
        double ref = 0.0;
        for (int g = 0; g < COLS / 64; g++)
            ref += (double)sn_int4_group_isum_ref(wr, aq, g) * (double)(ws[g] * as[g]);
        float y = sn_int4_dot_scalar(COLS, wr, act);
        CU_ASSERT(fabs(y - ref) <= 1e-4 * (fabs(ref) + 1.0));
    }
    for (int g = 0; g < COLS / 64; g++) {
        int32_t s = 0;
        for (int j = 0; j < 64; j++) {
            s += aq[g * 64 + j];
            CU_ASSERT(aq[g * 64 + j] >= -127 && aq[g * 64 + j] <= 127);
        }
        CU_ASSERT_EQUAL(s, asum[g]);
    }
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
    /* a shorter row (one group) exercises the loop bounds; its activation row is quantized for
     * 64 inputs (reading the 512-input row as a 64-input one would take codes for sums) */
    void *act64 = malloc(sn_int4_act_bytes(64));
    float x64[64];
    for (int j = 0; j < 64; j++) x64[j] = (float)(j % 13) - 6.0f;
    sn_int4_quantize_act(x64, act64, 64);
    const float z0 = sn_int4_dot_scalar(64, w, act64), z1 = f(64, w, act64);
    CU_ASSERT(fabsf(z0 - z1) <= 1e-5f * (fabsf(z0) + 1.0f));
    if (!(fabsf(z0 - z1) <= 1e-5f * (fabsf(z0) + 1.0f))) printf("one group: scalar %g simd %g ", z0, z1);
    free(act64);
    free(w); free(act);
}

static void test_avx2(void) { check_simd(sn_int4_dot_avx2, SN_CPU_AVX2); }
static void test_avx512vnni(void) { check_simd(sn_int4_dot_avx512vnni, SN_CPU_AVX512 | SN_CPU_AVX512VNNI); }

/* Row lengths that hit every loop shape of the SIMD kernels: one group, an odd number of groups
 * (alone and after a full block of 16), exactly 16, and several blocks with a partial tail. */
static void test_lengths(void) {
    static const int64_t ns[] = {64, 128, 192, 1024, 1088, 2816, 3008};
    const uint32_t f = sn_cpu_features();
    uint32_t s = 99;
    for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
        const int64_t n = ns[k];
        const uint64_t rb = sn_int4_w_row_bytes(n);
        float *x = malloc((size_t)n * sizeof(float));
        uint8_t *w = malloc(rb);
        void *act = malloc(sn_int4_act_bytes(n));
        for (int64_t j = 0; j < n; j++) x[j] = frand(&s) * (j % 97 == 0 ? 20.0f : 1.0f);
        sn_blob_quantize_int4_row(x, (uint64_t)n, w);
        for (int64_t j = 0; j < n; j++) x[j] = frand(&s) * 2.0f;
        sn_int4_quantize_act(x, act, n);
        const float y0 = sn_int4_dot_scalar(n, w, act);
        double isum = 0; /* the exact integer group sums, scaled in double */
        const float *ws = (const float *)(const void *)(w + n / 2);
        const float *as = (const float *)(const void *)((uint8_t *)act + n);
        for (int64_t g = 0; g < n / 64; g++) isum += (double)sn_int4_group_isum_ref(w, act, g) * ws[g] * as[g];
        CU_ASSERT(fabs(y0 - isum) <= 1e-4 * (fabs(isum) + 1.0));
        if (f & SN_CPU_AVX2) CU_ASSERT(fabsf(sn_int4_dot_avx2(n, w, act) - y0) <= 1e-4f * (fabsf(y0) + 1.0f));
        if ((f & SN_CPU_AVX512) && (f & SN_CPU_AVX512VNNI))
            CU_ASSERT(fabsf(sn_int4_dot_avx512vnni(n, w, act) - y0) <= 1e-4f * (fabsf(y0) + 1.0f));
        free(x); free(w); free(act);
    }
}

/* The AVX-512 activation quantizer writes the same bytes as the scalar one, including ties at .5,
 * values that round past 127, zeros and all-zero groups. */
static void test_quant_act(void) {
    if (!(sn_cpu_features() & SN_CPU_AVX512)) { printf("(skipped: CPU lacks the ISA) "); return; }
    enum { N = 64 * 40 };
    float *x = malloc(N * sizeof(float));
    uint8_t *a = malloc(sn_int4_act_bytes(N)), *b = malloc(sn_int4_act_bytes(N));
    unsigned s = 7;
    for (int j = 0; j < N; j++) x[j] = frand(&s) * (j % 5 == 0 ? 100.0f : 1.0f);
    for (int j = 64; j < 128; j++) x[j] = 0.0f;                        /* an all-zero group */
    for (int j = 128; j < 192; j++) x[j] = (float)(j - 160) + 0.5f;   /* amax 127 -> id 1: exact ties */
    x[128] = 127.0f;
    for (int j = 192; j < 256; j++) x[j] = j % 2 ? -1e-30f : 3e38f / 64; /* huge and tiny */
    sn_int4_quantize_act_scalar(x, a, N);
    sn_int4_quantize_act_avx512(x, b, N);
    CU_ASSERT(memcmp(a, b, sn_int4_act_bytes(N)) == 0);
    free(x); free(a); free(b);
}

static const sn_test_case cases[] = {
    {"avx512 activation quantizer = scalar, byte for byte", test_quant_act},
    {"every SIMD dot = scalar = exact sums for 1..47 groups", test_lengths},
    {"scalar dot = exact integer sums", test_scalar_exact},
    {"avx2 dot = scalar", test_avx2},
    {"avx512 vnni dot = scalar", test_avx512vnni},
};
SN_TEST_MAIN("int4", cases)
