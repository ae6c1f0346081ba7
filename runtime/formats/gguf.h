/* gguf.h - GGUF v3 reader (mmap, fully validated) and streaming writer.
 *
 * On disk (all little-endian):
 *   u32 magic "GGUF" | u32 version (2 or 3) | u64 n_tensors | u64 n_kv
 *   n_kv x { str key | u32 value_type | value }
 *   n_tensors x { str name | u32 n_dims (1..4) | n_dims x u64 ne | u32 ggml_type | u64 offset }
 *   zero padding to ALIGN | tensor data, each tensor padded to ALIGN
 * str = u64 len + bytes (no NUL). bool = 1 byte (0/1). array = u32 elem_type | u64 count | elems
 * (no nested arrays). Value types: U8=0 I8=1 U16=2 I16=3 U32=4 I32=5 F32=6 BOOL=7 STR=8 ARR=9
 * U64=10 I64=11 F64=12. ALIGN = general.alignment (u32, power of two) else 32. ne[0] is the
 * contiguous dimension (torch shape reversed). Offsets are relative to the data section and must be
 * the contiguous padded sequence llama.cpp expects. Tensor names are < 64 bytes and unique; keys are
 * unique.
 *
 * The reader checks every length, count, string, n_dims, type and offset against the file size
 * before trusting it and reports the field and byte offset of the first problem. After a successful
 * open everything it hands out is in bounds. Lookups return -1 when absent. */
#ifndef SN_GGUF_H
#define SN_GGUF_H
#include "sn_err.h"
#include <stddef.h>
#include <stdint.h>

typedef enum sn_gguf_type {
    SN_GGUF_U8 = 0, SN_GGUF_I8 = 1, SN_GGUF_U16 = 2, SN_GGUF_I16 = 3, SN_GGUF_U32 = 4,
    SN_GGUF_I32 = 5, SN_GGUF_F32 = 6, SN_GGUF_BOOL = 7, SN_GGUF_STR = 8, SN_GGUF_ARR = 9,
    SN_GGUF_U64 = 10, SN_GGUF_I64 = 11, SN_GGUF_F64 = 12, SN_GGUF_TYPE_COUNT = 13
} sn_gguf_type;

#define SN_GGUF_DEFAULT_ALIGNMENT 32
#define SN_GGUF_MAX_DIMS 4
#define SN_GGUF_MAX_NAME 64

typedef struct sn_gguf sn_gguf;

typedef struct sn_gguf_str { const char *ptr; uint64_t len; } sn_gguf_str; /* not NUL-terminated */

typedef struct sn_gguf_tensor {
    const char *name;      /* NUL-terminated copy */
    uint32_t n_dims;
    uint64_t ne[SN_GGUF_MAX_DIMS]; /* unused dims are 1 */
    int type;              /* sn_ggml_type */
    uint64_t offset;       /* relative to the data section */
    uint64_t size;         /* bytes */
    const void *data;      /* into the mapping (NULL when opened with SN_GGUF_NO_DATA) */
} sn_gguf_tensor;

enum { SN_GGUF_NO_DATA = 1 }; /* open flag: header only, do not require the data section */

/* ---- reader ---- */
/* A split model's first part (split.no 0, split.count N > 1, named PREFIX-00001-of-0000N.gguf)
 * opens the whole model: the other parts beside it are opened and their tensors appended (data
 * pointers into their own mappings); the KVs are the first part's. A later part is refused. */
sn_status sn_gguf_open(const char *path, int flags, sn_gguf **out, sn_err *err);
/* Parse from memory (fuzzing, tests); buf must outlive the handle. */
sn_status sn_gguf_open_mem(const void *buf, uint64_t size, int flags, sn_gguf **out, sn_err *err);
void sn_gguf_close(sn_gguf *g);

uint32_t sn_gguf_version(const sn_gguf *g);
uint32_t sn_gguf_alignment(const sn_gguf *g);
uint64_t sn_gguf_data_offset(const sn_gguf *g);   /* file offset of the data section */
uint64_t sn_gguf_file_size(const sn_gguf *g);

int64_t sn_gguf_n_kv(const sn_gguf *g);
int64_t sn_gguf_find_key(const sn_gguf *g, const char *key);
const char *sn_gguf_key(const sn_gguf *g, int64_t i);          /* NUL-terminated */
sn_gguf_type sn_gguf_kv_type(const sn_gguf *g, int64_t i);
/* Scalars: the caller checks the type first; a mismatched getter returns 0/false/empty. */
uint8_t sn_gguf_get_u8(const sn_gguf *g, int64_t i);
int8_t sn_gguf_get_i8(const sn_gguf *g, int64_t i);
uint16_t sn_gguf_get_u16(const sn_gguf *g, int64_t i);
int16_t sn_gguf_get_i16(const sn_gguf *g, int64_t i);
uint32_t sn_gguf_get_u32(const sn_gguf *g, int64_t i);
int32_t sn_gguf_get_i32(const sn_gguf *g, int64_t i);
float sn_gguf_get_f32(const sn_gguf *g, int64_t i);
int sn_gguf_get_bool(const sn_gguf *g, int64_t i);
uint64_t sn_gguf_get_u64(const sn_gguf *g, int64_t i);
int64_t sn_gguf_get_i64(const sn_gguf *g, int64_t i);
double sn_gguf_get_f64(const sn_gguf *g, int64_t i);
sn_gguf_str sn_gguf_get_str(const sn_gguf *g, int64_t i);
/* Arrays */
sn_gguf_type sn_gguf_arr_type(const sn_gguf *g, int64_t i);
uint64_t sn_gguf_arr_n(const sn_gguf *g, int64_t i);
const void *sn_gguf_arr_data(const sn_gguf *g, int64_t i);      /* numeric arrays: raw LE elements
                                                                 * (unaligned: memcpy them out) */
