/* quants_avx512.c - AVX-512 entries for the types of quants_scalar.c: the AVX2 twins (whose
 * lane layout is already ggml's) unless a wider kernel is added here. */
#include "kernels.h"

void sn_kernels_quants_avx512(sn_kernels *k) {
    sn_kernels_quants_avx2(k);
    /* quants_avx2 starts from the scalar entries (Q5_K among them), and the AVX2 table adds its
     * K-quant kernels only after it: without this the AVX-512 table would run Q5_K dots one product
     * at a time. x86_avx512.c puts its 512-bit K-quant dots over these. */
    sn_kernels_kquants_avx2(k);
}
