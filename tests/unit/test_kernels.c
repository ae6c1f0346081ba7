/* test_kernels.c - every SIMD kernel against its scalar twin, and the scalar kernels against a
 * plain double-precision reference.
 *
 * The SIMD tables are built to sum in the same order as scalar.c (which follows ggml's AVX-512
 * order), so they must agree bit for bit; any difference means a SIMD kernel computes something
 * else. The scalar kernels themselves are checked against dequantize-then-dot in double, so a
 * wrong block layout cannot hide behind "both agree". Tables the CPU cannot run are skipped. */
#include "sn_test.h"

#include "cpu.h"
#include "ggml_types.h"
#include "kernels/kernels.h"
#include "quants.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static float frand(void) { /* roughly N(0,1)-ish via sum of uniforms */
    float s = 0;
    for (int i = 0; i < 4; i++) {
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        s += (float)(rng_state >> 40) / (float)(1 << 24) - 0.5f;
    }
    return s * 1.7f;
}

static const int WTYPES[] = {SN_GGML_F32,  SN_GGML_F16,  SN_GGML_BF16, SN_GGML_Q8_0, SN_GGML_Q4_0,
                             SN_GGML_Q4_1, SN_GGML_Q5_0, SN_GGML_Q5_1, SN_GGML_Q4_K, SN_GGML_Q6_K};
enum { NW = sizeof(WTYPES) / sizeof(WTYPES[0]) };

/* Dequantize an activation row (activation types only). */
static void act_to_f32(int at, const void *a, float *y, int64_t n) {
    if (at == SN_GGML_Q8_K) {
        const sn_block_q8_K *b = a;
        for (int64_t i = 0; i < n; i++) y[i] = b[i / 256].d * b[i / 256].qs[i % 256];
    } else if (at == SN_GGML_Q8_1) { /* d * q (s is the block's sum, not a value) */
        const sn_block_q8_1 *b = a;
        for (int64_t i = 0; i < n; i++) y[i] = sn_fp16_to_fp32(b[i / 32].d) * b[i / 32].qs[i % 32];
    } else {
        CU_ASSERT_FATAL(sn_dequantize_row(at, a, y, n) == 0);
    }
}

