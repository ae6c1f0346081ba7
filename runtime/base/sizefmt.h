/* sizefmt.h - the one way sunny's programs print a file size: decimal units with one decimal and the
 * exact byte count, "29.3 MB (29,318,752 bytes)", so a size reads the same in every message, log
 * and doc (below 1 kB: "512 bytes"). */
#ifndef SN_SIZEFMT_H
#define SN_SIZEFMT_H
#include <stddef.h>
#include <stdint.h>

/* Room for the longest result ("18446.7 PB (18,446,744,073,709,551,615 bytes)"). */
enum { SN_SIZE_STR_MAX = 64 };

/* Writes the size of `bytes` into buf (cap >= SN_SIZE_STR_MAX never truncates) and returns buf. */
char *sn_size_str(uint64_t bytes, char *buf, size_t cap);
/* The short form for progress lines: "29.3 MB" (no byte count). */
char *sn_size_short(uint64_t bytes, char *buf, size_t cap);

#endif
