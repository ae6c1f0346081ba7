/* test_quants.c - the Q4_1 / Q5_0 / Q5_1 / Q2_K / Q3_K / Q4_K / Q5_K / Q6_K / IQ4_NL / IQ4_XS / MXFP4
 * kernels (runtime/kernels/quants_*.c, iq4_*.c, mxfp4_*.c) and dequantizers (runtime/quants/dequant.c).
 *
 * Three checks per type, on random blocks:
 *  - the scalar dot equals dequantize-then-dot in double (a wrong block layout in either fails);
 *  - every SIMD table's dot / dot_mm equals the scalar one bit for bit;
 *  - where llama.cpp's own libraries are installed (the npm oracle): our dequantizers equal
 *    libggml-base's dequantize_row_* bit for bit, and with the CPU backend build llama.cpp picks on
 *    this CPU (zen4 or haswell) our Q8_0/Q8_1/Q8_K conversions equal its quantize_row_* and our
 *    dots its ggml_vec_dot_* bit for bit (Q2_K on AVX-512 runs the repacked gemv instead, which
 *    the parity test covers; IQ4_NL, MXFP4 and Q4_K are always repacked on x86 and are checked
 *    against ggml's repacked gemv / gemm instead). */
#include "sn_test.h"

#include "cpu.h"
#include "ggml_types.h"
#include "kernels/kernels.h"
#include "quants/quants.h"

#include <dlfcn.h>
#include <math.h>
#include <string.h>

static uint64_t rng = 0x243F6A8885A308D3ull;
static uint32_t urand(void) { return (uint32_t)(sn_test_xorshift(&rng) >> 16); }
static float frand(void) { return (float)(urand() % 2000001) / 1e6f - 1.0f; }

static const int TYPES[] = {SN_GGML_Q4_1, SN_GGML_Q5_0, SN_GGML_Q5_1, SN_GGML_Q2_K, SN_GGML_Q3_K, SN_GGML_Q5_K,
                            SN_GGML_Q4_K, SN_GGML_Q6_K, SN_GGML_IQ4_NL, SN_GGML_IQ4_XS, SN_GGML_MXFP4};
enum { NT = sizeof(TYPES) / sizeof(TYPES[0]) };

static void put_f16(uint8_t *p, float v) {
    const uint16_t h = sn_fp32_to_fp16(v);
    memcpy(p, &h, 2);
}

/* n values of type t: random bits, with the f16 scale fields set to sane magnitudes */
static void random_row(int t, uint8_t *w, int64_t n) {
    const size_t bs = sn_ggml_type_size(t), nb = (size_t)(n / sn_ggml_blck_size(t));
    for (size_t i = 0; i < bs * nb; i++) w[i] = (uint8_t)urand();
    for (size_t b = 0; b < nb; b++) {
        uint8_t *p = w + b * bs;
        const float d = 0.001f + 0.01f * fabsf(frand()), m = 0.01f * frand();
        switch (t) {
        case SN_GGML_Q4_1: case SN_GGML_Q5_1: put_f16(p, d); put_f16(p + 2, m); break;
        case SN_GGML_Q5_0: put_f16(p, d); break;
        case SN_GGML_Q2_K: put_f16(p + 80, d); put_f16(p + 82, fabsf(m)); break;
        case SN_GGML_Q3_K: put_f16(p + 108, d); break;
        case SN_GGML_Q5_K: case SN_GGML_Q4_K: put_f16(p, d * 0.1f); put_f16(p + 2, fabsf(m) * 0.1f); break;
        case SN_GGML_Q6_K: put_f16(p + 208, d * 0.1f); break;
        case SN_GGML_IQ4_NL: put_f16(p, d * 0.1f); break;
        case SN_GGML_IQ4_XS: put_f16(p, d * 0.01f); break;
        case SN_GGML_MXFP4: p[0] = (uint8_t)(b % 29 == 7 ? urand() % 2 : 112 + urand() % 16); break; /* and subnormals */
        }
    }
}