static void check_table(const sn_kernels *k) {
    const sn_kernels *s = sn_test_kernels(0);
    const int64_t sizes[] = {256, 512, 768, 1024 + 256, 4096};
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        const int64_t n = sizes[si];
        float *x = malloc((size_t)n * 4), *wf = malloc((size_t)n * 4);
        void *w = malloc((size_t)n * 4 + 1024), *a1 = malloc((size_t)n * 4 + 1024), *a2 = malloc((size_t)n * 4 + 1024);
        for (int rep = 0; rep < 3; rep++) {
            for (int64_t i = 0; i < n; i++) { x[i] = frand() * (rep == 2 ? 50.f : 1.f); wf[i] = frand() * 0.1f; }
            if (rep == 1) for (int64_t i = 0; i < 32; i++) x[i] = 0.0f; /* an all-zero block */
            for (int ti = 0; ti < NW; ti++) {
                const int t = WTYPES[ti], at = sn_kernel_act_type(t);
                sn_ggml_from_f32(t, wf, w, n);
                const uint64_t ab = sn_kernel_act_row_size(t, n);
                s->quant[at](x, a1, n);
                k->quant[at](x, a2, n);
                CU_ASSERT_EQUAL(memcmp(a1, a2, ab), 0);
                const float r1 = s->type[t].dot(n, w, a1), r2 = k->type[t].dot(n, w, a1);
                const float m1 = s->type[t].dot_mm(n, w, a1), m2 = k->type[t].dot_mm(n, w, a1);
                if (r1 != r2 || m1 != m2)
                    printf("\n  %s %s n=%lld: dot %.9g vs %.9g, dot_mm %.9g vs %.9g\n", k->name,
                           sn_ggml_type_name(t), (long long)n, r1, r2, m1, m2);
                CU_ASSERT_EQUAL(r1, r2);
                CU_ASSERT_EQUAL(m1, m2);
            }
        }
        free(x); free(wf); free(w); free(a1); free(a2);
    }
    /* register-tiled 4x4 matmuls: every output equals the scalar dot_mm */
    for (int ti = 0; ti < NW; ti++) {
        const int t = WTYPES[ti], at = sn_kernel_act_type(t);
        if (!k->type[t].gemm4x4) continue;
        for (int64_t n = 256; n <= 1024 + 256; n += 512 + 256) {
            const uint64_t wr = sn_ggml_row_size(t, (uint64_t)n), xr = sn_kernel_act_row_size(t, n);
            char *w = malloc(wr * 4), *xq = malloc(xr * 4);
            float *row = malloc((size_t)n * 4), y[4 * 7];
            for (int r = 0; r < 4; r++) {
                for (int64_t i = 0; i < n; i++) row[i] = frand() * 0.1f;
                sn_ggml_from_f32(t, row, w + r * wr, n);
                for (int64_t i = 0; i < n; i++) row[i] = frand();
                s->quant[at](row, xq + r * xr, n);
            }
            k->type[t].gemm4x4(n, w, wr, xq, xr, y, 7);
            int bad = 0;
            for (int tt = 0; tt < 4; tt++)
                for (int r = 0; r < 4; r++) bad += y[tt * 7 + r] != s->type[t].dot_mm(n, w + r * wr, xq + tt * xr);
            if (bad) printf("\n  %s gemm4x4 %s n=%lld: %d outputs differ\n", k->name, sn_ggml_type_name(t), (long long)n, bad);
            CU_ASSERT_EQUAL(bad, 0);
            free(w); free(xq); free(row);
        }
    }
    /* batched matmuls (kernels.h mm, and the 32-value types widened to Q8_0: mm_as_q8_0): every
     * output of every edge tile equals the scalar dot_mm, through sn_matmul as the model calls it (a
     * declined length falls back to dot_mm) */
    for (int ti = 0; ti < NW; ti++) {
        const int t = WTYPES[ti], at = sn_kernel_act_type(t);
        const int as_q8_0 = k->mm_as_q8_0 && (t == SN_GGML_Q4_1 || t == SN_GGML_Q5_0 || t == SN_GGML_Q5_1);
        if (!k->type[t].mm && !as_q8_0) continue;
        const int64_t lens[] = {64, 96, 256 + 40, 768, 1280, 12, 36, 17 * 256};
        for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
            const int64_t n = lens[li];
            if (n % sn_ggml_blck_size(t) || n % sn_ggml_blck_size(at)) continue;
            /* 19 rows: a full 16-row cache block and a 3-row one; lengths above 512: two K chunks,
             * 1280: three (a middle chunk both loads and parks its accumulators); the 64- and
             * 1280-element rows also run 70 tokens (two token groups of the driver); 17 blocks of
             * 256: three chunks of the Q4_K kernel's 8 blocks (first, middle, a 1-block last), and
             * for Q4_1 / Q5_0 / Q5_1 two widened row groups (16 + 3 rows: quants_avx2.c GROUP_BYTES) */
            const int64_t R = 19, T = n == 64 || n == 1280 ? 70 : 8, ldy = R + 3;
            const uint64_t wr = sn_ggml_row_size(t, (uint64_t)n), xr = sn_kernel_act_row_size(t, n);
            char *w = malloc(wr * R), *xq = malloc(xr * T);
            float *row = malloc((size_t)n * 4), *y = malloc((size_t)(T * ldy) * 4);
            for (int r = 0; r < R; r++) {
                for (int64_t i = 0; i < n; i++) row[i] = frand() * 0.1f;
                sn_ggml_from_f32(t, row, w + r * wr, n);
            }
            for (int tt = 0; tt < T; tt++) {
                for (int64_t i = 0; i < n; i++) row[i] = frand();
                s->quant[at](row, xq + tt * xr, n);
            }
            int bad = 0;
            for (int64_t TT = 2; TT <= T; TT += TT < 8 ? 1 : 31) /* ... 8, 39, 70 */
                for (int64_t r0 = 0; r0 < 3; r0++)
                    for (int64_t r1 = r0 + 1; r1 <= R; r1 += 1 + (r1 > 6) * 3) {
                        for (int64_t i = 0; i < T * ldy; i++) y[i] = -12345.f;
                        sn_matmul(k, t, w, wr, n, xq, xr, TT, y, ldy, r0, r1);
                        for (int64_t tt = 0; tt < T; tt++)
                            for (int64_t r = 0; r < ldy; r++) {
                                const int in = tt < TT && r >= r0 && r < r1;
                                const float want = in ? s->type[t].dot_mm(n, w + r * wr, xq + tt * xr) : -12345.f;
                                bad += memcmp(&y[tt * ldy + r], &want, 4) != 0;
                            }
                    }
            if (bad) printf("\n  %s mm %s n=%lld: %d outputs differ\n", k->name, sn_ggml_type_name(t), (long long)n, bad);
            CU_ASSERT_EQUAL(bad, 0);
            free(w); free(xq); free(row); free(y);
        }
    }
    /* single-token matmuls (kernels.h mv): every row equals the scalar dot, through sn_matmul;
     * lengths with and without full 32-element steps and tails, one past the stack buffer (4096);
     * 11 and 10 rows: two rows per quarter and 3 or 2 left over (kernels.h sn_k_mv_quarters), and
     * for F16 one block of eight short rows and 3 or 2 left over (x86_avx512.c rows8_f16_short);
     * K-quant lengths of 1, 3, 5 and 16 blocks; 37 and 36 rows: two blocks of 16 rows of 64..256
     * inputs and 5 or 4 left over (x86_avx512.c rows16_f32 / rows16_f16) */
    for (int ti = 0; ti < NW; ti++) {
        const int t = WTYPES[ti], at = sn_kernel_act_type(t);
        if (!k->type[t].mv) continue;
        const int64_t lens[] = {1,   7,   8,   32,   33,   64,       100,      128,      192,
                                256, 296, 320, 768, 1280, 4096, 4096 + 8, 4096 + 32, 4096 + 41};
        for (size_t li = 0; li < 2 * sizeof(lens) / sizeof(lens[0]); li++) {
            const int64_t n = lens[li / 2], R = li % 2 ? 37 : 11;
            if (n % sn_ggml_blck_size(t) || n % sn_ggml_blck_size(at)) continue;
            const uint64_t wr = sn_ggml_row_size(t, (uint64_t)n), xr = sn_kernel_act_row_size(t, n);
            char *w = malloc(wr * R), *xq = malloc(xr);
            float *row = malloc((size_t)n * 4), y[37 + 2];
            for (int r = 0; r < R; r++) {
                for (int64_t i = 0; i < n; i++) row[i] = frand() * 0.1f;
                sn_ggml_from_f32(t, row, w + r * wr, n);
            }
            for (int64_t i = 0; i < n; i++) row[i] = frand();
            s->quant[at](row, xq, n);
            int bad = 0;
            for (int64_t r0 = 0; r0 < 2; r0++) {
                for (int i = 0; i < R + 2; i++) y[i] = -12345.f;
                sn_matmul(k, t, w, wr, n, xq, xr, 1, y, 1, r0, R);
                for (int64_t r = 0; r < R + 2; r++) {
                    const float want = r >= r0 && r < R ? s->type[t].dot(n, w + r * wr, xq) : -12345.f;
                    bad += memcmp(&y[r], &want, 4) != 0;
                }
            }
            if (bad) printf("\n  %s mv %s n=%lld: %d outputs differ\n", k->name, sn_ggml_type_name(t), (long long)n, bad);
            CU_ASSERT_EQUAL(bad, 0);
            free(w); free(xq); free(row);
        }
    }
    /* attention helpers */
    for (int64_t n = 1; n < 300; n += 37) {
        uint16_t *y1 = malloc((size_t)n * 2), *y2 = malloc((size_t)n * 2), *xv = malloc((size_t)n * 2);
        float *f1 = malloc((size_t)n * 4), *f2 = malloc((size_t)n * 4), *fx = malloc((size_t)n * 4);
        for (int64_t i = 0; i < n; i++) {
            y1[i] = y2[i] = sn_fp32_to_fp16(frand());
            xv[i] = sn_fp32_to_fp16(frand());
            f1[i] = f2[i] = frand();
            fx[i] = frand();
        }
        s->mad_f16(n, y1, xv, 0.37f); k->mad_f16(n, y2, xv, 0.37f);
        CU_ASSERT_EQUAL(memcmp(y1, y2, (size_t)n * 2), 0);
        s->scale_f16(n, y1, 0.81f); k->scale_f16(n, y2, 0.81f);
        CU_ASSERT_EQUAL(memcmp(y1, y2, (size_t)n * 2), 0);
        s->mad_f32(n, f1, fx, -1.3f); k->mad_f32(n, f2, fx, -1.3f);
        CU_ASSERT_EQUAL(memcmp(f1, f2, (size_t)n * 4), 0);
        free(y1); free(y2); free(xv); free(f1); free(f2); free(fx);
    }
    /* the V side of a 64-key tile: nt rows of n floats (stride n + 5) against nt x scalar mad_f32;
     * n past one and two 128-float register chunks, with and without a tail */
    for (int64_t n = 1; n <= 300; n += n < 120 ? 59 : 43) {
        const int64_t ld = n + 5, nt = 64;
        float *x = malloc((size_t)(ld * nt) * 4), *y1 = malloc((size_t)n * 4), *y2 = malloc((size_t)n * 4), v[64];
        for (int64_t i = 0; i < ld * nt; i++) x[i] = frand();
        for (int64_t i = 0; i < n; i++) y1[i] = y2[i] = frand();
        for (int t = 0; t < nt; t++) v[t] = frand();
        for (int64_t t = 0; t < nt; t++) s->mad_f32(n, y1, x + t * ld, v[t]);
        k->mad_rows_f32(n, y2, x, ld, v, nt);
        CU_ASSERT_EQUAL(memcmp(y1, y2, (size_t)n * 4), 0);
        if (k->mad_rowsg_f32) /* 2 and 4 accumulators over the same rows, each with its own weights */
            for (int G = 2; G <= 4; G += 2) {
                float *z1[4], *z2[4], vg[4][64];
                const float *vp[4];
                for (int g = 0; g < G; g++) {
                    z1[g] = malloc((size_t)n * 4);
                    z2[g] = malloc((size_t)n * 4);
                    for (int64_t i = 0; i < n; i++) z1[g][i] = z2[g][i] = frand();
                    for (int t = 0; t < nt; t++) vg[g][t] = g ? frand() : v[nt - 1 - t];
                    vp[g] = vg[g];
                }
                for (int64_t t = 0; t < nt; t++)
                    for (int g = 0; g < G; g++) s->mad_f32(n, z1[g], x + t * ld, vg[g][t]);
                k->mad_rowsg_f32(n, z2, G, x, ld, vp, nt);
                for (int g = 0; g < G; g++) {
                    CU_ASSERT_EQUAL(memcmp(z1[g], z2[g], (size_t)n * 4), 0);
                    free(z1[g]); free(z2[g]);
                }
            }
        free(x); free(y1); free(y2);
    }
    /* tiled attention scores: 64 keys stored transposed, head sizes 1..256 */
    for (int64_t D = 1; D <= 256; D += 51) {
        const int64_t ld = 64 + 3;
        float *q = malloc((size_t)D * 4), *kt = malloc((size_t)(D * ld) * 4), o1[64], o2[64];
        for (int64_t d = 0; d < D; d++) q[d] = frand();
        for (int64_t i = 0; i < D * ld; i++) kt[i] = frand();
        s->kq_tile64(D, q, kt, ld, o1);
        k->kq_tile64(D, q, kt, ld, o2);
        CU_ASSERT_EQUAL(memcmp(o1, o2, sizeof o1), 0);
        if (k->kq_tile64xg) /* 2 and 4 queries at once (rows D + 5 apart): each as kq_tile64 */
            for (int G = 2; G <= 4; G += 2) {
                float *qg = malloc((size_t)(4 * D + 15) * 4), p1[256], p2[256];
                const float *qp[4];
                for (int64_t d = 0; d < 4 * D + 15; d++) qg[d] = frand();
                for (int g = 0; g < G; g++) {
                    qp[g] = qg + g * (D + 5);
                    s->kq_tile64(D, qp[g], kt, ld, p1 + 64 * g);
                }
                k->kq_tile64xg(D, qp, G, kt, ld, p2);
                CU_ASSERT_EQUAL(memcmp(p1, p2, (size_t)(64 * G) * 4), 0);
                free(qg);
            }
        if (k->kq_tile128) { /* two tiles at once: each half as kq_tile64 on its 64 keys */
            const int64_t ld2 = 128 + 3;
            float *kt2 = malloc((size_t)(D * ld2) * 4), p1[128], p2[128];
            for (int64_t i = 0; i < D * ld2; i++) kt2[i] = frand();
            s->kq_tile64(D, q, kt2, ld2, p1);
            s->kq_tile64(D, q, kt2 + 64, ld2, p1 + 64);
            k->kq_tile128(D, q, kt2, ld2, p2);
            CU_ASSERT_EQUAL(memcmp(p1, p2, sizeof p1), 0);
            free(kt2);
        }
        free(q); free(kt);
    }
}

