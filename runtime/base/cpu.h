/* cpu.h - which x86 instruction sets this process may use.
 *
 * SIMD kernels are compiled into every build and chosen at run time. A feature counts only when
 * CPUID reports it AND the OS saves its register state (XCR0 via XGETBV), so a kernel never raises
 * SIGILL on a CPU or hypervisor that hides AVX/AVX-512 state. AMX is deliberately not detected:
 * the runtime never uses it. SN_CPU=scalar|avx2|avx512 in the environment caps the choice (tests,
 * benchmarks). */
#ifndef SN_CPU_H
#define SN_CPU_H
#include <stdint.h>

enum {
    SN_CPU_AVX2 = 1u << 0,      /* AVX2 + FMA + F16C, with YMM state enabled */
    SN_CPU_AVX512 = 1u << 1,    /* AVX-512 F/BW/VL/DQ/CD, with ZMM + opmask state enabled */
    SN_CPU_AVX512VNNI = 1u << 2,
    SN_CPU_AVX512BF16 = 1u << 3,
    /* The vendor is AMD. Not an instruction set: it picks between two kernels that compute the same
     * values where the cores differ in cost (vcvtph2ps is one uop on Zen 4/5, two on Intel cores). */
    SN_CPU_AMD = 1u << 4,
};

/* Detected features (cached after the first call). */
uint32_t sn_cpu_features(void);
/* Features after applying the SN_CPU cap from the environment (read once per process). */
uint32_t sn_cpu_usable(void);
/* 1 where single-token matmuls read a matrix as several streams far apart (rows a quarter of the
 * range apart, or 8-row groups half of it apart) with no software prefetch, 0 where they read it as
 * one prefetched stream. The same values either way; the default follows the vendor (AMD: 1, as
 * measured on Zen 5), SN_MV_QUARTERS=0|1 overrides (read once per process; tests force each). */
int sn_cpu_far_streams(void);
/* 1 where single-token matmuls that read a matrix as one stream kick the hardware prefetcher once
 * per 4 KB page ahead of the rows (kernels.h sn_k_stream, the page kick) instead of reading far streams or
 * prefetching every line (today the F16 decode of rows up to 4096 long, x86_avx512.c). The default
 * follows the vendor (AMD: 1, measured on Zen 5), SN_MV_PAGES=0|1 overrides (read once per
 * process; tests force each). */
int sn_cpu_page_kick(void);
/* "avx512-vnni-bf16", "avx2", "scalar", ... for logs and --json. */
const char *sn_cpu_describe(uint32_t features);

#endif
