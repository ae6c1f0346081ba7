/* gguf_internal.h - what the GGUF reader (gguf.c) and writer (gguf_write.c) share; internal to
 * runtime/, not an API (the format and the API are in gguf.h).
 *
 * Both sides apply the same rules: the scalar sizes of the value types, llama.cpp's UTF-8 rule for
 * keys and tensor names, the padding to the alignment, and one name -> index table (duplicate
 * tensor names are refused while reading and while writing). */
#ifndef SN_GGUF_INTERNAL_H
#define SN_GGUF_INTERNAL_H
#include "gguf.h"

#include <stddef.h>
#include <stdint.h>

#define GGUF_MAGIC 0x46554747u /* "GGUF" little-endian */
#define GGUF_VERSION 3u

/* Bytes of one scalar of each sn_gguf_type (0 for STR and ARR). */
extern const uint8_t sn_gguf_scalar_size[SN_GGUF_TYPE_COUNT];

static inline uint64_t sn_gguf_pad_to(uint64_t x, uint64_t align) { return (x + align - 1) / align * align; }

/* Valid UTF-8 (no overlongs, no surrogates, <= U+10FFFF) and no NUL byte. Returns the index of the
 * first bad byte, or len when the string is clean. */
uint64_t sn_gguf_utf8_bad_at(const uint8_t *s, uint64_t len);

/* Open-addressing table of indices into an array of names: names[i] is the first member of
 * element i of an array of STRIDE-byte structs. It grows with the data added, never from a count read from a file. */
typedef struct { int64_t *slot; uint64_t cap, count; } name_index;
/* Returns the existing index for name, -1 after inserting idx (== count), -2 when out of memory. */
int64_t sn_gguf_index_put(name_index *ix, const char *name, int64_t idx, const char *const *names, size_t stride);

#endif
