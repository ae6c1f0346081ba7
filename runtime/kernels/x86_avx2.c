/* x86_avx2.c - AVX2 + FMA + F16C kernels (placeholder until the SIMD step; see kernels.h). */
#include "kernels.h"

const sn_kernels *sn_kernels_avx2(void) { return NULL; }
