/* kernels.h - the numeric inner loops of the runtime, one table per instruction set.
 *
 * Every weight type is multiplied the way ggml's CPU backend does it, so greedy tokens match
 * llama.cpp: the f32 activation row is first converted to the weight type's "activation type"
 * (F32 stays F32, F16 -> F16, BF16 -> BF16, Q8_0/Q4_0/Q5_0/IQ4_NL/MXFP4 -> Q8_0, Q4_1/Q5_1 -> Q8_1,
 * Q2_K..Q6_K/IQ4_XS -> Q8_K) and then an
 * exact integer (or f32-accumulated float) dot product runs per weight row. A table exists for
 * the scalar reference and for each SIMD level; the SIMD tables are unit-tested against the
 * scalar one (tests/unit/test_kernels.c) and chosen at run time from CPUID + XCR0 (cpu.h). */
#ifndef SN_KERNELS_H
#define SN_KERNELS_H
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "cpu.h"
#include "ggml_types.h"

/* SN_KTYPE_INT4G32 (ggml_types.h), the blob's INT4 rows: its activation type is itself, an int8 row
 * with per-32 scales and code sums (sn_int4_quantize_act). */

/* Converts n floats (n a multiple of the activation type's block size) to an activation row. */
typedef void (*sn_quant_fn)(const float *x, void *y, int64_t n);
/* Dot product of one weight row w (n elements of the weight type) with one activation row a. */
typedef float (*sn_dot_fn)(int64_t n, const void *w, const void *a);

/* One weight type's row of a kernel table, in the manner of ggml's per-type traits. */
typedef struct sn_type_kernels {
    int act_type;      /* the activation type x is converted to (sn_kernel_act_type), -1: none */
    sn_dot_fn dot;     /* one row . one activation row; NULL = the type is not supported */
    sn_dot_fn dot_mm;  /* the same values, summed in llama.cpp's batched (2+ token) order */
    /* Where dot follows ggml's repacked (8-row) order: its vec_dot's order, which ggml runs for every
     * token on a matrix it does not repack (row count not a multiple of 8). NULL = dot everywhere. */
    sn_dot_fn dot_unpacked;
    /* Optional register-tiled matmul for batches: y[t*ldy + r] = dot_mm(row r, act t) for
     * r < 4, t < 4 (a full 4x4 tile), in exactly dot_mm's per-element order. NULL = use dot_mm. */
    void (*gemm4x4)(int64_t n, const void *w, uint64_t w_row, const void *x, uint64_t x_row, float *y, int64_t ldy);
    /* Optional batched matmul for T >= 2 tokens over R consecutive rows: y[t*ldy + r] = dot_mm(row r,
     * act t) for r < R, t < T, bit-identical to dot_mm, with the kernel's own tiling (mm_float.h,
     * instantiated by mm_avx2.c and mm_avx512.c; the per-call rearranging kernels of mm_rearrange.h
     * for Q4_K and Q8_0). Returns 0 where it declines (then sn_matmul uses gemm4x4 / dot_mm). */
    int (*mm)(int64_t n, const void *w, uint64_t w_row, int64_t R, const void *x, uint64_t x_row, int64_t T, float *y,
              int64_t ldy);
    /* Optional single-token matmul over R consecutive rows: y[r] = dot(row r, x) for r < R,
     * bit-identical to dot, for tables that do better over a whole matrix than row by row (the
     * AVX2 F16 / BF16 ones widen the activation row once instead of in every row's dot). Returns 0
     * where it declines (then sn_matmul calls dot per row). */
    int (*mv)(int64_t n, const void *w, uint64_t w_row, int64_t R, const void *x, float *y);
} sn_type_kernels;

/* A kernel object: everything one instruction-set level computes with for one tuning, chosen once
 * at load (sn_kernels_for). Kernels that depend on the tuning (lanes, far streams, page kick, F16
 * batches) are picked when the object is built, so objects of two tunings coexist in one process. */
