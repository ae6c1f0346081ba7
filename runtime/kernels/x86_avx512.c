/* x86_avx512.c - AVX-512 (F/BW/VL, VNNI, BF16) kernels (placeholder until the SIMD step). */
#include "kernels.h"

const sn_kernels *sn_kernels_avx512(void) { return NULL; }
