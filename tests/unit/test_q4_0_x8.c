/* test_q4_0_x8.c - the repacked Q4_0 and MXFP4 layouts (kernels/q4_0_x8.h) against the mapped-row
 * kernels.
 *
 * Greedy parity with llama.cpp rests on every Q4_0 output being summed in dot_q4_0's order, so each
 * table's 8-row kernel (scalar, AVX2, AVX-512 VNNI; those the CPU cannot run are skipped) must give
 * the scalar row kernel's floats bit for bit, for single tokens and batches, odd group counts, token
 * tails, sub-ranges as the thread pool hands them out, and rows long enough to need the kernel's
 * chunking. Also: the repack is order-independent, and the model's split is in whole groups. MXFP4
 * (mx = 1) runs the same checks against the scalar dot_mxfp4, itself equal to ggml's (test_quants). */
#include "sn_test.h"

#include "ggml_types.h"
#include "quants.h"
#include "kernels/kernels.h"
#include "kernels/q4_0_x8.h"
#include "family.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint32_t next(void) { return (uint32_t)(sn_test_xorshift(&rng) >> 32); }
static float frand(void) { return ((float)(next() >> 8) / (float)(1 << 24) - 0.5f) * 4.0f; }
static int mx; /* 1: the fixtures are MXFP4 */
static int wtype(void) { return mx ? SN_GGML_MXFP4 : SN_GGML_Q4_0; }
static uint64_t wblock(void) { return mx ? sizeof(sn_block_mxfp4) : sizeof(sn_block_q4_0); }
static uint64_t gblock(void) { return mx ? SN_MXFP4X8_BLOCK_BYTES : SN_Q4_0X8_BLOCK_BYTES; }

typedef struct {
    int64_t n, rows, T;
    uint8_t *w;         /* rows x nb blocks, row layout */
    void *x8;           /* repacked */
    sn_block_q8_0 *x;   /* T x nb activations */
    float *ref;         /* T x rows, scalar dot_q4_0 */
} fixture;

/* extreme = 1: weights all nibble 0 or 15 (MXFP4: levels 12 and -12) and activations +-127, the
 * integer sums' limits. MXFP4 exponents include the subnormal 0 and 1. */
static void make(fixture *f, int64_t n, int64_t rows, int64_t T, int extreme) {
    const int64_t nb = n / SN_QK4_0;
    f->n = n, f->rows = rows, f->T = T;
    f->w = malloc((size_t)(rows * nb) * wblock());
    f->x = malloc((size_t)(T * nb) * sizeof(sn_block_q8_0));
    f->ref = malloc((size_t)(T * rows) * sizeof(float));
    float *tmp = malloc((size_t)n * sizeof(float));
    CU_ASSERT_FATAL(f->w && f->x && f->ref && tmp);
    for (int64_t r = 0; r < rows; r++) {
        uint8_t *row = f->w + r * nb * wblock();
        if (mx) {
            for (int64_t b = 0; b < nb; b++) {
                sn_block_mxfp4 *q = (sn_block_mxfp4 *)row + b;
                q->e = (uint8_t)(b % 13 == 5 ? next() % 2 : 110 + next() % 20);
                for (int j = 0; j < 16; j++) q->qs[j] = (uint8_t)next();
                if (extreme) memset(q->qs, (r + b) % 2 ? 0xFF : 0x77, 16);
            }
            continue;
        }
        for (int64_t i = 0; i < n; i++) tmp[i] = frand() * (1.0f + (float)(r % 5));
        sn_quantize_row_q4_0(tmp, row, n);
        if (extreme)
            for (int64_t b = 0; b < nb; b++) memset(((sn_block_q4_0 *)row)[b].qs, (r + b) % 2 ? 0xFF : 0x00, 16);
    }
    for (int64_t t = 0; t < T; t++) {
        for (int64_t i = 0; i < n; i++) tmp[i] = frand();
        sn_quantize_row_q8_0(tmp, f->x + t * nb, n);
        if (extreme)
            for (int64_t b = 0; b < nb; b++)
                for (int j = 0; j < 32; j++) f->x[t * nb + b].qs[j] = (int8_t)((t + b) % 2 ? 127 : -127);
    }
    free(tmp);
    const uint64_t size = mx ? sn_mxfp4x8_size(n, rows) : sn_q4_0x8_size(n, rows);
    CU_ASSERT_FATAL(size == (uint64_t)(rows / 8 * nb) * gblock());
    f->x8 = malloc(size);
    CU_ASSERT_FATAL(f->x8 != NULL);
    (mx ? sn_mxfp4x8_repack : sn_q4_0x8_repack)(f->w, (uint64_t)nb * wblock(), n, 0, rows / 8, f->x8);
    const sn_kernels *s = sn_test_kernels(0);
    for (int64_t t = 0; t < T; t++)
        for (int64_t r = 0; r < rows; r++)
            f->ref[t * rows + r] = s->type[wtype()].dot(n, f->w + r * nb * wblock(), f->x + t * nb);
}

