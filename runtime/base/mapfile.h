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
/* open(O_RDONLY) of a regular file that never blocks on a FIFO or device: opened non-blocking,
 * refused unless fstat says regular ("not a regular file (a FIFO?)"), then switched back to
 * blocking reads. Returns the fd, or -1 with err set (err may be NULL). */
int sn_open_regular(const char *path, sn_err *err);
/* Releases the mapping (safe on a zeroed or already closed record). */
void sn_unmap_file(sn_mapped_file *m);

/* The bytes a format reader parses: a file it mapped, or a caller's buffer it borrows (tests,
 * fuzzing, archives in memory), with the name its errors give them. */
typedef struct sn_input {
    char *path;          /* owned: the file, or what the caller calls its buffer */
    const uint8_t *base; /* the mapping or the caller's buffer */
    uint64_t size;
    int mapped;          /* base is `map`, released by sn_input_close */
    sn_mapped_file map;
} sn_input;
/* Maps PATH into *in. */
sn_status sn_input_map(sn_input *in, const char *path, sn_err *err);
/* Borrows [buf, buf + size), named WHAT. */
sn_status sn_input_borrow(sn_input *in, const void *buf, uint64_t size, const char *what, sn_err *err);
/* Releases the mapping and the name (safe on a zeroed or closed record). */
void sn_input_close(sn_input *in);

/* The one whole-file reader, for small text inputs (JSON configs, vocabularies, templates): a
 * NUL-terminated heap copy of PATH in *out (free() it), its length in *len (may be NULL). MAX is a
 * budget of budget.h and MAX_NAME its name, for the error: sn_map_file's; SN_EFORMAT "PATH: N bytes,
 * larger than the M MB budget (MAX_NAME, budget.h)"; SN_ENOMEM. SN_READ_FILE(path, BUDGET, ...)
 * passes both. */
sn_status sn_read_file(const char *path, uint64_t max, const char *max_name, char **out, uint64_t *len, sn_err *err);
#define SN_READ_FILE(path, budget, out, len, err) sn_read_file((path), (budget), #budget, (out), (len), (err))

#endif
