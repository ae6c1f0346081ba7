/* membw.c - this machine's DRAM read bandwidth, the yardstick of the decode rows (bench/lib.sh).
 *
 * Decode reads every weight once per token, so bytes-per-token x tokens/s over this number says how
 * close an engine is to what the memory can give. One buffer of SIZE MB (default 1024, far past
 * the last-level cache) in 2 MB transparent huge pages where the kernel gives them (as both engines
 * read their weights in the benchmarks: sunny-run copies them into huge pages, and the scripts fold
 * the file's page cache into 2 MB pages for llama-bench), written once; then THREADS threads each
 * sum their contiguous slice with 64-bit adds in 8 independent chains (the compiler vectorises it
 * for the ISA it targets), all started together per pass. Every pass is taken twice: a plain read,
 * and a read that also touches one line of each 4 KB page 16 KB ahead (a prefetch: the hardware
 * prefetcher restarts at every page, and on the Zen 5 of session 19 that early touch took one
 * thread's read from ~24 to ~29-40 GB/s, as it did for sunny-run's F16 decode). Prints the best of
 * the 2 x PASSES in GB/s (10^9 bytes): what a simple reader gets at best.
 *   usage: membw THREADS [SIZE_MB] [PASSES]   (built by bench/lib.sh with the host compiler) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

typedef struct {
    const uint64_t *p;
    size_t n;
    pthread_barrier_t *go;
    uint64_t sum;
    int kick; /* touch each 4 KB page 16 KB ahead */
} slice;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *reader(void *arg) {
    slice *s = arg;
    uint64_t a[8] = {0};
    pthread_barrier_wait(s->go);
    enum { PAGE_WORDS = 4096 / 8, AHEAD_WORDS = 16384 / 8 };
    for (size_t pg = 0; pg < s->n; pg += PAGE_WORDS) { /* page by page; the inner loop vectorises */
        if (s->kick && pg + AHEAD_WORDS < s->n) __builtin_prefetch(s->p + pg + AHEAD_WORDS, 0, 3);
        const size_t end = pg + PAGE_WORDS < s->n ? pg + PAGE_WORDS : s->n;
        for (size_t i = pg; i + 8 <= end; i += 8)
            for (int j = 0; j < 8; j++) a[j] += s->p[i + (size_t)j];
    }
    for (int j = 0; j < 8; j++) s->sum += a[j];
    pthread_barrier_wait(s->go);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: membw THREADS [SIZE_MB] [PASSES]\n");
        return 2;
    }
    const int nt = atoi(argv[1]), mb = argc > 2 ? atoi(argv[2]) : 1024, passes = argc > 3 ? atoi(argv[3]) : 5;
    if (nt < 1 || nt > 256 || mb < 64 || passes < 1) {
        fprintf(stderr, "membw: bad arguments\n");
        return 2;
    }
    const size_t n = (size_t)mb << 17; /* 64-bit words */
    uint64_t *buf = aligned_alloc(2u << 20, n * sizeof(uint64_t)); /* n * 8 is a multiple of 2 MB */
#ifdef MADV_HUGEPAGE
    if (buf) (void)madvise(buf, n * sizeof(uint64_t), MADV_HUGEPAGE); /* a hint; fails harmlessly */
#endif
    if (!buf) {
        fprintf(stderr, "membw: cannot allocate %d MB\n", mb);
        return 1;
    }
    for (size_t i = 0; i < n; i++) buf[i] = i;
    double best = 0;
    uint64_t check = 0;
    for (int p = 0; p < 2 * passes; p++) { /* even passes plain, odd ones with the page touch */
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, (unsigned)nt + 1);
        pthread_t th[256];
        slice s[256];
        for (int t = 0; t < nt; t++) {
            s[t] = (slice){buf + n / (size_t)nt * (size_t)t, n / (size_t)nt, &go, 0, p % 2};
            if (pthread_create(&th[t], NULL, reader, &s[t]) != 0) { /* the barrier would wait forever */
                fprintf(stderr, "membw: cannot start thread %d\n", t);
                return 1;
            }
        }
        pthread_barrier_wait(&go);
        const double t0 = now();
        pthread_barrier_wait(&go);
        const double dt = now() - t0;
        for (int t = 0; t < nt; t++) {
            pthread_join(th[t], NULL);
            check += s[t].sum;
        }
        pthread_barrier_destroy(&go);
        const double gbs = (double)(n / (size_t)nt * (size_t)nt) * 8 / dt / 1e9;
        if (gbs > best) best = gbs;
    }
    printf("%.2f\n", best);
    free(buf);
    return check == 0 ? 1 : 0; /* the sums are used, so the reads are not optimised away */
}