typedef struct sn_kernels {
    const char *name;                  /* "scalar", "avx2", "avx512" */
    sn_tuning tuning;                  /* the settled tuning it was built for (cpu.h) */
    sn_type_kernels type[SN_KTYPE_COUNT]; /* by weight type */
    sn_quant_fn quant[SN_KTYPE_COUNT]; /* by activation type (F32, F16, BF16, Q8_0, Q8_1, Q8_K, INT4G32) */
    /* Q4_0 matrices repacked at load into 8-row groups (layout in q4_0_x8.h): y[t*ldy + i] =
     * dot(row i, act t) for the n_groups * 8 rows starting at w, any T >= 1, bit-identical to
     * dot/dot_mm. NULL = the table cannot read that layout (the model keeps the mapped rows). */
    void (*mm_q4_0x8)(int64_t n, const void *w, int64_t n_groups, const void *x, uint64_t x_row, int64_t T,
                      float *y, int64_t ldy);
    /* MXFP4 matrices in the same 8-row groups (136-byte blocks, q4_0_x8.h), the same contract:
     * bit-identical to dot (= dot_mm) for any T. NULL = the model keeps the mapped rows. */
    void (*mm_mxfp4x8)(int64_t n, const void *w, int64_t n_groups, const void *x, uint64_t x_row, int64_t T,
                       float *y, int64_t ldy);
    /* Q4_K matrices repacked at load into 8-row groups (layout in q4_K_x8.h), one token: y[i] =
     * dot(row i, x) for the n_groups * 8 rows starting at w, bit-identical to dot. NULL = the table
     * cannot read that layout (the model keeps the mapped rows). */
    void (*mv_q4_Kx8)(int64_t n, const void *w, int64_t n_groups, const void *x, float *y);
    /* A blob's INT4 matrices in 8-row groups (layout in int4.h): y[t*ldy + i] = dot(row i, act t)
     * for the nrows rows starting at w (a whole group's start), any T >= 1, bit-identical to dot:
     * the 8-row kernel of the same instruction set as this table's INT4 dot. */
    void (*mm_int4x8)(int64_t n, const void *w, int64_t nrows, const void *x, uint64_t x_row, int64_t T, float *y,
                      int64_t ldy);
    /* Q4_1 / Q5_0 / Q5_1 batches (T >= 2, rows [r0, r1) as sn_matmul's) through the table's Q8_0
     * batch kernels: groups of rows widened to Q8_0 blocks (the same f16 scale, values q - 16 for
     * Q5_0, q for the "_1" types; exact) and multiplied as Q8_0, the "_1" types' activations (Q8_1)
     * laid out as Q8_0 and their min terms added after. Every Q8_0 kernel sums in dot_q8_0's order,
     * which is these types' dot order and ggml's (per block 8 lanes of 4-product integer sums,
     * fma(d_w * d_a, lane, acc), hsum8; then + the chain of fma(m_w, s_a) for the "_1" types), so
     * each output is the type's dot_mm bit for bit. Returns 0 (nothing written) where it declines
     * (then sn_matmul goes row by row through dot_mm); NULL in the scalar table. */
    int (*mm_as_q8_0)(const struct sn_kernels *k, int wtype, const void *w, uint64_t w_row, int64_t n, const void *x,
                      uint64_t x_row, int64_t T, float *y, int64_t ldy, int64_t r0, int64_t r1);
    /* Attention helpers, mirroring ggml_vec_mad_f16 / ggml_vec_scale_f16 / ggml_vec_mad_f32:
     * y = f16(fma(x, v, y)), y = f16(y * v), y = fma(x, v, y). */
    void (*mad_f16)(int64_t n, uint16_t *y, const uint16_t *x, float v);
    void (*scale_f16)(int64_t n, uint16_t *y, float v);
    void (*mad_f32)(int64_t n, float *y, const float *x, float v);
    /* mad_f32 for nt rows in turn: y = fma(x + t * ld, v[t], y) for t = 0, 1, .. nt - 1 (the V side
     * of the tiled flash attention, one 64-key tile); the SIMD twins keep a chunk of y in registers
     * across the rows, each element's fma chain unchanged. */
    void (*mad_rows_f32)(int64_t n, float *y, const float *x, int64_t ld, const float *v, int64_t nt);
    /* Scores of one query against 64 keys stored transposed (kt[d * ld + j]), each summed over
     * d in order with fma, as ggml's simd_gemm does in the tiled flash-attention kernel. */
    void (*kq_tile64)(int64_t D, const float *q, const float *kt, int64_t ld, float *out);
    /* Two neighbouring tiles at once (128 keys, out[0..127]), each output as kq_tile64's: twice
     * the independent fma chains. NULL: the caller runs kq_tile64 twice. */
    void (*kq_tile128)(int64_t D, const float *q, const float *kt, int64_t ld, float *out);
    /* G query rows (G = 2 or 4; q[g]: two heads of one kv head, and/or two tokens) against one
     * 64-key tile: out[64 * g .. 64 * g + 63], each as kq_tile64's; the keys are read once for all
     * of them. NULL: not in this table. */
    void (*kq_tile64xg)(int64_t D, const float *const *q, int G, const float *kt, int64_t ld, float *out);
    /* mad_rows_f32 for G accumulators (G = 2 or 4) over the same rows: y[g] with v[g][t]; the rows
     * are read once for all of them. NULL: not in this table (both go with kq_tile64xg). */
    void (*mad_rowsg_f32)(int64_t n, float *const *y, int G, const float *x, int64_t ld, const float *const *v,
                          int64_t nt);
    /* y = silu(gate) * up as ggml_vec_swiglu_f32, and y[i] = ggml_v_expf(x[i] - m) for the
     * flash-attention softmax (n a multiple of 16), in the order tuning.lanes says: the twin of
     * this table's instruction set that sums in that order, else the scalar reference. */
    void (*swiglu)(int64_t n, float *y, const float *gate, const float *up);
    void (*exp_sub)(int64_t n, float *y, const float *x, float m);
    /* y = gelu(gate) * up as ggml_vec_geglu_f32 (its f16 table lookup: no lane order) */
    void (*geglu)(int64_t n, float *y, const float *gate, const float *up);
    /* The recurrent families' kernels (recurrent.h) of the same instruction set. */
    const struct sn_recurrent_kernels *rec;
} sn_kernels;

