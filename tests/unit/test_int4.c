/* test_int4.c - INT4G64 kernels: the scalar GEMV against exact integer arithmetic, and every SIMD
 * GEMV against the scalar one on random data (exact group sums; only the f32 accumulation order
 * differs, so the tolerance is a few ulps of the row's magnitude). */
#include "blob.h"
#include "cpu.h"
#include "kernels/int4.h"
#include "sn_test.h"
#include <math.h>
#include <stdlib.h>

static float frand(unsigned *s) { *s = *s * 1664525u + 1013904223u; return ((int)(*s >> 9) - (1 << 22)) / (float)(1 << 22); }

enum { ROWS = 37, COLS = 512 };

static void make(uint8_t **wq, float **ws, float **x, sn_int4_act *a) {
    unsigned s = 42;
    *wq = malloc(ROWS * COLS / 2);
    *ws = malloc(ROWS * (COLS / 64) * sizeof(float));
    *x = malloc(COLS * sizeof(float));
    float row[COLS];
    for (int r = 0; r < ROWS; r++) {
        for (int j = 0; j < COLS; j++) row[j] = frand(&s) * (r % 5 == 0 ? 100.0f : 1.0f);
        sn_blob_quantize_int4_row(row, COLS, *wq + r * COLS / 2, *ws + r * (COLS / 64));
    }
    for (int j = 0; j < COLS; j++) (*x)[j] = frand(&s) * 3.0f;
    (*x)[5] = 0.0f;
    a->q = malloc(COLS);
    a->scale = malloc(COLS / 64 * sizeof(float));
    a->sum = malloc(COLS / 64 * sizeof(int32_t));
    sn_int4_quantize_act(*x, COLS, a);
}

static void test_scalar_exact(void) {
    uint8_t *wq; float *ws, *x; sn_int4_act a;
    make(&wq, &ws, &x, &a);
    float y[ROWS];
    sn_int4_gemv_scalar(wq, ws, COLS, 0, ROWS, &a, y);
    for (int r = 0; r < ROWS; r++) {
        double ref = 0.0;
        for (int g = 0; g < COLS / 64; g++) {
            int64_t is = sn_int4_row_isum_ref(wq + r * COLS / 2, COLS, a.q, g);
            ref += (double)is * (double)(ws[r * (COLS / 64) + g] * a.scale[g]);
        }
        CU_ASSERT(fabs(y[r] - ref) <= 1e-4 * (fabs(ref) + 1.0));
    }
    /* activation codes: |q| <= 127 and sums consistent */
    for (int g = 0; g < COLS / 64; g++) {
        int32_t s = 0;
        for (int j = 0; j < 64; j++) s += a.q[g * 64 + j];
        CU_ASSERT_EQUAL(s, a.sum[g]);
    }
    free(wq); free(ws); free(x); free(a.q); free(a.scale); free(a.sum);
}

static void check_simd(sn_int4_gemv_fn f, uint32_t need) {
    if ((sn_cpu_features() & need) != need) { printf("(skipped: CPU lacks the ISA) "); return; }
    uint8_t *wq; float *ws, *x; sn_int4_act a;
    make(&wq, &ws, &x, &a);
    float y0[ROWS], y1[ROWS];
    sn_int4_gemv_scalar(wq, ws, COLS, 0, ROWS, &a, y0);
    f(wq, ws, COLS, 3, ROWS, &a, y1); /* odd start and count exercise the tails */
    for (int r = 3; r < ROWS; r++) CU_ASSERT(fabsf(y0[r] - y1[r]) <= 1e-5f * (fabsf(y0[r]) + 1.0f) * 8);
    free(wq); free(ws); free(x); free(a.q); free(a.scale); free(a.sum);
}

static void test_avx2(void) { check_simd(sn_int4_gemv_avx2, SN_CPU_AVX2); }
static void test_avx512vnni(void) { check_simd(sn_int4_gemv_avx512vnni, SN_CPU_AVX512 | SN_CPU_AVX512VNNI); }

static const sn_test_case cases[] = {
    {"scalar gemv = exact integer sums", test_scalar_exact},
    {"avx2 gemv = scalar", test_avx2},
    {"avx512 vnni gemv = scalar", test_avx512vnni},
};
SN_TEST_MAIN("int4", cases)