static void test_scalar_vs_double(void) {
    const sn_kernels *s = sn_test_kernels(0);
    const int64_t n = 1024;
    float *x = malloc(n * 4), *wf = malloc(n * 4), *wd = malloc(n * 4), *ad = malloc(n * 4);
    void *w = malloc(n * 4), *a = malloc(n * 4 + 1024);
    for (int64_t i = 0; i < n; i++) { x[i] = frand(); wf[i] = frand() * 0.1f; }
    for (int ti = 0; ti < NW; ti++) {
        const int t = WTYPES[ti], at = sn_kernel_act_type(t);
        sn_ggml_from_f32(t, wf, w, n);
        s->quant[at](x, a, n);
        CU_ASSERT_FATAL(sn_dequantize_row(t, w, wd, n) == 0);
        act_to_f32(at, a, ad, n);
        double ref = 0, mag = 0;
        for (int64_t i = 0; i < n; i++) { ref += (double)wd[i] * ad[i]; mag += fabs((double)wd[i] * ad[i]); }
        const double got = s->type[t].dot(n, w, a), got_mm = s->type[t].dot_mm(n, w, a);
        /* Q8_1's s = f16(d * sum) is rounded: 1e-3 relative on the min term (as test_quants.c) */
        const double tol = (at == SN_GGML_Q8_1 ? 2e-3 : 1e-5) * mag + 1e-6;
        if (fabs(got - ref) > tol) printf("\n  scalar %s: %.9g vs reference %.9g\n", sn_ggml_type_name(t), got, ref);
        CU_ASSERT(fabs(got - ref) <= tol);
        CU_ASSERT(fabs(got_mm - ref) <= tol);
    }
    /* activation quantizers round-trip within their step */
    sn_block_q8_0 q[1024 / 32];
    s->quant[SN_GGML_Q8_0](x, q, n);
    float back[1024];
    CU_ASSERT_FATAL(sn_dequantize_row(SN_GGML_Q8_0, q, back, n) == 0);
    for (int64_t i = 0; i < n; i++) {
        float amax = 0;
        for (int j = 0; j < 32; j++) amax = fmaxf(amax, fabsf(x[i / 32 * 32 + j]));
        CU_ASSERT(fabsf(back[i] - x[i]) <= amax / 127.f * 0.5f + amax * 1e-3f);
    }
    free(x); free(wf); free(wd); free(ad); free(w); free(a);
}