/* 1 if llama.cpp repacks Q2_K on this CPU (q2_K_8x8: its CPU backend does so when the CPU has
 * AVX-512, whatever SN_CPU caps for us); the Q2_K kernels and sn_kernel_mm_tokens follow it. */
int sn_kernel_q2_K_repacked(void);

/* How many tokens of a T-token batch llama.cpp multiplies in dot_mm order; the rest (the last
 * T - result) go through its single-token path, i.e. dot. Q4_K weights are repacked by ggml's CPU
 * backend on AVX2+ (q4_K_8x8), Q2_K on AVX-512 (q2_K_8x8): its gemm takes whole groups of 4 tokens
 * and the leftover tokens (and batches under 4) use the gemv, whose order is dot's. IQ4_XS batches
 * of 8+ tokens go through ggml's IQ panel gemm (dot_mm), smaller ones through its vec_dot. Every
 * other type is all-or-nothing. */
static inline int64_t sn_kernel_mm_tokens(int wtype, int64_t T) {
    if (wtype == SN_GGML_Q4_K || (wtype == SN_GGML_Q2_K && sn_kernel_q2_K_repacked())) return T - T % 4;
    if (wtype == SN_GGML_IQ4_XS) return T >= 8 ? T : 0; /* ggml's IQ panel gemm takes batches of 8+ */
    return T > 1 ? T : 0;
}

/* Activation type for a weight type, or -1 if we cannot multiply that weight type. */
int sn_kernel_act_type(int wtype);
/* Bytes of an activation row of n elements for weight type wtype (0 if unsupported). */
uint64_t sn_kernel_act_row_size(int wtype, int64_t n);

/* tuning.lanes of a kernel object is the vector width whose summation order llama.cpp's CPU
 * backend uses on this machine: 16 where it loads an AVX-512 variant of ggml-cpu, else 8 (the AVX2
 * "haswell" variant). It follows the hardware, not the instruction-set cap, so a capped object still
 * rounds like llama.cpp here (SN_GGML_LANES=8|16 through cmd/cli.c, for tests). Every level computes
 * float dots and SwiGLU in this order. */

