/* test_int4.c - INT4G64 kernels: the scalar dot against exact integer arithmetic, and every SIMD
 * dot against the scalar one on random data (group sums are exact integers; only the f32
 * accumulation order differs, so the tolerance is a few ulps of the row's magnitude). */
#include "blob.h"
#include "cpu.h"
#include "kernels/int4.h"
#include "sn_test.h"
#include <math.h>
#include <stdlib.h>

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
    /* a shorter row (one group) exercises the loop bounds */
    CU_ASSERT(fabsf(sn_int4_dot_scalar(64, w, act) - f(64, w, act)) < 1e-3f);
    free(w); free(act);
}

static void test_avx2(void) { check_simd(sn_int4_dot_avx2, SN_CPU_AVX2); }
static void test_avx512vnni(void) { check_simd(sn_int4_dot_avx512vnni, SN_CPU_AVX512 | SN_CPU_AVX512VNNI); }

static const sn_test_case cases[] = {
    {"scalar dot = exact integer sums", test_scalar_exact},
    {"avx2 dot = scalar", test_avx2},
    {"avx512 vnni dot = scalar", test_avx512vnni},
};
SN_TEST_MAIN("int4", cases)