static void drop(fixture *f) {
    free(f->w);
    free(f->x8);
    free(f->x);
    free(f->ref);
}

static const sn_kernels *tables[3];
static int n_tables(void) {
    int k = 0;
    tables[k++] = sn_test_kernels(0);
    if (sn_test_kernels(1)) tables[k++] = sn_test_kernels(1);
    if (sn_test_kernels(2)) tables[k++] = sn_test_kernels(2);
    return k;
}

/* Every table's kernel over all groups, and over a sub-range of groups, equals the scalar rows. */
static void check(const fixture *f) {
    const int64_t nb = f->n / SN_QK4_0, ng = f->rows / 8;
    const uint64_t xr = (uint64_t)nb * sizeof(sn_block_q8_0), gbytes = (uint64_t)nb * gblock();
    float *y = malloc((size_t)(f->T * f->rows) * sizeof(float));
    CU_ASSERT_FATAL(y != NULL);
    const int nt = n_tables();
    for (int i = 0; i < nt; i++) {
        const sn_kernels *k = tables[i];
        const sn_q4_0x8_mm_fn mm = mx ? k->mm_mxfp4x8 : k->mm_q4_0x8;
        CU_ASSERT_PTR_NOT_NULL_FATAL(mm);
        for (int64_t j = 0; j < f->T * f->rows; j++) y[j] = NAN;
        mm(f->n, f->x8, ng, f->x, xr, f->T, y, f->rows);
        int bad = 0; /* full groups equal the row kernel; tail rows (n_out % 8) are not written */
        for (int64_t j = 0; j < f->T * f->rows; j++)
            bad += j % f->rows < ng * 8 ? memcmp(&y[j], &f->ref[j], sizeof(float)) != 0 : !isnan(y[j]);
        if (bad) fprintf(stderr, "%s%s: n=%lld rows=%lld T=%lld: %d outputs differ\n", k->name, mx ? " mxfp4" : "", (long long)f->n,
                         (long long)f->rows, (long long)f->T, bad);
        CU_ASSERT_EQUAL(bad, 0);
        if (ng >= 3) { /* groups [1, ng-1) only: nothing outside is written */
            for (int64_t j = 0; j < f->T * f->rows; j++) y[j] = -1.0f;
            mm(f->n, (const char *)f->x8 + gbytes, ng - 2, f->x, xr, f->T, y + 8, f->rows);
            bad = 0;
            for (int64_t t = 0; t < f->T; t++)
                for (int64_t r = 0; r < f->rows; r++) {
                    const float want = r >= 8 && r < (ng - 1) * 8 ? f->ref[t * f->rows + r] : -1.0f;
                    bad += memcmp(&y[t * f->rows + r], &want, sizeof(float)) != 0;
                }
            CU_ASSERT_EQUAL(bad, 0);
        }
    }
    free(y);
}

