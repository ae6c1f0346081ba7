/* mapfile.h - a whole regular file mapped read-only: the one open/fstat/mmap sequence every reader
 * of big inputs (GGUF, blob, safetensors, PyTorch archives, tokenizer.json) starts with.
 *
 * The mapping is private and read-only; the page cache is shared with every other reader of the
 * file, so nothing is copied. An empty file is not mapped (mmap refuses length 0): data then points
 * at a static zero byte and size is 0, so readers check sizes, never NULL. */
#ifndef SN_MAPFILE_H
#define SN_MAPFILE_H
#include "sn_err.h"

#include <stddef.h>
#include <stdint.h>

typedef struct sn_mapped_file {
    const uint8_t *data; /* the file's bytes (size of them), never NULL after a successful open */
    uint64_t size;
    void *map;           /* the mapping to release, NULL for an empty file */
} sn_mapped_file;

/* Maps path. Errors (SN_EIO) name the path and the failing step: cannot open, not a regular file,
 * cannot mmap. On error *m is zeroed. */
sn_status sn_map_file(const char *path, sn_mapped_file *m, sn_err *err);
/* Releases the mapping (safe on a zeroed or already closed record). */
void sn_unmap_file(sn_mapped_file *m);

/* The one whole-file reader, for small text inputs (JSON configs, vocabularies, templates): a
 * NUL-terminated heap copy of PATH in *out (free() it), its length in *len (may be NULL). Errors:
 * sn_map_file's; SN_EFORMAT "PATH: unreadable or larger than N MB" over MAX bytes; SN_ENOMEM. */
sn_status sn_read_file(const char *path, uint64_t max, char **out, uint64_t *len, sn_err *err);

#endif
