/* test_ggml_types.c - type table, fp16/bf16 conversions and quantizers against ggml's definitions.
 *
 * Expected bytes are worked out by hand from ggml's algorithms (ties, zero blocks, +-max, NaN/Inf
 * as ggml's x86 build treats them), the fp16 round trip is exhaustive, and the SIMD row converters
 * are compared lane for lane with the scalar ones. When the npm oracle is installed, the
 * quantizers and converters are also compared bit for bit with llama.cpp's own libggml-base.so
 * (tests/node_modules/@node-llama-cpp/linux-x64), which is what llama-quantize runs. */
#include "ggml_types.h"
#include "quants.h"
#include "sn_test.h"

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static uint32_t bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float fbits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}
static float frand(void) { return (float)((double)(rnd() >> 11) / 9007199254740992.0) * 2.0f - 1.0f; }
static float gauss(void) { return (frand() + frand() + frand() + frand()) * 0.9f; }

/* ---------------------------------------------------------------------------------------------- */
static void test_type_table(void) {
    CU_ASSERT_STRING_EQUAL(sn_ggml_type_name(SN_GGML_F32), "F32");
    CU_ASSERT_STRING_EQUAL(sn_ggml_type_name(SN_GGML_BF16), "BF16");
    CU_ASSERT_STRING_EQUAL(sn_ggml_type_name(SN_GGML_Q4_K), "Q4_K");
    CU_ASSERT_STRING_EQUAL(sn_ggml_type_name(23), "IQ4_XS");
    CU_ASSERT_STRING_EQUAL(sn_ggml_type_name(42), "Q2_0");
    CU_ASSERT_EQUAL(sn_ggml_type_from_name("q4_k"), SN_GGML_Q4_K);
    CU_ASSERT_EQUAL(sn_ggml_type_from_name("Q8_0"), SN_GGML_Q8_0);
    CU_ASSERT_EQUAL(sn_ggml_type_from_name("Q4_2"), -1);
    /* the blob's INT4G32 is the row after ggml's ids (the GGUF reader still refuses id 43) */
    CU_ASSERT_STRING_EQUAL(sn_ggml_type_name(SN_KTYPE_INT4G32), "INT4G32");
    CU_ASSERT_EQUAL(sn_ggml_row_size(SN_KTYPE_INT4G32, 128), 72);
    CU_ASSERT_EQUAL(sn_ggml_row_size(SN_KTYPE_INT4G32, 96), 0);
    const int retired[] = {4, 5, 31, 32, 33, 36, 37, 38, SN_KTYPE_COUNT, -1, 1000};
    for (size_t i = 0; i < sizeof retired / sizeof retired[0]; i++) {
        CU_ASSERT_PTR_NULL(sn_ggml_type_name(retired[i]));
        CU_ASSERT_EQUAL(sn_ggml_blck_size(retired[i]), 0);
        CU_ASSERT_EQUAL(sn_ggml_type_size(retired[i]), 0);
        CU_ASSERT_EQUAL(sn_ggml_row_size(retired[i], 256), 0);
    }
    struct { int t; uint32_t blck; size_t size; } want[] = {
        {0, 1, 4}, {1, 1, 2}, {2, 32, 18}, {3, 32, 20}, {6, 32, 22}, {7, 32, 24}, {8, 32, 34},
        {9, 32, 36}, {10, 256, 84}, {11, 256, 110}, {12, 256, 144}, {13, 256, 176}, {14, 256, 210},
        {15, 256, 292}, {24, 1, 1}, {25, 1, 2}, {26, 1, 4}, {27, 1, 8}, {28, 1, 8}, {30, 1, 2},
        {34, 256, 54}, {35, 256, 66}, {39, 32, 17}, {40, 64, 36}, {41, 128, 18}, {42, 64, 18}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CU_ASSERT_EQUAL(sn_ggml_blck_size(want[i].t), want[i].blck);
        CU_ASSERT_EQUAL(sn_ggml_type_size(want[i].t), want[i].size);
    }
    int known = 0;
    for (int t = 0; t < SN_GGML_TYPE_COUNT; t++) known += sn_ggml_blck_size(t) != 0;
    CU_ASSERT_EQUAL(known, 43 - 8);
    CU_ASSERT_EQUAL(sn_ggml_row_size(SN_GGML_Q4_K, 512), 288);
    CU_ASSERT_EQUAL(sn_ggml_row_size(SN_GGML_Q4_K, 100), 0);
    CU_ASSERT_EQUAL(sn_ggml_row_size(SN_GGML_F16, 7), 14);
    CU_ASSERT_EQUAL(sn_ggml_row_size(SN_GGML_Q8_0, 64), 68);
}

