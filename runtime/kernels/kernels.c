/* kernels.c - weight type -> activation type mapping, run-time table choice, and the blocked
 * matrix multiply every projection goes through (see kernels.h). */
#include "kernels.h"

#include "../cpu.h"

int sn_kernel_act_type(int wtype) {
    switch (wtype) {
    case SN_GGML_F32: return SN_GGML_F32;
    case SN_GGML_F16: return SN_GGML_F16;
    case SN_GGML_BF16: return SN_GGML_BF16;
    case SN_GGML_Q8_0:
    case SN_GGML_Q4_0: return SN_GGML_Q8_0;
    case SN_GGML_Q4_K:
    case SN_GGML_Q6_K: return SN_GGML_Q8_K;
    default: return -1;
    }
}

uint64_t sn_kernel_act_row_size(int wtype, int64_t n) {
    const int at = sn_kernel_act_type(wtype);
    if (at < 0 || n < 0) return 0;
    switch (at) {
    case SN_GGML_F32: return (uint64_t)n * 4;
    case SN_GGML_F16:
    case SN_GGML_BF16: return (uint64_t)n * 2;
    case SN_GGML_Q8_0: return n % SN_QK8_0 ? 0 : (uint64_t)(n / SN_QK8_0) * sizeof(sn_block_q8_0);
    case SN_GGML_Q8_K: return n % SN_QK_K ? 0 : (uint64_t)(n / SN_QK_K) * sizeof(sn_block_q8_K);
    default: return 0;
    }
}

const sn_kernels *sn_kernels_best(void) {
    const uint32_t f = sn_cpu_usable();
    const sn_kernels *k = NULL;
    if (f & SN_CPU_AVX512) k = sn_kernels_avx512();
    if (!k && (f & SN_CPU_AVX2)) k = sn_kernels_avx2();
    return k ? k : sn_kernels_scalar();
}

enum { ROW_BLOCK = 16, TOK_BLOCK = 8 };

void sn_matmul(const sn_kernels *k, int wtype, const void *w, uint64_t w_row_bytes, int64_t n,
               const void *x, uint64_t x_row_bytes, int64_t T, float *y, int64_t ldy, int64_t r0,
               int64_t r1) {
    const sn_dot_fn dot = k->dot[wtype];
    const char *wb = w, *xb = x;
    if (T == 1) {
        for (int64_t r = r0; r < r1; r++) y[r] = dot(n, wb + (uint64_t)r * w_row_bytes, xb);
        return;
    }
    /* Tile rows x tokens so a block of weight rows stays in cache while it meets every token. */
    for (int64_t rb = r0; rb < r1; rb += ROW_BLOCK) {
        const int64_t re = rb + ROW_BLOCK < r1 ? rb + ROW_BLOCK : r1;
        for (int64_t tb = 0; tb < T; tb += TOK_BLOCK) {
            const int64_t te = tb + TOK_BLOCK < T ? tb + TOK_BLOCK : T;
            for (int64_t r = rb; r < re; r++) {
                const char *wr = wb + (uint64_t)r * w_row_bytes;
                for (int64_t t = tb; t < te; t++)
                    y[t * ldy + r] = dot(n, wr, xb + (uint64_t)t * x_row_bytes);
            }
        }
    }
}
