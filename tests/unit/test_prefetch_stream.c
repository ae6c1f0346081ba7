/* test_prefetch_stream.c - kernels.h sn_k_stream, the prefetch ahead of single-token matmuls (every
 * line of the INT4 quads' streams, int4.c; one line per 4 KB page for F16 rows, x86_avx512.c): the
 * prefetches are recorded instead of issued, and a range walked part by part, as the kernels walk
 * theirs (144-byte blocks, rows), must have had one line per step of it prefetched exactly once, in
 * order, each one by the time the part `ahead` bytes before it is requested, and none outside it.
 * Prefetches cannot change a result, so this is the only place their addresses are checked; the
 * gains they were kept for rest on "each once" (docs/perf-history.md, sessions 19 and 23). */
#include <stdint.h>
static uintptr_t seen[1 << 16];
static int n_seen;
static void record(const void *p) {
    if (n_seen < (int)(sizeof seen / sizeof seen[0])) seen[n_seen] = (uintptr_t)p;
    n_seen++;
}
#define SN_K_STREAM_PREFETCH(p) record(p)
#include "kernels/kernels.h"
#include "sn_test.h"

/* Walks [base, base + bytes) in parts of `part` bytes; 0 if every check held, else prints why. */
static int walk(uintptr_t base, uint64_t bytes, uint64_t part, uintptr_t step, uintptr_t ahead) {
    n_seen = 0;
    sn_k_stream s = sn_k_stream_start((const void *)base, bytes, step, ahead);
    const uintptr_t first = base & ~(step - 1), lim = base + bytes;
    for (uint64_t done = 0; done < bytes; done += part) {
        const uint64_t end = done + part < bytes ? done + part : bytes;
        sn_k_stream_to(&s, (const void *)(base + end));
        /* by now: every line starting below min(end + ahead, lim), and no other */
        uintptr_t want_to = base + end + ahead < lim ? base + end + ahead : lim;
        const int want = want_to > first ? (int)((want_to - first + step - 1) / step) : 0;
        if (n_seen != want) {
            printf("\nstep %lu base %#lx bytes %llu ahead %lu: after the part ending at %llu, %d lines prefetched, want %d\n",
                   (unsigned long)step, (unsigned long)base, (unsigned long long)bytes, (unsigned long)ahead,
                   (unsigned long long)end, n_seen, want);
            return 1;
        }
    }
    for (int i = 0; i < n_seen; i++)
        if (seen[i] != first + step * (uintptr_t)i || seen[i] >= lim) {
            printf("\nstep %lu base %#lx bytes %llu ahead %lu: prefetch %d at %#lx, want %#lx below %#lx\n",
                   (unsigned long)step, (unsigned long)base, (unsigned long long)bytes, (unsigned long)ahead, i,
                   (unsigned long)seen[i], (unsigned long)(first + step * (uintptr_t)i), (unsigned long)lim);
            return 1;
        }
    return 0;
}

static void test_every_line_once(void) {
    const uintptr_t bases[] = {0x100000, 0x100007, 0x10003f, 0x100040, 0x1000c1};
    const uint64_t sizes[] = {1, 63, 64, 65, 144, 3456, 24 * 3456, 96 * 3456 + 100};
    const uintptr_t aheads[] = {0, 64, 100, 2048, SN_K_STREAM_AHEAD, 1 << 20};
    int bad = 0, runs = 0;
    for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
            for (size_t a = 0; a < sizeof aheads / sizeof aheads[0]; a++)
                for (uint64_t part = 144; part <= 288; part += 144, runs++)
                    bad += walk(bases[b], sizes[z], part, SN_K_LINE, aheads[a]);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(runs, 5 * 8 * 6 * 2);
}

/* The page kick: F16 rows (2 bytes per input) read one after another, one line per 4 KB page. */
static void test_one_line_per_page(void) {
    const uintptr_t bases[] = {0x100000, 0x100040, 0x100fc0, 0x101001};
    const uint64_t rows[] = {768 * 2, 1000 * 2, 4096 * 2}, nrows[] = {1, 3, 40, 300};
    int bad = 0;
    for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++)
        for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
            for (size_t n = 0; n < sizeof nrows / sizeof nrows[0]; n++)
                bad += walk(bases[b], rows[r] * nrows[n], rows[r], SN_K_PAGE, SN_K_PAGE_AHEAD);
    CU_ASSERT_EQUAL(bad, 0);
}

/* The quads' own walk: four streams a quarter of a matrix apart, each stepped one 144-byte block
 * at a time. A stream's prefetches never reach into the next one's lines past its own end. */
static void test_quarters_stay_apart(void) {
    const uint64_t gb = 24 * 144, nq = 7; /* 768 inputs: 24 blocks per 8-row group; 7 groups per stream */
    const uintptr_t w = 0x200000;
    for (int i = 0; i < 4; i++) {
        n_seen = 0;
        sn_k_stream s = sn_k_stream_start((const void *)(w + i * nq * gb), nq * gb, SN_K_LINE, SN_K_STREAM_AHEAD);
        for (uint64_t o = 0; o < nq * gb; o += 144) sn_k_stream_to(&s, (const void *)(w + i * nq * gb + o + 144));
        CU_ASSERT_EQUAL(n_seen, (int)(nq * gb / 64) + (nq * gb % 64 != 0));
        CU_ASSERT_EQUAL(seen[0], w + i * nq * gb);
        CU_ASSERT(seen[n_seen - 1] < w + (i + 1) * nq * gb);
    }
}

static const sn_test_case cases[] = {
    {"every line of a stream prefetched once, in order, ahead of its part, none outside", test_every_line_once},
    {"the four quarter streams each prefetch only their own lines", test_quarters_stay_apart},
    {"the page kick: one line per 4 KB page once, in order, 16 KB ahead, none past the matrix", test_one_line_per_page},
};
SN_TEST_MAIN("prefetch_stream", cases)