static void test_avx2_vs_scalar(void) {
    const sn_kernels *k = sn_test_kernels(1);
    if (!k) { printf(" (no AVX2 on this CPU: skipped) "); return; }
    check_table(k);
}

static void test_avx512_vs_scalar(void) {
    const sn_kernels *k = sn_test_kernels(2);
    if (!k) { printf(" (no AVX-512 on this CPU: skipped) "); return; }
    check_table(k);
}

/* A wider table never falls back to a narrower one's slower kernel: every dot, dot_mm and gemm4x4
 * the AVX2 table has beyond the scalar one is also beyond the scalar one in the AVX-512 table (it
 * once ran Q5_K dots with the scalar kernel because one filler reset what an earlier one set). */
static void test_avx512_covers_avx2(void) {
    const sn_kernels *s = sn_test_kernels(0), *a2 = sn_test_kernels(1), *a5 = sn_test_kernels(2);
    if (!a2 || !a5) { printf(" (no AVX-512 on this CPU: skipped) "); return; }
    for (int t = 0; t < SN_KTYPE_COUNT; t++) {
        const int bad = (a2->type[t].dot != s->type[t].dot && a5->type[t].dot == s->type[t].dot) ||
                        (a2->type[t].dot_mm != s->type[t].dot_mm && a5->type[t].dot_mm == s->type[t].dot_mm) ||
                        (a2->type[t].gemm4x4 && !a5->type[t].gemm4x4 && !a5->type[t].mm);
        if (bad) printf("\n  avx512 table: %s runs a scalar kernel the AVX2 table twins\n", sn_ggml_type_name(t));
        CU_ASSERT_FALSE(bad);
    }
    CU_ASSERT(a5->quant[SN_GGML_Q8_K] != s->quant[SN_GGML_Q8_K]);
}