/* The kernel object for tuning t (NULL: sn_tuning_default's) at the fastest level t's instruction
 * sets allow. Objects are built on first use, one set per distinct settled tuning, and live for the
 * process (two models loading in two threads share them, read-only). NULL only when out of memory. */
const sn_kernels *sn_kernels_for(const sn_tuning *t);
/* The object of tuning t at one level (0 scalar, 1 AVX2, 2 AVX-512), NULL if this CPU/OS cannot
 * run that level (tests compare every level against the scalar one). */
const sn_kernels *sn_kernels_at(const sn_tuning *t, int level);
/* Each SIMD table starts as a copy of the one below it (tuning included) and its fill function
 * overrides what that instruction set twins, reading k->tuning for the tuned choices. */
void sn_kernels_fill_scalar(sn_kernels *k);                         /* scalar.c */
void sn_kernels_fill_avx2(sn_kernels *k);                           /* x86_avx2.c, on the scalar table */
void sn_kernels_fill_avx512(sn_kernels *k, const sn_kernels *base); /* x86_avx512.c, on the AVX2 table */
/* Fills the entries for Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q5_K and the Q8_1 activation conversion
 * (quants_scalar.c; SIMD tables call it after their own dot_mm defaults, then add their twins). */
void sn_kernels_quants_scalar(sn_kernels *k);
void sn_quant_q8_1_scalar(const float *x, void *y, int64_t n);
void sn_kernels_quants_avx2(sn_kernels *k);   /* quants_avx2.c */
/* IQ4_NL / IQ4_XS / MXFP4 dots (iq4_scalar.c, iq4_avx2.c), and MXFP4's AVX2 (avx512 = 0) or
 * AVX-512 dots and 8-row single-token matmuls (mxfp4_x86.c); the SIMD fillers call them. */
void sn_kernels_iq4_scalar(sn_kernels *k);
void sn_kernels_iq4_avx2(sn_kernels *k);
void sn_kernels_mxfp4_x86(sn_kernels *k, int avx512);
void sn_kernels_quants_avx512(sn_kernels *k); /* quants_avx512.c */
/* Fast Q4_K / Q6_K dots and 4x4 batch tiles (kquants_avx2.c), bit-identical to
 * scalar.c's; the AVX2 table calls it after its defaults (the AVX-512 table inherits them). */
void sn_kernels_kquants_avx2(sn_kernels *k);
/* The same Q4_K / Q6_K dots 512 bits wide with VNNI (kquants_avx512.c); the AVX-512 table calls it
 * where cpu.c found AVX512-VNNI. */
void sn_kernels_kquants_avx512(sn_kernels *k);
void sn_kernels_kquants_mv_avx512(sn_kernels *k); /* the Q6_K single-token matmul in four far streams */
/* Q4_K batches on AVX-512 VNNI, rows rearranged per call 16 to a vector (kquants_mm_avx512.c). */
void sn_kernels_q4_K_mm_avx512(sn_kernels *k);
/* and its 8-row AVX2 twin (kquants_mm_avx2.c), for the AVX2 table */
void sn_kernels_q4_K_mm_avx2(sn_kernels *k);
/* Q8_0 batches on AVX-512 VNNI, the same per-call rearranging, one accumulator per 4-byte step
 * (q8_0_mm_avx512.c). */
void sn_kernels_q8_0_mm_avx512(sn_kernels *k);
/* Tiled batched F32/F16/BF16 (8-lane order only) and Q8_0 matmuls (mm_avx2.c, kernels.h mm). */
void sn_kernels_mm_avx2(sn_kernels *k);
/* The same for F32/F16 in the 16-lane order (mm_avx512.c; only where tuning.lanes == 16). */
void sn_kernels_mm_avx512(sn_kernels *k);

/* y[t*ldy + r] = dot(W row r, X row t) for rows r in [r0, r1) and activation rows t in [0, T).
 * W rows are w_row_bytes apart; X holds T activation rows (already converted) x_row_bytes apart.
 * Rows are processed in small blocks so each weight block is reused across the T tokens. */
