/* quantspeed.c - the converter's quantizers alone, per SIMD level: MB/s of f32 input per CPU
 * second (process CPU time, best of 3) on 2 M Gaussian values (sigma 0.02) per type, one thread.
 *
 *   cc -O2 -Iruntime/quants -Iruntime/base bench/tools/quantspeed.c build/runtime/libsn_runtime.a \
 *      build/runtime/libsn_base.a -lm -pthread -o quantspeed && ./quantspeed [TYPE]
 *
 * Prints one row per type: scalar, AVX2, AVX-512 (a level the CPU lacks is clamped to the best it
 * has, so its column repeats that one). */
#include "ggml_types.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
    enum { N = 1 << 21 };
    float *x = malloc(N * sizeof *x);
    uint8_t *y = malloc(N * 2);
    if (!x || !y) return 1;
    uint64_t s = 0x9E3779B97F4A7C15u;
    for (int i = 0; i < N; i += 2) { /* Box-Muller on a xorshift stream */
        double u[2];
        for (int k = 0; k < 2; k++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            u[k] = ((double)(s >> 11) + 0.5) / 9007199254740992.0;
        }
        double r = sqrt(-2 * log(u[0])) * 0.02;
        x[i] = (float)(r * cos(6.283185307179586 * u[1]));
        x[i + 1] = (float)(r * sin(6.283185307179586 * u[1]));
    }
    const struct { int t; const char *name; } types[] = {
        {SN_GGML_Q2_K, "Q2_K"}, {SN_GGML_Q3_K, "Q3_K"}, {SN_GGML_Q4_K, "Q4_K"}, {SN_GGML_Q5_K, "Q5_K"},
        {SN_GGML_Q6_K, "Q6_K"}, {SN_GGML_IQ4_NL, "IQ4_NL"}, {SN_GGML_IQ4_XS, "IQ4_XS"}};
    printf("| type | scalar | AVX2 | AVX-512 |\n|---|---:|---:|---:|\n");
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        if (argc > 1 && strcmp(argv[1], types[k].name) != 0) continue; /* TYPE: that row only */
        printf("| %s |", types[k].name);
        for (int level = 0; level <= 2; level++) {
            double best = 1e30;
            for (int rep = 0; rep < 3; rep++) {
                double t0 = cpu_s();
                if (sn_ggml_from_f32_at(types[k].t, x, y, N, level)) return 1;
                double t = cpu_s() - t0;
                if (t < best) best = t;
            }
            printf(" %.0f |", N * 4.0 / 1e6 / best);
        }
        printf("\n");
        fflush(stdout);
    }
    free(x);
    free(y);
    return 0;
}
