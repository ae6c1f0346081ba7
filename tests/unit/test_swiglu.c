/* test_swiglu.c - the FFN activation is bit-identical between our scalar reference, our AVX-512
 * kernel and llama.cpp's own ggml_vec_swiglu_f32 (dlopened from node-llama-cpp's zen4 CPU backend,
 * the one it runs on this machine), over a sweep of float bit patterns plus the regions where
 * ggml's expf blends in 0/inf and where silu's result goes subnormal. */
#include "sn_test.h"

#include "kernels/kernels.h"
#include "cpu.h"

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

enum { CHUNK = 4096 };

static int same(float a, float b) {
    uint32_t x, y;
    memcpy(&x, &a, 4);
    memcpy(&y, &b, 4);
    return x == y || (isnan(a) && isnan(b));
}

/* Fills gate with bit patterns from a stride walk over all 2^32 (start s), or a dense range. */
static int64_t fill_inputs(int64_t k, float *g, float *u) {
    /* k-th chunk: chunks 0..1023 sweep bit patterns, 1024.. sweep [-110, 110] densely */
    if (k < 1024) {
        for (int i = 0; i < CHUNK; i++) {
            uint32_t b = (uint32_t)((uint64_t)(k * CHUNK + i) * 1048573u);
            memcpy(&g[i], &b, 4);
            u[i] = 1.0f + (float)(i % 7) * 0.25f;
        }
        return CHUNK;
    }
    if (k < 1024 + 64) {
        const int64_t j = k - 1024;
        for (int i = 0; i < CHUNK; i++) {
            g[i] = -110.0f + 220.0f * (float)(j * CHUNK + i) / (float)(64 * CHUNK);
            u[i] = (i & 1) ? -0.5f : 3.0f;
        }
        return CHUNK;
    }
    return 0;
}

static void test_avx512_equals_scalar(void) {
    if (!(sn_cpu_usable() & SN_CPU_AVX512)) { printf("(skipped: no AVX-512) "); return; }
    static float g[CHUNK], u[CHUNK], y0[CHUNK], y1[CHUNK];
    int64_t bad = 0, total = 0;
    for (int64_t k = 0;; k++) {
        const int64_t n = fill_inputs(k, g, u);
        if (!n) break;
        const int64_t m = n - (k % 16); /* a tail of 0..15 on the libm path */
        sn_swiglu_scalar(m, y0, g, u);
        sn_swiglu_avx512(m, y1, g, u);
        for (int64_t i = 0; i < m; i++) bad += !same(y0[i], y1[i]);
        total += m;
    }
    if (bad) printf("%lld of %lld differ ", (long long)bad, (long long)total);
    CU_ASSERT_EQUAL(bad, 0);
}

typedef void (*ggml_swiglu_fn)(int n, float *y, const float *x, const float *g);

static void test_equals_ggml(void) {
    if (!(sn_cpu_usable() & SN_CPU_AVX512)) { printf("(skipped: no AVX-512, the zen4 backend cannot run) "); return; }
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-cpu-zen4.so",
             sn_test_src());
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) printf("cannot load llama.cpp's CPU backend (run scripts/deps.sh): %s ", dlerror());
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    ggml_swiglu_fn ref;
    *(void **)&ref = dlsym(h, "ggml_vec_swiglu_f32");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
    static float g[CHUNK], u[CHUNK], y0[CHUNK], y1[CHUNK];
    int64_t bad = 0, total = 0;
    for (int64_t k = 0;; k++) {
        const int64_t n = fill_inputs(k, g, u);
        if (!n) break;
        const int64_t m = n - (k % 16);
        ref((int)m, y0, g, u);
        sn_swiglu(m, y1, g, u);
        for (int64_t i = 0; i < m; i++) {
            if (!same(y0[i], y1[i]) && bad++ < 3) printf("x=%a up=%a: ggml %a, sunny %a\n", g[i], u[i], y0[i], y1[i]);
        }
        total += m;
    }
    if (bad) printf("%lld of %lld differ ", (long long)bad, (long long)total);
    CU_ASSERT_EQUAL(bad, 0);
    dlclose(h);
}

static const sn_test_case cases[] = {
    {"avx512 swiglu = scalar reference, bit for bit", test_avx512_equals_scalar},
    {"sn_swiglu = llama.cpp's ggml_vec_swiglu_f32 (zen4 backend), bit for bit", test_equals_ggml},
};
SN_TEST_MAIN("swiglu", cases)
