/* cpu.c - CPUID + XCR0 feature detection for run-time kernel selection (see cpu.h). */
#include "cpu.h"
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static uint64_t read_xcr0(void) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static uint32_t detect(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    const int has_osxsave = (c >> 27) & 1, has_avx = (c >> 28) & 1, has_fma = (c >> 12) & 1,
              has_f16c = (c >> 29) & 1;
    if (!has_osxsave || !has_avx) return 0;
    const uint64_t xcr0 = read_xcr0();
    if ((xcr0 & 0x6) != 0x6) return 0; /* XMM and YMM state */
    unsigned maxleaf = __get_cpuid_max(0, NULL);
    if (maxleaf < 7) return 0;
    __cpuid_count(7, 0, a, b, c, d);
    const unsigned ebx7 = b, ecx7 = c;
    uint32_t f = 0;
    unsigned vendor[4] = {0};
    __cpuid(0, a, vendor[0], vendor[2], vendor[1]); /* ebx, edx, ecx spell the vendor */
    if (memcmp(vendor, "AuthenticAMD", 12) == 0) f |= SN_CPU_AMD;
    const int avx2 = (ebx7 >> 5) & 1;
    if (avx2 && has_fma && has_f16c) f |= SN_CPU_AVX2;
    const int zmm_ok = (xcr0 & 0xe0) == 0xe0; /* opmask, ZMM_Hi256, Hi16_ZMM */
    const int avx512 = ((ebx7 >> 16) & 1) && ((ebx7 >> 17) & 1) && ((ebx7 >> 28) & 1) &&
                       ((ebx7 >> 30) & 1) && ((ebx7 >> 31) & 1); /* F DQ CD BW VL */
    if ((f & SN_CPU_AVX2) && zmm_ok && avx512) {
        f |= SN_CPU_AVX512;
        if ((ecx7 >> 11) & 1) f |= SN_CPU_AVX512VNNI;
        __cpuid_count(7, 1, a, b, c, d);
        if ((a >> 5) & 1) f |= SN_CPU_AVX512BF16;
    }
    return f;
}
#else
static uint32_t detect(void) { return 0; }
#endif

uint32_t sn_cpu_features(void) {
    static int done;
    static uint32_t feats;
    /* every access atomic: first callers on several threads may detect at once (same value) */
    if (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&feats, detect(), __ATOMIC_RELAXED);
        __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    }
    return __atomic_load_n(&feats, __ATOMIC_RELAXED);
}

void sn_tuning_default(sn_tuning *t) {
    const uint32_t f = sn_cpu_features();
    const int amd = (f & SN_CPU_AMD) != 0;
    *t = (sn_tuning){.isa = f, .lanes = (f & SN_CPU_AVX512) ? 16 : 8, .far_streams = amd, .page_kick = amd,
                     .mm_f16_convert = amd, .repack_q4_0 = 1, .repack_q4_K = 1, .huge_pages = 1, .prefault = 1};
}

void sn_tuning_settle(sn_tuning *t) {
    t->isa &= sn_cpu_features();
    if (!(t->isa & SN_CPU_AVX2)) t->isa &= SN_CPU_AMD; /* AVX-512 implies AVX2 here */
    if (!(t->isa & SN_CPU_AVX512)) t->isa &= ~(uint32_t)(SN_CPU_AVX512VNNI | SN_CPU_AVX512BF16);
    if (t->lanes != 8 && t->lanes != 16) t->lanes = (sn_cpu_features() & SN_CPU_AVX512) ? 16 : 8;
}

const char *sn_cpu_describe(uint32_t f) {
    if (f & SN_CPU_AVX512) {
        if ((f & SN_CPU_AVX512VNNI) && (f & SN_CPU_AVX512BF16)) return "avx512-vnni-bf16";
        if (f & SN_CPU_AVX512VNNI) return "avx512-vnni";
        if (f & SN_CPU_AVX512BF16) return "avx512-bf16";
        return "avx512";
    }
    if (f & SN_CPU_AVX2) return "avx2";
    return "scalar";
}
