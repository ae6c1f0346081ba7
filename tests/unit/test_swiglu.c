/* test_swiglu.c - the FFN activation and the float dot products are bit-identical to llama.cpp's
 * own ggml_vec_swiglu_f32 / ggml_vec_dot_{f32,f16,bf16}, dlopened from the node-llama-cpp CPU
 * backend variant llama.cpp loads on this machine (zen4 where sunny follows the AVX-512 order,
 * haswell where it follows the AVX2 one, see sn_test_tuning()->lanes); the SwiGLU inputs sweep float bit
 * patterns plus the regions where ggml's expf blends in 0/inf and where silu goes subnormal. */
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
    if (!(sn_test_tuning()->isa & SN_CPU_AVX512)) { printf("(skipped: no AVX-512) "); return; }
    static float g[CHUNK], u[CHUNK], y0[CHUNK], y1[CHUNK];
    int64_t bad = 0, total = 0;
    for (int64_t k = 0;; k++) {
        const int64_t n = fill_inputs(k, g, u);
        if (!n) break;
        const int64_t m = n - (k % 16); /* a tail of 0..15 on the libm path */
        sn_swiglu_scalar(16, m, y0, g, u);
        sn_swiglu_avx512(m, y1, g, u);
        for (int64_t i = 0; i < m; i++) bad += !same(y0[i], y1[i]);
        total += m;
    }
    if (bad) printf("%lld of %lld differ ", (long long)bad, (long long)total);
    CU_ASSERT_EQUAL(bad, 0);
}

/* the AVX2 kernel follows the 8-lane order: compared with the scalar reference in that order */
static void test_avx2_equals_scalar(void) {
    if (!(sn_test_tuning()->isa & SN_CPU_AVX2)) { printf("(skipped: no AVX2) "); return; }
    if (sn_test_tuning()->lanes != 8) { printf("(skipped: SN_GGML_LANES=16 here) "); return; }
    static float g[CHUNK], u[CHUNK], y0[CHUNK], y1[CHUNK];
    int64_t bad = 0, total = 0;
    for (int64_t k = 0;; k++) {
        const int64_t n = fill_inputs(k, g, u);
        if (!n) break;
        const int64_t m = n - (k % 8); /* a tail of 0..7 on the libm path */
        sn_swiglu_scalar(8, m, y0, g, u);
        sn_swiglu_avx2(m, y1, g, u);
        for (int64_t i = 0; i < m; i++) bad += !same(y0[i], y1[i]);
        total += m;
    }
    if (bad) printf("%lld of %lld differ ", (long long)bad, (long long)total);
    CU_ASSERT_EQUAL(bad, 0);
}

/* Gemma's GELU: the AVX-512 and AVX2 geglu (f16 conversions in hardware, the table gathered) equal
 * the scalar reference on the SwiGLU sweep (every bit pattern class, the +-10 cut-offs, NaN/inf)
 * and on every f16 value (each table entry, the padding one included), with tails of 0..15. */
static void test_geglu(void) {
    const uint32_t f = sn_test_tuning()->isa;
    static float g[CHUNK], u[CHUNK], y0[CHUNK], y1[CHUNK];
    int64_t bad = 0, total = 0;
    for (int64_t k = 0;; k++) {
        int64_t n = fill_inputs(k, g, u);
        if (!n && k < 1024 + 64 + 17) { /* then the 65536 f16 values, 16 chunks (and a last short one) */
            const int64_t j = k - 1024 - 64;
            for (int i = 0; i < CHUNK; i++) {
                g[i] = sn_k_h2f((uint16_t)((j * CHUNK + i) & 0xffff));
                u[i] = (i & 1) ? -1.5f : 1.0f;
            }
            n = j < 16 ? CHUNK : 16;
        }
        if (!n) break;
        const int64_t m = n - (k % 16);
        sn_geglu_scalar(m, y0, g, u);
        if (f & SN_CPU_AVX512) {
            sn_geglu_avx512(m, y1, g, u);
            for (int64_t i = 0; i < m; i++) bad += !same(y0[i], y1[i]);
        }
        if (f & SN_CPU_AVX2) {
            sn_geglu_avx2(m, y1, g, u);
            for (int64_t i = 0; i < m; i++) bad += !same(y0[i], y1[i]);
        }
        total += m;
    }
    printf("(%lld inputs%s%s) ", (long long)total, f & SN_CPU_AVX512 ? ", avx512" : "", f & SN_CPU_AVX2 ? ", avx2" : "");
    if (bad) printf("%lld differ ", (long long)bad);
    CU_ASSERT_EQUAL(bad, 0);
}