static void test_single_token(void) {
    const int64_t ns[] = {32, 96, 1024, 2816};
    /* with SN_MV_QUARTERS=1 (CMakeLists.txt) the AVX-512 decode reads far quads from 8 groups on:
     * quads alone (64; and 80 from group 1), then two (80) or three (93) groups one by one */
    const int64_t rows[] = {8, 24, 40, 29, 64, 80, 93};
    for (size_t a = 0; a < 4; a++)
        for (size_t b = 0; b < sizeof rows / sizeof rows[0]; b++) {
            fixture f;
            make(&f, ns[a], rows[b], 1, 0);
            check(&f);
            drop(&f);
        }
}

static void test_batches_and_tails(void) {
    const int64_t Ts[] = {2, 3, 4, 5, 7, 9, 16};
    for (size_t a = 0; a < sizeof(Ts) / sizeof(Ts[0]); a++) {
        fixture f;
        make(&f, 320, 24, Ts[a], 0);
        check(&f);
        drop(&f);
    }
}

static void test_integer_limits(void) {
    fixture f;
    make(&f, 256, 16, 5, 1);
    check(&f);
    drop(&f);
}

/* Rows of more than 8192 blocks make the kernels split the block range (and tokens) into pieces. */
static void test_long_rows(void) {
    fixture f;
    make(&f, (int64_t)SN_QK4_0 * 8200, 8, 3, 0);
    check(&f);
    drop(&f);
    /* one token over 5 groups: the AMD decode's far pairs (g, g + 2) resume from parked sums */
    make(&f, (int64_t)SN_QK4_0 * 8200, 40, 1, 0);
    check(&f);
    drop(&f);
    /* one token over 9 groups: far quads (g, g + 2, g + 4, g + 6) resume too */
    make(&f, (int64_t)SN_QK4_0 * 8200, 72, 1, 0);
    check(&f);
    drop(&f);
}

static void test_repack_layout(void) {
    fixture f;
    make(&f, 64, 24, 1, 0);
    const int64_t nb = 2;
    /* chunks in reverse order give the same bytes */
    unsigned char *y = calloc(1, sn_q4_0x8_size(64, 24));
    CU_ASSERT_FATAL(y != NULL);
    for (int64_t g = 2; g >= 0; g--) sn_q4_0x8_repack(f.w, nb * sizeof(sn_block_q4_0), 64, g, g + 1, y);
    CU_ASSERT_EQUAL(memcmp(y, f.x8, sn_q4_0x8_size(64, 24)), 0);
    /* the documented placement: row 8G+r, block b, qs byte 4c+i; scale after 128 bytes */
    const int64_t G = 1, r = 5, b = 1, c = 2, i = 3;
    const sn_block_q4_0 *w = (const sn_block_q4_0 *)f.w;
    const unsigned char *blk = (const unsigned char *)f.x8 + (G * nb + b) * SN_Q4_0X8_BLOCK_BYTES;
    CU_ASSERT_EQUAL(blk[c * 32 + r * 4 + i], w[(G * 8 + r) * nb + b].qs[4 * c + i]);
    uint16_t d;
    memcpy(&d, blk + 128 + 2 * r, 2);
    CU_ASSERT_EQUAL(d, w[(G * 8 + r) * nb + b].d);
    free(y);
    drop(&f);
    CU_ASSERT_EQUAL(sn_q4_0x8_size(64, 20), 2 * 2 * SN_Q4_0X8_BLOCK_BYTES); /* 2 groups; 4 rows stay */
    CU_ASSERT_EQUAL(sn_q4_0x8_size(64, 7), 0);
    CU_ASSERT_EQUAL(sn_q4_0x8_size(48, 16), 0);
    mx = 1; /* MXFP4: the same chunks, the exponent byte of row r at 128 + r */
    make(&f, 64, 24, 1, 0);
    const sn_block_mxfp4 *m = (const sn_block_mxfp4 *)f.w;
    blk = (const unsigned char *)f.x8 + (G * nb + b) * SN_MXFP4X8_BLOCK_BYTES;
    CU_ASSERT_EQUAL(blk[c * 32 + r * 4 + i], m[(G * 8 + r) * nb + b].qs[4 * c + i]);
    CU_ASSERT_EQUAL(blk[128 + r], m[(G * 8 + r) * nb + b].e);
    CU_ASSERT_EQUAL(sn_mxfp4x8_size(64, 20), 2 * 2 * SN_MXFP4X8_BLOCK_BYTES);
    drop(&f);
    mx = 0;
}