void sn_matmul(const sn_kernels *k, int wtype, const void *w, uint64_t w_row_bytes, int64_t n,
               const void *x, uint64_t x_row_bytes, int64_t T, float *y, int64_t ldy, int64_t r0,
               int64_t r1);

/* The table's swiglu / exp_sub twins: one lane at a time (the reference, in the order of `lanes`),
 * 16 lanes at a time (bit-identical; the scalar one where AVX-512 is not compiled in), and 8 lanes
 * at a time in the AVX2 build's order (act_avx2.c). */
void sn_swiglu_scalar(int lanes, int64_t n, float *y, const float *gate, const float *up);
void sn_swiglu_avx512(int64_t n, float *y, const float *gate, const float *up);
void sn_swiglu_avx2(int64_t n, float *y, const float *gate, const float *up);
void sn_exp_sub_scalar(int lanes, int64_t n, float *y, const float *x, float m);
void sn_exp_sub_avx512(int64_t n, float *y, const float *x, float m); /* 16-lane order */
void sn_exp_sub_avx2(int64_t n, float *y, const float *x, float m);   /* 8-lane order */
/* ggml's GELU table (GGML_GELU_FP16: the tanh form at every f16 value, stored as f16; one entry of
 * padding so a 32-bit gather of the last one stays inside), and the table's geglu: one element at a
 * time (the reference), 16 (AVX-512) and 8 (AVX2 + F16C) at a time, the same bits. */
const uint16_t *sn_gelu_f16_table(void);
void sn_geglu_scalar(int64_t n, float *y, const float *gate, const float *up);
void sn_geglu_avx512(int64_t n, float *y, const float *gate, const float *up);
void sn_geglu_avx2(int64_t n, float *y, const float *gate, const float *up);
/* ggml_v_expf's value for one float (its polynomial, not libm's expf). */
float sn_v_expf(float x);
float sn_v_expf8(float x); /* the AVX2 flavour of ggml_v_expf, one lane */

/* Software prefetch for decode: matrices are streamed once per token, row after row, and the
 * hardware prefetcher alone keeps too few lines in flight (docs/PERFORMANCE.md, "prefetch"). The
 * dots prefetch SN_K_PREFETCH_AHEAD bytes ahead of what they read (rows are contiguous, so the
 * address runs on into the next rows; prefetches never fault). Changes no result. */
enum { SN_K_PREFETCH_AHEAD = 4096 };
static inline void sn_k_prefetch(const void *p, size_t bytes) {
    const char *q = (const char *)p + SN_K_PREFETCH_AHEAD;
    for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch(q + o, 0, 3);
}

/* Prefetch ahead of a single-token matmul that reads a range front to back: one line every `step`
 * bytes of [start, start + bytes) (64: every line; SN_K_PAGE: one line per 4 KB page), each once,
 * `ahead` bytes before the kernel reads it, the first `ahead` bytes at the start, none past the
 * end. Usage: sn_k_stream s = sn_k_stream_start(p, bytes, step, ahead); sn_k_stream_to(&s, end of
 * the part about to be read) before each part. Changes no result. Two uses:
 * - Page kick (step SN_K_PAGE, ahead SN_K_PAGE_AHEAD; F16 decode rows read one after another,
 *   x86_avx512.c): the hardware prefetcher starts afresh in each 4 KB page, so one line of each
 *   page touched early starts it before the loads arrive; a prefetch of every line was slower there.
 * - Every line (step 64, ahead SN_K_STREAM_AHEAD; each of the INT4 quads' four far streams, int4.c,
 *   one block at a time): with four streams the hardware prefetcher alone leaves gaps, worst at
 *   the start of a small matrix. Not used for the Q6_K and Q8_0 quarters, where it lost.
 * Numbers: docs/PERFORMANCE.md. */
