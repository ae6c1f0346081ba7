/* blob.h - sunny's runtime blob (.snb): weights laid out for sunny's kernels, mmapped and used in
 * place. docs/BLOB.md is the spec. In short: a 64-byte header (magic "SNYB", version, endian mark,
 * CRC32 of metadata+table, table end, data offset, file size, alignment, flags), the metadata as an
 * embedded zero-tensor GGUF (so the GGUF reader validates and serves it), a tensor table (name, dtype,
 * layout, dims, offset, bytes, CRC32), then 64-byte-aligned data from a 4096-aligned data offset.
 *
 * The reader validates everything against the file size before handing anything out; CRCs of the
 * tensor data are checked only when asked (SN_BLOB_VERIFY). The writer streams like the GGUF
 * writer: declare tensors, begin, write each tensor's bytes in order, finish. */
#ifndef SN_BLOB_H
#define SN_BLOB_H
#include "gguf.h"
#include "sn_err.h"
#include <stdint.h>

#define SN_BLOB_MAGIC "SNYB"
/* 3: INT4G32 (groups of 32, fp16 scales); 2: INT4G64 with fp32 scales, Q6_K/Q8_0 tensors; 1: f32
 * embeddings. Older versions are refused with "regenerate it" (a blob is a cache of a GGUF). */
#define SN_BLOB_VERSION 3u
#define SN_BLOB_ENDIAN_MARK 0x01020304u
#define SN_BLOB_ALIGN 64u
#define SN_BLOB_DATA_ALIGN 4096u
#define SN_BLOB_INT4_GROUP 32 /* inputs per fp16 scale */
#define SN_BLOB_INT4_COLS 64  /* INT4 row lengths are a multiple of this */

/* Q6_K and Q8_0 are ggml's block layouts, rows of ne0 values back to back (dequantized per row for
 * the embedding lookup, and run by the GGUF kernels as matrices). */
typedef enum { SN_BLOB_FP32 = 0, SN_BLOB_FP16 = 1, SN_BLOB_INT4G32 = 2, SN_BLOB_Q6_K = 3, SN_BLOB_Q8_0 = 4 } sn_blob_dtype;
/* INT4G32 comes in two layouts: rows (the untied embedding, read one row per token) and 8-row
 * groups (every weight matrix; kernels/int4.h). */
typedef enum { SN_BLOB_ROWMAJOR = 0, SN_BLOB_INT4_ROWS = 1, SN_BLOB_INT4_X8 = 2 } sn_blob_layout;
enum { SN_BLOB_FLAG_INT4_HEAD = 1 };
enum { SN_BLOB_VERIFY = 1 }; /* open flag: check every tensor's CRC32 */

typedef struct sn_blob_tensor {
    const char *name;      /* NUL-terminated copy */
    sn_blob_dtype dtype;
    sn_blob_layout layout;
    uint32_t n_dims;
    uint64_t ne[4];
    uint64_t offset;       /* from the data section */
    uint64_t nbytes;
    uint32_t crc32;
    const void *data;      /* into the mapping */
} sn_blob_tensor;

typedef struct sn_blob sn_blob;

/* True if the file starts with the blob magic (cheap sniff; 0 on any I/O error). */
int sn_blob_sniff(const char *path);
sn_status sn_blob_open(const char *path, int flags, sn_blob **out, sn_err *err);
sn_status sn_blob_open_mem(const void *buf, uint64_t size, int flags, sn_blob **out, sn_err *err);
void sn_blob_close(sn_blob *b);

const sn_gguf *sn_blob_meta(const sn_blob *b);   /* the metadata, as a zero-tensor GGUF */
uint32_t sn_blob_flags(const sn_blob *b);
int64_t sn_blob_n_tensors(const sn_blob *b);
int64_t sn_blob_find_tensor(const sn_blob *b, const char *name);
const sn_blob_tensor *sn_blob_tensor_at(const sn_blob *b, int64_t i);
/* Bytes a tensor of this dtype/layout/shape must occupy (0 if the combination is invalid). */
uint64_t sn_blob_tensor_nbytes(sn_blob_dtype dt, sn_blob_layout lay, uint32_t n_dims, const uint64_t *ne);
/* INT4G32 rows: bytes of one row of `cols` inputs (cols/2 code bytes + cols/32 fp16 scales). */
uint64_t sn_blob_int4_row_bytes(uint64_t cols);

/* ---- writer ---- */
typedef struct sn_blob_writer sn_blob_writer;
/* meta: a GGUF writer holding the KVs (no tensors); it is serialized into the blob by begin(). */
sn_blob_writer *sn_blob_writer_new(void);
void sn_blob_writer_free(sn_blob_writer *w);
sn_gguf_writer *sn_blob_writer_meta(sn_blob_writer *w);
void sn_blob_writer_set_flags(sn_blob_writer *w, uint32_t flags);
sn_status sn_blob_writer_add_tensor(sn_blob_writer *w, const char *name, sn_blob_dtype dt,
                                    sn_blob_layout lay, uint32_t n_dims, const uint64_t *ne, sn_err *err);
/* Writes header, metadata and table with placeholder CRCs; then tensors in order. */
sn_status sn_blob_writer_begin(sn_blob_writer *w, const char *path, sn_err *err);
/* The same into an open, empty file (sn_tmp_create); the writer owns fd from here on. */
sn_status sn_blob_writer_begin_fd(sn_blob_writer *w, int fd, const char *path, sn_err *err);
sn_status sn_blob_writer_write(sn_blob_writer *w, const void *data, uint64_t n, sn_err *err);
sn_status sn_blob_writer_end_tensor(sn_blob_writer *w, sn_err *err);
/* Patches the tensor CRCs and the header CRC, fsyncs and closes. */
sn_status sn_blob_writer_finish(sn_blob_writer *w, sn_err *err);

/* INT4G32 quantization of one row of `cols` floats (cols % 64 == 0) into
 * sn_blob_int4_row_bytes(cols) bytes: cols/2 code bytes then cols/32 fp16 scales (see
 * docs/BLOB.md). Codes -8..7; each group's scale is the one of a small search (around Q4_0's
 * signed-max rule) with the least squared error after rounding the scale to fp16. */
void sn_blob_quantize_int4_row(const float *x, uint64_t cols, uint8_t *row);
void sn_blob_dequantize_int4_row(const uint8_t *row, uint64_t cols, float *y);

#endif
