/* blob_convert.h - GGUF or HF folder -> sunny runtime blob (docs/BLOB.md). An HF folder is streamed:
 * sn_convert's tensors go straight into the blob writer as F32 rows (no intermediate GGUF on disk).
 *
 * Every source tensor is dequantized row by row to f32 (runtime/quants/ggml_types) and rewritten in the
 * blob's layout: FP32, FP16, or INT4G32 rows for the 2-D weight matrices; norms and biases stay FP32;
 * an int4 blob keeps the token embedding and the head compact (Q6_K rows, as llama-quantize's Q4_0
 * recipe does). A tied model uses the embedding as its head unless --head asks for another type.
 * Output goes to OUT.tmp and is renamed at the end. */
#ifndef SN_BLOB_CONVERT_H
#define SN_BLOB_CONVERT_H
#include "convert.h"
#include "sn_err.h"
#include <signal.h>
#include <stdint.h>

typedef enum { SN_BLOBTYPE_FP32 = 0, SN_BLOBTYPE_FP16 = 1, SN_BLOBTYPE_INT4 = 2 } sn_blobtype;

int sn_blobtype_parse(const char *s); /* "fp32" | "fp16" | "int4" -> value, else -1 */

typedef struct sn_blob_convert_opts {
    const char *in_path;   /* a .gguf file or an HF model folder */
    const char *out_path;
    sn_blobtype dtype;
    int head_fp16;         /* int4 only: output.weight FP16 (default: Q6_K like llama-quantize's Q4_0) */
    int head_int4;         /* int4 only: output.weight INT4G32 */
    int n_threads;
    const char *tmp_dir;   /* sn_convert_opts.tmp_dir */
    int force;
    int verify;            /* reopen with CRC checks and compare every tensor with the source */
    volatile sig_atomic_t *cancel; /* non-zero -> stop, remove OUT.tmp, return SN_EIO "interrupted" */
    /* HF folders: sn_convert's progress (bytes of the F32 stream) */
    void (*on_progress)(void *ud, const sn_convert_progress *p);
    void *ud;
} sn_blob_convert_opts;

typedef struct sn_blob_convert_result {
    uint64_t n_tensors, bytes, n_int4, n_fp16, n_fp32;
    double seconds;
    double verify_max_rel_err; /* int4: max over tensors of max|w - deq(w)| / max|w| */
} sn_blob_convert_result;

sn_status sn_blob_convert(const sn_blob_convert_opts *o, sn_blob_convert_result *res, sn_err *err);

#endif
