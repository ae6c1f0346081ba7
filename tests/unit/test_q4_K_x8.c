/* test_q4_K_x8.c - the repacked Q4_K layout (kernels/q4_K_x8.h) against the row kernels.
 *
 * Greedy parity with llama.cpp rests on every Q4_K output being summed in dot_q4_K's order (one
 * exact integer per block for the scales and one for the mins, each fma'd into its sum), so the
 * 8-row single-token kernel must give the scalar row kernel's floats bit for bit: random rows, the
 * integer limits (nibbles 15, scales and mins 63, activations -128 / 127), long rows, sub-ranges of
 * groups. The repack is order-independent and unpacks to the same bytes; sn_matrix_mul on a
 * repacked matrix gives the row layout's floats for one token and for batches (whose whole groups
 * of 4 tokens keep dot_mm's order), over every thread split, with n_out % 8 rows left mapped. */
#include "sn_test.h"

#include "ggml_types.h"
#include "kernels/kernels.h"
#include "kernels/q4_K_x8.h"
#include "family.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next(void) { return (uint32_t)(sn_test_xorshift(&rng) >> 32); }
static float frand(void) { return ((float)(next() >> 8) / (float)(1 << 24) - 0.5f) * 4.0f; }

typedef struct {
    int64_t n, rows, T;
    sn_block_q4_K *w;  /* rows x nb, row layout */
    void *x8;          /* repacked */
    sn_block_q8_K *x;  /* T x nb activations */
    float *ref;        /* T x rows: scalar dot (T == 1) or the scalar table's sn_matmul */
} fixture;

/* extreme = 1: nibbles all 15, every 6-bit scale and min 63, activations -128 / 127 by block: the
 * largest integer sums the kernel must hold exactly (the int16 pack of 16 products included). */
static void make(fixture *f, int64_t n, int64_t rows, int64_t T, int extreme) {
    const int64_t nb = n / SN_QK_K;
    f->n = n, f->rows = rows, f->T = T;
    f->w = malloc((size_t)(rows * nb) * sizeof(sn_block_q4_K));
    f->x = malloc((size_t)(T * nb) * sizeof(sn_block_q8_K));
    f->ref = malloc((size_t)(T * rows) * sizeof(float));
    float *tmp = malloc((size_t)n * sizeof(float));
    CU_ASSERT_FATAL(f->w && f->x && f->ref && tmp);
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < n; i++) tmp[i] = frand() * (1.0f + (float)(r % 5)) + (float)(r % 3) * 0.5f;
        sn_quantize_row_q4_K(tmp, f->w + r * nb, n);
        if (extreme)
            for (int64_t b = 0; b < nb; b++) {
                memset(f->w[r * nb + b].qs, 0xFF, sizeof f->w[0].qs);
                memset(f->w[r * nb + b].scales, 0xFF, sizeof f->w[0].scales);
            }
    }
    for (int64_t t = 0; t < T; t++) {
        for (int64_t i = 0; i < n; i++) tmp[i] = frand();
        sn_quantize_row_q8_K(tmp, f->x + t * nb, n);
        if (extreme)
            for (int64_t b = 0; b < nb; b++) {
                sn_block_q8_K *a = &f->x[t * nb + b];
                const int v = (t + b) % 2 ? 127 : -128;
                for (int j = 0; j < SN_QK_K; j++) a->qs[j] = (int8_t)v;
                for (int j = 0; j < 16; j++) a->bsums[j] = (int16_t)(16 * v);
            }
    }
    free(tmp);
    const uint64_t size = sn_q4_Kx8_size(n, rows);
    CU_ASSERT_FATAL(size == (uint64_t)(rows / 8 * 8 * nb) * sizeof(sn_block_q4_K));
    f->x8 = malloc(size ? size : 1);
    CU_ASSERT_FATAL(f->x8 != NULL);
    sn_q4_Kx8_repack(f->w, (uint64_t)nb * sizeof(sn_block_q4_K), n, 0, rows / 8, f->x8);
    const sn_kernels *s = sn_test_kernels(0);
    sn_matmul(s, SN_GGML_Q4_K, f->w, (uint64_t)nb * sizeof(sn_block_q4_K), n, f->x, (uint64_t)nb * sizeof(sn_block_q8_K),
              T, f->ref, rows, 0, rows);
    if (T == 1) /* one token is dot's order: the scalar row kernel itself */
        for (int64_t r = 0; r < rows; r++) {
            const float d = s->type[SN_GGML_Q4_K].dot(n, f->w + r * nb, f->x);
            CU_ASSERT_EQUAL(memcmp(&d, &f->ref[r], sizeof d), 0);
        }
}