/* The thread split hands out whole groups and covers every row once; sn_matrix_mul over those
 * ranges equals the row-layout matmul, also when n_out % 8 rows stay in the row layout. */
static void test_split_and_mul(void) {
    const int64_t outs[] = {40, 43, 5};
    for (int oi = 0; oi < 3; oi++) {
        const int64_t no = outs[oi], nb = 16;
        fixture f;
        make(&f, 512, no, 3, 0);
        sn_matrix w = {.name = "w", .data = f.w, .type = wtype(), .n_in = 512, .n_out = no,
                       .row_bytes = nb * wblock(), .x8 = no >= 8 ? f.x8 : NULL,
                       .layout = no < 8 ? &sn_layout_rows : mx ? &sn_layout_mxfp4x8 : &sn_layout_q4_0x8,
                       .n_expert = 1};
        const sn_kernels *k = sn_test_kernels(-1);
        float y[3 * 43];
        for (int nth = 1; nth <= 7; nth++) {
            for (int j = 0; j < 3 * 43; j++) y[j] = NAN;
            int64_t covered = 0, prev = 0;
            for (int ith = 0; ith < nth; ith++) {
                int64_t r0, r1;
                sn_matrix_split(&w, ith, nth, &r0, &r1);
                CU_ASSERT((!w.x8 || r0 % 8 == 0 || r0 == no) && r0 <= r1 && r0 == (r0 < r1 ? prev : r0));
                if (r0 < r1) prev = r1;
                covered += r1 - r0;
                sn_matrix_mul(k, &w, f.x, nb * sizeof(sn_block_q8_0), 3, y, no, r0, r1);
            }
            CU_ASSERT_EQUAL(covered, no);
            CU_ASSERT_EQUAL(memcmp(y, f.ref, (size_t)(3 * no) * sizeof(float)), 0);
        }
        /* without x8 the same calls use the row kernels and give the same floats */
        w.x8 = NULL;
        w.layout = &sn_layout_rows;
        int64_t r0, r1;
        sn_matrix_split(&w, 0, 1, &r0, &r1);
        sn_matrix_mul(k, &w, f.x, nb * sizeof(sn_block_q8_0), 3, y, no, r0, r1);
        CU_ASSERT_EQUAL(memcmp(y, f.ref, (size_t)(3 * no) * sizeof(float)), 0);
        if (no == 40) {
            sn_matrix_split(&w, 1, 3, &r0, &r1);
            CU_ASSERT_EQUAL(r0, 14);
        }
        drop(&f);
    }
}

/* The MXFP4 layout through the same checks (all but the Q4_0-specific layout bytes). */
static void test_mxfp4(void) {
    mx = 1;
    test_single_token();
    test_batches_and_tails();
    test_integer_limits();
    test_split_and_mul();
    fixture f;
    make(&f, (int64_t)SN_QK4_0 * 8200, 16, 3, 0); /* the correction table's pieces */
    check(&f);
    drop(&f);
    mx = 0;
}

static const sn_test_case cases[] = {
    {"single token, 1/3/5 groups (+ rows left over)", test_single_token},
    {"batches and token tails", test_batches_and_tails},
    {"integer sum limits", test_integer_limits},
    {"rows longer than the correction table", test_long_rows},
    {"repack layout", test_repack_layout},
    {"thread split and sn_matrix_mul (n_out 40, 43, 5)", test_split_and_mul},
    {"MXFP4: single tokens, batches, limits, split, long rows", test_mxfp4},
};

SN_TEST_MAIN("q4_0_x8", cases)