static void act_to_f32(int at, const void *a, float *y, int64_t n) {
    if (at == SN_GGML_Q8_K) {
        const sn_block_q8_K *b = a;
        for (int64_t i = 0; i < n; i++) y[i] = b[i / 256].d * b[i / 256].qs[i % 256];
    } else {
        const sn_block_q8_1 *b1 = a; /* Q8_0 and Q8_1 share d + qs; step over the right size */
        const sn_block_q8_0 *b0 = a;
        for (int64_t i = 0; i < n; i++)
            y[i] = at == SN_GGML_Q8_1 ? sn_fp16_to_fp32(b1[i / 32].d) * b1[i / 32].qs[i % 32]
                                      : sn_fp16_to_fp32(b0[i / 32].d) * b0[i / 32].qs[i % 32];
    }
}

enum { N = 2048 };

static void test_scalar_vs_double(void) {
    const sn_kernels *s = sn_test_kernels(0);
    float *x = malloc(N * 4), *wd = malloc(N * 4), *ad = malloc(N * 4);
    uint8_t *w = malloc(N * 2), *a = malloc(N * 2);
    for (int rep = 0; rep < 4; rep++) {
        for (int i = 0; i < N; i++) x[i] = frand() * (rep == 3 ? 30.f : 1.f);
        for (int ti = 0; ti < NT; ti++) {
            const int t = TYPES[ti], at = sn_kernel_act_type(t);
            CU_ASSERT_FATAL(s->type[t].dot && s->type[t].dot_mm && at >= 0 && s->quant[at]);
            random_row(t, w, N);
            s->quant[at](x, a, N);
            CU_ASSERT_FATAL(sn_dequantize_row(t, w, wd, N) == 0);
            act_to_f32(at, a, ad, N);
            double ref = 0, mag = 0;
            for (int i = 0; i < N; i++) { ref += (double)wd[i] * ad[i]; mag += fabs((double)wd[i] * ad[i]); }
            /* Q4_1/Q5_1 use s = f16(d * sum): 1e-3 relative on the min term */
            const double tol = (t == SN_GGML_Q4_1 || t == SN_GGML_Q5_1 ? 2e-3 : 1e-5) * mag + 1e-6;
            const double got = s->type[t].dot(N, w, a), got_mm = s->type[t].dot_mm(N, w, a);
            if (fabs(got - ref) > tol || fabs(got_mm - ref) > tol)
                printf("\n  scalar %s: %.9g / %.9g vs reference %.9g\n", sn_ggml_type_name(t), got, got_mm, ref);
            CU_ASSERT(fabs(got - ref) <= tol);
            CU_ASSERT(fabs(got_mm - ref) <= tol);
        }
    }
    /* Q8_1's s is d (amax / 127, unrounded) times the sum of its values, rounded to f16 */
    sn_block_q8_1 q[N / 32];
    s->quant[SN_GGML_Q8_1](x, q, N);
    for (int b = 0; b < N / 32; b++) {
        int sum = 0;
        float amax = 0;
        for (int j = 0; j < 32; j++) { sum += q[b].qs[j]; amax = fmaxf(amax, fabsf(x[32 * b + j])); }
        CU_ASSERT_EQUAL(q[b].s, sn_fp32_to_fp16(amax / 127.f * (float)sum));
        CU_ASSERT_EQUAL(q[b].d, sn_fp32_to_fp16(amax / 127.f));
    }
    free(x); free(wd); free(ad); free(w); free(a);
}

