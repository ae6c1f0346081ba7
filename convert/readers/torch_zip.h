/* torch_zip.h - the zip container of torch.save (torch >= 1.6), read in place from a mapping.
 *
 * A zip file is a sequence of entries (local header 'PK\3\4' | name | extra | data) followed by a
 * central directory (one 'PK\1\2' record per entry: method, CRC-32, compressed and uncompressed
 * size, offset of the local header) and an end record 'PK\5\6' (entry count, directory size and
 * offset). Archives or entries past 4 GiB use zip64: the end record's fields are 0xFFFF(FFFF) and
 * the real values live in a 'PK\6\6' record (found through the 'PK\6\7' locator just before the end
 * record) and in each entry's 0x0001 extra field. torch.save writes entries stored (method 0),
 * 64-byte aligned, under one folder: <name>/data.pkl, <name>/data/<key>, <name>/byteorder,
 * <name>/version; re-packing tools may deflate them (method 8).
 *
 * Everything is checked before it is handed out: the directory lies inside the file and before the
 * end record, every local header lies inside the file and agrees with its directory record (name,
 * method), every entry's data range lies inside the file, stored entries have equal compressed and
 * uncompressed sizes, inflated entries produce exactly the size (and CRC-32) the directory states,
 * names are unique and NUL-free, encrypted entries are refused. Stored data is a pointer into the
 * caller's buffer: nothing is copied. */
#ifndef SN_TORCH_ZIP_H
#define SN_TORCH_ZIP_H
#include "sn_err.h"
#include <stddef.h>
#include <stdint.h>

enum { SN_ZIP_STORED = 0, SN_ZIP_DEFLATED = 8 };

typedef struct sn_zip_entry {
    const char *name;      /* NUL-terminated, owned by the archive */
    uint16_t method;       /* SN_ZIP_STORED or SN_ZIP_DEFLATED */
    uint32_t crc32;
    uint64_t comp_size;    /* bytes in the file */
    uint64_t size;         /* bytes after inflating (== comp_size when stored) */
    uint64_t data_offset;  /* absolute offset of the (compressed) data in the file */
} sn_zip_entry;

typedef struct sn_zip sn_zip;

/* Parses the archive in buf[0, size) (a mapping); buf must outlive the handle. `what` (the file
 * path) names the archive in errors. */
sn_status sn_zip_open_mem(const uint8_t *buf, uint64_t size, const char *what, sn_zip **out, sn_err *err);
void sn_zip_close(sn_zip *z);
size_t sn_zip_n_entries(const sn_zip *z);
const sn_zip_entry *sn_zip_entry_at(const sn_zip *z, size_t i);
int64_t sn_zip_find(const sn_zip *z, const char *name); /* -1 if absent */

/* The bytes of entry i. Stored: *data points into the buffer and *owned is NULL. Deflated: inflated
 * into a malloc'd buffer (returned in both *data and *owned; the caller frees *owned), refused when
 * the entry is larger than max_size. */
sn_status sn_zip_read(const sn_zip *z, size_t i, uint64_t max_size, const uint8_t **data, uint8_t **owned,
                      sn_err *err);
/* Inflates deflated entry i into fd (at its current position) in bounded memory. */
sn_status sn_zip_inflate_to_fd(const sn_zip *z, size_t i, int fd, sn_err *err);

#endif