/* ---------------------------------------------------------------------------------------------- */
static void test_fp16_edges(void) {
    struct { uint32_t f; uint16_t h; } v[] = {
        {0x00000000, 0x0000}, {0x80000000, 0x8000}, {0x3F800000, 0x3C00}, {0xBF800000, 0xBC00},
        {0x477FE000, 0x7BFF},                       /* 65504, the largest half */
        {0x477FEFFF, 0x7BFF},                       /* just below the 65520 tie */
        {0x477FF000, 0x7C00},                       /* 65520 ties to even = inf */
        {0x7F800000, 0x7C00}, {0xFF800000, 0xFC00}, {0x501502F9, 0x7C00}, /* 1e10 */
        {0x7FC00000, 0x7E00}, {0xFFC00001, 0xFE00}, {0x7F800001, 0x7E00}, {0x7FFFE000, 0x7E00},
        {0x33800000, 0x0001},                       /* 2^-24, smallest subnormal */
        {0x33000000, 0x0000},                       /* 2^-25: tie -> even 0 */
        {0x33000001, 0x0001},
        {0x33C00000, 0x0002},                       /* 1.5*2^-24: tie -> even 2 */
        {0x38800000, 0x0400},                       /* 2^-14, smallest normal */
        {0x3F801000, 0x3C00},                       /* 1+2^-11: tie -> even */
        {0x3F803000, 0x3C02},                       /* 1+3*2^-11: tie -> even */
        {0x3F801001, 0x3C01}, {0x00000001, 0x0000}, {0x32800000, 0x0000}, /* 2^-26 */
        {0xB3C00000, 0x8002},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        uint16_t h = sn_fp32_to_fp16(fbits(v[i].f));
        if (h != v[i].h) fprintf(stderr, "fp16(%08x) = %04x, want %04x\n", v[i].f, h, v[i].h);
        CU_ASSERT_EQUAL(h, v[i].h);
    }
    /* 1023.5 * 2^-24 is the tie between the largest subnormal and the smallest normal */
    CU_ASSERT_EQUAL(sn_fp32_to_fp16(ldexpf(1023.5f, -24)), 0x0400);
    CU_ASSERT_EQUAL(sn_fp32_to_fp16(ldexpf(1022.5f, -24)), 0x03FE);
    CU_ASSERT_EQUAL(sn_fp32_to_fp16(ldexpf(1021.5f, -24)), 0x03FE);

    CU_ASSERT_EQUAL(bits(sn_fp16_to_fp32(0x0001)), bits(ldexpf(1.0f, -24)));
    CU_ASSERT_EQUAL(sn_fp16_to_fp32(0x03FF), ldexpf(1023.0f, -24));
    CU_ASSERT_EQUAL(sn_fp16_to_fp32(0x7BFF), 65504.0f);
    CU_ASSERT_EQUAL(bits(sn_fp16_to_fp32(0x7C00)), 0x7F800000u);
    CU_ASSERT_EQUAL(bits(sn_fp16_to_fp32(0x7C01)), 0x7FC02000u); /* signalling NaN comes back quiet */
    CU_ASSERT_EQUAL(bits(sn_fp16_to_fp32(0xFE00)), 0xFFC00000u);
    CU_ASSERT_EQUAL(bits(sn_fp16_to_fp32(0x8000)), 0x80000000u);
}

static void test_fp16_exhaustive_round_trip(void) {
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = sn_fp16_to_fp32((uint16_t)h);
        uint16_t back = sn_fp32_to_fp16(f);
        int is_nan = (h & 0x7C00) == 0x7C00 && (h & 0x3FF);
        uint16_t want = is_nan ? (uint16_t)((h & 0x8000) | 0x7E00) : (uint16_t)h;
        if (back != want) bad++;
        /* the value is what IEEE says it is */
        if (!is_nan && (h & 0x7C00) != 0x7C00) {
            int e = (int)((h >> 10) & 0x1F), m = (int)(h & 0x3FF);
            double val = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
            if (h & 0x8000) val = -val;
            if ((double)f != val) bad++;
        }
        /* and f +- half an ulp rounds to even */
    }
    CU_ASSERT_EQUAL(bad, 0);
    /* midpoints between consecutive positive finite halves round to the even one */
    int badmid = 0;
    for (uint32_t h = 0; h < 0x7BFF; h++) {
        double a = sn_fp16_to_fp32((uint16_t)h), b = sn_fp16_to_fp32((uint16_t)(h + 1));
        float mid = (float)((a + b) / 2); /* exact in f32 */
        uint16_t want = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
        if (sn_fp32_to_fp16(mid) != want) badmid++;
        if (sn_fp32_to_fp16(nextafterf(mid, 1e9f)) != h + 1) badmid++;
        if (sn_fp32_to_fp16(nextafterf(mid, -1e9f)) != h) badmid++;
    }
    CU_ASSERT_EQUAL(badmid, 0);
}

static void test_bf16(void) {
    struct { uint32_t f; uint16_t h; } v[] = {
        {0x3F800000, 0x3F80}, {0x3F808000, 0x3F80}, {0x3F818000, 0x3F82}, {0x3F808001, 0x3F81},
        {0x7F7FFFFF, 0x7F80}, {0x7F800000, 0x7F80}, {0xFF800000, 0xFF80}, {0x7F800001, 0x7FC0},
        {0xFF800001, 0xFFC0}, {0x7FC00000, 0x7FC0}, {0x7FA00000, 0x7FE0}, {0x00008000, 0x0000},
        {0x00018000, 0x0002}, {0x80000000, 0x8000}, {0xC0490FDB, 0xC049},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        CU_ASSERT_EQUAL(sn_fp32_to_bf16(fbits(v[i].f)), v[i].h);
        CU_ASSERT_EQUAL(bits(sn_bf16_to_fp32(v[i].h)), (uint32_t)v[i].h << 16);
    }
}