static void drop(fixture *f) {
    free(f->w);
    free(f->x8);
    free(f->x);
    free(f->ref);
}

/* The best table's 8-row kernel over all groups and over groups [1, ng - 1) equals the scalar rows
 * (skipped where the CPU has no table with the kernel). */
static void check_mv(const fixture *f) {
    const sn_kernels *k = sn_test_kernels(-1);
    if (!k->mv_q4_Kx8) return;
    const int64_t nb = f->n / SN_QK_K, ng = f->rows / 8;
    const uint64_t gbytes = (uint64_t)nb * SN_Q4_KX8_BLOCK_BYTES;
    float *y = malloc((size_t)f->rows * sizeof(float));
    CU_ASSERT_FATAL(y != NULL);
    for (int64_t j = 0; j < f->rows; j++) y[j] = NAN;
    k->mv_q4_Kx8(f->n, f->x8, ng, f->x, y);
    int bad = 0; /* full groups equal the row kernel; tail rows (n_out % 8) are not written */
    for (int64_t j = 0; j < f->rows; j++) bad += j < ng * 8 ? memcmp(&y[j], &f->ref[j], sizeof(float)) != 0 : !isnan(y[j]);
    if (bad) fprintf(stderr, "%s: n=%lld rows=%lld: %d outputs differ\n", k->name, (long long)f->n, (long long)f->rows, bad);
    CU_ASSERT_EQUAL(bad, 0);
    if (ng >= 3) {
        for (int64_t j = 0; j < f->rows; j++) y[j] = -1.0f;
        k->mv_q4_Kx8(f->n, (const char *)f->x8 + gbytes, ng - 2, f->x, y + 8);
        bad = 0;
        for (int64_t r = 0; r < f->rows; r++) {
            const float want = r >= 8 && r < (ng - 1) * 8 ? f->ref[r] : -1.0f;
            bad += memcmp(&y[r], &want, sizeof(float)) != 0;
        }
        CU_ASSERT_EQUAL(bad, 0);
    }
    free(y);
}

static void test_single_token(void) {
    const int64_t ns[] = {256, 768, 1024, 2816};
    const int64_t rows[] = {8, 24, 29, 64, 93};
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (size_t b = 0; b < sizeof rows / sizeof rows[0]; b++) {
            fixture f;
            make(&f, ns[a], rows[b], 1, 0);
            check_mv(&f);
            drop(&f);
        }
}

static void test_integer_limits(void) { /* one token whose blocks alternate -128 and 127 */
    fixture f;
    make(&f, 1024, 16, 1, 1);
    check_mv(&f);
    drop(&f);
}

static void test_long_rows(void) {
    fixture f;
    make(&f, (int64_t)SN_QK_K * 64, 16, 1, 0); /* 16,384 inputs (a 7B FFN's down projection is 11,008..14,336) */
    check_mv(&f);
    drop(&f);
}