static void check_table(const sn_kernels *k) {
    const sn_kernels *s = sn_test_kernels(0);
    const int64_t sizes[] = {256, 768, 4096};
    float *x = malloc(4096 * 4);
    uint8_t *w = malloc(4096 * 2), *a1 = malloc(4096 * 2), *a2 = malloc(4096 * 2);
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        const int64_t n = sizes[si];
        for (int rep = 0; rep < 3; rep++) {
            for (int64_t i = 0; i < n; i++) x[i] = frand() * (rep == 2 ? 40.f : 1.f);
            if (rep == 1) memset(x, 0, 32 * sizeof(float)); /* an all-zero block */
            for (int ti = 0; ti < NT; ti++) {
                const int t = TYPES[ti], at = sn_kernel_act_type(t);
                random_row(t, w, n);
                s->quant[at](x, a1, n);
                k->quant[at](x, a2, n);
                CU_ASSERT_EQUAL(memcmp(a1, a2, sn_kernel_act_row_size(t, n)), 0);
                const float r1 = s->type[t].dot(n, w, a1), r2 = k->type[t].dot(n, w, a1);
                const float m1 = s->type[t].dot_mm(n, w, a1), m2 = k->type[t].dot_mm(n, w, a1);
                if (r1 != r2 || m1 != m2)
                    printf("\n  %s %s n=%lld: dot %.9g vs %.9g, dot_mm %.9g vs %.9g\n", k->name, sn_ggml_type_name(t),
                           (long long)n, r1, r2, m1, m2);
                CU_ASSERT_EQUAL(r1, r2);
                CU_ASSERT_EQUAL(m1, m2);
            }
        }
    }
    /* single-token matmuls over R rows (8-row groups and a rest): every output equals the scalar dot */
    for (int ti = 0; ti < NT; ti++) {
        const int t = TYPES[ti], at = sn_kernel_act_type(t);
        if (!k->type[t].mv) continue;
        const int64_t n = 2304 + 32 * (t == SN_GGML_MXFP4), R = 19; /* MXFP4: a block past 8-block steps */
        const uint64_t wr = sn_ggml_row_size(t, (uint64_t)n);
        uint8_t *wm = malloc(R * wr), *xq = malloc(sn_kernel_act_row_size(t, n));
        float y[19];
        for (int64_t r = 0; r < R; r++) random_row(t, wm + r * wr, n);
        float *xl = malloc(n * 4);
        for (int64_t i = 0; i < n; i++) xl[i] = frand() * 3.f;
        s->quant[at](xl, xq, n);
        int bad = 0;
        if (k->type[t].mv(n, wm, wr, R, xq, y))
            for (int64_t r = 0; r < R; r++) bad += y[r] != s->type[t].dot(n, wm + r * wr, xq);
        if (bad) printf("\n  %s mv %s: %d outputs differ\n", k->name, sn_ggml_type_name(t), bad);
        CU_ASSERT_EQUAL(bad, 0);
        free(wm); free(xq); free(xl);
    }
    /* register-tiled 4 rows x 4 tokens: every output equals the scalar dot_mm */
    for (int ti = 0; ti < NT; ti++) {
        const int t = TYPES[ti], at = sn_kernel_act_type(t);
        if (!k->type[t].gemm4x4) continue;
        const int64_t n = 768;
        const uint64_t wr = sn_ggml_row_size(t, (uint64_t)n), xr = sn_kernel_act_row_size(t, n);
        uint8_t *wm = malloc(4 * wr), *xq = malloc(4 * xr);
        float y[4 * 5];
        for (int r = 0; r < 4; r++) {
            random_row(t, wm + r * wr, n);
            for (int64_t i = 0; i < n; i++) x[i] = frand() * (r == 3 ? 40.f : 1.f);
            s->quant[at](x, xq + r * xr, n);
        }
        k->type[t].gemm4x4(n, wm, wr, xq, xr, y, 5);
        int bad = 0;
        for (int tt = 0; tt < 4; tt++)
            for (int r = 0; r < 4; r++) bad += y[tt * 5 + r] != s->type[t].dot_mm(n, wm + r * wr, xq + tt * xr);
        if (bad) printf("\n  %s gemm4x4 %s: %d outputs differ\n", k->name, sn_ggml_type_name(t), bad);
        CU_ASSERT_EQUAL(bad, 0);
        free(wm); free(xq);
    }
    free(x); free(w); free(a1); free(a2);
}

static void test_avx2(void) {
    const sn_kernels *k = sn_test_kernels(1);
    if (!k) { printf(" (no AVX2: skipped) "); return; }
    check_table(k);
}

static void test_avx512(void) {
    const sn_kernels *k = sn_test_kernels(2);
    if (!k) { printf(" (no AVX-512: skipped) "); return; }
    check_table(k);
}

/* ---- llama.cpp's own code as the oracle ---- */

static int cpu_has(const char *flag) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return 0;
    char line[8192];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5)) continue;
        char *p = line;
        const size_t fl = strlen(flag);
        while ((p = strstr(p, flag))) {
            if (p[-1] == ' ' && (p[fl] == ' ' || p[fl] == '\n')) { found = 1; break; }
            p += fl;
        }
        break;
    }
    fclose(f);
    return found;
}

typedef void (*vec_dot_fn)(int, float *, size_t, const void *, size_t, const void *, size_t, int);
typedef void (*quant_fn)(const float *, void *, int64_t);
typedef void (*dequant_fn)(const void *, float *, int64_t);

static void *open_oracle(const char *lib) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/%s", sn_test_src(), lib);
    return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