/* SIMD row converters equal the scalar ones, including NaN payloads, tails and odd alignment. */
static void test_rows_match_scalar(void) {
    const size_t n = 100003;
    float *x = malloc((n + 1) * sizeof *x), *y = malloc((n + 1) * sizeof *y);
    uint16_t *h = malloc((n + 1) * 2), *h2 = malloc((n + 1) * 2);
    for (size_t i = 0; i <= n; i++) {
        uint32_t u = (uint32_t)rnd();
        switch (i % 7) {
        case 0: u = (u & 0x807FFFFF) | 0x7F800000; break; /* Inf / NaN with payloads */
        case 1: u &= 0x807FFFFF; break;                    /* f32 subnormals */
        case 2: u = (u & 0x87FFFFFF) | 0x30000000; break;  /* around the f16 subnormal range */
        case 3: u = (u & 0x81FFFFFF) | 0x46000000; break;  /* around 65504 */
        default: break;
        }
        memcpy(&x[i], &u, 4);
    }
    int bad = 0;
    size_t lens[] = {0, 1, 7, 8, 15, 16, 17, 31, 33, 64, 65, 1000, n};
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        for (size_t off = 0; off < 2; off++) {
            size_t len = lens[li] - (lens[li] == n ? off : 0);
            memset(h, 0, (n + 1) * 2);
            sn_fp32_to_fp16_row(x + off, h, len);
            for (size_t i = 0; i < len; i++) bad += h[i] != sn_fp32_to_fp16(x[off + i]);
            sn_fp32_to_bf16_row(x + off, h, len);
            for (size_t i = 0; i < len; i++) bad += h[i] != sn_fp32_to_bf16(x[off + i]);
            for (size_t i = 0; i <= n; i++) h2[i] = (uint16_t)rnd();
            sn_fp16_to_fp32_row(h2 + off, y, len);
            for (size_t i = 0; i < len; i++) bad += bits(y[i]) != bits(sn_fp16_to_fp32(h2[off + i]));
            sn_bf16_to_fp32_row(h2 + off, y, len);
            for (size_t i = 0; i < len; i++) bad += bits(y[i]) != bits(sn_bf16_to_fp32(h2[off + i]));
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    free(x);
    free(y);
    free(h);
    free(h2);
}

/* The fused bf16 -> f16 row equals bf16 -> f32 -> f16 for every bf16 value (NaN payloads, values
 * that overflow or become f16 subnormals), at every SIMD level, with tails of every length. */
static void test_bf16_to_fp16_row_exhaustive(void) {
    const size_t n = 65536 + 23;
    uint16_t *x = malloc(n * 2), *y = malloc(n * 2);
    for (size_t i = 0; i < n; i++) x[i] = (uint16_t)(i < 65536 ? i : rnd());
    int bad = 0;
    for (int level = 0; level <= 2; level++) {
        for (size_t len = n - 17; len <= n; len++) {
            memset(y, 0xAA, n * 2);
            sn_bf16_to_fp16_row_at(x + (n - len), y, len, level);
            for (size_t i = 0; i < len; i++)
                bad += y[i] != sn_fp32_to_fp16(sn_bf16_to_fp32(x[n - len + i]));
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
    free(x);
    free(y);
}

/* The converter's quantizers at every SIMD level against the scalar ones on 4M values per type:
 * weights of every scale (1e-38 .. 1e30), blocks with one outlier, exact binary fractions (ties
 * in the x/d and 8.5 roundings), and sprinkled NaN/Inf/subnormals/signed zeros. With the npm
 * oracle installed, the scalar bytes are also compared with llama.cpp's libggml-base.so. */
static void test_simd_quantizers_many(void) {
    enum { N = 1 << 22 };
    float *x = malloc(N * sizeof *x);
    uint8_t *a = malloc(N * 2), *b = malloc(N * 2); /* every type is < 2 bytes per value */
    for (int i = 0; i < N; i++) {
        int blk = i / 256;
        float v = gauss() * ldexpf(1.0f, (int)(rnd() % 16) - 8);
        switch (blk % 6) {
        case 1: v = ldexpf(gauss(), (int)(blk % 200) - 126); break;     /* every exponent */
        case 2: v = (float)(int)(gauss() * 16) / 8.0f; break;            /* ties */
        case 3: if (i % 256 == (blk * 7) % 256) v *= 1e6f; break;         /* one outlier */
        case 4: {                                                         /* specials */
            const float sp[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-45f, -1e-40f, 3.4e38f};
            if (rnd() % 53 == 0) v = sp[rnd() % 9];
            break;
        }
        case 5: v = (rnd() % 4) ? v : 0.0f; break;                        /* sparse */
        default: break;
        }
        x[i] = v;
    }
    /* n: values quantized (the IQ4 and Q2_K searches are slow in scalar: 1/8 of the row); sym:
     * libggml's _ref function, or ggml_quantize_chunk of type (what llama-quantize calls) */
    struct { int qt; const char *name; size_t bsize, blck; int64_t n; const char *sym; int type; } t[] = {
        {SN_GGML_Q8_0, "q8_0", 34, 32, N, "quantize_row_q8_0_ref", -1},
        {SN_GGML_Q4_0, "q4_0", 18, 32, N, "quantize_row_q4_0_ref", -1},
        {SN_GGML_Q6_K, "q6_K", 210, 256, N, "quantize_row_q6_K_ref", -1},
        {SN_GGML_Q4_K, "q4_K", 144, 256, N / 4 - 256, "quantize_row_q4_K_ref", -1}, /* odd: a lone block */
        {SN_GGML_Q5_K, "q5_K", 176, 256, N / 4, "quantize_row_q5_K_ref", -1},
        {SN_GGML_Q2_K, "q2_K", 84, 256, N / 8, "quantize_row_q2_K_ref", -1},
        {SN_GGML_Q3_K, "q3_K", 110, 256, N / 8, "quantize_row_q3_K_ref", -1},
        {SN_GGML_IQ4_NL, "iq4_nl", 18, 32, N / 8 - 96, "ggml_quantize_chunk", SN_GGML_IQ4_NL}, /* 8k+5 blocks */
        {SN_GGML_IQ4_XS, "iq4_xs", 136, 256, N / 8, "ggml_quantize_chunk", SN_GGML_IQ4_XS},
    };
    typedef size_t (*chunk_fn)(int, const float *, void *, int64_t, int64_t, int64_t, const float *);
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/"
             "libggml-base.so", sn_test_src());
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        const size_t bytes = (size_t)t[k].n / t[k].blck * t[k].bsize;
        CU_ASSERT_EQUAL(sn_ggml_from_f32_at(t[k].qt, x, a, t[k].n, 0), 0);
        void *sym = h ? dlsym(h, t[k].sym) : NULL;
        if (sym) {
            memset(b, 0x5A, bytes);
            if (t[k].type < 0) ((void (*)(const float *, void *, int64_t))sym)(x, b, t[k].n);
            else if (t[k].n % 256) ((chunk_fn)sym)(t[k].type, x, b, 0, 1, t[k].n, NULL); /* one row */
            else ((chunk_fn)sym)(t[k].type, x, b, 0, t[k].n / 256, 256, NULL);
            int same = memcmp(a, b, bytes) == 0;
            if (!same) fprintf(stderr, "\n  %s: scalar differs from libggml's %s\n", t[k].name, t[k].sym);
            CU_ASSERT(same);
        }
        for (int level = 1; level <= 2; level++) {
            memset(b, 0x5A, bytes);
            sn_ggml_from_f32_at(t[k].qt, x, b, t[k].n, level);
            size_t first = bytes;
            for (size_t i = 0; i < bytes && first == bytes; i++)
                if (a[i] != b[i]) first = i;
            if (first != bytes)
                fprintf(stderr, "\n  %s: SIMD level %d differs from scalar at byte %zu\n", t[k].name, level, first);
            CU_ASSERT_EQUAL(first, bytes);
        }
    }
    if (h) dlclose(h);
    free(x);
    free(a);
    free(b);
}

/* ---------------------------------------------------------------------------------------------- */
static void test_q8_0_hand(void) {
    float x[32] = {127, -127, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 0, 126.5f, -126.5f, 63.49f, 1e-30f};
    sn_block_q8_0 b;
    sn_quantize_row_q8_0(x, &b, 32);
    CU_ASSERT_EQUAL(b.d, 0x3C00); /* d = 127/127 = 1 */
    const int8_t want[12] = {127, -127, 1, -1, 2, 3, -3, 0, 127, -127, 63, 0}; /* roundf: away from 0 */
    CU_ASSERT(memcmp(b.qs, want, 12) == 0);
    for (int j = 12; j < 32; j++) CU_ASSERT_EQUAL(b.qs[j], 0);

    float z[32] = {0};
    memset(&b, 0x55, sizeof b);
    sn_quantize_row_q8_0(z, &b, 32);
    CU_ASSERT_EQUAL(b.d, 0);
    for (int j = 0; j < 32; j++) CU_ASSERT_EQUAL(b.qs[j], 0);

    /* NaN first: MAX(amax, NaN) forgets it, later values win; NaN itself quantizes to 0 */
    float n1[32] = {NAN, 127};
    sn_quantize_row_q8_0(n1, &b, 32);
    CU_ASSERT_EQUAL(b.d, 0x3C00);
    CU_ASSERT_EQUAL(b.qs[0], 0);
    CU_ASSERT_EQUAL(b.qs[1], 127);
    /* NaN last: d becomes NaN and every q is 0 */
    float n2[32] = {127};
    n2[31] = NAN;
    sn_quantize_row_q8_0(n2, &b, 32);
    CU_ASSERT_EQUAL(b.d, 0x7E00);
    for (int j = 0; j < 32; j++) CU_ASSERT_EQUAL(b.qs[j], 0);
    /* Inf: d = inf, 1/d = 0, everything 0 */
    float in[32] = {INFINITY, 5};
    sn_quantize_row_q8_0(in, &b, 32);
    CU_ASSERT_EQUAL(b.d, 0x7C00);
    CU_ASSERT_EQUAL(b.qs[0], 0);
    CU_ASSERT_EQUAL(b.qs[1], 0);
    /* fp16 rounding of d: amax = 1 -> d = 1/127 -> half 0x2008 (0.0078763962) */
    float s[32] = {1, -0.25f};
    sn_quantize_row_q8_0(s, &b, 32);
    CU_ASSERT_EQUAL(b.d, sn_fp32_to_fp16(1.0f / 127));
    CU_ASSERT_EQUAL(b.d, 0x2008);
    CU_ASSERT_EQUAL(b.qs[0], 127);
    CU_ASSERT_EQUAL(b.qs[1], -32); /* -0.25*127 = -31.75 */
}

static void test_q4_0_hand(void) {
    sn_block_q4_0 b;
    float x[32] = {-8, 7, 0, 0.5f, -0.5f, 0.49f, 3.6f, -7.9f};
    x[16] = 6.5f;
    x[17] = -3.5f;
    sn_quantize_row_q4_0(x, &b, 32);
    CU_ASSERT_EQUAL(b.d, 0x3C00); /* max = -8 -> d = 1 */
    const uint8_t want[16] = {0xF0, 0x5F, 0x88, 0x89, 0x88, 0x88, 0x8C, 0x80,
                              0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88};
    CU_ASSERT(memcmp(b.qs, want, 16) == 0);

    float p[32] = {8, -7.6f, -7, 4}; /* positive max -> d = -1; -7.6 clamps to 15 */
    sn_quantize_row_q4_0(p, &b, 32);
    CU_ASSERT_EQUAL(b.d, 0xBC00);
    const uint8_t wantp[4] = {0x80, 0x8F, 0x8F, 0x84};
    CU_ASSERT(memcmp(b.qs, wantp, 4) == 0);
    for (int j = 4; j < 16; j++) CU_ASSERT_EQUAL(b.qs[j], 0x88);

    float t[32] = {-4, 4}; /* equal magnitudes: the first one sets the sign */
    sn_quantize_row_q4_0(t, &b, 32);
    CU_ASSERT_EQUAL(b.d, 0x3800); /* 0.5 */
    CU_ASSERT_EQUAL(b.qs[0], 0x80);
    CU_ASSERT_EQUAL(b.qs[1], 0x8F);

    float z[32] = {0};
    sn_quantize_row_q4_0(z, &b, 32);
    CU_ASSERT_EQUAL(b.d, 0x8000); /* d = 0 / -8 = -0.0 */
    for (int j = 0; j < 16; j++) CU_ASSERT_EQUAL(b.qs[j], 0x88);

    float dq[32];
    CU_ASSERT_EQUAL(sn_dequantize_row(SN_GGML_Q4_0, &b, dq, 32), 0);
    for (int j = 0; j < 32; j++) CU_ASSERT_EQUAL(dq[j], 0.0f);
}

/* Integers 0..15 in every sub-block: the min/max grid fits exactly (scale 1, min 0), so
 * d = fp16(1/63) = 0x2410, dmin = 0, all 6-bit scales 63, mins 0, levels = the values. */
static void test_q4_K_hand(void) {
    float x[256];
    for (int i = 0; i < 256; i++) x[i] = (float)((i * 7) % 16);
    sn_block_q4_K b;
    sn_quantize_row_q4_K(x, &b, 256);
    CU_ASSERT_EQUAL(b.d, 0x2410);
    CU_ASSERT_EQUAL(b.dmin, 0x0000);
    const uint8_t ws[12] = {0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0x0F, 0x0F, 0x0F, 0x0F};
    CU_ASSERT(memcmp(b.scales, ws, 12) == 0);
    int bad = 0;
    for (int c = 0; c < 4; c++)
        for (int l = 0; l < 32; l++) {
            uint8_t want = (uint8_t)((int)x[64 * c + l] | ((int)x[64 * c + l + 32] << 4));
            bad += b.qs[32 * c + l] != want;
        }
    CU_ASSERT_EQUAL(bad, 0);
    float y[256];
    CU_ASSERT_EQUAL(sn_dequantize_row(SN_GGML_Q4_K, &b, y, 256), 0);
    for (int i = 0; i < 256; i++) CU_ASSERT_EQUAL(y[i], 0.999755859375f * x[i]); /* 63*d */

    float z[256] = {0};
    memset(&b, 0x55, sizeof b);
    sn_quantize_row_q4_K(z, &b, 256);
    const uint8_t *raw = (const uint8_t *)&b;
    int nz = 0;
    for (size_t i = 0; i < sizeof b; i++) nz += raw[i] != 0;
    CU_ASSERT_EQUAL(nz, 0);
}

/* Integers -32..31 with -32 in every 16-group: scale 1 per sub-block, d = fp16(-1/128) = 0xA000,
 * all int8 scales -128, levels = value + 32, split into 4 low bits (ql) and 2 high bits (qh). */
static void test_q6_K_hand(void) {
    float x[256];
    for (int i = 0; i < 256; i++) x[i] = (i % 16 == 0) ? -32.0f : (float)((i * 5) % 64 - 32);
    sn_block_q6_K b;
    sn_quantize_row_q6_K(x, &b, 256);
    CU_ASSERT_EQUAL(b.d, 0xA000);
    for (int j = 0; j < 16; j++) CU_ASSERT_EQUAL(b.scales[j], -128);
    int bad = 0;
    for (int h = 0; h < 2; h++)
        for (int l = 0; l < 32; l++) {
            int L[4];
            for (int k = 0; k < 4; k++) L[k] = (int)x[128 * h + l + 32 * k] + 32;
            bad += b.ql[64 * h + l] != (uint8_t)((L[0] & 15) | ((L[2] & 15) << 4));
            bad += b.ql[64 * h + l + 32] != (uint8_t)((L[1] & 15) | ((L[3] & 15) << 4));
            bad += b.qh[32 * h + l] !=
                   (uint8_t)((L[0] >> 4) | ((L[1] >> 4) << 2) | ((L[2] >> 4) << 4) | ((L[3] >> 4) << 6));
        }
    CU_ASSERT_EQUAL(bad, 0);
    float y[256];
    CU_ASSERT_EQUAL(sn_dequantize_row(SN_GGML_Q6_K, &b, y, 256), 0);
    for (int i = 0; i < 256; i++) CU_ASSERT_EQUAL(y[i], x[i]);

    float z[256] = {0};
    memset(&b, 0x55, sizeof b);
    sn_quantize_row_q6_K(z, &b, 256);
    const uint8_t *raw = (const uint8_t *)&b;
    int nz = 0;
    for (size_t i = 0; i < sizeof b; i++) nz += raw[i] != 0;
    CU_ASSERT_EQUAL(nz, 0);
}

static void test_q8_K_hand(void) {
    float x[256] = {0};
    x[0] = -127;
    x[1] = 0.5f;  /* ties to even: 0 */
    x[2] = 1.5f;  /* 2 */
    x[3] = 64;
    sn_block_q8_K b;
    sn_quantize_row_q8_K(x, &b, 256);
    CU_ASSERT_EQUAL(b.d, 1.0f); /* iscale = -127/-127 */
    CU_ASSERT_EQUAL(b.qs[0], -127);
    CU_ASSERT_EQUAL(b.qs[1], 0);
    CU_ASSERT_EQUAL(b.qs[2], 2);
    CU_ASSERT_EQUAL(b.qs[3], 64);
    CU_ASSERT_EQUAL(b.bsums[0], -127 + 2 + 64);
    CU_ASSERT_EQUAL(b.bsums[1], 0);
}

/* dequant(quant(x)) stays within the error the format allows. */
static void test_quant_error_bounds(void) {
    enum { N = 8192 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    uint8_t *q = malloc(N * 2);
    for (int i = 0; i < N; i++) x[i] = gauss() * (i % 512 < 256 ? 1.0f : 0.01f);

    sn_quantize_row_q8_0(x, q, N);
    CU_ASSERT_EQUAL(sn_dequantize_row(SN_GGML_Q8_0, q, y, N), 0);
    int bad = 0;
    for (int b = 0; b < N / 32; b++) {
        float d = sn_fp16_to_fp32(((sn_block_q8_0 *)q)[b].d);
        for (int j = 0; j < 32; j++) bad += fabsf(y[32 * b + j] - x[32 * b + j]) > 0.57f * d;
    }
    CU_ASSERT_EQUAL(bad, 0);

    sn_quantize_row_q4_0(x, q, N);
    CU_ASSERT_EQUAL(sn_dequantize_row(SN_GGML_Q4_0, q, y, N), 0);
    bad = 0;
    for (int b = 0; b < N / 32; b++) {
        float d = fabsf(sn_fp16_to_fp32(((sn_block_q4_0 *)q)[b].d));
        for (int j = 0; j < 32; j++) bad += fabsf(y[32 * b + j] - x[32 * b + j]) > 1.01f * d;
    }
    CU_ASSERT_EQUAL(bad, 0);

    void (*qf[2])(const float *, void *, int64_t) = {sn_quantize_row_q4_K, sn_quantize_row_q6_K};
    const int types[2] = {SN_GGML_Q4_K, SN_GGML_Q6_K};
    const double max_rel_rmse[2] = {0.12, 0.03};
    for (int k = 0; k < 2; k++) {
        qf[k](x, q, N);
        CU_ASSERT_EQUAL(sn_dequantize_row(types[k], q, y, N), 0);
        for (int blk = 0; blk < N / 256; blk++) {
            double se = 0, sx = 0;
            for (int j = 0; j < 256; j++) {
                double dd = y[256 * blk + j] - x[256 * blk + j];
                se += dd * dd;
                sx += (double)x[256 * blk + j] * x[256 * blk + j];
            }
            double rel = sqrt(se / sx);
            if (rel > max_rel_rmse[k]) fprintf(stderr, "type %d block %d rel rmse %g\n", types[k], blk, rel);
            CU_ASSERT(rel <= max_rel_rmse[k]);
        }
    }

    sn_fp32_to_fp16_row(x, (uint16_t *)q, N);
    CU_ASSERT_EQUAL(sn_dequantize_row(SN_GGML_F16, q, y, N), 0);
    bad = 0;
    for (int i = 0; i < N; i++) bad += fabsf(y[i] - x[i]) > fabsf(x[i]) * 0x1p-11f + 0x1p-25f;
    CU_ASSERT_EQUAL(bad, 0);
    sn_fp32_to_bf16_row(x, (uint16_t *)q, N);
    CU_ASSERT_EQUAL(sn_dequantize_row(SN_GGML_BF16, q, y, N), 0);
    bad = 0;
    for (int i = 0; i < N; i++) bad += fabsf(y[i] - x[i]) > fabsf(x[i]) * 0x1p-8f;
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(sn_dequantize_row(SN_GGML_F32, x, y, N), 0);
    CU_ASSERT(memcmp(x, y, N * sizeof *x) == 0);
    CU_ASSERT_EQUAL(sn_dequantize_row(40 /* NVFP4 */, q, y, 64), -1);
    CU_ASSERT_EQUAL(sn_dequantize_row(SN_GGML_Q8_0, q, y, 33), -1);
    free(x);
    free(y);
    free(q);
}

/* The SIMD quantizers (sub-blocks in parallel lanes) equal the scalar ones on awkward inputs:
 * NaN/Inf, flat sub-blocks (constant negative, zero, constant positive), ties, subnormals, rows of
 * tiny (1e-30) and huge (1e37) values. */
static void test_simd_quantizers_match_scalar(void) {
    enum { N = 256 * 24 };
    float *x = malloc(N * sizeof *x);
    uint8_t *a = malloc(N * 2), *b = malloc(N * 2);
    const int qt[] = {SN_GGML_Q8_0, SN_GGML_Q4_0, SN_GGML_Q4_K, SN_GGML_Q6_K, SN_GGML_Q8_K,
                      SN_GGML_Q5_K, SN_GGML_Q2_K, SN_GGML_Q3_K, SN_GGML_IQ4_NL, SN_GGML_IQ4_XS};
    const size_t bytes[] = {N / 32 * 34, N / 32 * 18, N / 256 * 144, N / 256 * 210, N / 256 * 292,
                            N / 256 * 176, N / 256 * 84, N / 256 * 110, N / 32 * 18, N / 256 * 136};
    const char *names[] = {"q8_0", "q4_0", "q4_K", "q6_K", "q8_K", "q5_K", "q2_K", "q3_K", "iq4_nl", "iq4_xs"};
    for (int round = 0; round < 6; round++) {
        for (int i = 0; i < N; i++) {
            int blk = i / 256, sub = (i / 16) % 16;
            float v = gauss() * (round == 1 ? 1e-30f : round == 2 ? 1e37f : 1.0f); /* tiny, huge */
            switch ((blk + round) % 8) {
            case 1: v = (sub % 2) ? -0.75f : v; break;                 /* constant negative runs */
            case 2: v = (sub % 3) ? 0.0f : v; break;                   /* zero runs */
            case 3: v = (sub % 2) ? 2.5f : v; break;                   /* constant positive runs */
            case 4: v = (float)(int)(v * 4) / 4.0f; break;             /* ties */
            case 5: v = (i % 97 == 0) ? NAN : v; break;
            case 6: v = (i % 89 == 0) ? ((i & 1) ? INFINITY : -INFINITY) : v; break;
            case 7: v = ldexpf(v, -130); break;                        /* subnormals */
            default: break;
            }
            x[i] = v;
        }
        for (int k = 0; k < (int)(sizeof qt / sizeof qt[0]); k++) {
            for (int level = 1; level <= 2; level++) {
                memset(a, 0, N * 2);
                memset(b, 0, N * 2);
                CU_ASSERT_EQUAL(sn_ggml_from_f32_at(qt[k], x, a, N, 0), 0);
                sn_ggml_from_f32_at(qt[k], x, b, N, level);
                int same = memcmp(a, b, bytes[k]) == 0;
                if (!same)
                    fprintf(stderr, "\n  %s: SIMD level %d differs from scalar (round %d)\n", names[k], level, round);
                CU_ASSERT(same);
            }
        }
    }
    /* row converters: every SIMD level equals the scalar level (AVX-512, then AVX2/F16C) */
    uint16_t *h1 = (uint16_t *)a, *h2 = (uint16_t *)b;
    float *f1 = malloc(N * sizeof *f1), *f2 = malloc(N * sizeof *f2);
    for (int i = 0; i < N; i++) { uint32_t u = (uint32_t)rnd(); memcpy(&x[i], &u, 4); }
    for (int level = 1; level <= 2; level++) {
        for (int off = 0; off < 3; off++) {
            size_t n = (size_t)N - 16 - (size_t)off;
            sn_fp32_to_fp16_row_at(x + off, h1, n, 0);
            sn_fp32_to_fp16_row_at(x + off, h2, n, level);
            CU_ASSERT(memcmp(h1, h2, n * 2) == 0);
            sn_fp32_to_bf16_row_at(x + off, h1, n, 0);
            sn_fp32_to_bf16_row_at(x + off, h2, n, level);
            CU_ASSERT(memcmp(h1, h2, n * 2) == 0);
            sn_fp16_to_fp32_row_at((const uint16_t *)(const void *)x + off, f1, n, 0);
            sn_fp16_to_fp32_row_at((const uint16_t *)(const void *)x + off, f2, n, level);
            CU_ASSERT(memcmp(f1, f2, n * 4) == 0);
        }
    }
    free(f1);
    free(f2);
    free(x);
    free(a);
    free(b);
}

/* ---------------------------------------------------------------------------------------------- */
/* Bit-exact comparison with llama.cpp's own libggml-base.so when the npm oracle is installed. */
typedef void (*quant_fn)(const float *, void *, int64_t);
typedef void (*row16_fn)(const float *, uint16_t *, int64_t);

static void test_against_libggml(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/"
             "libggml-base.so", sn_test_src());
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        /* the oracle is a test dependency (scripts/deps.sh): missing means failed, not skipped */
        printf("\n    oracle libggml-base.so not found at %s (run scripts/deps.sh)\n", path);
        CU_FAIL("libggml-base.so oracle missing");
        return;
    }
    /* type >= 0: ggml_quantize_chunk(type, ...) with no imatrix, the call llama-quantize makes
     * (for IQ4_NL / IQ4_XS it differs from quantize_row_*_ref) */
    struct { const char *sym; quant_fn mine; size_t bsize; int blck; int type; } q[] = {
        {"quantize_row_q8_0_ref", sn_quantize_row_q8_0, 34, 32, -1},
        {"quantize_row_q4_0_ref", sn_quantize_row_q4_0, 18, 32, -1},
        {"quantize_row_q4_K_ref", sn_quantize_row_q4_K, 144, 256, -1},
        {"quantize_row_q6_K_ref", sn_quantize_row_q6_K, 210, 256, -1},
        {"quantize_row_q8_K_ref", sn_quantize_row_q8_K, 292, 256, -1},
        {"quantize_row_q4_1_ref", sn_quantize_row_q4_1, 20, 32, -1},
        {"quantize_row_q5_0_ref", sn_quantize_row_q5_0, 22, 32, -1},
        {"quantize_row_q5_1_ref", sn_quantize_row_q5_1, 24, 32, -1},
        {"quantize_row_q2_K_ref", sn_quantize_row_q2_K, 84, 256, -1},
        {"quantize_row_q3_K_ref", sn_quantize_row_q3_K, 110, 256, -1},
        {"quantize_row_q5_K_ref", sn_quantize_row_q5_K, 176, 256, -1},
        {"ggml_quantize_chunk", sn_quantize_row_q4_1, 20, 32, SN_GGML_Q4_1},
        {"ggml_quantize_chunk", sn_quantize_row_q5_0, 22, 32, SN_GGML_Q5_0},
        {"ggml_quantize_chunk", sn_quantize_row_q5_1, 24, 32, SN_GGML_Q5_1},
        {"ggml_quantize_chunk", sn_quantize_row_q2_K, 84, 256, SN_GGML_Q2_K},
        {"ggml_quantize_chunk", sn_quantize_row_q3_K, 110, 256, SN_GGML_Q3_K},
        {"ggml_quantize_chunk", sn_quantize_row_q4_K, 144, 256, SN_GGML_Q4_K},
        {"ggml_quantize_chunk", sn_quantize_row_q5_K, 176, 256, SN_GGML_Q5_K},
        {"ggml_quantize_chunk", sn_quantize_row_q6_K, 210, 256, SN_GGML_Q6_K},
        {"ggml_quantize_chunk", sn_quantize_row_iq4_nl, 18, 32, SN_GGML_IQ4_NL},
        {"ggml_quantize_chunk", sn_quantize_row_iq4_xs, 136, 256, SN_GGML_IQ4_XS},
    };
    typedef size_t (*chunk_fn)(int, const float *, void *, int64_t, int64_t, int64_t, const float *);
    enum { N = 2048 };
    float *x = malloc(N * sizeof *x);
    uint8_t *a = malloc(N * 2), *b = malloc(N * 2);
    for (size_t k = 0; k < sizeof q / sizeof q[0]; k++) {
        quant_fn ref = q[k].type < 0 ? (quant_fn)dlsym(h, q[k].sym) : NULL;
        chunk_fn chunk = q[k].type >= 0 ? (chunk_fn)dlsym(h, q[k].sym) : NULL;
        CU_ASSERT_FATAL(ref != NULL || chunk != NULL);
        int bad = 0;
        for (int it = 0; it < 60; it++) {
            for (int i = 0; i < N; i++) {
                float v = frand();
                switch (it % 7) {
                case 1: v *= 1e-3f; break;
                case 2: v = v * v * v * 10; break;
                case 3: v = (rnd() % 5 == 0) ? 0 : v; break;
                case 4: v = (float)(int)(v * 8) / 8.0f; break; /* many exact ties */
                case 5: v = expf(v * 20) * ((rnd() & 1) ? 1 : -1); break;
                case 6: v = gauss() * 0.02f; break;
                default: break;
                }
                x[i] = v;
            }
            if (it == 7) for (int i = 0; i < 256; i++) x[i] = 0;
            if (it == 8) for (int i = 0; i < 256; i++) x[i] = 1e-40f * (float)(i % 3);
            if (it == 9) for (int i = 0; i < 256; i++) x[i] = 0.25f;
            if (it == 10) x[5] = NAN;
            if (it == 11) x[3] = INFINITY;
            memset(a, 0, N * 2);
            memset(b, 0, N * 2);
            if (ref) ref(x, a, N);
            else chunk(q[k].type, x, a, 0, N / 256, 256, NULL); /* 8 rows of 256 */
            q[k].mine(x, b, N);
            if (memcmp(a, b, (size_t)N / q[k].blck * q[k].bsize) != 0) {
                if (!bad) fprintf(stderr, "%s (type %d) differs from libggml (iteration %d)\n", q[k].sym, q[k].type, it);
                bad++;
            }
        }
        CU_ASSERT_EQUAL(bad, 0);
    }
    row16_fn f16 = (row16_fn)dlsym(h, "ggml_fp32_to_fp16_row");
    row16_fn bf16 = (row16_fn)dlsym(h, "ggml_fp32_to_bf16_row_ref");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f16);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bf16);
    enum { M = 1 << 20 };
    float *xs = malloc(M * sizeof *xs);
    uint16_t *p = malloc(M * 2), *r = malloc(M * 2);
    for (int i = 0; i < M; i++) {
        uint32_t u = (uint32_t)rnd();
        if (i & 1) u = (u & 0x8FFFFFFF) | 0x30000000; /* dense around the fp16 range */
        memcpy(&xs[i], &u, 4);
    }
    int bad16 = 0, badb = 0;
    f16(xs, p, M);
    sn_fp32_to_fp16_row(xs, r, M);
    for (int i = 0; i < M; i++) bad16 += p[i] != r[i];
    bf16(xs, p, M);
    sn_fp32_to_bf16_row(xs, r, M);
    for (int i = 0; i < M; i++) badb += p[i] != r[i];
    CU_ASSERT_EQUAL(bad16, 0);
    CU_ASSERT_EQUAL(badb, 0);
    /* every half, NaNs included: the one decoder (sn_fp16_decode, also the kernels' sn_k_h2f and the
     * row converter) against ggml's */
    typedef void (*dec16_fn)(const uint16_t *, float *, int64_t);
    dec16_fn d16 = (dec16_fn)dlsym(h, "ggml_fp16_to_fp32_row");
    CU_ASSERT_PTR_NOT_NULL_FATAL(d16);
    uint16_t *hs = malloc(65536 * 2);
    float *want = malloc(65536 * sizeof(float)), *got = malloc(65536 * sizeof(float));
    for (uint32_t i = 0; i < 65536; i++) hs[i] = (uint16_t)i;
    d16(hs, want, 65536);
    sn_fp16_to_fp32_row(hs, got, 65536);
    int badd = 0, badrow = 0;
    for (uint32_t i = 0; i < 65536; i++) {
        float one = sn_fp16_to_fp32(hs[i]);
        badd += memcmp(&one, &want[i], 4) != 0;
        badrow += memcmp(&got[i], &want[i], 4) != 0;
    }
    CU_ASSERT_EQUAL(badd, 0);
    CU_ASSERT_EQUAL(badrow, 0);
    free(hs);
    free(want);
    free(got);
    free(xs);
    free(p);
    free(r);
    free(x);
    free(a);
    free(b);
    dlclose(h);
}

