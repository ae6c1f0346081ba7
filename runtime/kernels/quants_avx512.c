/* quants_avx512.c - AVX-512 entries for the types of quants_scalar.c: the AVX2 twins (whose
 * lane layout is already ggml's) unless a wider kernel is added here. */
#include "kernels.h"

void sn_kernels_quants_avx512(sn_kernels *k) { sn_kernels_quants_avx2(k); }