static void test_swiglu(void) {
    /* ggml_v_expf agrees with expf to a few ulp; silu(x)*g must be close to the libm value */
    float g[64], u[64], y[64];
    for (int i = 0; i < 64; i++) { g[i] = frand() * 4; u[i] = frand(); }
    sn_test_kernels(-1)->swiglu(64, y, g, u);
    for (int i = 0; i < 64; i++) {
        const float ref = g[i] / (1.0f + expf(-g[i])) * u[i];
        CU_ASSERT(fabsf(y[i] - ref) <= 1e-6f * fabsf(ref) + 1e-30f);
    }
}

static void test_dispatch(void) {
    const sn_kernels *k = sn_test_kernels(-1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    const uint32_t f = sn_test_tuning()->isa;
    const char *want = (f & SN_CPU_AVX512) && sn_test_kernels(2) ? "avx512" : (f & SN_CPU_AVX2) ? "avx2" : "scalar";
    CU_ASSERT_STRING_EQUAL(k->name, want);
    CU_ASSERT_EQUAL(sn_kernel_act_type(SN_GGML_Q4_K), SN_GGML_Q8_K);
    CU_ASSERT_EQUAL(sn_kernel_act_type(SN_GGML_Q4_0), SN_GGML_Q8_0);
    CU_ASSERT_EQUAL(sn_kernel_act_type(SN_GGML_Q5_K), SN_GGML_Q8_K);
    CU_ASSERT_EQUAL(sn_kernel_act_type(SN_GGML_Q4_1), SN_GGML_Q8_1);
    CU_ASSERT_EQUAL(sn_kernel_act_type(16 /* IQ2_XXS */), -1);
}

static const sn_test_case cases[] = {
    {"scalar kernels equal a double-precision reference", test_scalar_vs_double},
    {"AVX2 kernels equal the scalar kernels bit for bit", test_avx2_vs_scalar},
    {"AVX-512 kernels equal the scalar kernels bit for bit", test_avx512_vs_scalar},
    {"the AVX-512 table keeps every kernel the AVX2 table twins", test_avx512_covers_avx2},
    {"swiglu follows ggml's expf polynomial", test_swiglu},
    {"run-time dispatch picks the best usable table", test_dispatch},
};
SN_TEST_MAIN("kernels", cases)
