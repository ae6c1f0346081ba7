/* test_norm.c - sn_ops_layernorm against the order ggml computes a layer norm in, written out as a
 * plain scan here: the mean's sum a double added in index order, the variance's blocks of `lanes`
 * squares reduced as ggml_vec_cvar_f32 does (16 lanes: sn_hsum16's tree; 8: the AVX2 movehl tree),
 * each block's float added to a double in order, then * scale, * w, + b, each rounded. The runtime
 * takes shortcuts (an order-free double sum when it is exact, four lanes at a time); every output
 * must keep the scan's bits, on random rows built to sit on both sides of the shortcut's bound
 * (exponent spans from 0 to 40 binades) and on zeros, -0, subnormals, Inf and NaN. */
#include "sn_test.h"

#include "kernels/recurrent.h"
#include "ops.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static float hsum8_ref(const float *x) {
    float t[4];
    for (int i = 0; i < 4; i++) t[i] = x[i] + x[i + 4];
    return (t[0] + t[2]) + (t[1] + t[3]);
}

static void layernorm_ref(float *y, const float *x, const float *w, const float *b, int64_t n, float eps, int lanes) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) sum += (double)x[i];
    const float mean = (float)sum / (float)n;
    double var = 0.0;
    int64_t i = 0;
    for (; i + lanes <= n; i += lanes) {
        float sq[16];
        for (int l = 0; l < lanes; l++) {
            y[i + l] = x[i + l] - mean;
            sq[l] = y[i + l] * y[i + l];
        }
        var += (double)(lanes == 16 ? sn_hsum16(sq) : hsum8_ref(sq));
    }
    for (; i < n; i++) {
        float d = x[i] - mean;
        y[i] = d;
        d *= d;
        var += (double)d;
    }
    const float scale = 1.0f / sqrtf((float)(var / (double)n) + eps);
    for (int64_t j = 0; j < n; j++) {
        float t = y[j] * scale;
        if (w) t = t * w[j];
        if (b) t = t + b[j];
        y[j] = t;
    }
}

static uint64_t st = 0x9E3779B97F4A7C15ull;

/* a float with a random sign and mantissa and an exponent in [e0, e0 + span] */
static float rnd(int e0, int span) {
    const uint64_t r = sn_test_xorshift(&st);
    const int e = e0 + (int)((r >> 40) % (uint64_t)(span + 1));
    return ldexpf(1.0f + (float)((r >> 8) & 0x7FFFFF) / 8388608.0f, e) * ((r & 1) ? -1.0f : 1.0f);
}

static int same_bits(const float *a, const float *b, int64_t n) {
    return memcmp(a, b, (size_t)n * sizeof(float)) == 0;
}

static void test_layernorm_bits(void) {
    enum { NMAX = 3072 };
    static float x[NMAX], w[NMAX], bb[NMAX], y0[NMAX], y1[NMAX];
    const int64_t sizes[] = {1, 7, 8, 17, 64, 100, 768, 1000, 3072};
    int wrong = 0, cases = 0;
    for (int lanes = 8; lanes <= 16; lanes += 8)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int span = 0; span <= 40; span += 2)
                for (int kind = 0; kind < 6; kind++) {
                    const int64_t n = sizes[si];
                    for (int64_t i = 0; i < n; i++) {
                        x[i] = rnd(-4, span);
                        w[i] = rnd(-1, 1);
                        bb[i] = rnd(-8, 4);
                    }
                    if (kind == 1) x[n / 2] = 0.0f, x[n - 1] = -0.0f;
                    if (kind == 2) x[n / 3] = 1e-40f; /* subnormal */
                    if (kind == 3) x[n - 1] = (span & 2) ? INFINITY : NAN;
                    if (kind == 4) for (int64_t i = 0; i < n; i++) x[i] = (i % 3) ? 0.0f : -0.0f;
                    if (kind == 5) x[0] = ldexpf(1.0f, 20 + span / 4), x[n - 1] = -x[0]; /* cancellation */
                    const float *wp = (kind & 1) ? NULL : w, *bp = (kind % 3 == 2) ? NULL : bb;
                    layernorm_ref(y0, x, wp, bp, n, 1e-5f, lanes);
                    sn_ops_layernorm(y1, x, wp, bp, n, 1e-5f, lanes);
                    cases++;
                    if (!same_bits(y0, y1, n)) {
                        if (wrong < 5) printf("  mismatch: lanes %d n %lld span %d kind %d\n", lanes, (long long)n, span, kind);
                        wrong++;
                    }
                }
    printf("  %d rows, %d differ\n", cases, wrong);
    CU_ASSERT_EQUAL(wrong, 0);
}

/* The double sum alone, where a wrong order shows in the last bits: spans past the shortcut's
 * bound (29 - ceil(log2 n) binades) make the index-order scan round. */
static void test_sum_bits(void) {
    enum { NMAX = 4096 };
    static float x[NMAX];
    const int64_t sizes[] = {8, 9, 64, 768, 4096};
    int wrong = 0, cases = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int span = 0; span <= 44; span++)
            for (int rep = 0; rep < 8; rep++) {
                const int64_t n = sizes[si];
                for (int64_t i = 0; i < n; i++) x[i] = rnd(-10, span);
                if (rep == 1) x[n / 2] = 0.0f;
                if (rep == 2) x[1] = 1e-42f;
                if (rep == 3) x[n - 1] = NAN;
                if (rep == 4) x[2] = -INFINITY;
                double ref = 0.0;
                for (int64_t i = 0; i < n; i++) ref += (double)x[i];
                const double got = sn_ops_sum_f64(x, n);
                cases++;
                if (memcmp(&ref, &got, sizeof ref) != 0 && !(isnan(ref) && isnan(got))) wrong++;
            }
    printf("  %d sums, %d differ\n", cases, wrong);
    CU_ASSERT_EQUAL(wrong, 0);
}

static const sn_test_case cases[] = {
    {"double sum: the index-order scan's bits, exact shortcut or not", test_sum_bits},
    {"layer norm: the scan's bits on both sides of the exact-sum shortcut", test_layernorm_bits},
};
SN_TEST_MAIN("norm", cases)