/* The flash-attention softmax's vector exp: each flavour equals its one-lane polynomial element by
 * element whatever order this machine follows (sn_exp_sub_avx512 = sn_v_expf, sn_exp_sub_avx2 =
 * sn_v_expf8, wherever the CPU runs them), and sn_exp_sub / sn_exp_sub_scalar equal the flavour
 * sn_test_tuning()->lanes picks; on the SwiGLU sweep shifted by m = 0, 3.5, -87 and 120 (into both blend
 * regions), with a -inf input in every chunk (a masked key of a partial tile, which must give 0). */
static void test_exp_sub(void) {
    const uint32_t f = sn_test_tuning()->isa;
    static float g[CHUNK], u[CHUNK], y[CHUNK];
    static const float ms[] = {0.0f, 3.5f, -87.0f, 120.0f};
    int64_t bad = 0;
    for (int64_t k = 0;; k++) {
        const int64_t n = fill_inputs(k, g, u) & ~(int64_t)15;
        if (!n) break;
        g[k % 64] = -INFINITY;
        const float m = ms[k % 4];
        for (int v = 0; v < 4; v++) {
            if ((v == 2 && !(f & SN_CPU_AVX512)) || (v == 3 && !(f & SN_CPU_AVX2))) continue;
            const int lanes = v == 2 ? 16 : v == 3 ? 8 : sn_test_tuning()->lanes;
            if (v == 1) sn_exp_sub_scalar(lanes, n, y, g, m);
            else (v == 0 ? sn_test_kernels(-1)->exp_sub : v == 2 ? sn_exp_sub_avx512 : sn_exp_sub_avx2)(n, y, g, m);
            for (int64_t i = 0; i < n; i++) bad += !same(y[i], lanes == 16 ? sn_v_expf(g[i] - m) : sn_v_expf8(g[i] - m));
            bad += y[k % 64] != 0.0f;
        }
    }
    if (bad) printf("%lld differ ", (long long)bad);
    CU_ASSERT_EQUAL(bad, 0);
}

typedef void (*ggml_swiglu_fn)(int n, float *y, const float *x, const float *g);

/* The ggml-cpu variant whose order sunny follows here, or NULL (with the reason printed). */
static void *open_ggml_variant(void) {
    const int lanes = sn_test_tuning()->lanes;
    const uint32_t f = sn_cpu_features();
    const char *variant = lanes == 16 ? "zen4" : "haswell";
    if (lanes == 16 ? !(f & SN_CPU_AVX512) : !(f & SN_CPU_AVX2)) {
        printf("(skipped: this CPU cannot run the %s backend) ", variant);
        return NULL;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-cpu-%s.so",
             sn_test_src(), variant);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) printf("cannot load llama.cpp's CPU backend (run scripts/deps.sh): %s ", dlerror());
    CU_ASSERT_PTR_NOT_NULL(h);
    void (*init)(void);
    *(void **)&init = h ? dlsym(h, "ggml_cpu_init") : NULL; /* fills the fp16 table the tails read */
    if (init) init();
    return h;
}

static void test_equals_ggml(void) {
    void *h = open_ggml_variant();
    if (!h) return;
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
        sn_test_kernels(-1)->swiglu(m, y1, g, u);
        for (int64_t i = 0; i < m; i++) {
            if (!same(y0[i], y1[i]) && bad++ < 3) printf("x=%a up=%a: ggml %a, sunny %a\n", g[i], u[i], y0[i], y1[i]);
        }
        total += m;
    }
    if (bad) printf("%lld of %lld differ ", (long long)bad, (long long)total);
    CU_ASSERT_EQUAL(bad, 0);
    dlclose(h);
}