sn_gguf_str sn_gguf_arr_str(const sn_gguf *g, int64_t i, uint64_t j);
/* The raw encoded bytes of KV i (key + type + value), for copying into a writer or a blob. */
const void *sn_gguf_kv_raw(const sn_gguf *g, int64_t i, uint64_t *len);

/* Convenience lookups with a default when the key is absent or has another type. */
uint32_t sn_gguf_u32_or(const sn_gguf *g, const char *key, uint32_t dflt);
float sn_gguf_f32_or(const sn_gguf *g, const char *key, float dflt);
int sn_gguf_bool_or(const sn_gguf *g, const char *key, int dflt);
/* Returns a malloc'd NUL-terminated copy or NULL. */
char *sn_gguf_str_dup(const sn_gguf *g, const char *key);

int64_t sn_gguf_n_tensors(const sn_gguf *g);
int64_t sn_gguf_find_tensor(const sn_gguf *g, const char *name);
const sn_gguf_tensor *sn_gguf_tensor_at(const sn_gguf *g, int64_t i);

const char *sn_gguf_type_name(sn_gguf_type t);

/* 1 when s[0..n) is well-formed UTF-8 without NUL bytes (what GGUF names require, and what text
 * meant for a GGUF string should be), else 0. */
int sn_gguf_utf8_ok(const char *s, uint64_t n);

/* ---- writer ----
 * Usage: w = sn_gguf_writer_new(); set KVs (in the order they should appear; setting an existing
 * key replaces its value in place); add tensor infos; sn_gguf_writer_begin(w, path) writes the whole
 * header to PATH; then for each tensor in the order added: sn_gguf_writer_write(w, bytes, n) any
 * number of times followed by sn_gguf_writer_end_tensor(w) (which checks the byte count and pads);
 * finally sn_gguf_writer_finish(w). The writer never holds tensor data. KV values are encoded at
 * set time. */
typedef struct sn_gguf_writer sn_gguf_writer;

sn_gguf_writer *sn_gguf_writer_new(void);
void sn_gguf_writer_free(sn_gguf_writer *w); /* does not delete the file */

sn_status sn_gguf_writer_set_u8(sn_gguf_writer *w, const char *key, uint8_t v);
sn_status sn_gguf_writer_set_i8(sn_gguf_writer *w, const char *key, int8_t v);
sn_status sn_gguf_writer_set_u16(sn_gguf_writer *w, const char *key, uint16_t v);
sn_status sn_gguf_writer_set_i16(sn_gguf_writer *w, const char *key, int16_t v);
sn_status sn_gguf_writer_set_u32(sn_gguf_writer *w, const char *key, uint32_t v);
sn_status sn_gguf_writer_set_i32(sn_gguf_writer *w, const char *key, int32_t v);
sn_status sn_gguf_writer_set_f32(sn_gguf_writer *w, const char *key, float v);
sn_status sn_gguf_writer_set_bool(sn_gguf_writer *w, const char *key, int v);
sn_status sn_gguf_writer_set_u64(sn_gguf_writer *w, const char *key, uint64_t v);
sn_status sn_gguf_writer_set_i64(sn_gguf_writer *w, const char *key, int64_t v);
sn_status sn_gguf_writer_set_f64(sn_gguf_writer *w, const char *key, double v);
sn_status sn_gguf_writer_set_str(sn_gguf_writer *w, const char *key, const char *v);
sn_status sn_gguf_writer_set_strn(sn_gguf_writer *w, const char *key, const char *v, uint64_t len);
/* Numeric array of elem_type (not STR/ARR); data holds n LE elements. */
sn_status sn_gguf_writer_set_arr(sn_gguf_writer *w, const char *key, sn_gguf_type elem_type,
                                 const void *data, uint64_t n);
/* String array; lens may be NULL (then strings are NUL-terminated). */
sn_status sn_gguf_writer_set_arr_str(sn_gguf_writer *w, const char *key, const char *const *strs,
                                     const uint64_t *lens, uint64_t n);
/* Copies KV i of a reader verbatim. */
sn_status sn_gguf_writer_copy_kv(sn_gguf_writer *w, const sn_gguf *g, int64_t i);
/* Every KV of another writer, in its order (replacing same-named keys in place). */
sn_status sn_gguf_writer_copy_kvs(sn_gguf_writer *w, const sn_gguf_writer *src);
int sn_gguf_writer_has_key(const sn_gguf_writer *w, const char *key);
sn_status sn_gguf_writer_remove_key(sn_gguf_writer *w, const char *key);

/* ne as in the file (ne[0] contiguous). Returns the tensor index or a negative status. */
sn_status sn_gguf_writer_add_tensor(sn_gguf_writer *w, const char *name, uint32_t n_dims,
                                    const uint64_t *ne, int type, sn_err *err);
uint64_t sn_gguf_writer_tensor_size(const sn_gguf_writer *w, int64_t i);
uint64_t sn_gguf_writer_total_size(const sn_gguf_writer *w); /* whole file size once written */

sn_status sn_gguf_writer_begin(sn_gguf_writer *w, const char *path, sn_err *err);
/* The same into an open, empty file (e.g. from sn_tmp_create); the writer owns fd from here on,
 * path only names it in messages. */
sn_status sn_gguf_writer_begin_fd(sn_gguf_writer *w, int fd, const char *path, sn_err *err);
sn_status sn_gguf_writer_write(sn_gguf_writer *w, const void *data, uint64_t n, sn_err *err);
sn_status sn_gguf_writer_end_tensor(sn_gguf_writer *w, sn_err *err);
sn_status sn_gguf_writer_finish(sn_gguf_writer *w, sn_err *err); /* flush + fsync + close */

#endif