static void test_dequant_vs_libggml(void) {
    void *h = open_oracle("libggml-base.so");
    if (!h) { printf(" (libggml-base.so not installed: skipped) "); return; }
    const char *syms[NT] = {"dequantize_row_q4_1", "dequantize_row_q5_0", "dequantize_row_q5_1",
                            "dequantize_row_q2_K", "dequantize_row_q3_K", "dequantize_row_q5_K",
                            "dequantize_row_q4_K", "dequantize_row_q6_K", "dequantize_row_iq4_nl",
                            "dequantize_row_iq4_xs", "dequantize_row_mxfp4"};
    float *y1 = malloc(N * 4), *y2 = malloc(N * 4);
    uint8_t *w = malloc(N * 2);
    for (int ti = 0; ti < NT; ti++) {
        dequant_fn ref = (dequant_fn)dlsym(h, syms[ti]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
        int bad = 0;
        for (int it = 0; it < 20; it++) {
            random_row(TYPES[ti], w, N);
            ref(w, y1, N);
            CU_ASSERT_FATAL(sn_dequantize_row(TYPES[ti], w, y2, N) == 0);
            bad += memcmp(y1, y2, N * 4) != 0;
        }
        if (bad) printf("\n  %s differs from libggml\n", syms[ti]);
        CU_ASSERT_EQUAL(bad, 0);
    }
    free(y1); free(y2); free(w);
    dlclose(h);
}

/* the build of ggml's CPU backend llama.cpp picks here: zen4 on AVX-512 machines, haswell on
 * AVX2-only ones (both run the same AVX2 vec_dot code for these types); NULL (and a note) if
 * neither fits this CPU or the library is not installed */
static void *open_ggml_cpu(void) {
    static const char *zen4[] = {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni", "avx512_bf16", "avx512vbmi", NULL};
    static const char *haswell[] = {"avx2", "fma", "f16c", "bmi2", NULL};
    const char *lib = "libggml-cpu-zen4.so";
    for (int i = 0; zen4[i]; i++)
        if (!cpu_has(zen4[i])) lib = NULL;
    for (int i = 0; !lib && haswell[i]; i++)
        if (!cpu_has(haswell[i])) { printf(" (CPU runs neither ggml's zen4 nor haswell build: skipped) "); return NULL; }
    if (!lib) lib = "libggml-cpu-haswell.so";
    void *h = open_oracle(lib);
    if (!h) { printf(" (%s not installed: skipped) ", lib); return NULL; }
    printf(" (%s) ", lib);
    return h;
}

static void test_dots_vs_ggml_cpu(void) {
    void *h = open_ggml_cpu();
    if (!h) return;
    void (*cpu_init)(void) = (void (*)(void))dlsym(h, "ggml_cpu_init");
    quant_fn q8_1 = (quant_fn)dlsym(h, "quantize_row_q8_1"), q8_0 = (quant_fn)dlsym(h, "quantize_row_q8_0"),
             q8_K = (quant_fn)dlsym(h, "quantize_row_q8_K");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cpu_init);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q8_1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q8_0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q8_K);
    cpu_init(); /* fills ggml's f16 -> f32 table */
    /* Q2_K: where ggml repacks it (AVX-512) its order is the gemv's, checked by the parity test;
     * Q4_K is always repacked on x86 (test_q4_K_vs_ggml_repack) */
    const char *syms[NT] = {"ggml_vec_dot_q4_1_q8_1", "ggml_vec_dot_q5_0_q8_0", "ggml_vec_dot_q5_1_q8_1",
                            sn_kernel_q2_K_repacked() ? NULL : "ggml_vec_dot_q2_K_q8_K", "ggml_vec_dot_q3_K_q8_K",
                            "ggml_vec_dot_q5_K_q8_K", NULL, "ggml_vec_dot_q6_K_q8_K", NULL, "ggml_vec_dot_iq4_xs_q8_K", NULL};
    const sn_kernels *k = sn_test_kernels(-1);
    float *x = malloc(N * 4);
    uint8_t *w = malloc(N * 2), *a1 = malloc(N * 2), *a2 = malloc(N * 2);
    for (int ti = 0; ti < NT; ti++) {
        if (!syms[ti]) continue;
        const int t = TYPES[ti], at = sn_kernel_act_type(t);
        vec_dot_fn ref = (vec_dot_fn)dlsym(h, syms[ti]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
        int bad_q = 0, bad_d = 0;
        for (int it = 0; it < 50; it++) {
            for (int i = 0; i < N; i++) x[i] = frand() * (it % 5 == 4 ? 50.f : 1.f);
            random_row(t, w, N);
            (at == SN_GGML_Q8_1 ? q8_1 : at == SN_GGML_Q8_0 ? q8_0 : q8_K)(x, a1, N);
            k->quant[at](x, a2, N);
            bad_q += memcmp(a1, a2, sn_kernel_act_row_size(t, N)) != 0;
            float r = 0;
            ref(N, &r, 0, w, 0, a1, 0, 1);
            const float mine = k->type[t].dot(N, w, a1);
            if (r != mine && !bad_d) printf("\n  %s: ggml %.9g, ours %.9g\n", syms[ti], r, mine);
            bad_d += r != mine;
        }
        if (bad_q) printf("\n  %s: %d activation rows differ from ggml's\n", sn_ggml_type_name(at), bad_q);
        CU_ASSERT_EQUAL(bad_q, 0);
        CU_ASSERT_EQUAL(bad_d, 0);
    }
    free(x); free(w); free(a1); free(a2);
    dlclose(h);
}

/* ---- Q4_K against ggml's repacked kernels (what llama.cpp runs for Q4_K on AVX2 and up) ----
 * ggml interleaves 8 rows into one block_q4_Kx8 per 256 columns: the 8 rows' d, then dmin (f16),
 * 96 bytes of scales (sub-block g of the 8 rows packed like one Q4_K scales[12], g = 0..7), then
 * the rows' nibble bytes 8 at a time, row after row. Its gemv takes one plain Q8_K row, its gemm
 * 4 tokens quantized and interleaved by ggml_quantize_mat_t<8, Q8_K>. Our dot must equal the gemv
 * and our dot_mm the gemm, output for output. */

/* the Q4_K packing of 8 6-bit scales and 8 6-bit mins into 12 bytes (inverse of sn_k_q4k_scale_min) */
static void pack_scales12(const uint8_t s[8], const uint8_t m[8], uint8_t *out) {
    for (int j = 0; j < 4; j++) {
        out[j] = (uint8_t)((s[j] & 63) | ((s[j + 4] & 48) << 2));
        out[j + 4] = (uint8_t)((m[j] & 63) | ((m[j + 4] & 48) << 2));
        out[j + 8] = (uint8_t)((s[j + 4] & 15) | ((m[j + 4] & 15) << 4));
    }
}

enum { QX8_BYTES = 16 + 16 + 96 + 1024 };

static void repack_q4_Kx8(const sn_block_q4_K *rows, int64_t nb, uint8_t *out) {
    for (int64_t b = 0; b < nb; b++, out += QX8_BYTES) {
        for (int r = 0; r < 8; r++) {
            memcpy(out + 2 * r, &rows[r * nb + b].d, 2);
            memcpy(out + 16 + 2 * r, &rows[r * nb + b].dmin, 2);
        }
        for (int g = 0; g < 8; g++) {
            uint8_t s[8], m[8];
            for (int r = 0; r < 8; r++) sn_k_q4k_scale_min(g, rows[r * nb + b].scales, &s[r], &m[r]);
            pack_scales12(s, m, out + 32 + 12 * g);
        }
        for (int i = 0; i < 128; i++) memcpy(out + 128 + 8 * i, rows[(i % 8) * nb + b].qs + 8 * (i / 8), 8);
    }
}

typedef void (*gemx_fn)(int, float *, size_t, const void *, const void *, int, int);
typedef void (*quant_mat_fn)(const float *, void *, int64_t, int64_t);

static void test_q4_K_vs_ggml_repack(void) {
    void *h = open_ggml_cpu();
    if (!h) return;
    void (*cpu_init)(void) = (void (*)(void))dlsym(h, "ggml_cpu_init");
    gemx_fn gemv = (gemx_fn)dlsym(h, "_ZN4ggml3cpu6repack4gemvI10block_q4_KLl8ELl8EL9ggml_type15EEEviPfmPKvS7_ii");
    gemx_fn gemm = (gemx_fn)dlsym(h, "_ZN4ggml3cpu6repack4gemmI10block_q4_KLl8ELl8EL9ggml_type15EEEviPfmPKvS7_ii");
    quant_mat_fn qmat = (quant_mat_fn)dlsym(h, "_Z19ggml_quantize_mat_tILl8EL9ggml_type15EEvPKfPvll");
    if (!cpu_init || !gemv || !gemm || !qmat) {
        printf(" (this libggml-cpu exports no q4_K_8x8 kernels: skipped) ");
        dlclose(h);
        return;
    }
    cpu_init();
    const sn_kernels *ks[3] = {sn_test_kernels(0), sn_test_kernels(1), sn_test_kernels(2)};
    const int64_t n = 1024, nb = n / 256;
    sn_block_q4_K *rows = malloc(8 * (size_t)nb * sizeof(sn_block_q4_K));
    uint8_t *packed = malloc((size_t)nb * QX8_BYTES), *xm = malloc(4 * (size_t)nb * 292 + 64);
    sn_block_q8_K *a = malloc(4 * (size_t)nb * sizeof(sn_block_q8_K));
    float *x = malloc(4 * n * 4), yv[8], ym[4 * 8];
    int bad_v = 0, bad_m = 0, checked = 0;
    for (int it = 0; it < 20; it++) {
        for (int r = 0; r < 8; r++) random_row(SN_GGML_Q4_K, (uint8_t *)(rows + r * nb), n);
        for (int i = 0; i < 4 * n; i++) x[i] = frand() * (it % 5 == 4 ? 30.f : 1.f);
        repack_q4_Kx8(rows, nb, packed);
        for (int t = 0; t < 4; t++) ks[0]->quant[SN_GGML_Q8_K](x + t * n, a + t * nb, n);
        qmat(x, xm, 4, n);
        gemm((int)n, ym, 8, packed, xm, 4, 8);
        for (int t = 0; t < 4; t++) {
            gemv((int)n, yv, 8, packed, a + t * nb, 1, 8);
            for (int ki = 0; ki < 3; ki++) {
                if (!ks[ki]) continue;
                for (int r = 0; r < 8; r++) {
                    const float dv = ks[ki]->type[SN_GGML_Q4_K].dot(n, rows + r * nb, a + t * nb);
                    const float dm = ks[ki]->type[SN_GGML_Q4_K].dot_mm(n, rows + r * nb, a + t * nb);
                    if ((dv != yv[r] && !bad_v) || (dm != ym[t * 8 + r] && !bad_m))
                        printf("\n  %s Q4_K row %d token %d: gemv %.9g ours %.9g, gemm %.9g ours %.9g\n", ks[ki]->name, r, t,
                               yv[r], dv, ym[t * 8 + r], dm);
                    bad_v += dv != yv[r];
                    bad_m += dm != ym[t * 8 + r];
                    checked++;
                }
            }
        }
    }
    printf(" (%d outputs) ", checked);
    CU_ASSERT_EQUAL(bad_v, 0);
    CU_ASSERT_EQUAL(bad_m, 0);
    free(rows); free(packed); free(xm); free(a); free(x);
    dlclose(h);
}

/* ---- IQ4_NL against ggml's repacked iq4_nl_8x8 kernels (what llama.cpp runs for every IQ4_NL
 * matrix with a row count divisible by 8 on AVX2 and up). A block_iq4_nlx8 holds, per 32 columns,
 * the 8 rows' f16 d, then 16 chunks of 8 nibble bytes: chunk i is bytes 8(i/8)..8(i/8)+7 of row
 * i%8. The gemv takes one Q8_0 row, the gemm 4 tokens interleaved by ggml_quantize_mat_t<8, Q8_0>.
 * Our dot must equal both (dot = dot_mm), output for output. */
static void test_iq4_nl_vs_ggml_repack(void) {
    void *h = open_ggml_cpu();
    if (!h) return;
    void (*cpu_init)(void) = (void (*)(void))dlsym(h, "ggml_cpu_init");
    gemx_fn gemv = (gemx_fn)dlsym(h, "ggml_gemv_iq4_nl_8x8_q8_0");
    gemx_fn gemm = (gemx_fn)dlsym(h, "ggml_gemm_iq4_nl_8x8_q8_0");
    quant_mat_fn qmat = (quant_mat_fn)dlsym(h, "_Z19ggml_quantize_mat_tILl8EL9ggml_type8EEvPKfPvll");
    quant_fn q8_0 = (quant_fn)dlsym(h, "quantize_row_q8_0");
    if (!cpu_init || !gemv || !gemm || !qmat || !q8_0) {
        printf(" (this libggml-cpu exports no iq4_nl_8x8 kernels: skipped) ");
        dlclose(h);
        return;
    }
    cpu_init();
    const sn_kernels *ks[3] = {sn_test_kernels(0), sn_test_kernels(1), sn_test_kernels(2)};
    const int64_t n = 1024 + 96, nb = n / 32; /* an odd block count and a tail past 8-block steps */
    sn_block_iq4_nl *rows = malloc(8 * (size_t)nb * sizeof(sn_block_iq4_nl));
    uint8_t *packed = malloc((size_t)nb * 144), *xm = malloc(4 * (size_t)nb * 34 + 64);
    sn_block_q8_0 *a = malloc(4 * (size_t)nb * sizeof(sn_block_q8_0));
    float *x = malloc(4 * n * 4), yv[8], ym[4 * 8];
    int bad_v = 0, bad_m = 0, checked = 0;
    for (int it = 0; it < 20; it++) {
        for (int r = 0; r < 8; r++) random_row(SN_GGML_IQ4_NL, (uint8_t *)(rows + r * nb), n);
        for (int i = 0; i < 4 * n; i++) x[i] = frand() * (it % 5 == 4 ? 30.f : 1.f);
        for (int64_t b = 0; b < nb; b++) {
            uint8_t *o = packed + b * 144;
            for (int r = 0; r < 8; r++) memcpy(o + 2 * r, &rows[r * nb + b].d, 2);
            for (int i = 0; i < 16; i++) memcpy(o + 16 + 8 * i, rows[(i % 8) * nb + b].qs + 8 * (i / 8), 8);
        }
        for (int t = 0; t < 4; t++) q8_0(x + t * n, a + t * nb, n);
        qmat(x, xm, 4, n);
        gemm((int)n, ym, 8, packed, xm, 4, 8);
        for (int t = 0; t < 4; t++) {
            gemv((int)n, yv, 8, packed, a + t * nb, 1, 8);
            for (int ki = 0; ki < 3; ki++) {
                if (!ks[ki]) continue;
                for (int r = 0; r < 8; r++) {
                    const float dv = ks[ki]->type[SN_GGML_IQ4_NL].dot(n, rows + r * nb, a + t * nb);
                    const float dm = ks[ki]->type[SN_GGML_IQ4_NL].dot_mm(n, rows + r * nb, a + t * nb);
                    if ((dv != yv[r] && !bad_v) || (dm != ym[t * 8 + r] && !bad_m))
                        printf("\n  %s IQ4_NL row %d token %d: gemv %.9g ours %.9g, gemm %.9g ours %.9g\n", ks[ki]->name, r,
                               t, yv[r], dv, ym[t * 8 + r], dm);
                    bad_v += dv != yv[r];
                    bad_m += dm != ym[t * 8 + r];
                    checked++;
                }
            }
        }
    }
    printf(" (%d outputs) ", checked);
    CU_ASSERT_EQUAL(bad_v, 0);
    CU_ASSERT_EQUAL(bad_m, 0);
    free(rows); free(packed); free(xm); free(a); free(x);
    dlclose(h);
}

/* ---- MXFP4 against ggml's repacked mxfp4_8x8 kernels (what llama.cpp runs for every MXFP4 matrix,
 * expert stacks included, with a row count divisible by 8 on AVX2 and up). A block_mxfp4x8 holds,
 * per 32 columns, the 8 rows' exponent bytes, then 16 chunks of 8 nibble bytes as IQ4_NL's. Our dot,
 * dot_mm and mv must equal the gemv and the gemm, output for output, at every level. */
static void test_mxfp4_vs_ggml_repack(void) {
    void *h = open_ggml_cpu();
    if (!h) return;
    void (*cpu_init)(void) = (void (*)(void))dlsym(h, "ggml_cpu_init");
    gemx_fn gemv = (gemx_fn)dlsym(h, "ggml_gemv_mxfp4_8x8_q8_0");
    gemx_fn gemm = (gemx_fn)dlsym(h, "ggml_gemm_mxfp4_8x8_q8_0");
    quant_mat_fn qmat = (quant_mat_fn)dlsym(h, "_Z19ggml_quantize_mat_tILl8EL9ggml_type8EEvPKfPvll");
    quant_fn q8_0 = (quant_fn)dlsym(h, "quantize_row_q8_0");
    if (!cpu_init || !gemv || !gemm || !qmat || !q8_0) {
        printf(" (this libggml-cpu exports no mxfp4_8x8 kernels: skipped) ");
        dlclose(h);
        return;
    }
    cpu_init(); /* fills ggml's E8M0 table */
    const sn_kernels *ks[3] = {sn_test_kernels(0), sn_test_kernels(1), sn_test_kernels(2)};
    const int64_t n = 2880, nb = n / 32; /* gpt-oss's width: 90 blocks, past 8-block steps */
    const uint64_t wr = (uint64_t)nb * sizeof(sn_block_mxfp4);
    sn_block_mxfp4 *rows = malloc(8 * wr);
    uint8_t *packed = malloc((size_t)nb * 136), *xm = malloc(4 * (size_t)nb * 34 + 64);
    sn_block_q8_0 *a = malloc(4 * (size_t)nb * sizeof(sn_block_q8_0));
    float *x = malloc(4 * n * 4), yv[8], ym[4 * 8], yr[8];
    int bad = 0, checked = 0;
    for (int it = 0; it < 20; it++) {
        for (int r = 0; r < 8; r++) random_row(SN_GGML_MXFP4, (uint8_t *)(rows + r * nb), n);
        for (int i = 0; i < 4 * n; i++) x[i] = frand() * (it % 5 == 4 ? 30.f : 1.f);
        for (int64_t b = 0; b < nb; b++) {
            uint8_t *o = packed + b * 136;
            for (int r = 0; r < 8; r++) o[r] = rows[r * nb + b].e;
            for (int i = 0; i < 16; i++) memcpy(o + 8 + 8 * i, rows[(i % 8) * nb + b].qs + 8 * (i / 8), 8);
        }
        for (int t = 0; t < 4; t++) q8_0(x + t * n, a + t * nb, n);
        qmat(x, xm, 4, n);
        gemm((int)n, ym, 8, packed, xm, 4, 8);
        for (int t = 0; t < 4; t++) {
            gemv((int)n, yv, 8, packed, a + t * nb, 1, 8);
            for (int ki = 0; ki < 3; ki++) {
                if (!ks[ki]) continue;
                const sn_type_kernels *tk = &ks[ki]->type[SN_GGML_MXFP4];
                const int mv = tk->mv && tk->mv(n, rows, wr, 8, a + t * nb, yr);
                for (int r = 0; r < 8; r++) {
                    const float dv = tk->dot(n, rows + r * nb, a + t * nb), dm = tk->dot_mm(n, rows + r * nb, a + t * nb);
                    const int wrong = dv != yv[r] || dm != ym[t * 8 + r] || (mv && yr[r] != yv[r]);
                    if (wrong && !bad)
                        printf("\n  %s MXFP4 row %d token %d: gemv %.9g ours %.9g (mv %.9g), gemm %.9g ours %.9g\n",
                               ks[ki]->name, r, t, yv[r], dv, mv ? yr[r] : dv, ym[t * 8 + r], dm);
                    bad += wrong;
                    checked++;
                }
            }
        }
    }
    printf(" (%d outputs) ", checked);
    CU_ASSERT_EQUAL(bad, 0);
    free(rows); free(packed); free(xm); free(a); free(x);
    dlclose(h);
}

static const sn_test_case cases[] = {
    {"scalar dots equal dequantize-then-dot in double", test_scalar_vs_double},
    {"AVX2 twins equal the scalar kernels bit for bit", test_avx2},
    {"AVX-512 twins equal the scalar kernels bit for bit", test_avx512},
    {"dequantizers equal libggml-base's bit for bit", test_dequant_vs_libggml},
    {"dots and Q8_1 equal ggml's CPU kernels bit for bit", test_dots_vs_ggml_cpu},
    {"Q4_K dot / dot_mm equal ggml's repacked q4_K_8x8 gemv / gemm", test_q4_K_vs_ggml_repack},
    {"IQ4_NL dot / dot_mm equal ggml's repacked iq4_nl_8x8 gemv / gemm", test_iq4_nl_vs_ggml_repack},
    {"MXFP4 dot / dot_mm / mv equal ggml's repacked mxfp4_8x8 gemv / gemm", test_mxfp4_vs_ggml_repack},
};
SN_TEST_MAIN("quants", cases)