static void test_repack_layout(void) {
    fixture f;
    make(&f, 512, 24, 1, 0);
    const int64_t nb = 2;
    /* chunks in reverse order give the same bytes */
    unsigned char *y = calloc(1, sn_q4_Kx8_size(512, 24));
    CU_ASSERT_FATAL(y != NULL);
    for (int64_t g = 2; g >= 0; g--) sn_q4_Kx8_repack(f.w, nb * sizeof(sn_block_q4_K), 512, g, g + 1, y);
    CU_ASSERT_EQUAL(memcmp(y, f.x8, sn_q4_Kx8_size(512, 24)), 0);
    /* the documented placement: row 8G+r, block b: qs byte 8c+i, scales byte 4k+i, d, dmin */
    const int64_t G = 1, r = 5, b = 1, c = 11, i = 6, k = 2;
    const unsigned char *blk = (const unsigned char *)f.x8 + (G * nb + b) * SN_Q4_KX8_BLOCK_BYTES;
    const sn_block_q4_K *src = &f.w[(G * 8 + r) * nb + b];
    CU_ASSERT_EQUAL(blk[64 * c + 8 * r + i], src->qs[8 * c + i]);
    CU_ASSERT_EQUAL(blk[1024 + 32 * k + 4 * r + 3], src->scales[4 * k + 3]);
    uint16_t d, dmin;
    memcpy(&d, blk + 1120 + 2 * r, 2);
    memcpy(&dmin, blk + 1136 + 2 * r, 2);
    CU_ASSERT_EQUAL(d, src->d);
    CU_ASSERT_EQUAL(dmin, src->dmin);
    /* and back: the 24 rows' bytes */
    sn_block_q4_K *back = malloc((size_t)(24 * nb) * sizeof(sn_block_q4_K));
    CU_ASSERT_FATAL(back != NULL);
    sn_q4_Kx8_unpack(f.x8, 512, 3, back);
    CU_ASSERT_EQUAL(memcmp(back, f.w, (size_t)(24 * nb) * sizeof(sn_block_q4_K)), 0);
    free(back);
    free(y);
    drop(&f);
    CU_ASSERT_EQUAL(sn_q4_Kx8_size(512, 20), 2 * 2 * SN_Q4_KX8_BLOCK_BYTES); /* 2 groups; 4 rows stay */
    CU_ASSERT_EQUAL(sn_q4_Kx8_size(512, 7), 0);
    CU_ASSERT_EQUAL(sn_q4_Kx8_size(384, 16), 0);
}

/* The thread split hands out whole groups and covers every row once; sn_matrix_mul over those
 * ranges equals the row layout's matmul (the scalar table's floats), for one token and for batches
 * of 2..9 tokens (the unpacked copy; 72 + rows: more than one 64-row chunk). */
static void test_split_and_mul(void) {
    const int64_t outs[] = {40, 43, 5, 75};
    const int64_t Ts[] = {1, 2, 4, 5, 9};
    const sn_kernels *k = sn_test_kernels(-1);
    for (int oi = 0; oi < 4; oi++)
        for (int ti = 0; ti < 5; ti++) {
            const int64_t no = outs[oi], nb = 3, T = Ts[ti];
            fixture f;
            make(&f, 768, no, T, 0);
            sn_matrix w = {.name = "w", .data = f.w, .type = SN_GGML_Q4_K, .n_in = 768, .n_out = no,
                           .row_bytes = nb * sizeof(sn_block_q4_K), .x8 = no >= 8 && k->mv_q4_Kx8 ? f.x8 : NULL,
                           .n_expert = 1};
            w.layout = w.x8 ? &sn_layout_q4_Kx8 : &sn_layout_rows;
            float *y = malloc((size_t)(T * no) * sizeof(float));
            CU_ASSERT_FATAL(y != NULL);
            for (int nth = 1; nth <= 5; nth++) {
                for (int64_t j = 0; j < T * no; j++) y[j] = NAN;
                int64_t covered = 0;
                for (int ith = 0; ith < nth; ith++) {
                    int64_t r0, r1;
                    sn_matrix_split(&w, ith, nth, &r0, &r1);
                    CU_ASSERT(!w.x8 || r0 % 8 == 0 || r0 == no);
                    covered += r1 - r0;
                    sn_matrix_mul(k, &w, f.x, nb * sizeof(sn_block_q8_K), T, y, no, r0, r1);
                }
                CU_ASSERT_EQUAL(covered, no);
                int bad = 0;
                for (int64_t j = 0; j < T * no; j++) bad += memcmp(&y[j], &f.ref[j], sizeof(float)) != 0;
                if (bad) fprintf(stderr, "n_out %lld T %lld nth %d: %d outputs differ\n", (long long)no, (long long)T, nth, bad);
                CU_ASSERT_EQUAL(bad, 0);
            }
            free(y);
            drop(&f);
        }
}

static const sn_test_case cases[] = {
    {"single token: 1..11 groups, rows left over", test_single_token},
    {"integer sum limits", test_integer_limits},
    {"long rows", test_long_rows},
    {"repack layout and unpack", test_repack_layout},
    {"thread split and sn_matrix_mul (one token, batches)", test_split_and_mul},
};

SN_TEST_MAIN("q4_K_x8", cases)