static const sn_test_case cases[] = {
    {"type table: names, block sizes, retired ids", test_type_table},
    {"fp16 edge cases (ties, subnormals, overflow, NaN)", test_fp16_edges},
    {"fp16 exhaustive round trip and midpoints", test_fp16_exhaustive_round_trip},
    {"bf16 rounding and quiet NaN", test_bf16},
    {"SIMD row converters equal scalar", test_rows_match_scalar},
    {"fused bf16 -> f16 row, every bf16 value, every SIMD level", test_bf16_to_fp16_row_exhaustive},
    {"Q8_0 hand-checked blocks", test_q8_0_hand},
    {"Q4_0 hand-checked blocks", test_q4_0_hand},
    {"Q4_K hand-checked blocks", test_q4_K_hand},
    {"Q6_K hand-checked blocks", test_q6_K_hand},
    {"Q8_K hand-checked block", test_q8_K_hand},
    {"dequant(quant(x)) error bounds", test_quant_error_bounds},
    {"SIMD quantizers equal the scalar ones", test_simd_quantizers_match_scalar},
    {"SIMD quantizers equal the scalar ones on 4M values each", test_simd_quantizers_many},
    {"bit-exact with llama.cpp's libggml-base.so", test_against_libggml},
};
SN_TEST_MAIN("ggml_types", cases)
