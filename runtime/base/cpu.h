/* cpu.h - which x86 instruction sets this process may use.
 *
 * SIMD kernels are compiled into every build and chosen at run time. A feature counts only when
 * CPUID reports it AND the OS saves its register state (XCR0 via XGETBV), so a kernel never raises
 * SIGILL on a CPU or hypervisor that hides AVX/AVX-512 state. AMX is deliberately not detected:
 * the runtime never uses it. The choices the kernels make beyond CPUID (a cap on the instruction
 * sets, the reduction width, the decode's memory streams) are an sn_tuning carried by each model's
 * kernel object; programs fill one from their environment (cmd/cli.c: SN_CPU=scalar|avx2|avx512 and
 * the other SN_* knobs). */
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

/* How the runtime runs on this machine: defaults from CPUID (sn_tuning_default); a model takes
 * one in sn_model_params. None of the fields changes a result except `lanes`, which must match the
 * ggml build llama.cpp loads here for its rounding; the rest are speed choices. */
typedef struct sn_tuning {
    uint32_t isa;       /* SN_CPU_* the kernels may use: CPUID's features, or fewer (a cap) */
    int lanes;          /* 8 or 16: the vector width of ggml's float sums llama.cpp uses here (16
                         * where it loads an AVX-512 ggml-cpu variant, else 8) */
    int far_streams;    /* 1: single-token matmuls read a matrix as several streams far apart
                         * (rows a quarter of the range apart, 8-row groups half of it apart) with
                         * no software prefetch; 0: one prefetched stream. Default: AMD cores */
    int page_kick;      /* 1: single-stream F16 decode kicks the prefetcher once per 4 KB page
                         * (kernels.h sn_k_stream). Default: AMD cores */
    int mm_f16_convert; /* 1: AVX-512 F16 batches convert the activations to f16 per tile; 0: the
                         * widening driver (mm_avx512.c). Default: AMD cores */
    int repack_q4_0;    /* 1: Q4_0 and MXFP4 matrices repacked into 8-row groups at load (default) */
    int repack_q4_K;    /* 1: Q4_K ones too, where the kernels read that layout (default) */
    int huge_pages;     /* 1: matrices copied into 2 MB huge pages at load (default; see
                         * sn_model_params.mmap_weights) */
    int prefault;       /* 1: the mapped weights' page tables are filled at load (default) */
} sn_tuning;
void sn_tuning_default(sn_tuning *t);
/* Makes t one the kernels can run with: isa beyond the CPU's features dropped (so a kernel never
 * raises SIGILL), a lanes value other than 8 or 16 replaced by the CPU's. A kernel object is built
 * for a settled tuning (kernels.h sn_kernels_for); two models with different tunings each get their
 * own. */
void sn_tuning_settle(sn_tuning *t);
/* "avx512-vnni-bf16", "avx2", "scalar", ... for logs and --json. */
const char *sn_cpu_describe(uint32_t features);

#endif