/* ggml_vec_dot_<t>(n, &s, bs, x, bx, y, by, nrc): x is the weight row, y the activation. */
typedef void (*ggml_dot_fn)(int n, float *s, size_t bs, const void *x, size_t bx, const void *y, size_t by, int nrc);

static void test_dots_equal_ggml(void) {
    void *h = open_ggml_variant();
    if (!h) return;
    static const struct { const char *sym; int type; int size; } T[] = {
        {"ggml_vec_dot_f32", SN_GGML_F32, 4}, {"ggml_vec_dot_f16", SN_GGML_F16, 2}, {"ggml_vec_dot_bf16", SN_GGML_BF16, 2}};
    const sn_kernels *tabs[] = {sn_test_kernels(0), sn_test_kernels(1), sn_test_kernels(2)};
    static float xf[8192], yf[8192];
    static uint16_t xh[8192], yh[8192];
    uint32_t seed = 12345;
    for (int i = 0; i < 8192; i++) {
        seed = seed * 1664525u + 1013904223u;
        xf[i] = (float)((int32_t)seed >> 8) / 8388608.0f;
        seed = seed * 1664525u + 1013904223u;
        yf[i] = (float)((int32_t)seed >> 8) / 4194304.0f;
        xh[i] = sn_k_f2h(xf[i]);
        yh[i] = sn_k_f2h(yf[i]);
    }
    /* 13, 32, 45: all tail (RWKV-7's rank-32 LoRA rows at 16 lanes); 77 = 64 + 8 + 5 and 100: a
     * chunk of half the lanes then fused singles; the rest multiples and long rows. */
    static const int ns[] = {13, 32, 45, 64, 77, 96, 100, 256, 896, 1000, 2048, 4096, 8192};
    int bad = 0, checked = 0;
    for (int t = 0; t < 3; t++) {
        ggml_dot_fn ref;
        *(void **)&ref = dlsym(h, T[t].sym);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ref);
        uint16_t *xb = xh, *yb = yh;
        static uint16_t xbf[8192], ybf[8192];
        if (T[t].type == SN_GGML_BF16) {
            for (int i = 0; i < 8192; i++) { xbf[i] = sn_k_f2bf(xf[i]); ybf[i] = sn_k_f2bf(yf[i]); }
            xb = xbf, yb = ybf;
        }
        const void *x = T[t].size == 4 ? (const void *)xf : (const void *)xb;
        const void *y = T[t].size == 4 ? (const void *)yf : (const void *)yb;
        for (size_t n = 0; n < sizeof ns / sizeof ns[0]; n++) {
            float want = 0;
            ref(ns[n], &want, 0, x, 0, y, 0, 1);
            for (int k = 0; k < 3; k++) {
                if (!tabs[k]) continue;
                const float got = tabs[k]->type[T[t].type].dot(ns[n], x, y);
                checked++;
                if (!same(got, want) && bad++ < 12)
                    printf("%s n=%d (%s table): ggml %a, sunny %a\n", T[t].sym, ns[n], tabs[k]->name, want, got);
            }
        }
    }
    printf("(%d dots checked, lanes %d) ", checked, sn_test_tuning()->lanes);
    CU_ASSERT_EQUAL(bad, 0);
    dlclose(h);
}

static const sn_test_case cases[] = {
    {"avx512 swiglu = scalar reference, bit for bit", test_avx512_equals_scalar},
    {"avx2 swiglu = scalar reference (8-lane order), bit for bit", test_avx2_equals_scalar},
    {"geglu (avx512, avx2) = the scalar reference over the f16 table, bit for bit", test_geglu},
    {"softmax exp (the kernel table's exp_sub) = the one-lane polynomial, bit for bit", test_exp_sub},
    {"the kernel table's swiglu = llama.cpp's ggml_vec_swiglu_f32 (this machine's backend variant), bit for bit", test_equals_ggml},
    {"float dots = llama.cpp's ggml_vec_dot_f32/f16/bf16 (this machine's backend variant)", test_dots_equal_ggml},
};
SN_TEST_MAIN("swiglu", cases)