enum { SN_K_LINE = 64, SN_K_PAGE = 4096, SN_K_PAGE_AHEAD = 16384 };
enum { SN_K_STREAM_AHEAD = 3072 }; /* the distance that served the INT4 quads best (docs/PERFORMANCE.md) */
#ifndef SN_K_STREAM_PREFETCH /* test_prefetch_stream.c records the addresses instead */
#define SN_K_STREAM_PREFETCH(p) __builtin_prefetch((p), 0, 3)
#endif
typedef struct {
    uintptr_t next, lim, ahead, step;
} sn_k_stream;
/* step: a power of two */
static inline sn_k_stream sn_k_stream_start(const void *p, uint64_t bytes, uintptr_t step, uintptr_t ahead) {
    sn_k_stream s = {(uintptr_t)p & ~(step - 1), (uintptr_t)p + (uintptr_t)bytes, ahead, step};
    return s;
}
static inline void sn_k_stream_to(sn_k_stream *s, const void *read_end) {
    uintptr_t e = (uintptr_t)read_end + s->ahead;
    if (e > s->lim) e = s->lim;
    for (; s->next < e; s->next += s->step) SN_K_STREAM_PREFETCH((const void *)s->next);
}

/* Single-token matmuls that read four rows a quarter of the range apart at once (rows r, r + q,
 * r + 2q, r + 3q for q = R / 4, then the last R % 4 one by one through `one`), each row with
 * exactly the operations of its one-row kernel, so y[r] is bit for bit what that kernel gives.
 * Four streams pages apart, interleaved finely (a block or a 64-element step of each row in turn),
 * keep more of the memory system busy than one stream (streams taken 512 bytes or more at a time,
 * or four neighbouring rows, do not; docs/PERFORMANCE.md, "far streams"). Installed where
 * the object's tuning.far_streams says so (AMD cores by default, where measured). rows4
 * gets the four row pointers, the activation x and the caller's aux, and writes 4 outputs. */
typedef void (*sn_k_rows4_fn)(int64_t n, const void *const *w, const void *x, const float *aux, float *y);
static inline void sn_k_mv_quarters(sn_k_rows4_fn rows4, int64_t n, const void *w, uint64_t w_row, int64_t R,
                                    const void *x, const float *aux, sn_dot_fn one, float *y) {
    const int64_t q = R / 4;
    for (int64_t r = 0; r < q; r++) {
        const void *rows[4];
        float out[4];
        for (int i = 0; i < 4; i++) rows[i] = (const char *)w + (uint64_t)(r + i * q) * w_row;
        rows4(n, rows, x, aux, out);
        for (int i = 0; i < 4; i++) y[r + i * q] = out[i];
    }
    for (int64_t r = 4 * q; r < R; r++) y[r] = one(n, (const char *)w + (uint64_t)r * w_row, x);
}

/* Small exact helpers shared by kernel files. */
/* ggml_vec_dot_f32's tail, the elements past its 4-accumulator SIMD part, added to its float sum f
 * from element i on. ggml writes `sumf += x[i]*y[i]`; node-llama-cpp's builds of it (read off their
 * machine code, the haswell and the AVX-512 variants alike) vectorise that loop: products of `big`
 * lanes (8 on AVX2, 16 on AVX-512), rounded, then added to the sum one by one, while that many are
 * left; then one such chunk of big/2; the last few fused (fma). `volatile` keeps the compiler from
 * fusing the chunked products back. */
static inline float sn_k_dot_f32_tail(float f, const float *x, const float *y, int64_t i, int64_t n, int big) {
    for (int c = big; c >= big / 2; c /= 2)
        for (; i + c <= n; i += c)
            for (int k = 0; k < c; k++) {
                volatile float p = x[i + k] * y[i + k];
                f += p;
            }
    for (; i < n; i++) f = fmaf(x[i], y[i], f);
    return f;
}
/* Tails for the float dots' macros (x86_avx2.c, x86_avx512.c): ggml_vec_dot_f32 keeps a float sum
 * (sn_k_dot_f32_tail, `big` lanes), ggml_vec_dot_f16 a double one. */
#define SN_K_TAIL_F32_16(r0, np, n, w, a, SCAL) return sn_k_dot_f32_tail(np ? r0 : 0.0f, w, a, np, n, 16)
#define SN_K_TAIL_F32_8(r0, np, n, w, a, SCAL) return sn_k_dot_f32_tail(np ? r0 : 0.0f, w, a, np, n, 8)
#define SN_K_TAIL_F64(r0, np, n, w, a, SCAL)                                   \
    double r = np ? (double)r0 : 0.0;                                          \
    for (int64_t i = np; i < n; i++) r += (double)(SCAL(w, i) * SCAL(a, i));   \
    return (float)r
/* ggml's hsum_float_8, (a4+a0 + a6+a2) + (a5+a1 + a7+a3): how ggml's x86 code reduces 8 float lanes
 * (vec_dot, tinyBLAS). Matching it keeps llama.cpp's rounding, not just its value; simd_avx2.h has
 * the vector spelling. */
static inline float sn_k_hsum8(const float *a) {
    const float r0 = a[4] + a[0], r1 = a[5] + a[1], r2 = a[6] + a[2], r3 = a[7] + a[3];
    return (r0 + r2) + (r1 + r3);
}

static inline float sn_k_h2f(uint16_t h) { return sn_fp16_decode(h); }

/* Round-to-nearest-even f32 -> f16 (what F16C's vcvtps2ph with imm 0 does). */
static inline uint16_t sn_k_f2h(float f) {
    union { float f; uint32_t u; } v = {f};
    const uint32_t x = v.u, sign = (x >> 16) & 0x8000;
    const uint32_t ax = x & 0x7fffffff;
    if (ax >= 0x7f800000u) return (uint16_t)(sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 : 0));
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00); /* rounds to >= 65520 -> inf */
    if (ax < 0x38800000u) { /* result is subnormal or zero */
        if (ax < 0x33000000u) return (uint16_t)sign; /* < 2^-25: rounds to 0 */
        const uint32_t e = ax >> 23, m = (ax & 0x7fffff) | 0x800000;
        const uint32_t shift = 126 - e; /* 14..24 */
        uint32_t r = m >> shift;
        const uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = ((ax >> 13) - (112u << 10));
    const uint32_t rem = ax & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++;
    return (uint16_t)(sign | r);
}

static inline float sn_k_bf2f(uint16_t h) {
    union { uint32_t u; float f; } v = {(uint32_t)h << 16};
    return v.f;
}

/* ggml_vec_dot_bf16's end in its 16-lane order (scalar.c, x86_avx2.c, x86_avx512.c): the two
 * accumulators' sums r1, r2 added to a double in turn, then the elements from i on one by one. */
static inline float sn_k_dot_bf16_tail(float r1, float r2, const uint16_t *w, const uint16_t *a, int64_t i, int64_t n) {
    double s = 0;
    s += (double)r1;
    s += (double)r2;
    for (; i < n; i++) s += (double)(sn_k_bf2f(w[i]) * sn_k_bf2f(a[i]));
    return (float)s;
}

static inline uint16_t sn_k_f2bf(float f) {
    union { float f; uint32_t u; } v = {f};
    if ((v.u & 0x7fffffff) > 0x7f800000u) return (uint16_t)((v.u >> 16) | 64); /* quiet NaN */
    return (uint16_t)((v.u + (0x7fff + ((v.u >> 16) & 1))) >> 16);
}

/* The 6-bit scale and min of sub-block j of a Q4_K block (scales[12] packing). */
static inline void sn_k_q4k_scale_min(int j, const uint8_t *q, uint8_t *d, uint8_t *m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = (uint8_t)((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *m = (uint8_t)((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
    }
}

/* Sub-block pair j (inputs 64j..64j+63) of a Q4_K block against a Q8_K block: the pair's two 6-bit
 * scales, and the exact min term m0 * (sum of its first 32 activations) + m1 * (of the second 32)
 * from the Q8_K block sums. */
static inline int sn_k_q4k_pair(int j, const uint8_t *scales, const int16_t *bsums, int *sc0, int *sc1) {
    uint8_t s0, m0, s1, m1;
    sn_k_q4k_scale_min(2 * j, scales, &s0, &m0);
    sn_k_q4k_scale_min(2 * j + 1, scales, &s1, &m1);
    *sc0 = s0;
    *sc1 = s1;
    return m0 * (bsums[4 * j] + bsums[4 * j + 1]) + m1 * (bsums[4 * j + 2] + bsums[4 * j + 3]);
}

#endif
